"""The nightly catalog build: pack the collected provider CSVs into one versioned catalog,
publish it to S3, and check what was published.

    gpuhunt catalog build --input csvs/ --previous URL_OR_DIR --version 20261129-1 --output out/
    gpuhunt catalog publish out/ --bucket B --prefix v3
    gpuhunt catalog verify https://B.s3.amazonaws.com/v3

`build` is pure packing (plus reading `--previous` and, with `--integrity`, running the
provider's integrity tests); it writes a folder laid out exactly like the bucket, holding both
published layouts (see `sources`):

    {version}/catalog.zip + version                      (archive: every CSV + manifest.json)
    {provider}/{version}/catalog.zip + {provider}/version (per provider: what gpuhunt 0.1.x reads)

Decisions (docs/pipeline.md says the same for humans):
- A fresh CSV is accepted only if its header is exactly the catalog format, it has at least one
  offer, no row is malformed, and (with `--integrity`) `integrity_tests/test_<provider>.py`
  passes on it. A provider without an integrity test file fails the gate: unverified data is not
  published.
- Otherwise the provider's CSV from `--previous` is carried over unchanged into the new version:
  status `carried_over`, `from_version` and `collected_at` of the version that collected it
  (both survive repeated carry-overs). Every provider of the new version gets a per-provider
  object under the new version, so a pinned version is complete in both layouts.
- A provider with neither a good fresh CSV nor a previous one is left out. If `--previous` was
  given but could not be read and some provider needs carrying over, the build fails: a partial
  build must not replace a good one.
- A version that `--previous` already has is refused; published versions are immutable (clients
  cache them by name).
- `publish` uploads every version object, checks each one in the bucket (HEAD size, then a
  re-download compared by sha256), and only then writes the `version` pointers: per provider
  first, the archive's `{base}/version` last. An interrupted publish leaves the previous version
  in force; running it again skips objects already uploaded intact and finishes. An object
  already in the bucket with different content is an error (unless `--overwrite`).
- `verify` downloads a published version (through the loader's own code, `sources.fetch`) and
  checks it against its manifest: every CSV's sha256 and row count, the per-provider layout's
  copies and, for the latest version, that every pointer names it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import logging
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuhunt._internal import columns, history, index, registry, sources, storage
from gpuhunt._internal.errors import CatalogError, CatalogIntegrityError, GPUHuntError
from gpuhunt._internal.models import QueryFilter
from gpuhunt._version import __version__

logger = logging.getLogger(__name__)

FRESH = "fresh"
CARRIED_OVER = "carried_over"
ENDPOINT_ENV = "GPUHUNT_S3_ENDPOINT_URL"
INTEGRITY_TIMEOUT = 15 * 60
DOWNLOAD_TIMEOUT = (10.0, 120.0)
# Pointers must never be served stale by a cache in front of the bucket; versions never change.
POINTER_CACHE_CONTROL = "no-cache, max-age=0"
VERSION_CACHE_CONTROL = "public, max-age=31536000, immutable"


class PipelineError(GPUHuntError):
    """A build, publish or verify step failed; nothing was made the latest version."""


# --------------------------------------------------------------------------- build (pure)


@dataclass
class Collected:
    """A freshly collected provider CSV."""

    data: bytes
    collected_at: str  # ISO 8601, UTC


@dataclass
class Outcome:
    provider: str
    status: str  # fresh, carried_over, or missing (left out of the version)
    rows: int = 0
    reason: str | None = None  # why the fresh CSV was not used


@dataclass
class Build:
    version: str
    manifest: dict[str, Any]
    objects: dict[str, bytes]  # path under the base -> content; immutable, uploaded first
    pointers: dict[str, bytes]  # `version` files, written last (the archive's one at the end)
    outcomes: list[Outcome] = field(default_factory=list)


def check_version(version: str) -> str:
    if not sources._VERSION.match(version):
        raise PipelineError(
            f"Not a valid catalog version: {version[:40]!r} (letters, digits, '.', '_', '-'; "
            "e.g. 20261129-1)"
        )
    return version


def check_csv(data: bytes, provider: str) -> tuple[int, str | None]:
    """(rows, reason it is unacceptable or None). Zero tolerance: a collector that wrote one bad
    row has a bug, and its output is not published."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return 0, f"not UTF-8 ({e.reason} at byte {e.start})"
    header = text.split("\n", 1)[0].strip("\r")
    if header.split(",") != storage.FIELDS:
        return 0, f"header is not the catalog format: {header[:120]!r}"
    stats = storage.ReadStats()
    for _ in storage.iter_rows(
        io.StringIO(text, newline=""), provider=provider, stats=stats, quiet=True
    ):
        pass
    if stats.skipped:
        return stats.rows, f"{stats.skipped} malformed row(s): {'; '.join(stats.errors)}"
    if not stats.rows:
        return 0, "no offers"
    return stats.rows, None


