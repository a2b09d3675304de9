"""Test helpers: catalogs built in tests and a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import contextlib
import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gpuhunt._internal.formats.archive import sha256, write_archive
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem, CPUArchitecture


def item(provider: str = "aws", **kw) -> CatalogItem:
    base = dict(
        provider=provider,
        instance_name="x1",
        location="us-east-1",
        price=1.0,
        cpu=8,
        memory=32.0,
        gpu_count=1,
        gpu_name="A100",
        gpu_memory=80.0,
        spot=False,
        disk_size=None,
        gpu_vendor=AcceleratorVendor.NVIDIA,
        flags=[],
        cpu_arch=CPUArchitecture.X86,
        provider_data={},
    )
    base.update(kw)
    if not base["gpu_count"] and "gpu_vendor" not in kw:
        base["gpu_vendor"] = None
        base["gpu_name"] = base["gpu_name"] if "gpu_name" in kw else None
        base["gpu_memory"] = base["gpu_memory"] if "gpu_memory" in kw else None
    return CatalogItem(**base)  # type: ignore[arg-type]


def possible_ranges(kw: dict[str, Any]) -> dict[str, Any]:
    """Filter keywords without a maximum below its minimum, which `QueryFilter` refuses (random
    filters draw bounds independently)."""
    from gpuhunt._internal.validate import RANGES, _version

    out = dict(kw)
    for what in RANGES:
        low, high = out.get(f"min_{what}"), out.get(f"max_{what}")
        if low is None or high is None:
            continue
        if what == "compute_capability":
            low, high = _version(low), _version(high)
        if low > high:
            del out[f"max_{what}"]
    return out


def publish_archive(
    root: Path,
    version: str,
    csvs: dict[str, bytes],
    *,
    latest: bool = True,
    sides: dict[str, bytes] | None = None,
) -> None:
    """Write the archive layout: {root}/{version}/catalog.zip and {root}/version; `sides`:
    the files beside the CSVs (`aws.terms`, `aws.interruption`)."""
    manifest = {
        "format_version": 1,
        "version": version,
        "providers": {
            p: {
                "rows": d.count(b"\n") - 1,
                "sha256": sha256(d),
                "collected_at": "2026-11-29",
                "status": "fresh",
            }
            for p, d in csvs.items()
        },
    }
    if sides:
        manifest["sides"] = {n: {"sha256": sha256(d)} for n, d in sides.items()}
    (root / version).mkdir(parents=True, exist_ok=True)
    (root / version / "catalog.zip").write_bytes(write_archive(csvs, manifest, sides=sides))
    if latest:
        (root / "version").write_text(version)


def publish_per_provider(root: Path, version: str, csvs: dict[str, bytes]) -> None:
    """Write the per-provider layout that gpuhunt 0.1.x reads."""
    for p, d in csvs.items():
        (root / p / version).mkdir(parents=True, exist_ok=True)
        (root / p / version / "catalog.zip").write_bytes(write_archive({p: d}, {}))
        (root / p / "version").write_text(version)


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # keep test output clean
        self.server.requests.append(self.path)  # type: ignore[attr-defined]


class _Server(http.server.ThreadingHTTPServer):
    request_queue_size = 128  # the default 5 drops parallel connects: a 1 s SYN retry each


@contextlib.contextmanager
def serve_directory(root: Path) -> Iterator[tuple[str, list[str]]]:
    """Serve `root` over real HTTP on 127.0.0.1; yields (base URL, list of requested paths)."""
    handler = functools.partial(_Handler, directory=str(root))
    server = _Server(("127.0.0.1", 0), handler)
    server.requests = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", server.requests  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()


def folder_transport(root: Path, prefix: str = "/v3") -> Any:
    """A `MockTransport` serving the files under `root` at any host, below `prefix` (404 for
    what is not there): a published catalog without a server. Its `.paths` lists what was
    asked, in order."""
    from gpuhunt._internal.load.mock import MockTransport, make_response

    paths: list[str] = []

    def answer(request: Any) -> Any:
        path = request.path_url.split("?", 1)[0]
        paths.append(path)
        rel = path.removeprefix(prefix).lstrip("/")
        file = root / rel
        if not path.startswith(prefix) or not rel or not file.is_file():
            return make_response(404, b"not found")
        return make_response(200, file.read_bytes())

    mock = MockTransport(answer)
    mock.paths = paths  # type: ignore[attr-defined]
    return mock
