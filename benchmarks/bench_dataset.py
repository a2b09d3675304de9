#!/usr/bin/env python3
"""What the observations dataset weighs at a year of hourly readings, and how long the history's
window queries take on it (docs/availability.md quotes the figures).

    python benchmarks/bench_dataset.py                       # a year at 1/50 width, ~5 min
    python benchmarks/bench_dataset.py --width 1 --days 7 --hourly-files 7   # a full-width week

The offer keys are the bundled snapshot's (real instance names, locations, GPU names and prices of
every provider in it), repeated with a suffix until the catalog is `--offers` wide (114,000 is the
issue's estimate: ~1e9 readings a year / 8,760 hours), then thinned to `--width` of that. The
readings are SYNTHETIC, made up here to exercise the files: each offer flips between available and
sold out as a two-state Markov chain (P(sold out -> available) = 0.2 per hour, P(available ->
sold out) = 0.05), about one offer in three of each provider reports no reading at all, and a
price moves by a few percent about once a month. Nothing here is data: it is only sized like it.

Files are written with the build's own writer (`history.observations.write_parquet`, same schema)
in the published layout. Hourly builds write one file per provider and hour; the default here
writes one file per provider and day (what a daily compaction of those would leave: the build
does not compact yet), and `--hourly-files DAYS` writes the first DAYS as the builds do, to
measure what the small files cost. Queries run through `history.availability.query`, the code `gpuhunt history --availability`
runs, on local files (reading from S3 adds the transfer). Each time is the median of --runs.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from gpuhunt._internal import schema  # noqa: E402
from gpuhunt._internal.formats.csv_table import build_table  # noqa: E402
from gpuhunt._internal.history import availability, observations  # noqa: E402
from gpuhunt._internal.load import sources  # noqa: E402
from gpuhunt._internal.query import answers  # noqa: E402

FULL_WIDTH = 114_000  # offers read every hour at the estimate (1e9 a year / 8,760)
START = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def snapshot_offers() -> dict[str, list[tuple[str, str, bool, str | None, int, float]]]:
    """The bundled snapshot's offer keys, per provider."""
    raw = sources.bundled()
    out: dict[str, list[tuple[str, str, bool, str | None, int, float]]] = {}
    for p, csv in raw.csvs.items():
        t = build_table(schema.decode_csv(csv), provider=p)
        rows = {}
        for i in answers.items(t, t.select(_everything())):
            rows[(i.instance_name, i.location, i.spot)] = (i.gpu_name, i.gpu_count, i.price)
        out[p] = [(*k, *v) for k, v in sorted(rows.items())]
    return out


def _everything() -> Any:
    from gpuhunt._internal.models import QueryFilter

    return QueryFilter()


def widen(
    offers: dict[str, list[tuple[str, str, bool, str | None, int, float]]], n: int
) -> dict[str, list[tuple[str, str, bool, str | None, int, float]]]:
    """`n` offers in the snapshot's provider mix: each provider's keys repeated with a `-rN`
    suffix on the location (or cut) to its share of `n`."""
    total = sum(len(v) for v in offers.values())
    out = {}
    for p, keys in offers.items():
        want = max(1, round(n * len(keys) / total))
        rows: list[tuple[str, str, bool, str | None, int, float]] = []
        r = 0
        while len(rows) < want:
            for inst, loc, spot, gpu, count, price in keys:
                rows.append((inst, loc if r == 0 else f"{loc}-r{r}", spot, gpu, count, price))
                if len(rows) == want:
                    break
            r += 1
        out[p] = rows
    return out