def count_rows(data: bytes, provider: str) -> int:
    stats = storage.ReadStats()
    text = data.decode("utf-8", "replace")
    for _ in storage.iter_rows(
        io.StringIO(text, newline=""), provider=provider, stats=stats, quiet=True
    ):
        pass
    return stats.rows


def _previous_versions(previous: sources.RawCatalog) -> set[str]:
    return {previous.version, *previous.versions.values()}


def build_catalog(
    version: str,
    collected: dict[str, Collected],
    previous: sources.RawCatalog | None,
    *,
    providers: Sequence[str] | None = None,
    integrity: Callable[[str, bytes], str | None] | None = None,
    previous_error: str | None = None,
    built_at: str | None = None,
    previous_history: dict[str, bytes] | None = None,
) -> Build:
    """Decide each provider's CSV (fresh or carried over) and lay out both published formats.

    `integrity(provider, csv)` returns why the CSV fails its integrity tests, or None.
    `previous_error` says why `--previous` could not be read, if it was given and failed.
    `previous_history` is the price history published with `previous` (provider -> table,
    see `history`); it is carried forward, and started afresh for providers without one.
    """
    check_version(version)
    providers = list(registry.OFFLINE_PROVIDERS if providers is None else providers)
    if previous is not None and version in _previous_versions(previous):
        raise PipelineError(
            f"Version {version} is already published under {previous.url}; "
            "published versions never change, pick a new one"
        )
    built_at = built_at or _now()
    csvs: dict[str, bytes] = {}
    entries: dict[str, dict[str, Any]] = {}
    outcomes: list[Outcome] = []
    for p in providers:
        reason: str | None = "no CSV was collected"
        got = collected.get(p)
        if got is not None:
            rows, reason = check_csv(got.data, p)
            if reason is None and integrity is not None:
                reason = integrity(p, got.data)
            if reason is None:
                csvs[p] = got.data
                entries[p] = {
                    "rows": rows,
                    "sha256": storage.sha256(got.data),
                    "collected_at": got.collected_at,
                    "status": FRESH,
                    "from_version": version,
                }
                outcomes.append(Outcome(p, FRESH, rows))
                continue
        carried = _carry_over(p, previous, previous_error, reason)
        if carried is None:
            logger.warning(
                "%s is left out of %s: %s, and there is no previous CSV", p, version, reason
            )
            outcomes.append(Outcome(p, "missing", 0, reason))
            continue
        csvs[p], entries[p] = carried
        logger.warning(
            "%s: %s; carrying over its CSV from %s", p, reason, entries[p]["from_version"]
        )
        outcomes.append(Outcome(p, CARRIED_OVER, entries[p]["rows"], reason))
    if not csvs:
        raise PipelineError(f"Nothing to publish: no provider has a usable CSV for {version}")
    manifest = {
        "format_version": storage.FORMAT_VERSION,
        "version": version,
        "gpuhunt_version": __version__,
        "built_at": built_at,
        "providers": entries,
    }
    packed = {p: column_file(p, data) for p, data in csvs.items()}
    for p, data in packed.items():
        entries[p]["columns_sha256"] = storage.sha256(data)
    before = ((previous.manifest or {}).get("providers") or {}) if previous is not None else {}
    tables = history.for_build(entries, csvs, previous_history or {}, before, built_at)
    for p, table in tables.items():
        entries[p]["history_sha256"] = storage.sha256(table)
        entries[p]["history_rows"] = history.rows_of(table)
    objects = {f"{version}/catalog.zip": storage.write_archive(csvs, manifest, packed)}
    pointers: dict[str, bytes] = {}
    for p in sorted(csvs):
        own = {**manifest, "providers": {p: entries[p]}}
        objects[f"{p}/{version}/catalog.zip"] = storage.write_archive(
            {p: csvs[p]}, own, {p: packed[p]}
        )
        pointers[f"{p}/version"] = version.encode()
    # Beside the catalogs, so clients that only query never download it.
    objects[f"{version}/{history.OBJECT}"] = history.pack(tables, version)
    for p in sorted(tables):
        objects[f"{p}/{version}/{history.OBJECT}"] = history.pack({p: tables[p]}, version)
    pointers["version"] = version.encode()  # last: dicts keep insertion order
    return Build(version, manifest, objects, pointers, outcomes)


