#!/usr/bin/env python3
"""Size and speed of the price history for a large, fast-changing provider.

    python benchmarks/bench_history.py --offers 100000 --nights 30 --churn 0.1

Generates synthetic offers (AWS-like: instance x zone x spot) and, each night, reprices a
`--churn` fraction of them by up to ±10%, then extends the history the way `catalog build`
does (`history.observe`). Prints the table's rows and size (raw and deflated, as it is
published in `history.zip`), and the time to extend, write, parse and query it. The churn is
deliberately high: real catalogs change far fewer prices a night.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import time
import zlib

from gpuhunt._internal.history import daily
from gpuhunt._internal.history import table as history
from gpuhunt._internal.history.table import Offer


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--offers", type=int, default=100_000)
    ap.add_argument("--nights", type=int, default=30)
    ap.add_argument("--churn", type=float, default=0.1)
    args = ap.parse_args()
    rng = random.Random(1)
    offers = {}
    for i in range(args.offers):
        o = Offer(
            f"inst{i % 700}",
            f"zone{i // 700}",
            i % 3 == 0,
            "H100" if i % 5 == 0 else "A10G",
            1 + i % 8,
            round(rng.uniform(0.1, 90), 4),
        )
        offers[o.key] = o
    spans: list[history.Span] = []
    last = None
    observe = 0.0
    for night in range(args.nights):
        version = f"2026{night:04d}-1"
        nightly = {}
        for key, o in offers.items():
            if rng.random() < args.churn:
                o = o._replace(price=round(o.price * rng.uniform(0.9, 1.1), 4))
            nightly[key] = o
        offers = nightly
        t = time.perf_counter()
        spans = history.observe(
            spans, last, offers, version, dt.date(2026, 1, 1) + dt.timedelta(days=night)
        )
        observe += time.perf_counter() - t
        last = version
    t0 = time.perf_counter()
    data = history.dumps(spans)
    t1 = time.perf_counter()
    parsed = history.loads(data)
    t2 = time.perf_counter()
    daily.query({"aws": parsed})
    t3 = time.perf_counter()
    daily.query({"aws": parsed}, by="instance")
    t4 = time.perf_counter()
    print(
        f"{args.offers} offers, {args.nights} nights, churn {args.churn:g}: {len(spans)} rows, "
        f"{len(data) / 1e6:.1f} MB, {len(zlib.compress(data, 6)) / 1e6:.1f} MB deflated\n"
        f"extend per night {observe / args.nights:.2f} s, write {t1 - t0:.2f} s, "
        f"parse {t2 - t1:.2f} s, query by GPU {t3 - t2:.2f} s, by instance {t4 - t3:.2f} s"
    )


if __name__ == "__main__":
    main()
