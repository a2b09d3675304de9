#!/usr/bin/env python3
"""`gpuhunt serve` under load: a 180,000-offer catalog, 16 concurrent keep-alive clients for
15 s mixing six filtered queries, and a new catalog version published mid-run.

    python benchmarks/bench_serve.py                       # 180k offers, 16 clients, 15 s
    python benchmarks/bench_serve.py --offers 50000 --seconds 5 --json out.json

The catalog is generated as benchmarks/bench_catalog.py generates it and published in a
temporary folder the way the nightly build publishes (column files and manifests; the
`version` pointer last). `gpuhunt serve` runs in its own process over that folder with
GPUHUNT_RELOAD_INTERVAL=2, so it looks for a newer version every 2 s. A third of the way in, version
2 is published: the same offers with every instance name ending in `-v2`, so each answer can
be checked to hold offers of one version only, the version its `catalog.version` names.

Before the load, one answer at full size is compared with `gpuhunt query --json` (a process of
its own over the same folder) for the same options. Prints requests per second, p50 and p99
latency (ms, from sending the request to the whole body read), errors, and answers per
version; exits 1 on any error, mixed answer, or when version 2 was never served.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from bench_catalog import generate  # noqa: E402

V1, V2 = "20261129-1", "20261129-2"
SUFFIX = "-v2"

QUERIES: list[list[tuple[str, str]]] = [
    [("gpu", "H100"), ("max_price", "40")],
    [("provider", "aws"), ("min_gpu_count", "8"), ("spot", "false")],
    [("min_gpu_memory", "40"), ("max_price", "10"), ("all_regions", "false")],
    [("country", "US"), ("gpu", "A100"), ("sort", "price-per-gpu")],
    [("area", "europe"), ("min_gpu_count", "1"), ("max_gpu_count", "2"), ("spot", "true")],
    [("min_compute_capability", "9.0"), ("limit", "20")],
]


def renamed(csvs: dict[str, bytes]) -> dict[str, bytes]:
    """Version 2: every instance name (the first column) ends in `-v2`."""
    out = {}
    for provider, data in csvs.items():
        lines = data.decode().splitlines()
        body = [line.replace(",", SUFFIX + ",", 1) for line in lines[1:]]
        out[provider] = ("\n".join([lines[0], *body]) + "\n").encode()
    return out


def build(csvs: dict[str, bytes], version: str, out: Path) -> None:
    from gpuhunt._internal.publish.build import Collected, build_catalog
    from gpuhunt._internal.publish.files import write_build

    collected = {p: Collected(d, "2026-11-29T00:00:00+00:00") for p, d in csvs.items()}
    write_build(build_catalog(version, collected, None, providers=list(csvs)), out)


def publish(staged: Path, root: Path) -> None:
    """Copy a built version into `root`: objects first, the `version` pointers last."""
    files = [p for p in staged.rglob("*") if p.is_file()]
    for path in sorted(files, key=lambda p: (p.name == "version", p.parent == staged)):
        target = root / path.relative_to(staged)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(target.name + ".tmp")
        shutil.copyfile(path, tmp)
        os.replace(tmp, target)


def quantiles(xs: list[float]) -> list[float]:
    return statistics.quantiles(xs, n=100) if len(xs) > 1 else [0.0] * 99


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(conn: http.client.HTTPConnection, path: str) -> tuple[int, bytes]:
    conn.request("GET", path)
    r = conn.getresponse()
    return r.status, r.read()


def wait_until_up(port: int, proc: subprocess.Popen[bytes], limit: float = 300) -> None:
    deadline = time.monotonic() + limit
    while True:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            if get(conn, "/v1/status")[0] == 200:
                return
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("gpuhunt serve did not start")
        time.sleep(0.2)


def check_equal_to_cli(port: int, root: Path, env: dict[str, str]) -> int:
    pairs = QUERIES[0]
    options = ["--gpu", "H100", "--max-price", "40"]
    cli = subprocess.run(
        [sys.executable, "-m", "gpuhunt", "query", "--catalog-url", str(root), "--json", *options],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    want = json.loads(cli.stdout)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    status, body = get(conn, "/v1/offers?" + urlencode([*pairs, ("limit", "10000")]))
    got = json.loads(body)
    if status != 200 or got["offers"] != want or got["total"] != len(want):
        raise SystemExit(f"/v1/offers differs from gpuhunt query --json ({status})")
    return len(want)


class Client(threading.Thread):
    def __init__(self, n: int, port: int, stop_at: float) -> None:
        super().__init__(daemon=True)
        self.n, self.port, self.stop_at = n, port, stop_at
        self.latencies: list[float] = []
        self.sent: list[float] = []  # monotonic time each request was sent
        self.errors: list[str] = []
        self.mixed = 0
        self.versions: dict[str, int] = {}
        self.first_v2: float | None = None

    def run(self) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        k = self.n
        while time.monotonic() < self.stop_at:
            path = "/v1/offers?" + urlencode(QUERIES[k % len(QUERIES)])
            k += 1
            t = time.perf_counter()
            try:
                status, body = get(conn, path)
            except (OSError, http.client.HTTPException) as e:
                self.errors.append(repr(e))
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                continue
            self.latencies.append(time.perf_counter() - t)
            self.sent.append(time.monotonic() - (time.perf_counter() - t))
            if status != 200:
                self.errors.append(f"{status}: {body[:200]!r}")
                continue
            answer = json.loads(body)
            version = answer["catalog"]["version"]
            self.versions[version] = self.versions.get(version, 0) + 1
            if version == V2 and self.first_v2 is None:
                self.first_v2 = time.monotonic()
            v2 = [o["instance_name"].endswith(SUFFIX) for o in answer["offers"]]
            if any(v2) and not all(v2) or (version == V2) != all(v2) and v2:
                self.mixed += 1


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--offers", type=int, default=180_000)
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--seconds", type=float, default=15.0)
    p.add_argument(
        "--cache-mb", type=int, default=64, help="gpuhunt serve --cache-mb (0: no answer cache)"
    )
    p.add_argument("--json", metavar="FILE", help="write the figures here too")
    args = p.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    try:
        t = time.perf_counter()
        csvs = generate(args.offers)
        root, staged = work / "published", work / "v2"
        build(csvs, V1, root)
        build(renamed(csvs), V2, staged)
        print(f"catalog: {args.offers} offers, built in {time.perf_counter() - t:.1f}s")
        port = free_port()
        env = dict(
            os.environ,
            GPUHUNT_CACHE_DIR=str(work / "cache"),
            GPUHUNT_RELOAD_INTERVAL="2",
        )
        server = subprocess.Popen(
            [
                *(sys.executable, "-m", "gpuhunt", "serve", "--port", str(port)),
                *("--catalog", str(root), "--cache-mb", str(args.cache_mb)),
            ],
            env=env,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_until_up(port, server)
            rows = check_equal_to_cli(port, root, env)
            print(f"/v1/offers equals gpuhunt query --json ({rows} offers, gpu=H100 max_price=40)")
            start = time.monotonic()
            stop_at = start + args.seconds
            clients = [Client(n, port, stop_at) for n in range(args.clients)]
            for c in clients:
                c.start()
            time.sleep(args.seconds / 3)  # mid-run, leaving the reload time to land
            published_at = time.monotonic()
            publish(staged, root)
            for c in clients:
                c.join()
        finally:
            server.terminate()
            server.wait(30)
        latencies = sorted(x for c in clients for x in c.latencies)
        errors = [e for c in clients for e in c.errors]
        mixed = sum(c.mixed for c in clients)
        versions: dict[str, int] = {}
        for c in clients:
            for v, n in c.versions.items():
                versions[v] = versions.get(v, 0) + n
        firsts = [c.first_v2 for c in clients if c.first_v2 is not None]
        picked_up = min(firsts) - published_at if firsts else None
        q = quantiles(latencies)
        # Outside the reload: before version 2 was published, and from 1 s after it was
        # first served (the server loads 180k offers meanwhile, on the same two cores).
        window_end = (min(firsts) if firsts else float("inf")) + 1.0
        steady = sorted(
            x
            for c in clients
            for x, at in zip(c.latencies, c.sent)
            if at < published_at or at > window_end
        )
        qs = quantiles(steady)
        figures: dict[str, Any] = {
            "offers": args.offers,
            "clients": args.clients,
            "cache_mb": args.cache_mb,
            "seconds": args.seconds,
            "requests": len(latencies),
            "rps": round(len(latencies) / args.seconds, 1),
            "p50_ms": round(q[49] * 1000, 1),
            "p99_ms": round(q[98] * 1000, 1),
            "max_ms": round(latencies[-1] * 1000, 1) if latencies else None,
            "outside_reload": {
                "requests": len(steady),
                "p50_ms": round(qs[49] * 1000, 1),
                "p99_ms": round(qs[98] * 1000, 1),
            },
            "errors": len(errors),
            "mixed_answers": mixed,
            "answers_per_version": versions,
            "v2_served_after_s": None if picked_up is None else round(picked_up, 2),
            "cpus": os.cpu_count(),
            "load_average": os.getloadavg(),
        }
        print(json.dumps(figures, indent=2))
        if errors:
            print("first errors:", errors[:5])
        if args.json:
            Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
        return 1 if errors or mixed or V2 not in versions else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
