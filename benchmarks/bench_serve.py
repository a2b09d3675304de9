#!/usr/bin/env python3
"""`gpuhunt serve` under load, today's tree beside a baseline tree in one run: a 180,000-offer
catalog, 16 concurrent keep-alive clients for 15 s per scenario.

    python benchmarks/bench_serve.py                       # 180k offers, 16 clients, 15 s
    python benchmarks/bench_serve.py --offers 50000 --seconds 5 --json out.json
    python benchmarks/bench_serve.py --baseline none       # this tree only

Each server (this tree's `src`, and the baseline's, `git archive`d from `--baseline REF`, by
default the commit before answers were chosen on the columns) runs the same scenarios, one
after another, each in a fresh copy of the published catalog:

- `new_10000`: every request a query not asked before (a `min_price` of its own), limit
  10000, so no answer comes from the cache; the server's RSS is sampled every 50 ms and its
  peak given beside its RSS once loaded (`rss_loaded_mb`); run first, before the answer
  cache holds anything;
- `new_100`: the same with limit 100 (these answers then fill the answer cache);
- `idle`: one client asking new limit-100 queries one after another, 5 s alone, then 5 s
  with 1,000 idle connections and 40 sending a header byte a second held open;
- `mix`: the six cached queries below, with version 2 published a third of the way in.

The catalog is generated as benchmarks/bench_catalog.py generates it and published in a
temporary folder the way the nightly build publishes (column files and manifests; the
`version` pointer last). `gpuhunt serve` runs in its own process over that folder with
GPUHUNT_RELOAD_INTERVAL=2, so it looks for a newer version every 2 s. A third of the way in, version
2 is published: the same offers with every instance name ending in `-v2`, so each answer can
be checked to hold offers of one version only, the version its `catalog.version` names.

Before the load, one answer at full size is compared with `gpuhunt query --json` (a process of
its own over the same folder, the same tree) for the same options. Prints requests per second,
p50 and p99 latency (ms, from sending the request to the whole body read), errors, and answers
per version; exits 1 on any error, mixed answer, or when version 2 was never served.
"""

from __future__ import annotations

import argparse
import contextlib
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
    """One keep-alive client asking `path_of(k)` for k = n, n + clients, ... until `stop_at`.
    `check`: parse each answer and check it holds one version's offers (the mix); else only
    its status and its end are checked (a 10,000-row answer parsed by 16 threads under one
    interpreter lock would measure the clients)."""

    def __init__(
        self, n: int, port: int, stop_at: float, path_of: Any, step: int, check: bool
    ) -> None:
        super().__init__(daemon=True)
        self.n, self.port, self.stop_at = n, port, stop_at
        self.path_of, self.step, self.check = path_of, step, check
        self.latencies: list[float] = []
        self.sent: list[float] = []  # monotonic time each request was sent
        self.errors: list[str] = []
        self.mixed = 0
        self.versions: dict[str, int] = {}
        self.first_v2: float | None = None

    def run(self) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        k = self.n
        while time.monotonic() < self.stop_at:
            path = self.path_of(k)
            k += self.step
            t = time.perf_counter()
            try:
                status, body = get(conn, path)
            except (OSError, http.client.HTTPException) as e:
                self.errors.append(repr(e))
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                continue
            self.latencies.append(time.perf_counter() - t)
            self.sent.append(time.monotonic() - (time.perf_counter() - t))
            if status != 200:
                self.errors.append(f"{status}: {body[:200]!r}")
                continue
            if not self.check:
                if b'"total":' not in body[-4096:] or not body.rstrip().endswith(b"}"):
                    self.errors.append(f"incomplete answer: {body[-100:]!r}")
                continue
            answer = json.loads(body)
            version = answer["catalog"]["version"]
            self.versions[version] = self.versions.get(version, 0) + 1
            if version == V2 and self.first_v2 is None:
                self.first_v2 = time.monotonic()
            v2 = [o["instance_name"].endswith(SUFFIX) for o in answer["offers"]]
            if any(v2) and not all(v2) or (version == V2) != all(v2) and v2:
                self.mixed += 1


def new_query(limit: int) -> Any:
    """The k-th query: one of the mix's filters with a `min_price` no other request has."""
    bases = [[x for x in q if x[0] != "limit"] for q in QUERIES]

    def path_of(k: int) -> str:
        pairs = [*bases[k % len(bases)], ("min_price", f"{(k + 1) * 1e-6:.6f}")]
        return "/v1/offers?" + urlencode([*pairs, ("limit", str(limit))])

    return path_of


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class RssSampler(threading.Thread):
    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak, self.done = pid, 0.0, threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.05):
            try:
                self.peak = max(self.peak, rss_mb(self.pid))
            except OSError:
                return


