#!/usr/bin/env python3
"""Load time, memory per offer and query latency: this gpuhunt against the reference 0.1.x.

    python benchmarks/bench_catalog.py --offers 180000 --runs 5
    python benchmarks/bench_catalog.py --offers 180000 --no-reference   # this package only

It generates a realistic catalog (provider mix, GPU names, regions and price spreads like the
published catalogs), publishes it with `gpuhunt catalog build` under a temporary folder in the
per-provider layout (the one both versions read: each `{provider}/V/catalog.zip` holds the CSV,
which the reference reads, and the column file beside it, which this package reads), serves it
over loopback HTTP, and runs the same measurement script in two child processes: one with this
package, one in a virtualenv with the reference installed from PyPI (`benchmarks/.ref-venv`,
created on first use). Each figure is the median of --runs; every load starts with an empty
disk cache. The load of the same catalog published as CSV only (as gpuhunt 0.1.x's pipeline
publishes it) is measured too, which is this package's CSV parser, and again in a process that
finds the disk cache warm (it keeps what it parsed as column files).

Query figures time `Catalog.query(...)` and then read every offer of the answer, so lazily built
offers are paid for in full; the "first 10" column times the usual orchestrator pattern of
reading the cheapest few.
"""

from __future__ import annotations

import argparse
import csv
import functools
import http.server
import io
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "src"))

from gpuhunt._internal.schema import FIELDS  # noqa: E402  (the published column order)

PROVIDERS = {  # share of the catalog, regions, spot?
    "aws": (
        0.30,
        [
            f"{r}-{z}"
            for r in ("us-east-1", "us-west-2", "eu-west-1", "ap-northeast-1", "eu-central-1")
            for z in "abcd"
        ],
        True,
    ),
    "gcp": (
        0.22,
        [
            f"{r}-{z}"
            for r in ("us-central1", "europe-west4", "asia-east1", "us-east4")
            for z in "abc"
        ],
        True,
    ),
    "azure": (
        0.20,
        ["eastus", "westus2", "westeurope", "southcentralus", "japaneast", "uksouth"],
        True,
    ),
    "runpod": (0.14, ["US-TX-3", "EU-RO-1", "CA-MTL-1", "US-GA-1", "EU-SE-1"], True),
    "oci": (0.04, ["us-ashburn-1", "eu-frankfurt-1", "ap-tokyo-1"], True),
    "verda": (0.03, ["FIN-01", "FIN-02", "ICE-01"], True),
    "lambdalabs": (0.03, ["us-east-1", "us-west-1", "europe-central-1", "asia-northeast-1"], False),
    "nebius": (0.02, ["eu-north1", "eu-west1", "us-central1"], True),
    "cloudrift": (0.02, ["us-east-nc-nr-1", "eu-north-1"], False),
}
GPUS = [
    ("T4", 16, 0.35),
    ("L4", 24, 0.8),
    ("A10G", 24, 1.0),
    ("A100", 40, 3.0),
    ("A100", 80, 4.0),
    ("H100", 80, 6.0),
    ("H200", 141, 8.0),
    ("B200", 180, 10.0),
    ("L40S", 48, 1.9),
    ("RTX4090", 24, 0.6),
    ("V100", 16, 2.5),
    ("MI300X", 192, 5.0),
    ("A6000", 48, 0.8),
]


