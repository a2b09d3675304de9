#!/usr/bin/env python3
"""Does the AWS collector's memory stay flat as the EC2 price list grows? (Not a test.)

    python benchmarks/aws_price_list_stream.py                 # 1x and 400x: about 2.4 GB
    python benchmarks/aws_price_list_stream.py --repeat 1000   # about 6 GB, like the real file
    python benchmarks/aws_price_list_stream.py --keep --workdir /data/bench

Generates price lists in the real bulk CSV format with `make_aws_price_list.py --repeat R` (every
real GPU instance type and region with its real on-demand price, plus R times the rows a
collector must reject), then parses each in a fresh process, reading the file from disk (the
`AWS_CACHE_PATH` path) and streaming it over HTTP from a local server (the no-cache path), and
prints rows/s and the parsing process's peak RSS. Only the price list stage runs: no AWS API.

Peak RSS for the small and the large file should be about the same; rows kept are the same.
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TOOL = ROOT.parent / "shared" / "tools" / "make_aws_price_list.py"


def generate(tool: Path, out: Path, repeat: int) -> None:
    started = time.monotonic()
    subprocess.run(
        [sys.executable, str(tool), str(out), "--repeat", str(repeat)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    size = out.stat().st_size
    print(
        f"generated {out.name}: {size / 1e9:.2f} GB (--repeat {repeat}) "
        f"in {time.monotonic() - started:.0f} s",
        flush=True,
    )


def parse_in_child(source: str) -> dict:
    """Parse in a fresh interpreter so that its peak RSS is the parser's alone."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    out = subprocess.run(
        [sys.executable, __file__, "--child", source],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def child(source: str) -> None:
    from gpuhunt.providers import aws

    baseline_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    stats: Counter[str] = Counter()
    started = time.monotonic()
    if source.startswith("http"):
        rows = aws.read_price_list(source, None, stats)
    else:
        rows = aws.read_price_list(aws.EC2_PRICING_URL, source, stats)
    seconds = time.monotonic() - started
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(
        json.dumps(
            {
                "rows": stats["rows"],
                "kept": len(rows),
                "seconds": seconds,
                "peak_rss_mib": peak_kib / 1024,
                "after_import_rss_mib": baseline_kib / 1024,
            }
        )
    )


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def serve(directory: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    handler = partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=400, help="growth factor of the big file")
    parser.add_argument("--tool", type=Path, default=DEFAULT_TOOL)
    parser.add_argument("--workdir", type=Path, help="where to write the files (default: temp)")
    parser.add_argument("--keep", action="store_true", help="keep the generated files")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return 0
    if not args.tool.exists():
        parser.error(f"{args.tool} not found (pass --tool)")

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="aws-price-list-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    files = {1: workdir / "index-x1.csv", args.repeat: workdir / f"index-x{args.repeat}.csv"}
    server, base_url = serve(workdir)
    try:
        for repeat, path in files.items():
            if not path.exists():
                generate(args.tool, path, repeat)
        print(
            f"\n{'file':<18}{'source':<8}{'GB':>7}{'rows':>12}{'kept':>7}{'s':>8}"
            f"{'rows/s':>12}{'peak RSS MiB':>14}"
        )
        peaks = {}
        for repeat, path in files.items():
            for mode, source in (("file", str(path)), ("http", f"{base_url}/{path.name}")):
                r = parse_in_child(source)
                peaks[(repeat, mode)] = r["peak_rss_mib"]
                print(
                    f"{path.name:<18}{mode:<8}{path.stat().st_size / 1e9:>7.2f}{r['rows']:>12,}"
                    f"{r['kept']:>7}{r['seconds']:>8.1f}{r['rows'] / r['seconds']:>12,.0f}"
                    f"{r['peak_rss_mib']:>14.1f}",
                    flush=True,
                )
        for mode in ("file", "http"):
            small, big = peaks[(1, mode)], peaks[(args.repeat, mode)]
            print(
                f"{mode}: peak RSS x{args.repeat} file vs x1 file: {big:.1f} vs {small:.1f} MiB "
                f"({big - small:+.1f} MiB)"
            )
    finally:
        server.shutdown()
        if not args.keep and args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