def ms(xs: list[float]) -> dict[str, Any]:
    xs = sorted(xs)
    q = quantiles(xs)
    return {
        "requests": len(xs),
        "p50_ms": round(q[49] * 1000, 1),
        "p99_ms": round(q[98] * 1000, 1),
        "max_ms": round(xs[-1] * 1000, 1) if xs else None,
    }


def load(port: int, clients: int, seconds: float, path_of: Any, check: bool) -> list[Client]:
    stop_at = time.monotonic() + seconds
    running = [Client(n, port, stop_at, path_of, clients, check) for n in range(clients)]
    for c in running:
        c.start()
    for c in running:
        c.join()
    return running


def summary(clients: list[Client], seconds: float) -> dict[str, Any]:
    latencies = [x for c in clients for x in c.latencies]
    errors = [e for c in clients for e in c.errors]
    out = {**ms(latencies), "rps": round(len(latencies) / seconds, 1), "errors": len(errors)}
    if errors:
        out["first_errors"] = errors[:3]
    return out


def held_open(port: int, idle: int, slow: int, seconds: float) -> dict[str, Any]:
    """A client asking new limit-100 queries one at a time: `seconds` alone, then `seconds`
    with `idle` connections that send nothing and `slow` sending a header byte a second."""
    path_of = new_query(100)

    def ask(until: float, first: int) -> list[float]:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        out, k = [], first
        while time.monotonic() < until:
            t = time.perf_counter()
            try:
                status, _ = get(conn, path_of(k))
            except (OSError, http.client.HTTPException):
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                status = 0
            out.append(time.perf_counter() - t if status == 200 else float("inf"))
            k += 1
        return out

    alone = ask(time.monotonic() + seconds, 100_000)
    socks = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(idle)]
    trickling = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(slow)]
    stop = threading.Event()

    def trickle() -> None:
        head = b"GET /v1/status HTTP/1.1\r\nX-Slow: " + b"a" * 1000
        for byte in head:
            for s in trickling:
                with contextlib.suppress(OSError):  # closed by the server: as it should be
                    s.sendall(bytes([byte]))
            if stop.wait(1.0):
                return

    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    try:
        crowded = ask(time.monotonic() + seconds, 200_000)
    finally:
        stop.set()
        thread.join()
        for s in socks + trickling:
            s.close()
    failed = sum(1 for x in crowded if x == float("inf"))
    return {
        "alone": ms([x for x in alone if x != float("inf")]),
        f"with_{idle}_idle_{slow}_slow": {
            **ms([x for x in crowded if x != float("inf")]),
            "failed": failed,
        },
    }


def serve(src: Path, root: Path, work: Path, cache_mb: int) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    env = dict(
        os.environ,
        PYTHONPATH=str(src),
        GPUHUNT_CACHE_DIR=str(work / f"cache-{port}"),
        GPUHUNT_RELOAD_INTERVAL="2",
    )
    server = subprocess.Popen(
        [
            *(sys.executable, "-m", "gpuhunt", "serve", "--port", str(port)),
            *("--catalog", str(root), "--cache-mb", str(cache_mb)),
        ],
        env=env,
        stderr=subprocess.DEVNULL,
    )
    wait_until_up(port, server)
    return server, port