def column_file(provider: str, csv: bytes) -> bytes:
    """The parsed form of a provider's CSV that clients load without parsing (`columns.py`);
    rebuilt from the CSV for carried-over providers too, so it always matches this version's
    reader of the CSV."""
    table = index.build_table(csv.decode("utf-8"), provider=provider)
    return columns.dumps(table, storage.sha256(csv))


def _carry_over(
    provider: str,
    previous: sources.RawCatalog | None,
    previous_error: str | None,
    reason: str | None,
) -> tuple[bytes, dict[str, Any]] | None:
    if previous is None:
        if previous_error is not None:
            raise PipelineError(
                f"{provider} cannot be published fresh ({reason}) and the previous catalog "
                f"could not be read to carry it over: {previous_error}"
            )
        return None
    data = previous.csvs.get(provider)
    if data is None:
        failed = [m for m in previous.problems if m.startswith(f"{provider}:")]
        if failed:
            raise PipelineError(
                f"{provider} cannot be published fresh ({reason}) and its previous catalog "
                f"could not be read: {failed[0]}"
            )
        return None
    given = ((previous.manifest or {}).get("providers") or {}).get(provider) or {}
    from_version = given.get("from_version") or previous.versions.get(provider) or previous.version
    return data, {
        "rows": count_rows(data, provider),
        "sha256": storage.sha256(data),
        "collected_at": given.get("collected_at"),
        "status": CARRIED_OVER,
        "from_version": str(from_version),
    }


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()


# --------------------------------------------------------------------------- build (I/O)


def read_input(
    directory: str | Path, providers: Sequence[str] | None = None
) -> dict[str, Collected]:
    """The `{provider}.csv` files a collection left in `directory`; `collected_at` is each file's
    modification time (the collector writes it once, at the end)."""
    folder = Path(directory)
    if not folder.is_dir():
        raise PipelineError(f"Input folder {folder} does not exist")
    providers = list(registry.OFFLINE_PROVIDERS if providers is None else providers)
    out = {}
    for path in sorted(folder.glob("*.csv")):
        name = path.stem
        if name not in providers:
            logger.warning("Ignoring %s: not an offline provider of this build", path)
            continue
        mtime = dt.datetime.fromtimestamp(path.stat().st_mtime, dt.timezone.utc)
        out[name] = Collected(path.read_bytes(), mtime.replace(microsecond=0).isoformat())
    return out


def load_previous(
    url: str, providers: Sequence[str] | None = None
) -> tuple[sources.RawCatalog | None, str | None]:
    """The latest published catalog under `url` (either layout), or why it could not be read."""
    try:
        raw = sources.fetch(
            url,
            list(registry.OFFLINE_PROVIDERS if providers is None else providers),
            version=None,
            cache=None,
            timeout=DOWNLOAD_TIMEOUT,
            retries=2,
        )
    except GPUHuntError as e:
        return None, str(e)
    return raw, None


