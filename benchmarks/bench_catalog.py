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

Query figures time `Catalog.query(...)` and then read every offer of the answer (dstack turns
each into an offer of its own); "cheapest 10" reads only those. The first unfiltered query after
each load is timed on its own: a server pays it at start and after every reload. Memory is
traced after a load and again while holding the unfiltered answer with every offer read. The
CLI rows time whole processes: `gpuhunt query` with an empty disk cache (cold) and right after
(warm); 0.1.34 has no query command or disk cache, so its row is a script that queries.
From 500,000 offers, AWS and GCP are listed in many more zones (see WIDE_ZONES).

    python benchmarks/bench_catalog.py --offers 1000000 --runs 1 --json out.json

Where polars and DuckDB are importable (`pip install -e ".[bench]"`), each reads the same
CSV-only catalog (the unzipped CSVs, from local files) into one frame and runs the same query
mix with every row's 7 fields read; their figures print beside ours and the reference's.
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
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path
from typing import Any

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
# At a million offers, AWS is listed per zone in every region and GCP in every zone, as a
# catalog that lists each zone would be (region names are made up; only their number matters).
WIDE_ZONES = {
    "aws": [f"aws-region-{r}-{z}" for r in range(30) for z in "abcd"],
    "gcp": [f"gcp-region{r}-{z}" for r in range(42) for z in "abc"],
}
WIDE_FROM = 500_000

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
        if total >= WIDE_FROM:
            regions = WIDE_ZONES.get(provider, regions)
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
        # The 14 columns 0.1.x publishes (what these rows hold; the offer's own columns after
        # provider_data are left out, as a reader of either version allows).
        w.writerow(FIELDS[: FIELDS.index("provider_data") + 1])
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
    "selective (aws, 8x H100, on-demand)": {
        "provider": "aws",
        "gpu_name": "H100",
        "min_gpu_count": 8,
        "spot": False,
    },
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
import dataclasses, gc, json, os, statistics, sys, tempfile, threading, time, tracemalloc
from itertools import starmap
import gpuhunt
runs = int(sys.argv[1]); queries = json.loads(sys.argv[2]); mode = sys.argv[3]
Catalog = gpuhunt.Catalog  # import outside the measured region
med = statistics.median

def read_all(offers):
    # What a caller does with an answer: every offer's 7 fields read (dstack reads these and
    # more to make an offer of its own of each).
    n = 0
    for o in offers:
        o.provider; o.instance_name; o.location; o.price; o.gpu_count; o.gpu_name; o.spot
        n += 1
    return n

def clock():
    return time.perf_counter(), time.process_time()

def since(t):
    return time.perf_counter() - t[0], time.process_time() - t[1]

def fresh_catalog():
    os.environ["GPUHUNT_CACHE_DIR"] = tempfile.mkdtemp()  # nothing cached: download and parse
    return Catalog(balance_resources=False, auto_reload=False)

res = {"version": getattr(gpuhunt, "__version__", "reference")}
# Loads, each followed by the first query after it: unfiltered, every offer read (a server
# that has just started or reloaded, handing out every offer once).
loads, load_cpu, firsts, first_cpu = [], [], [], []
c = None
for _ in range(runs):
    c = None; gc.collect()
    cat = fresh_catalog()
    t = clock(); cat.load(); w, u = since(t); loads.append(w); load_cpu.append(u)
    # (The answer is freed after the clock stops, as in the query figures below.)
    t = clock(); a = cat.query(); n = read_all(a); w, u = since(t); firsts.append(w); first_cpu.append(u)
    del a
    c = cat
res.update(offers=n, load_s=med(loads), load_cpu_s=med(load_cpu), loads=loads,
           first_query_s=med(firsts), first_query_cpu_s=med(first_cpu), first_queries=firsts)
if True:
    # A later process's first query: ours finds the disk cache fresh (the archives and what was
    # parsed); the reference has no disk cache and downloads again.
    warm = []
    for _ in range(runs):
        t = clock(); w_cat = Catalog(balance_resources=False); w_cat.query(gpu_name="H100")
        warm.append(since(t)[0]); del w_cat
    res["warm_load_s"] = med(warm)
# Memory, traced in a load of its own (tracemalloc slows allocation several-fold): after the
# load, then while holding the unfiltered answer with every offer read.
c_kept = c; c = None; gc.collect()
if mode != "queries":  # (memory hardly varies between rounds: measured in the first only)
    tracemalloc.start()
    m = fresh_catalog(); m.load(); gc.collect()
    res["bytes_per_offer"] = tracemalloc.get_traced_memory()[0] / max(n, 1)
    held = m.query()
    read_all(held)
    gc.collect()
    res["bytes_per_offer_after_read"] = tracemalloc.get_traced_memory()[0] / max(n, 1)
    tracemalloc.stop(); del held, m; gc.collect()