def generate(total: int, seed: int = 7) -> dict[str, bytes]:
    """Like the published catalogs: each provider has instance types with fixed resources and a
    base price, offered in several regions (some spot, cheaper and more spread), so a type's
    offers differ only in location, price and spot."""
    rnd = random.Random(seed)
    out = {}
    for provider, (share, regions, has_spot) in PROVIDERS.items():
        n = int(total * share)
        types = []
        for k in range(max(20, min(700, n // 60))):
            cpu = rnd.choice([2, 4, 8, 16, 32, 64, 96, 192])
            if rnd.random() < 0.35:
                gpu_count, name, mem, vendor = 0, "", "", ""
                base = 0.045 * cpu * rnd.uniform(0.8, 1.3)
            else:
                name, mem, per_gpu = rnd.choice(GPUS)
                gpu_count = rnd.choice([1, 1, 2, 4, 8])
                vendor = "amd" if name.startswith("MI") else "nvidia"
                base = per_gpu * gpu_count * rnd.uniform(0.8, 1.3)
            disk = rnd.choice(["", 100.0, 500.0])
            # Like the real catalogs: GCP marks every offer, Nebius GPU offers carry fabrics.
            data = "{}"
            if provider == "gcp":
                data = '{"is_dws_calendar_mode": false}'
            elif provider == "nebius" and gpu_count:
                data = '{"fabrics": ["fabric-2", "fabric-3"]}'
            attrs = [cpu, cpu * 4.0, gpu_count, name, mem, disk, vendor, "", "x86", data]
            types.append((f"{provider}-type-{k}", base, attrs))
        rows = []
        for _ in range(n):
            name, base, attrs = rnd.choice(types)
            spot = has_spot and rnd.random() < 0.4
            spread = rnd.lognormvariate(0, 0.35 if spot else 0.1)
            price = round(base * spread * (0.4 if spot else 1.0), 5) or 0.01
            cpu, memory, count, gpu, mem, disk, vendor, flags, arch, data = attrs
            row = [name, rnd.choice(regions), price, cpu, memory, count, gpu, mem, spot, disk]
            rows.append(row + [vendor, flags, arch, data])
        rows.sort(key=lambda r: r[2])
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(FIELDS)
        w.writerows(rows)
        out[provider] = buf.getvalue().encode()
    return out


def publish(csvs: dict[str, bytes], root: Path, version: str = "20261129-1") -> None:
    """As the nightly pipeline publishes: CSV + column file + manifest in each archive."""
    from gpuhunt._internal.publish.build import Collected, build_catalog
    from gpuhunt._internal.publish.files import write_build

    collected = {p: Collected(d, "2026-11-29T00:00:00+00:00") for p, d in csvs.items()}
    write_build(build_catalog(version, collected, None, providers=list(csvs)), root)
    (root / "version").unlink()  # so both clients read the same per-provider objects


def publish_csv_only(csvs: dict[str, bytes], root: Path, version: str = "20261129-1") -> None:
    """As gpuhunt 0.1.x's pipeline publishes: `{provider}.csv` alone in each archive."""
    for provider, data in csvs.items():
        d = root / provider / version
        d.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(d / "catalog.zip", "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr(f"{provider}.csv", data)
        (root / provider / "version").write_text(version)


QUERIES = {
    "unfiltered": {},
    "gpu name": {"gpu_name": "H100"},
    "provider + gpu count": {"provider": "aws", "min_gpu_count": 8},
    "price ceiling": {"max_price": 1.0},
    "compute capability": {"min_compute_capability": "9.0"},
    "total gpu memory": {"min_total_gpu_memory": 640},
    "spot only": {"spot": True},
    "orchestrator filter": {
        "min_gpu_count": 1,
        "max_gpu_count": 8,
        "min_gpu_memory": 40,
        "max_price": 20,
        "min_cpu": 8,
        "min_memory": 32,
        "spot": False,
        "allowed_flags": [],
    },
}

CHILD = r"""
import json, os, statistics, sys, tempfile, threading, time, tracemalloc
import gpuhunt
runs = int(sys.argv[1]); queries = json.loads(sys.argv[2]); load_only = sys.argv[3] == "load"
Catalog = gpuhunt.Catalog  # import outside the measured region
loads, mems = [], []
for _ in range(runs):
    os.environ["GPUHUNT_CACHE_DIR"] = tempfile.mkdtemp()  # nothing cached: download and parse
    t = time.perf_counter()
    c = Catalog(balance_resources=False, auto_reload=False)
    c.load()
    loads.append(time.perf_counter() - t)
if load_only:
    warm = []  # a later process: the disk cache holds the archives and what was parsed
    for _ in range(runs):
        t = time.perf_counter()
        w = Catalog(balance_resources=False, auto_reload=False)
        w.load()
        warm.append(time.perf_counter() - t)
    out = {"load_s": statistics.median(loads), "warm_load_s": statistics.median(warm)}
    print("RESULT " + json.dumps(out))
    sys.exit(0)
# Memory is traced in loads of its own: tracemalloc slows allocation-heavy code several-fold.
for _ in range(2):
    tracemalloc.start()
    m = Catalog(balance_resources=False, auto_reload=False)
    m.load()
    mems.append(tracemalloc.get_traced_memory()[0])
    tracemalloc.stop()
    del m
n = len(c.query())
tracemalloc.start()
c2 = Catalog(balance_resources=False, auto_reload=False); c2.load()
after_load = tracemalloc.get_traced_memory()[0]
for _ in c2.query(): pass
after_read = tracemalloc.get_traced_memory()[0]
tracemalloc.stop(); del c2
res = {"bytes_per_offer_after_read": after_read / max(n, 1),"version": gpuhunt.__version__ if hasattr(gpuhunt, "__version__") else "reference", "offers": n,
       "load_s": statistics.median(loads), "bytes_per_offer": statistics.median(mems) / max(n, 1), "queries": {}}
for name, kw in queries.items():
    full, first = [], []
    for _ in range(runs):
        t = time.perf_counter(); r = c.query(**kw); count = sum(1 for _ in r); full.append(time.perf_counter() - t)
        t = time.perf_counter(); r = c.query(**kw); head = [r[i] for i in range(min(10, len(r)))]; first.append(time.perf_counter() - t)
    res["queries"][name] = {"full_s": statistics.median(full), "first10_s": statistics.median(first), "answer": count}
# 16 threads query: first with nothing else running, then while a reload runs.
latencies = []; stop = threading.Event()
def worker():
    while not stop.is_set():
        t = time.perf_counter(); c.query(gpu_name="A100", max_price=10); latencies.append(time.perf_counter() - t)
threads = [threading.Thread(target=worker) for _ in range(16)]
for th in threads: th.start()
time.sleep(2.0)
for _ in range(60):  # the reference may not finish a single query in 2 s under 16 threads
    if len(latencies) >= 16: break
    time.sleep(0.5)
res["max_query_16_threads_s"] = max(latencies) if latencies else None
res["median_query_16_threads_s"] = statistics.median(latencies) if latencies else None
latencies.clear()
t = time.perf_counter(); c.load(); reload_s = time.perf_counter() - t
stop.set()
for th in threads: th.join()
res["reload_s"] = reload_s; res["max_query_during_reload_s"] = max(latencies) if latencies else None
res["median_query_during_reload_s"] = statistics.median(latencies) if latencies else None
res["queries_during_reload"] = len(latencies)
print("RESULT " + json.dumps(res))
"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


class _Server(http.server.ThreadingHTTPServer):
    # The default backlog of 5 drops connections when 8 downloads start at once, and the
    # client's SYN retry then adds a whole second to a load: not what a real bucket does.
    request_queue_size = 128


def run_child(
    python: str, url: str, runs: int, env_extra: dict[str, str], mode: str = "all"
) -> dict:
    env = dict(
        os.environ, GPUHUNT_CATALOG_URL=url, GPUHUNT_CACHE_DIR=tempfile.mkdtemp(), **env_extra
    )
    out = subprocess.run(
        [python, "-c", CHILD, str(runs), json.dumps(QUERIES), mode],
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"benchmark child failed:\n{out.stderr[-3000:]}")


def reference_python(version: str) -> str | None:
    venv = HERE / ".ref-venv"
    py = venv / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    ok = subprocess.run(
        [str(py), "-m", "pip", "install", "-q", f"gpuhunt=={version}"],
        capture_output=True,
        text=True,
    )
    if ok.returncode != 0:
        print(
            f"could not install the reference gpuhunt {version}: {ok.stderr[-500:]}",
            file=sys.stderr,
        )
        return None
    return str(py)


def main() -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--offers", type=int, default=180_000)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--reference-version", default="0.1.34")
    p.add_argument("--no-reference", action="store_true")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        csvs = generate(args.offers)
        publish(csvs, root / "built")
        publish_csv_only(csvs, root / "csv-only")
        handler = functools.partial(_QuietHandler, directory=str(root))
        server = _Server(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{server.server_address[1]}"
        src = {"PYTHONPATH": str(ROOT / "src")}
        ours = run_child(sys.executable, f"{url}/built", args.runs, src)
        csv_only = run_child(sys.executable, f"{url}/csv-only", args.runs, src, mode="load")
        ours["csv_only_load_s"] = csv_only["load_s"]
        ours["csv_only_warm_load_s"] = csv_only["warm_load_s"]
        ref = None
        if not args.no_reference and (py := reference_python(args.reference_version)):
            ref = run_child(py, f"{url}/built", args.runs, {})
        server.shutdown()
    report(ours, ref, args)
    return 0


def report(ours: dict, ref: dict | None, args: argparse.Namespace) -> None:
    def row(name: str, a: float, b: float | None, unit: str = "ms", scale: float = 1000) -> None:
        ratio = f"{b / a:8.1f}x" if b and a else "       -"
        bs = f"{b * scale:10.2f}" if b is not None else "         -"
        print(f"{name:28} {a * scale:10.2f} {bs} {unit:5} {ratio}")

    print(
        f"\n{ours['offers']} offers, median of {args.runs} runs; reference gpuhunt {args.reference_version if ref else '(not run)'}"
    )
    print(f"{'':28} {'ours':>10} {'reference':>10} {'':5} {'speedup':>9}")
    row("load", ours["load_s"], ref and ref["load_s"], "s", 1)
    row("load, CSV-only archives", ours["csv_only_load_s"], ref and ref["load_s"], "s", 1)
    row("  the same, next process", ours["csv_only_warm_load_s"], ref and ref["load_s"], "s", 1)
    print(
        f"{'memory/offer after a read':28} {ours['bytes_per_offer_after_read']:10.0f} {ref['bytes_per_offer_after_read'] if ref else float('nan'):10.0f}"
    )
    print(
        f"{'memory per offer (bytes)':28} {ours['bytes_per_offer']:10.0f} {ref['bytes_per_offer'] if ref else float('nan'):10.0f}       {(ref['bytes_per_offer'] / ours['bytes_per_offer']) if ref else float('nan'):8.1f}x"
    )
    total_a = total_b = total_first = 0.0
    for name in QUERIES:
        a = ours["queries"][name]
        b = ref["queries"][name] if ref else None
        row(f"query: {name}", a["full_s"], b and b["full_s"])
        total_a += a["full_s"]
        total_first += a["first10_s"]
        total_b += b["full_s"] if b else 0
        if b and a["answer"] != b["answer"]:
            print(f"  ! answer sizes differ: ours {a['answer']}, reference {b['answer']}")
    row("query mix (read every offer)", total_a, total_b or None)
    row("query mix (read cheapest 10)", total_first, total_b or None)

    def ms(x: float | None) -> str:
        return f"{x * 1000:.1f} ms" if x is not None else "-"

    for label, r in (("ours", ours), ("reference", ref)):
        if r and "reload_s" in r:
            print(
                f"16 threads, {label:9}: query median {ms(r['median_query_16_threads_s'])}, "
                f"max {ms(r['max_query_16_threads_s'])} with no reload; during a "
                f"{r['reload_s']:.2f} s reload: median {ms(r['median_query_during_reload_s'])}, "
                f"max {ms(r['max_query_during_reload_s'])} ({r['queries_during_reload']} queries)"
            )


if __name__ == "__main__":
    sys.exit(main())