def generate(
    folder: Path,
    offers: dict[str, list[tuple[str, str, bool, str | None, int, float]]],
    days: int,
    hourly_files_days: int,
    seed: int = 7,
) -> dict[str, Any]:
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    schema_ = observations.arrow_schema()
    files = rows = 0
    t0 = time.perf_counter()
    for p, keys in offers.items():
        n = len(keys)
        names = pa.array([k[0] for k in keys], pa.string())
        locs = pa.array([k[1] for k in keys], pa.string())
        spots = pa.array([k[2] for k in keys], pa.bool_())
        gpus = pa.array([k[3] for k in keys], pa.string())
        counts = pa.array([k[4] for k in keys], pa.int16())
        price = np.array([k[5] for k in keys], dtype=np.float64)
        reports = rng.random(n) > 1 / 3
        state = rng.random(n) < 0.7
        for d in range(days):
            day = (START + dt.timedelta(days=d)).date()
            hours = []
            for h in range(24):
                when = START + dt.timedelta(days=d, hours=h)
                flip = rng.random(n)
                state = np.where(state, flip > 0.05, flip < 0.2)
                moved = rng.random(n) < 1 / (30 * 24)
                price = np.where(moved, price * rng.uniform(0.95, 1.05, n), price)
                available = pa.array(state, pa.bool_(), mask=~reports)
                version = f"{when:%Y%m%d-%H}"
                hours.append(
                    pa.Table.from_arrays(
                        [
                            pa.array([when] * n, pa.timestamp("s", tz="UTC")),
                            pa.array([version] * n, pa.string()),
                            names,
                            locs,
                            spots,
                            gpus,
                            counts,
                            pa.array(np.round(price, 4), pa.float64()),
                            available,
                        ],
                        schema=schema_,
                    )
                )
            out = folder / f"date={day.isoformat()}" / f"provider={p}"
            out.mkdir(parents=True, exist_ok=True)
            if d < hourly_files_days:
                for t in hours:
                    version = t.column("version")[0].as_py()
                    observations.write_parquet(t, str(out / f"part-{version}.parquet"))
                    files += 1
            else:
                observations.write_parquet(pa.concat_tables(hours), str(out / "part-day.parquet"))
                files += 1
            rows += 24 * n
    return {"rows": rows, "files": files, "seconds": round(time.perf_counter() - t0, 1)}


def size_of(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*.parquet"))


def timed(fn: Any, runs: int) -> tuple[float, Any]:
    times, got = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        got = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), got


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--offers", type=int, default=FULL_WIDTH, help="full width (offers per hour)")
    ap.add_argument("--width", type=float, default=0.02, help="share of --offers generated")
    ap.add_argument("--days", type=int, default=365)
    ap.add_argument(
        "--hourly-files",
        type=int,
        default=0,
        metavar="DAYS",
        help="write the first DAYS in the hourly layout (one file per build)",
    )
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", help="write here and keep it (default: a temporary folder)")
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()

    n = max(1, round(args.offers * args.width))
    offers = widen(snapshot_offers(), n)
    width = sum(len(v) for v in offers.values())
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="gpuhunt-dataset-"))
    folder = base / observations.ROOT
    try:
        made = generate(folder, offers, args.days, args.hourly_files)
        size = size_of(folder)
        last = (START + dt.timedelta(days=args.days - 1)).date()
        windows = {
            "last 7 days, every offer": dict(since=last - dt.timedelta(days=6)),
            "last 30 days, H100 only": dict(since=last - dt.timedelta(days=29), gpu_name=["H100"]),
            "whole span, one provider (aws)": dict(provider=["aws"]),
            "whole span, every offer": dict(),
        }
        queries = {}
        for name, kw in windows.items():
            seconds, got = timed(lambda kw=kw: availability.query(str(base), **kw), args.runs)
            queries[name] = {
                "seconds": round(seconds, 3),
                "offers": len(got.rows),
                "files": got.files,
            }
        year_rows = width * 24 * 365
        full_year_rows = args.offers * 24 * 365
        per_row = size / made["rows"]
        figures = {
            "offers_per_hour": width,
            "days": args.days,
            "hourly_file_days": args.hourly_files,
            "generated": made,
            "bytes": size,
            "bytes_per_row": round(per_row, 2),
            "year_rows_at_this_width": year_rows,
            "year_bytes_at_this_width": round(per_row * year_rows),
            "full_width_year_rows": full_year_rows,
            "full_width_year_bytes_extrapolated": round(per_row * full_year_rows),
            "queries": queries,
        }
        print(json.dumps(figures, indent=1))
        if args.json:
            Path(args.json).write_text(json.dumps(figures, indent=1) + "\n")
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