c = c_kept
if mode in ("all", "queries"):
    res["queries"] = {}
    for name, kw in queries.items():
        full, head10 = [], []
        for _ in range(runs):
            t = time.perf_counter(); r = c.query(**kw); count = read_all(r); full.append(time.perf_counter() - t)
            del r
            t = time.perf_counter(); r = c.query(**kw); read_all(r[:10]); head10.append(time.perf_counter() - t)
            del r
        res["queries"][name] = {"full_s": med(full), "first10_s": med(head10), "answer": count}
    # The unfiltered answer split into building it and reading its offers' 7 fields, against
    # the floor: the same number of plain slotted objects with the same 15 fields, made by a
    # constructor from ready tuples of the values, and the same 7 fields read.
    names = [f.name for f in dataclasses.fields(gpuhunt.CatalogItem)]
    src = "class Plain:\n    __slots__ = %r\n    def __init__(self, %s):\n" % (tuple(names), ", ".join(names))
    src += "".join("        self.%s = %s\n" % (f, f) for f in names)
    space = {}; exec(src, space); Plain = space["Plain"]
    a = c.query(); rows = [tuple(getattr(o, f) for f in names) for o in a]; del a
    build, read, floor_build, floor_read, build_nogc = [], [], [], [], []
    for _ in range(runs):
        # What a caller who chooses to pause the collector around its query gets (the
        # library itself never touches it).
        gc.disable(); t = time.perf_counter(); a = c.query(); build_nogc.append(time.perf_counter() - t); gc.enable()
        del a
        t = time.perf_counter(); a = c.query(); build.append(time.perf_counter() - t)
        t = time.perf_counter(); read_all(a); read.append(time.perf_counter() - t)
        del a
        t = time.perf_counter(); p = list(starmap(Plain, rows)); floor_build.append(time.perf_counter() - t)
        t = time.perf_counter(); read_all(p); floor_read.append(time.perf_counter() - t)
        del p
    res["unfiltered_split"] = {"build_s": med(build), "read_s": med(read),
                               "floor_build_s": med(floor_build), "floor_read_s": med(floor_read),
                               "build_caller_gc_off_s": med(build_nogc),
                               "offers": len(rows)}
    del rows
if mode == "all":
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
    res["median_query_16_threads_s"] = med(latencies) if latencies else None
    latencies.clear()
    t = time.perf_counter(); c.load(); reload_s = time.perf_counter() - t
    stop.set()
    for th in threads: th.join()
    res["reload_s"] = reload_s; res["max_query_during_reload_s"] = max(latencies) if latencies else None
    res["median_query_during_reload_s"] = med(latencies) if latencies else None
    res["queries_during_reload"] = len(latencies)
print("RESULT " + json.dumps(res))
"""

# Other engines a user might pick instead of this library (polars, DuckDB), when importable:
# each reads the same CSV-only catalog (the unzipped CSVs of the CSV-only archives, all
# providers, from local files: no download, no unzip) into one frame with a provider column,
# then runs the same query mix, price-ordered as our answers are, every row's 7 fields read.
# The filters are written in SQL (one text for both) to mean what ours mean on these catalogs
# (the answer counts are printed beside ours to show it).
ENGINE_SQL = {
    "unfiltered": "TRUE",
    "gpu name": "gpu_name = 'H100'",
    "provider + gpu count": "provider = 'aws' AND gpu_count >= 8",
    "price ceiling": "price <= 1.0",
    "compute capability": "gpu_count > 0 AND gpu_vendor = 'nvidia' AND gpu_name IN ({cc9})",
    "total gpu memory": "gpu_count > 0 AND gpu_count * gpu_memory >= 640",
    "spot only": "spot",
    "selective (aws, 8x H100, on-demand)": (
        "provider = 'aws' AND gpu_name = 'H100' AND gpu_count >= 8 AND NOT spot"
    ),
    "orchestrator filter": (
        "gpu_count BETWEEN 1 AND 8 AND gpu_memory >= 40 AND price <= 20 AND cpu >= 8"
        " AND memory >= 32 AND NOT spot AND flags IS NULL"
    ),
}

ENGINE_CHILD = r"""
import json, statistics, sys, time
from pathlib import Path
engine, folder, runs = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
where = json.loads(sys.argv[4])
files = sorted(folder.glob("*.csv"))
med = statistics.median
TYPES = {"instance_name": "VARCHAR", "location": "VARCHAR", "price": "DOUBLE", "cpu": "BIGINT",
         "memory": "DOUBLE", "gpu_count": "BIGINT", "gpu_name": "VARCHAR", "gpu_memory": "DOUBLE",
         "spot": "BOOLEAN", "disk_size": "DOUBLE", "gpu_vendor": "VARCHAR", "flags": "VARCHAR",
         "cpu_arch": "VARCHAR", "provider_data": "VARCHAR"}