def run_integrity_tests(
    provider: str, data: bytes, tests_dir: str | Path, *, timeout: float = INTEGRITY_TIMEOUT
) -> str | None:
    """Run `integrity_tests/test_<provider>.py` on exactly these bytes, in a subprocess:
    `CATALOG_DIR=<tmp> python -m pytest integrity_tests/test_<provider>.py`.
    Returns why it failed, or None."""
    tests = Path(tests_dir).resolve()
    test_file = tests / f"test_{provider}.py"
    if not test_file.is_file():
        return f"no integrity tests ({test_file.name} is not in {tests})"
    with tempfile.TemporaryDirectory(prefix=f"gpuhunt-{provider}-") as tmp:
        Path(tmp, f"{provider}.csv").write_bytes(data)
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"{tests.name}/{test_file.name}",
        ]
        try:
            proc = subprocess.run(
                cmd,
                cwd=tests.parent,
                env={**os.environ, "CATALOG_DIR": tmp},
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            return f"integrity tests timed out after {timeout:g}s"
    if proc.returncode == 0:
        return None
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    # The log keeps pytest's own report; the outcome keeps its summary line.
    sys.stderr.write(proc.stdout[-8000:] + proc.stderr[-2000:])
    summary = lines[-1].strip("= ") if lines else f"exit code {proc.returncode}"
    return f"integrity tests failed ({summary})"


def write_build(build: Build, output: str | Path) -> None:
    """Lay the build out like the bucket; pointers last, so an interrupted write is not a
    loadable new version."""
    out = Path(output)
    if out.exists() and any(out.iterdir()):
        raise PipelineError(f"Output folder {out} is not empty")
    for rel, data in [*build.objects.items(), *build.pointers.items()]:
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


# --------------------------------------------------------------------------- verify


@dataclass
class Verified:
    version: str
    manifest: dict[str, Any]
    csvs: dict[str, bytes]
    history_rows: int = 0


def verify(url: str, *, version: str | None = None) -> Verified:
    """Download a published version (the latest, or `version`) and check it against its
    manifest; raises `CatalogIntegrityError`/`CatalogError` naming the object at fault."""
    base = url.rstrip("/")
    providers = list(registry.OFFLINE_PROVIDERS)
    raw = sources.fetch(
        base, providers, version=version, cache=None, timeout=DOWNLOAD_TIMEOUT, retries=2
    )
    v = raw.version
    if raw.manifest is None:
        raise CatalogIntegrityError(
            f"{base}/{v}/catalog.zip: missing, or has no manifest.json (not built by "
            "`gpuhunt catalog build`)"
        )
    manifest = raw.manifest
    where = f"{base}/{v}/catalog.zip"
    if manifest.get("version") != v:
        raise CatalogIntegrityError(
            f"{where}: manifest names version {manifest.get('version')!r}, not {v!r}"
        )
    if manifest.get("format_version") != storage.FORMAT_VERSION:
        raise CatalogIntegrityError(
            f"{where}: format_version {manifest.get('format_version')!r} is not "
            f"{storage.FORMAT_VERSION}"
        )
    entries: dict[str, Any] = manifest.get("providers") or {}
    if not entries:
        raise CatalogIntegrityError(f"{where}: the manifest lists no providers")
    extra = sorted(set(raw.csvs) - set(entries))
    if extra:
        raise CatalogIntegrityError(f"{where}: {extra[0]}.csv is not in the manifest")
    for p, entry in entries.items():
        if p not in providers:
            raise CatalogIntegrityError(f"{where}: unknown provider {p!r} in the manifest")
        if entry.get("status") not in (FRESH, CARRIED_OVER):
            raise CatalogIntegrityError(f"{where}: {p} has status {entry.get('status')!r}")
        rows = count_rows(raw.csvs[p], p)
        if rows != entry.get("rows"):
            raise CatalogIntegrityError(
                f"{where}: {p}.csv has {rows} offers, the manifest says {entry.get('rows')}"
            )
        if entry.get("columns_sha256"):
            _verify_column_file(raw, p, where)
    fetcher = sources.Fetcher(base, DOWNLOAD_TIMEOUT, 2)
    # The per-provider copies, through the loader's own code (sha256 checked against each
    # copy's manifest), then against the archive's manifest.
    per_provider = sources._fetch_per_provider(fetcher, list(entries), v, None, "network")
    for p, entry in entries.items():
        if storage.sha256(per_provider.csvs[p]) != entry["sha256"]:
            raise CatalogIntegrityError(
                f"{base}/{p}/{v}/catalog.zip: {p}.csv differs from the archive's manifest"
            )
        if version is None:
            pointer = fetcher.get(f"{p}/version").decode("utf-8", "replace").strip()
            if pointer != v:
                raise CatalogIntegrityError(
                    f"{base}/{p}/version names {pointer[:40]!r}, not the latest version {v}"
                )
    from gpuhunt._internal import tracking

    checked = tracking.verify_history(base, v, entries, raw.csvs)
    return Verified(v, manifest, raw.csvs, checked.rows)


def _verify_column_file(raw: sources.RawCatalog, provider: str, where: str) -> None:
    """The column file must be there, load, and hold exactly the offers its CSV parses to."""
    if provider not in raw.columns:
        raise CatalogIntegrityError(
            f"{where}: {provider}{storage.COLUMNS_SUFFIX} is missing or does not match the manifest"
        )
    csv = raw.csvs[provider]
    try:
        packed = columns.loads(
            raw.columns[provider], provider=provider, csv_sha256=storage.sha256(csv)
        )
    except ValueError as e:
        raise CatalogIntegrityError(f"{where}: {provider}{storage.COLUMNS_SUFFIX}: {e}") from None
    parsed = index.build_table(csv.decode("utf-8", "replace"), provider=provider)
    everything = QueryFilter()
    if packed.items(packed.select(everything)) != parsed.items(parsed.select(everything)):
        raise CatalogIntegrityError(
            f"{where}: {provider}{storage.COLUMNS_SUFFIX} holds other offers than {provider}.csv"
        )


def read_build(directory: str | Path) -> Build:
    """A folder written by `build`, checked (with `verify`) before anything is uploaded."""
    folder = Path(directory)
    try:
        checked = verify(str(folder))
    except CatalogError as e:
        raise PipelineError(f"Refusing to publish {folder}: {e}") from e
    v = checked.version
    objects = {f"{v}/catalog.zip": (folder / v / "catalog.zip").read_bytes()}
    pointers: dict[str, bytes] = {}
    for p in sorted(checked.manifest["providers"]):
        objects[f"{p}/{v}/catalog.zip"] = (folder / p / v / "catalog.zip").read_bytes()
        pointers[f"{p}/version"] = v.encode()
    kept = sorted(p for p, e in checked.manifest["providers"].items() if e.get("history_sha256"))
    if kept:  # checked by `verify` above
        for rel in [f"{v}/{history.OBJECT}", *(f"{p}/{v}/{history.OBJECT}" for p in kept)]:
            objects[rel] = (folder / rel).read_bytes()
    pointers["version"] = v.encode()
    return Build(v, checked.manifest, objects, pointers)


# --------------------------------------------------------------------------- publish (S3)


def s3_client(endpoint_url: str | None = None) -> Any:
    try:
        import boto3
        from botocore.config import Config
    except ImportError as e:
        raise PipelineError(
            f"Publishing needs boto3, which is not installed ({e.name}): pip install 'gpuhunt[aws]'"
        ) from e
    endpoint_url = endpoint_url or os.getenv(ENDPOINT_ENV) or None
    config = Config(
        connect_timeout=10,
        read_timeout=120,
        retries={"max_attempts": 5, "mode": "standard"},
        # A custom endpoint (moto, MinIO, ...) rarely resolves bucket subdomains.
        s3={"addressing_style": "path"} if endpoint_url else {},
    )
    return boto3.client("s3", endpoint_url=endpoint_url, config=config)


def _s3_errors() -> tuple[type[Exception], ...]:
    from botocore.exceptions import BotoCoreError, ClientError

    return (BotoCoreError, ClientError)


def _error_code(e: Exception) -> str:
    response = getattr(e, "response", None) or {}
    err = response.get("Error") or {}
    return str(err.get("Code") or type(e).__name__)


class _Bucket:
    """The few S3 calls publishing needs, each turned into a `PipelineError` naming the key."""

    def __init__(self, client: Any, bucket: str, prefix: str) -> None:
        self.client = client
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self.errors = _s3_errors()

    def key(self, rel: str) -> str:
        return f"{self.prefix}/{rel}" if self.prefix else rel

    def url(self, rel: str) -> str:
        return f"s3://{self.bucket}/{self.key(rel)}"

    def _call(self, what: str, rel: str, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except self.errors as e:
            raise PipelineError(f"{what} {self.url(rel)} failed: {_error_code(e)}: {e}") from None

    def size(self, rel: str) -> int | None:
        try:
            head = self.client.head_object(Bucket=self.bucket, Key=self.key(rel))
        except self.errors as e:
            if _error_code(e) in ("404", "NoSuchKey", "NotFound"):
                return None
            raise PipelineError(f"HEAD {self.url(rel)} failed: {_error_code(e)}: {e}") from None
        return int(head["ContentLength"])

    def get(self, rel: str) -> bytes:
        def read() -> bytes:
            body = self.client.get_object(Bucket=self.bucket, Key=self.key(rel))["Body"]
            try:
                return bytes(body.read())
            finally:
                body.close()

        return self._call("GET", rel, read)

    def put(self, rel: str, data: bytes, *, pointer: bool) -> None:
        self._call(
            "PUT",
            rel,
            lambda: self.client.put_object(
                Bucket=self.bucket,
                Key=self.key(rel),
                Body=data,
                ContentType="text/plain" if pointer else "application/zip",
                CacheControl=POINTER_CACHE_CONTROL if pointer else VERSION_CACHE_CONTROL,
            ),
        )

    def check(self, rel: str, data: bytes) -> None:
        size = self.size(rel)
        if size != len(data):
            raise PipelineError(
                f"{self.url(rel)} is {size} bytes in the bucket, expected {len(data)}"
            )
        if storage.sha256(self.get(rel)) != storage.sha256(data):
            raise PipelineError(f"{self.url(rel)} does not match the built file (sha256)")


@dataclass
class Published:
    version: str
    uploaded: list[str]
    skipped: list[str]  # already in the bucket, identical
    pointers: list[str]


def publish(
    directory: str | Path,
    bucket: str,
    prefix: str = "",
    *,
    client: Any = None,
    endpoint_url: str | None = None,
    overwrite: bool = False,
) -> Published:
    """Upload a build: version objects, each checked in the bucket, then the pointers."""
    build = read_build(directory)
    s3 = _Bucket(client if client is not None else s3_client(endpoint_url), bucket, prefix)
    uploaded: list[str] = []
    skipped: list[str] = []
    for rel, data in build.objects.items():
        size = s3.size(rel)
        if size is not None:
            same = size == len(data) and storage.sha256(s3.get(rel)) == storage.sha256(data)
            if same:
                skipped.append(rel)
                continue
            if not overwrite:
                raise PipelineError(
                    f"{s3.url(rel)} already exists with different content; published versions "
                    "never change (build a new version, or pass --overwrite)"
                )
        s3.put(rel, data, pointer=False)
        uploaded.append(rel)
        logger.info("uploaded %s (%d bytes)", s3.url(rel), len(data))
    # Nothing points at the new version until every one of its objects is known good.
    for rel, data in build.objects.items():
        s3.check(rel, data)
    for rel, data in build.pointers.items():
        s3.put(rel, data, pointer=True)
        if s3.get(rel) != data:
            raise PipelineError(f"{s3.url(rel)} does not read back as {build.version}")
    return Published(build.version, uploaded, skipped, list(build.pointers))


# --------------------------------------------------------------------------- CLI


def register_cli(cat_sub: Any) -> None:
    b = cat_sub.add_parser(
        "build",
        help="pack collected CSVs into a new catalog version (both layouts)",
        description="Pack `{provider}.csv` files into a catalog version laid out like the "
        "bucket. A provider whose CSV is missing or fails its checks is carried over from "
        "--previous.",
    )
    b.add_argument("--input", required=True, help="folder of collected {provider}.csv files")
    b.add_argument("--previous", help="the published catalog to carry providers over from")
    b.add_argument("--version", required=True, help="the new version, e.g. 20261129-1")
    b.add_argument("--output", required=True, help="empty folder to write the build to")
    b.add_argument(
        "--integrity",
        action="store_true",
        help="also require integrity_tests/test_<provider>.py to pass on each fresh CSV",
    )
    b.add_argument(
        "--reset-history",
        action="store_true",
        help="start the price history again from this version instead of carrying "
        "--previous's forward (when it cannot be read)",
    )
    b.add_argument(
        "--integrity-dir",
        default="integrity_tests",
        help="folder of the integrity tests (default: ./integrity_tests)",
    )
    b.set_defaults(run=_cmd_build)

    p = cat_sub.add_parser(
        "publish",
        help="upload a build to S3; the version pointers are written last",
        description="Upload a build to S3: every version object first, each checked in the "
        "bucket (size and sha256), then the `version` pointers. Needs boto3 "
        "(pip install 'gpuhunt[aws]') and AWS credentials from the environment.",
    )
    p.add_argument("directory", help="a folder written by `gpuhunt catalog build`")
    p.add_argument("--bucket", required=True)
    p.add_argument("--prefix", default="", help="key prefix inside the bucket, e.g. v3")
    p.add_argument(
        "--endpoint-url",
        default=None,
        help=f"S3 endpoint (default: ${ENDPOINT_ENV}, else AWS)",
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace version objects that exist with different content",
    )
    p.set_defaults(run=_cmd_publish)

    v = cat_sub.add_parser(
        "verify",
        help="download a published version and check it against its manifest",
    )
    v.add_argument("url", help="base URL or folder the catalog is published under")
    v.add_argument("--version", default=None, help="a version to check (default: the latest)")
    v.set_defaults(run=_cmd_verify)


def _cmd_build(args: argparse.Namespace) -> int:
    check_version(args.version)
    collected = read_input(args.input)
    previous, previous_error = (None, None)
    if args.previous:
        previous, previous_error = load_previous(args.previous)
        if previous_error:
            logger.warning("Could not read the previous catalog: %s", previous_error)
    previous_history: dict[str, bytes] = {}
    if previous is not None and not args.reset_history:
        from gpuhunt._internal import tracking

        previous_history = tracking.previous_history(args.previous, previous)
    integrity = None
    if args.integrity:
        tests_dir = Path(args.integrity_dir)
        if not tests_dir.is_dir():
            raise PipelineError(f"Integrity test folder {tests_dir} does not exist")

        def integrity(provider: str, data: bytes) -> str | None:
            return run_integrity_tests(provider, data, tests_dir)

    build = build_catalog(
        args.version,
        collected,
        previous,
        integrity=integrity,
        previous_error=previous_error,
        previous_history=previous_history,
    )
    write_build(build, args.output)
    for o in build.outcomes:
        note = f"  ({o.reason})" if o.reason else ""
        print(f"{o.provider:12} {o.status:13} {o.rows:7} offers{note}")
    fresh = sum(o.status == FRESH for o in build.outcomes)
    print(f"built {build.version} in {args.output}: {fresh} fresh of {len(build.outcomes)}")
    return 0


def _cmd_publish(args: argparse.Namespace) -> int:
    result = publish(
        args.directory,
        args.bucket,
        args.prefix,
        endpoint_url=args.endpoint_url,
        overwrite=args.overwrite,
    )
    where = f"s3://{args.bucket}/{args.prefix.strip('/')}".rstrip("/")
    print(
        f"published {result.version} to {where}: {len(result.uploaded)} uploaded, "
        f"{len(result.skipped)} already there, {len(result.pointers)} pointers"
    )
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    checked = verify(args.url, version=args.version)
    entries = checked.manifest["providers"]
    for p, e in sorted(entries.items()):
        print(f"{p:12} {e['status']:13} {e['rows']:7} offers  from {e.get('from_version')}")
    history_note = f", price history {checked.history_rows} rows" if checked.history_rows else ""
    print(
        f"OK: {args.url.rstrip('/')} version {checked.version}, {len(entries)} providers"
        + history_note
    )
    return 0