def run_server(name: str, src: Path, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Every scenario against one server tree; the mix last (it publishes version 2)."""
    root = work / f"published-{name}"
    publish(work / "v1", root)
    server, port = serve(src, root, work, args.cache_mb)
    out: dict[str, Any] = {"src": str(src)}
    try:
        out["rss_loaded_mb"] = round(rss_mb(server.pid), 1)
        env = dict(os.environ, PYTHONPATH=str(src), GPUHUNT_CACHE_DIR=str(work / "cli-cache"))
        out["equal_to_cli_rows"] = check_equal_to_cli(port, root, env)
        sampler = RssSampler(server.pid)
        sampler.start()
        big = load(port, args.clients, args.seconds, new_query(10_000), False)
        sampler.done.set()
        sampler.join()
        out["new_10000"] = {
            **summary(big, args.seconds),
            "rss_peak_mb": round(sampler.peak, 1),
            "rss_peak_over_loaded": round(sampler.peak / out["rss_loaded_mb"], 2),
        }
        # After the big answers: new limit-100 answers fill the answer cache (--cache-mb),
        # which would count in the peak above.
        out["new_100"] = summary(
            load(port, args.clients, args.seconds, new_query(100), False), args.seconds
        )
        out["idle"] = held_open(port, args.idle, args.slow, 5.0)
        out["mix"] = mix(port, root, work, args)
    finally:
        server.terminate()
        server.wait(60)
    return out


def mix(port: int, root: Path, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    def path_of(k: int) -> str:
        return "/v1/offers?" + urlencode(QUERIES[k % len(QUERIES)])

    stop_at = time.monotonic() + args.seconds
    clients = [Client(n, port, stop_at, path_of, 1, True) for n in range(args.clients)]
    for c in clients:
        c.start()
    time.sleep(args.seconds / 3)  # mid-run, leaving the reload time to land
    published_at = time.monotonic()
    publish(work / "v2", root)
    for c in clients:
        c.join()
    versions: dict[str, int] = {}
    for c in clients:
        for v, n in c.versions.items():
            versions[v] = versions.get(v, 0) + n
    firsts = [c.first_v2 for c in clients if c.first_v2 is not None]
    # Outside the reload: before version 2 was published, and from 1 s after it was first
    # served (the server loads 180k offers meanwhile, on the same two cores).
    window_end = (min(firsts) if firsts else float("inf")) + 1.0
    steady = [
        x
        for c in clients
        for x, at in zip(c.latencies, c.sent)
        if at < published_at or at > window_end
    ]
    return {
        **summary(clients, args.seconds),
        "outside_reload": ms(steady),
        "mixed_answers": sum(c.mixed for c in clients),
        "answers_per_version": versions,
        "v2_served_after_s": round(min(firsts) - published_at, 2) if firsts else None,
    }


def baseline_tree(ref: str, work: Path) -> Path | None:
    if ref == "none":
        return None
    out = work / "baseline"
    out.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(HERE.parent), "archive", ref, "src"], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive.stdout, check=True)
    return out / "src"


def failures(figures: dict[str, Any]) -> list[str]:
    mixed = figures["mix"]
    bad = [
        f"{k}: {v['errors']} errors"
        for k, v in figures.items()
        if isinstance(v, dict) and v.get("errors")
    ]
    if mixed["mixed_answers"]:
        bad.append(f"{mixed['mixed_answers']} mixed answers")
    if V2 not in mixed["answers_per_version"]:
        bad.append("version 2 never served")
    return bad


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--offers", type=int, default=180_000)
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--seconds", type=float, default=15.0)
    p.add_argument("--idle", type=int, default=1000, help="idle connections held open")
    p.add_argument("--slow", type=int, default=40, help="connections trickling a header")
    p.add_argument(
        "--cache-mb", type=int, default=64, help="gpuhunt serve --cache-mb (0: no answer cache)"
    )
    p.add_argument(
        "--baseline",
        default="efa0ef9",
        metavar="REF",
        help="git ref whose src is served beside this tree's (default efa0ef9, before answers "
        "were chosen on the columns; none: this tree only)",
    )
    p.add_argument("--json", metavar="FILE", help="write the figures here too")
    args = p.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    try:
        t = time.perf_counter()
        csvs = generate(args.offers)
        build(csvs, V1, work / "v1")
        build(renamed(csvs), V2, work / "v2")
        print(f"catalog: {args.offers} offers, built in {time.perf_counter() - t:.1f}s")
        trees = {"this": HERE.parent / "src"}
        base = baseline_tree(args.baseline, work)
        if base is not None:
            trees = {"baseline": base, **trees}
        figures: dict[str, Any] = {
            "offers": args.offers,
            "clients": args.clients,
            "seconds": args.seconds,
            "cache_mb": args.cache_mb,
            "baseline": args.baseline,
            "cpus": os.cpu_count(),
            "load_average_before": os.getloadavg(),
        }
        for name, src in trees.items():
            figures[name] = run_server(name, src, work, args)
            print(name, json.dumps(figures[name], indent=2), flush=True)
        figures["load_average_after"] = os.getloadavg()
        print(json.dumps(figures, indent=2))
        if args.json:
            Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
        bad = [f"{name}: {b}" for name in trees for b in failures(figures[name])]
        for b in bad:
            print("FAILED", b)
        return 1 if bad else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