# The offer's own columns after provider_data (the offer spec's), read as text: in file order.
if files:
    with open(files[0]) as head:
        for name in head.readline().strip().split(","):
            TYPES.setdefault(name, "VARCHAR")
SEVEN = "provider, instance_name, location, price, gpu_count, gpu_name, spot"
if engine == "polars":
    import polars as pl
    kinds = {"VARCHAR": pl.String, "DOUBLE": pl.Float64, "BIGINT": pl.Int64, "BOOLEAN": pl.Boolean}
    schema = {k: kinds[v] for k, v in TYPES.items()}
    version = pl.__version__
    def load():
        return pl.concat([pl.read_csv(f, schema=schema).with_columns(provider=pl.lit(f.stem))
                          for f in files])
    def query(t, w):
        ctx = pl.SQLContext(t=t)
        return ctx.execute(f"SELECT {SEVEN} FROM t WHERE {w} ORDER BY price", eager=True).iter_rows()
else:
    import duckdb
    version = duckdb.__version__
    cols = "{" + ", ".join(f"'{k}': '{v}'" for k, v in TYPES.items()) + "}"
    def load():
        con = duckdb.connect()
        con.execute("CREATE TABLE t AS " + " UNION ALL ".join(
            f"SELECT *, '{f.stem}' AS provider FROM read_csv('{f}', header=true, columns={cols})"
            for f in files))
        return con
    def query(t, w):
        return t.execute(f"SELECT {SEVEN} FROM t WHERE {w} ORDER BY price").fetchall()
def clock():
    return time.perf_counter(), time.process_time()
loads, cpus = [], []
for _ in range(runs):
    t = clock(); frame = load(); loads.append(time.perf_counter() - t[0]); cpus.append(time.process_time() - t[1])
res = {"version": version, "load_s": med(loads), "load_cpu_s": med(cpus), "loads": loads, "queries": {}}
for name, w in where.items():
    full = []
    for _ in range(runs):
        t = time.perf_counter(); n = 0
        for p, i, l, pr, g, gn, s in query(frame, w):
            n += 1
        full.append(time.perf_counter() - t)
    res["queries"][name] = {"full_s": med(full), "answer": n}
print("RESULT " + json.dumps(res))
"""

ENGINES = ("polars", "duckdb")


def engine_filters() -> dict[str, str]:
    from gpuhunt._internal.constraints import get_compute_capability

    cc9 = [g for g, _, _ in GPUS if (get_compute_capability(g) or (0, 0)) >= (9, 0)]
    sql = {
        k: v.replace("{cc9}", ", ".join(f"'{g}'" for g in dict.fromkeys(cc9)))
        for k, v in ENGINE_SQL.items()
    }
    return {name: sql[name] for name in QUERIES}


def run_engine(engine: str, folder: Path, runs: int) -> dict | None:
    """One engine's figures, or None where it is not importable in this interpreter."""
    probe = subprocess.run([sys.executable, "-c", f"import {engine}"], capture_output=True)
    if probe.returncode != 0:
        return None
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            ENGINE_CHILD,
            engine,
            str(folder),
            str(runs),
            json.dumps(engine_filters()),
        ],
        capture_output=True,
        text=True,
        timeout=3600,
    )
    return _child_result(out, engine)


def _child_result(out: subprocess.CompletedProcess[str], who: str) -> Any:
    """The figures a measuring child printed on its `RESULT ` line, or why it gave none."""
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"{who} child failed:\n{out.stderr[-3000:]}")


# Resident memory as a user's process sees it: VmRSS growth from before `import gpuhunt`
# (numpy's import and the library's own included) to after a load, and to after an unfiltered
# answer whose every offer had its 7 fields read, held. A process of its own, so that nothing
# measured before (timed loads, tracemalloc) is in it. With argv[1] == "pool" it is one of
# several workers: it reports RSS and PSS (/proc/self/smaps_rollup) after its load, when the
# parent says all of them have loaded, so that shared pages are divided among them.
RSS_CHILD = r"""
import gc, json, sys
def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
def pss():
    try:
        with open("/proc/self/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
# Modules imported before the first RSS reading (argv[2]): what they cost the load is how much
# less the process then grows.
for name in filter(None, (sys.argv[2] if len(sys.argv) > 2 else "").split(",")):
    __import__(name)
start = status("VmRSS")
import gpuhunt
imported = status("VmRSS")
c = gpuhunt.Catalog(balance_resources=False, auto_reload=False)
c.load(); gc.collect()
loaded = status("VmRSS")
if sys.argv[1] == "pool":
    print("READY", flush=True); sys.stdin.readline()
    print("RESULT " + json.dumps({"rss": loaded - start, "pss": pss(), "rss_total": loaded}), flush=True)
    sys.stdin.readline()
    sys.exit(0)
a = c.query(); n = 0
for o in a:
    o.provider; o.instance_name; o.location; o.price; o.gpu_count; o.gpu_name; o.spot
    n += 1
gc.collect()
read = status("VmRSS")
# What one offer of the answer holds on its own: the object (GC header included), its price
# (a float of its own) and its slot in the answer list; everything else is shared.
offer_bytes = sys.getsizeof(a[0]) + sys.getsizeof(a[0].price) + 8 if n else None
print("RESULT " + json.dumps({"offers": n, "import": imported - start, "load": loaded - start,
                              "read": read - start, "peak": status("VmHWM"),
                              "offer_bytes": offer_bytes}))
"""


