#!/usr/bin/env python3
"""Cost of the filters people write (issue 15), and queries on a machine without network.

    python benchmarks/bench_filters.py --offers 180000 --runs 5

1. On a generated catalog (`bench_catalog.generate`, loaded from a folder of CSVs), the median
   time of `Catalog.query(...)` for a filter, counting the answer without reading its offers:
   what a GPU name with memory, a location pattern and `min_cuda` cost next to plain filters.
2. A catalog with one online provider that fails after `--fail-after` seconds (as a provider
   does when DNS or the network is down): the time of the first query (which waits for it) and
   of the next ten (which must not).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from bench_catalog import generate  # noqa: E402

from gpuhunt import Catalog  # noqa: E402
from gpuhunt.providers.base import AbstractProvider  # noqa: E402

QUERIES = {
    "gpu name": {"gpu_name": "H100"},
    "gpu name with memory": {"gpu_name": "A100 80GB"},
    "location": {"location": "us-east-1"},
    "location patterns": {"location": ["us-*", "europe-west?"]},
    "min_cuda": {"min_cuda": "12.8"},
    "compute capability 9": {"min_compute_capability": 9},
}


class Unreachable(AbstractProvider):
    NAME = "vastai"

    def __init__(self, delay: float) -> None:
        self.delay = delay

    def get(self, query_filter=None, balance_resources=True, apply_filter=False):
        time.sleep(self.delay)
        raise ConnectionError("Name or service not known")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--offers", type=int, default=180_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--fail-after", type=float, default=1.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        for provider, data in generate(args.offers).items():
            (root / f"{provider}.csv").write_bytes(data)
        import os

        os.environ["GPUHUNT_CATALOG_DIR"] = str(root)
        os.environ["GPUHUNT_CACHE_DIR"] = str(root / "cache")
        c = Catalog(balance_resources=False, auto_reload=False)
        c.load()
        print(f"{len(c.query())} offers")
        for name, kw in QUERIES.items():
            times, n = [], 0
            for _ in range(args.runs):
                t = time.perf_counter()
                n = len(c.query(**kw))
                times.append(time.perf_counter() - t)
            print(f"{name:24} {statistics.median(times) * 1000:8.2f} ms  {n:7d} offers")

        c.add_provider(Unreachable(args.fail_after))
        t = time.perf_counter()
        c.query(gpu_name="H100")
        first = time.perf_counter() - t
        later = []
        for _ in range(10):
            t = time.perf_counter()
            c.query(gpu_name="H100")
            later.append(time.perf_counter() - t)
        print(
            f"failing online provider: first query {first:.2f} s, next ten at most {max(later) * 1000:.1f} ms"
        )
        c.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
