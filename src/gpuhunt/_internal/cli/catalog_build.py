"""`gpuhunt catalog build`: the argparse side of `publish.run.run_build`, the nightly
build's packing step."""

from __future__ import annotations

import argparse

from gpuhunt._internal.cli import render
from gpuhunt._internal.cli.commands import command
from gpuhunt._internal.publish import accept as accept_file
from gpuhunt._internal.publish import report


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--input", required=True, help="folder of collected {provider}.csv files")
    p.add_argument("--previous", help="the published catalog to carry providers over from")
    p.add_argument("--version", required=True, help="the new version, e.g. 20261129-1")
    p.add_argument("--output", required=True, help="empty folder to write the build to")
    p.add_argument(
        "--integrity",
        action="store_true",
        help="also require integrity_tests/test_<provider>.py to pass on each fresh CSV",
    )
    p.add_argument(
        "--reset-history",
        action="store_true",
        help="start the price history again from this version instead of carrying "
        "--previous's forward (an unreadable one is started again without it, and kept aside)",
    )
    p.add_argument(
        "--accept-file",
        default=None,
        metavar="PATH",
        help=f"a committed JSON file of time-limited acceptances (e.g. {accept_file.DEFAULT_PATH}"
        "; a missing file accepts nothing); see docs/pipeline.md",
    )
    p.add_argument(
        "--summary",
        default=None,
        metavar="FILE",
        help=f"write the build's summary (markdown) to FILE; it is also appended to "
        f"${report.SUMMARY_ENV} when that is set",
    )
    p.add_argument(
        "--integrity-dir",
        default="integrity_tests",
        help="folder of the integrity tests (default: ./integrity_tests)",
    )
    p.add_argument(
        "--accept",
        action="append",
        default=[],
        metavar="PROVIDER",
        help="publish PROVIDER's fresh CSV even if it is implausible next to the previous one "
        "(a large drop in offers, a vanished region or GPU model, a price jump); repeatable",
    )
    p.add_argument(
        "--accept-all",
        action="store_true",
        help="--accept every provider",
    )


@command(
    "catalog",
    "build",
    help="pack collected CSVs into a new catalog version (both layouts)",
    description="Pack `{provider}.csv` files into a catalog version laid out like the "
    "bucket. A provider whose CSV is missing or fails its checks is carried over from "
    "--previous.",
    arguments=_arguments,
)
def run(args: argparse.Namespace) -> int:
    from gpuhunt._internal.load.settings import Settings
    from gpuhunt._internal.publish.build import FRESH
    from gpuhunt._internal.publish.run import run_build

    build, summary = run_build(
        args.input,
        args.version,
        args.output,
        previous_url=args.previous,
        integrity_dir=args.integrity_dir if args.integrity else None,
        accept=args.accept,
        accept_all=args.accept_all,
        accept_path=args.accept_file,
        reset_history=args.reset_history,
        allow_http=Settings.from_env().allow_http,  # a command's entry point reads the environment
    )
    out = []
    for o in build.outcomes:
        note = f"  ({'accepted: ' if o.status == FRESH else ''}{o.reason})" if o.reason else ""
        out.append(f"{o.provider:12} {o.status:13} {o.rows:7} offers{note}")
    if summary.history_reset:
        out.append(f"history: {summary.history_reset}")
    render.emit(render.text(*out))
    report.write(summary, args.summary)
    fresh = sum(o.status == FRESH for o in build.outcomes)
    render.emit(
        render.text(
            f"built {build.version} in {args.output}: {fresh} fresh of {len(build.outcomes)}"
        )
    )
    return 0