# Third-party modules the catalog's load imports, measured one at a time and together.
IMPORT_COSTS = ("numpy", "requests", "numpy,requests")


def run_rss(python: str, url: str, env_extra: dict[str, str], before: str = "") -> dict:
    """RSS growth of a fresh process loading the catalog; `before`: modules (comma-separated)
    imported before the growth is counted from."""
    env = dict(
        os.environ, GPUHUNT_CATALOG_URL=url, GPUHUNT_CACHE_DIR=tempfile.mkdtemp(), **env_extra
    )
    out = subprocess.run(
        [python, "-c", RSS_CHILD, "one", before],
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"RSS child failed:\n{out.stderr[-3000:]}")


def run_pool(python: str, url: str, env_extra: dict[str, str], workers: int = 4) -> dict:
    """`workers` processes with one disk cache (warmed by a process before them, as a server's
    workers find it after the first start), all loaded at once: RSS and PSS of each."""
    env = dict(
        os.environ, GPUHUNT_CATALOG_URL=url, GPUHUNT_CACHE_DIR=tempfile.mkdtemp(), **env_extra
    )
    subprocess.run([python, "-c", RSS_CHILD, "one"], env=env, capture_output=True, timeout=3600)
    procs = [
        subprocess.Popen(
            [python, "-c", RSS_CHILD, "pool"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(workers)
    ]
    results = []
    try:
        for p in procs:  # every worker loaded ...
            assert p.stdout is not None and p.stdout.readline().startswith("READY")
        for p in procs:  # ... before any measures
            assert p.stdin is not None and p.stdout is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        for p in procs:
            assert p.stdout is not None
            results.append(json.loads(p.stdout.readline()[7:]))
    finally:
        for p in procs:
            if p.stdin is not None:
                p.stdin.close()
            p.wait(timeout=600)
    return {
        "rss": statistics.median(r["rss"] for r in results),
        "pss": statistics.median(r["pss"] for r in results) if results[0]["pss"] else None,
        "rss_total": statistics.median(r["rss_total"] for r in results),
    }


# What a terminal user runs. gpuhunt 0.1.34 has no query command and no disk cache, so its
# equivalent is a script that queries the catalog (downloading it) and prints ten offers.
CLI_OURS = ["-m", "gpuhunt", "query", "--gpu", "H100", "--limit", "10"]
CLI_REFERENCE = [
    "-c",
    "import gpuhunt\n"
    "c = gpuhunt.Catalog(balance_resources=False)\n"
    "for i in c.query(gpu_name='H100')[:10]: print(i.instance_name, i.location, i.price)",
]


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
        timeout=7200,
    )
    return _child_result(out, "benchmark")


def time_cli(python: str, args: list[str], url: str, env_extra: dict[str, str], runs: int) -> dict:
    """Wall time of whole processes: the first with an empty disk cache (cold), the next ones
    with what the first left (warm)."""
    cache = tempfile.mkdtemp()
    env = dict(os.environ, GPUHUNT_CATALOG_URL=url, GPUHUNT_CACHE_DIR=cache, **env_extra)
    times = []
    for _ in range(runs + 1):
        t = time.perf_counter()
        out = subprocess.run([python, *args], env=env, capture_output=True, text=True, timeout=3600)
        times.append(time.perf_counter() - t)
        if out.returncode != 0:
            raise RuntimeError(f"CLI run failed:\n{out.stderr[-3000:]}")
    return {"cold_s": times[0], "warm_s": statistics.median(times[1:]), "runs": times}


def reference_python(version: str) -> str | None:
    venv = HERE / ".ref-venv"
    py = venv / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    have = subprocess.run(
        [str(py), "-c", "import importlib.metadata as m; print(m.version('gpuhunt'))"],
        capture_output=True,
        text=True,
    )
    if have.stdout.strip() == version:
        return str(py)
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
    p.add_argument("--runs", type=int, default=5, help="rounds, each ours then the reference")
    p.add_argument("--inner", type=int, default=3, help="repetitions inside each round")
    p.add_argument("--reference-version", default="0.1.34")
    p.add_argument("--no-reference", action="store_true")
    p.add_argument("--json", help="also write every figure to this file")
    args = p.parse_args()
    rounds = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        csvs = generate(args.offers)
        publish(csvs, root / "built")
        publish_csv_only(csvs, root / "csv-only")
        # What polars and DuckDB read: the CSVs those archives hold, unzipped on local disk.
        (root / "csv-files").mkdir()
        for provider, data in csvs.items():
            (root / "csv-files" / f"{provider}.csv").write_bytes(data)
        handler = functools.partial(_QuietHandler, directory=str(root))
        server = _Server(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{server.server_address[1]}"
        built, csv_url = f"{url}/built", f"{url}/csv-only"
        src = {"PYTHONPATH": str(ROOT / "src")}
        py = None if args.no_reference else reference_python(args.reference_version)
        # The machine is shared, so its speed drifts: each round measures ours and then the
        # reference, and ratios are taken within a round.
        for k in range(args.runs):
            mode = "all" if k == 0 else "queries"  # the 16-thread figures once
            one = {
                "ours": run_child(sys.executable, built, args.inner, src, mode=mode),
                "csv_only": run_child(sys.executable, csv_url, args.inner, src, mode="load"),
                "cli": time_cli(sys.executable, CLI_OURS, csv_url, src, 1),
            }
            if k == 0:  # resident memory hardly varies between rounds: the first only
                one["rss"] = run_rss(sys.executable, built, src)
                one["rss_csv"] = run_rss(sys.executable, csv_url, src)
                one["pool"] = run_pool(sys.executable, built, src)
                # The same with glibc told to keep one malloc arena per two cores rather than
                # one per thread (an environment setting of the server's, not the library's):
                # what freed download and parse buffers left in the download threads' arenas.
                one["rss_arenas"] = run_rss(sys.executable, built, {**src, "MALLOC_ARENA_MAX": "2"})
                # What the imports the load needs cost it: the same load with them done first.
                one["rss_imported"] = {
                    mods: run_rss(sys.executable, built, src, before=mods) for mods in IMPORT_COSTS
                }
            for engine in ENGINES:
                figures = run_engine(engine, root / "csv-files", args.inner)
                if figures is not None:
                    one[engine] = figures
            if py:
                # The reference reads only the CSVs; the CSV-only archives are what it is served.
                one["reference"] = run_child(py, csv_url, args.inner, {}, mode=mode)
                one["ref_cli"] = time_cli(py, CLI_REFERENCE, csv_url, {}, 1)
                if k == 0:
                    one["ref_rss"] = run_rss(py, csv_url, {})
                    one["ref_pool"] = run_pool(py, csv_url, {})
            rounds.append(one)
            print(f"round {k + 1} of {args.runs} done", file=sys.stderr)
        server.shutdown()
    if args.json:
        Path(args.json).write_text(json.dumps(rounds, indent=2))
    report(rounds, args)
    return 0


def _dig(*keys: str) -> Any:
    """A getter of `d[keys[0]][keys[1]]...` from one round's results, None where a level is
    missing (a reference or engine that was not run)."""

    def get(d: Any) -> Any:
        for k in keys:
            if d is None:
                return None
            d = d.get(k)
        return d

    return get


def _figures() -> list[tuple[str, str, Any, Any, str, float]]:
    """(label, what is better, ours, reference, unit, scale) with ours/reference read from one
    round's results."""

    at = _dig

    def q(name: str, key: str = "full_s") -> tuple[Any, Any]:
        return (
            lambda r: at("ours", "queries", name, key)(r),
            lambda r: at("reference", "queries", name, "full_s")(r),
        )

    rows: list[tuple[str, str, Any, Any, str, float]] = [
        ("load, column files", "time", at("ours", "load_s"), at("reference", "load_s"), "s", 1),
        (
            "load, CSV-only archives",
            "time",
            at("csv_only", "load_s"),
            at("reference", "load_s"),
            "s",
            1,
        ),
        (
            "  the same, CPU time",
            "time",
            at("csv_only", "load_cpu_s"),
            at("reference", "load_cpu_s"),
            "s",
            1,
        ),
        (
            "next process: load + first query",
            "time",
            at("csv_only", "warm_load_s"),
            at("reference", "warm_load_s"),
            "s",
            1,
        ),
        (
            "first query after load, all read (col.)",
            "time",
            at("ours", "first_query_s"),
            at("reference", "first_query_s"),
            "ms",
            1000,
        ),
        (
            "first query after load, all read (CSV)",
            "time",
            at("csv_only", "first_query_s"),
            at("reference", "first_query_s"),
            "ms",
            1000,
        ),
        (
            "  the same, CPU time",
            "time",
            at("csv_only", "first_query_cpu_s"),
            at("reference", "first_query_cpu_s"),
            "ms",
            1000,
        ),
        (
            "memory/offer after load (col.)",
            "size",
            at("ours", "bytes_per_offer"),
            at("reference", "bytes_per_offer"),
            "B",
            1,
        ),
        (
            "memory/offer all read (col.)",
            "size",
            at("ours", "bytes_per_offer_after_read"),
            at("reference", "bytes_per_offer_after_read"),
            "B",
            1,
        ),
        (
            "memory/offer after load (CSV)",
            "size",
            at("csv_only", "bytes_per_offer"),
            at("reference", "bytes_per_offer"),
            "B",
            1,
        ),
        (
            "memory/offer all read (CSV)",
            "size",
            at("csv_only", "bytes_per_offer_after_read"),
            at("reference", "bytes_per_offer_after_read"),
            "B",
            1,
        ),
    ]

    def per_offer(key: str, name: str) -> Any:
        def get(r: dict) -> Any:
            m = r.get(key)
            return m[name] / m["offers"] if m and m.get(name) is not None else None

        return get

    def pool(key: str, name: str) -> Any:
        def get(r: dict) -> Any:
            m, n = r.get(key), r.get("rss", {}).get("offers")
            return m[name] / n if m and n and m.get(name) is not None else None

        return get

    for label, ours_key, ref_key, name in (
        ("RSS/offer: the imports alone (numpy ...)", "rss", "ref_rss", "import"),
        ("RSS/offer after load (col.)", "rss", "ref_rss", "load"),
        ("RSS/offer all read, held (col.)", "rss", "ref_rss", "read"),
        ("RSS/offer after load (CSV)", "rss_csv", "ref_rss", "load"),
        ("RSS/offer all read, held (CSV)", "rss_csv", "ref_rss", "read"),
    ):
        rows.append((label, "size", per_offer(ours_key, name), per_offer(ref_key, name), "B", 1))
    rows.append(
        (
            "RSS/offer, each of 4 workers (col.)",
            "size",
            pool("pool", "rss"),
            pool("ref_pool", "rss"),
            "B",
            1,
        )
    )
    rows.append(
        (
            "PSS/offer, each of 4 workers (col.)",
            "size",
            pool("pool", "pss"),
            pool("ref_pool", "pss"),
            "B",
            1,
        )
    )
    for label, name in (
        ("unfiltered: build the answer (no read)", "build_s"),
        ("unfiltered: read 7 fields of each offer", "read_s"),
        ("  build, caller disabled gc around it", "build_caller_gc_off_s"),
    ):
        rows.append(
            (
                label,
                "time",
                at("ours", "unfiltered_split", name),
                at("reference", "unfiltered_split", name),
                "ms",
                1000,
            )
        )
    for name in QUERIES:
        rows.append((f"query: {name}", "time", *q(name), "ms", 1000))

    def mix(key: str) -> Any:
        return lambda r: sum(v[key] for v in r["ours"]["queries"].values())

    def ref_mix(r: dict) -> Any:
        return (
            sum(v["full_s"] for v in r["reference"]["queries"].values())
            if r.get("reference")
            else None
        )

    rows.append(("query mix, every offer read", "time", mix("full_s"), ref_mix, "ms", 1000))
    rows.append(("query mix, cheapest 10 read", "time", mix("first10_s"), ref_mix, "ms", 1000))
    rows.append(
        (
            "CLI query, cold (empty disk cache)",
            "time",
            at("cli", "cold_s"),
            at("ref_cli", "cold_s"),
            "s",
            1,
        )
    )
    rows.append(
        (
            "CLI query, warm (run right after)",
            "time",
            at("cli", "warm_s"),
            at("ref_cli", "warm_s"),
            "s",
            1,
        )
    )
    return rows


def report(rounds: list[dict], args: argparse.Namespace) -> None:
    first = rounds[0]
    n = first["ours"]["offers"]
    has_ref = "reference" in first
    print(
        f"\n{n} offers; {len(rounds)} rounds of ours then gpuhunt "
        f"{args.reference_version if has_ref else '(reference not run)'}, each a median of "
        f"{args.inner}; figures are medians over rounds, ratio = reference / ours (medians, "
        "and the range of per-round ratios)"
    )
    print(f"{'':42} {'ours':>10} {'reference':>10} {'':3} {'ratio':>7}  {'per round':>14}")
    for label, _, ours_of, ref_of, unit, scale in _figures():
        pairs = [(ours_of(r), ref_of(r) if has_ref else None) for r in rounds]
        ours = [x for x, _ in pairs if x is not None]
        refs = [y for x, y in pairs if x is not None and y is not None]
        if not ours:
            continue
        a = statistics.median(ours)
        digits = 2 if unit == "s" else 1  # a 0.27 s load is not "0.3"
        line = f"{label:42} {a * scale:10.{digits}f}"
        if refs:
            b = statistics.median(refs)
            each = [y / x for x, y in pairs if x and y is not None]
            line += f" {b * scale:10.{digits}f} {unit:3} {b / a:6.1f}x"
            line += f"  {min(each):5.1f}-{max(each):5.1f}x"
        else:
            line += f" {'-':>10} {unit:3}"
        print(line)
    for d in ("ours", "csv_only"):
        loads = [x for r in rounds for x in r[d]["loads"]]
        print(f"{d} loads (s): {', '.join(f'{x:.2f}' for x in loads)}")
    if has_ref:
        loads = [x for r in rounds for x in r["reference"]["loads"]]
        print(f"reference loads (s): {', '.join(f'{x:.2f}' for x in loads)}")

    splits = [r["ours"]["unfiltered_split"] for r in rounds if "unfiltered_split" in r["ours"]]
    if splits:

        def med(key: str) -> float:
            return statistics.median(x[key] for x in splits)

        n_split = splits[0]["offers"]
        ours_s, floor_s = med("build_s") + med("read_s"), med("floor_build_s") + med("floor_read_s")
        ns = 1e9 / (7 * n_split)
        print(
            f"the floor ({n_split} plain slotted objects, the same 15 fields, made from ready "
            f"tuples, 7 fields read): {floor_s * 1000:.1f} ms (build {med('floor_build_s') * 1000:.1f}"
            f" + read {med('floor_read_s') * 1000:.1f}); ours, unfiltered query + 7 fields read: "
            f"{ours_s * 1000:.1f} ms = {ours_s / floor_s:.2f}x the floor"
        )
        line = (
            f"field read: ours {med('read_s') * ns:.1f} ns, a plain slot "
            f"{med('floor_read_s') * ns:.1f} ns"
        )
        refs = [r["reference"]["unfiltered_split"] for r in rounds if r.get("reference")]
        if refs:
            ref_read = statistics.median(x["read_s"] for x in refs)
            line += f", 0.1.34 {ref_read * 1e9 / (7 * refs[0]['offers']):.1f} ns"
        print(line + " (a field: 7 fields of every offer of the unfiltered answer, per field)")
        report_bounds(rounds, floor_s, n_split)
    rss = first.get("rss")
    if rss:
        mib = 1 / 2**20
        print(
            f"RSS (MiB, from before `import gpuhunt`): ours imports {rss['import'] * mib:.1f}, "
            f"after load {rss['load'] * mib:.1f}, all read {rss['read'] * mib:.1f}, peak "
            f"{rss['peak'] * mib:.1f} (process total)"
            + (
                f"; with MALLOC_ARENA_MAX=2 after load {first['rss_arenas']['load'] * mib:.1f}, "
                f"all read {first['rss_arenas']['read'] * mib:.1f}"
                if first.get("rss_arenas")
                else ""
            )
            + (
                f"; 0.1.34 imports {first['ref_rss']['import'] * mib:.1f}, after load "
                f"{first['ref_rss']['load'] * mib:.1f}, all read {first['ref_rss']['read'] * mib:.1f}"
                if first.get("ref_rss")
                else ""
            )
        )

    report_engines(rounds, args)

    def ms(x: float | None) -> str:
        return f"{x * 1000:.1f} ms" if x is not None else "-"

    for label, r in (("ours", first["ours"]), ("reference", first.get("reference"))):
        if r and "reload_s" in r:
            print(
                f"16 threads, {label:9}: query median {ms(r['median_query_16_threads_s'])}, "
                f"max {ms(r['max_query_16_threads_s'])} with no reload; during a "
                f"{r['reload_s']:.2f} s reload: median {ms(r['median_query_during_reload_s'])}, "
                f"max {ms(r['max_query_during_reload_s'])} ({r['queries_during_reload']} queries)"
            )


def report_bounds(rounds: list[dict], floor_s: float, n_split: int) -> None:
    """The #28 targets that an answer of plain Python objects cannot reach, with what bounds
    them, from this run: the floor (as many plain slotted objects built and read) and the bytes
    one offer object holds on its own."""
    refs = [r["reference"] for r in rounds if r.get("reference")]
    if not refs:
        return
    ref_first = statistics.median(r["first_query_s"] for r in refs)
    ours_first = statistics.median(r["ours"]["first_query_s"] for r in rounds)
    ref_mix = statistics.median(sum(q["full_s"] for q in r["queries"].values()) for r in refs)
    print(
        f"bounds: a first unfiltered query 6x faster than 0.1.34 takes <= "
        f"{ref_first / 6 * 1000:.1f} ms; building and reading {n_split} plain slotted objects "
        f"alone takes {floor_s * 1000:.1f} ms, so no answer of Python objects gets past "
        f"{ref_first / floor_s:.1f}x (ours {ref_first / ours_first:.1f}x)"
    )
    print(
        f"bounds: a query mix 15x faster takes <= {ref_mix / 15 * 1000:.1f} ms in all; its "
        f"unfiltered query alone, at the floor, takes {floor_s * 1000:.1f} ms"
    )
    first, ref = rounds[0].get("rss"), rounds[0].get("ref_rss")
    if first and ref and first.get("offer_bytes"):
        per = 1 / first["offers"]
        print(
            f"bounds: RSS per offer all read 2.5x below 0.1.34's is <= "
            f"{ref['read'] * per / 2.5:.0f} B; ours after load {first['load'] * per:.0f} B plus "
            f"what one offer object holds alone ({first['offer_bytes']} B: the object, its "
            f"price, its list slot) is {first['load'] * per + first['offer_bytes']:.0f} B"
        )
        imported = rounds[0].get("rss_imported") or {}
        costs = [
            f"{mods.replace(',', ' + ')} {(first['load'] - r['load']) / 2**20:.1f} MiB "
            f"({(first['load'] - r['load']) * per:.0f} B an offer)"
            for mods, r in imported.items()
        ]
        if costs:
            print(
                "bounds: of ours after load, the imports the load needs (how much less a "
                "process grows that imported them first): " + ", ".join(costs)
            )


def report_engines(rounds: list[dict], args: argparse.Namespace) -> None:
    """Ours, 0.1.34, polars and DuckDB side by side (medians over rounds): the CSV-only load
    (ours downloads and unzips the archives too; the engines read the unzipped files) and the
    query mix, each with the ratio engine / ours and every answer's size."""
    present = [e for e in ENGINES if any(e in r for r in rounds)]
    if not present:
        print("polars / DuckDB: not importable here (pip install polars duckdb), not measured")
        return
    has_ref = any("reference" in r for r in rounds)

    def med(get: Any) -> float | None:
        xs = [x for x in (get(r) for r in rounds) if x is not None]
        return statistics.median(xs) if xs else None

    of = _dig

    def total(who: str) -> Any:
        def get(r: dict) -> Any:
            q = (r.get(who) or {}).get("queries")
            return sum(v["full_s"] for v in q.values()) if q else None

        return get

    versions = {e: next(r[e]["version"] for r in rounds if e in r) for e in present}
    cols = ["ours"] + ([f"{args.reference_version}"] if has_ref else [])
    cols += [f"{e} {versions[e]}" for e in present]
    print(
        "\nother engines, same CSVs, same filters, every row's 7 fields read (ratio = engine / "
        "ours; > 1 means ours is faster)"
    )
    print(
        f"{'':46}" + "".join(f"{c:>16}" for c in cols) + "".join(f"{'/ours':>8}" for _ in present)
    )
    rows: list[tuple[str, Any, Any, list[Any], str]] = [
        (
            "load, CSV-only (s)",
            of("csv_only", "load_s"),
            of("reference", "load_s"),
            [of(e, "load_s") for e in present],
            "s",
        ),
        (
            "  the same, CPU time (s)",
            of("csv_only", "load_cpu_s"),
            of("reference", "load_cpu_s"),
            [of(e, "load_cpu_s") for e in present],
            "s",
        ),
    ]
    for name in QUERIES:
        rows.append(
            (
                f"query: {name} (ms)",
                of("ours", "queries", name, "full_s"),
                of("reference", "queries", name, "full_s"),
                [of(e, "queries", name, "full_s") for e in present],
                "ms",
            )
        )
    rows.append(
        (
            "query mix, every row read (ms)",
            total("ours"),
            total("reference"),
            [total(e) for e in present],
            "ms",
        )
    )
    for label, ours_of, ref_of, engine_of, unit in rows:
        ours = med(ours_of)
        values = [ours] + ([med(ref_of)] if has_ref else []) + [med(g) for g in engine_of]
        scale, digits = (1, 2) if unit == "s" else (1000, 1)
        line = f"{label:46}" + "".join(
            f"{v * scale:16.{digits}f}" if v is not None else f"{'-':>16}" for v in values
        )
        for g in engine_of:
            v = med(g)
            line += f"{v / ours:7.1f}x" if v is not None and ours else f"{'-':>8}"
        print(line)
    counts = {
        name: [of("ours", "queries", name, "answer")(rounds[0])]
        + [of(e, "queries", name, "answer")(rounds[0]) for e in present]
        for name in QUERIES
    }
    differ = {k: v for k, v in counts.items() if len(set(v)) > 1}
    print(
        "answer sizes: "
        + (
            "the same for every query"
            if not differ
            else f"differ (ours, {', '.join(present)}): {differ}"
        )
    )


if __name__ == "__main__":
    sys.exit(main())
