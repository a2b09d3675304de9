"""`gpuhunt catalog build|publish|verify`: the argparse side of the nightly pipeline."""

from __future__ import annotations

import argparse
import datetime as dt
import logging
from pathlib import Path
from typing import Any

from gpuhunt._internal import freshness, registry
from gpuhunt._internal.errors import PipelineInputError
from gpuhunt._internal.load.sources import RawCatalog
from gpuhunt._internal.publish import gate
from gpuhunt._internal.publish.build import FRESH, Collected, build_catalog, check_version
from gpuhunt._internal.publish.files import (
    DOWNLOAD_TIMEOUT,
    load_previous,
    read_input,
    write_build,
)
from gpuhunt._internal.publish.integrity import run_integrity_tests
from gpuhunt._internal.publish.s3 import ENDPOINT_ENV, publish
from gpuhunt._internal.publish.verify import verify

logger = logging.getLogger(__name__)


def register(cat_sub: Any) -> None:
    """Add `build`, `publish` and `verify` to the `gpuhunt catalog` subcommands."""
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
    b.add_argument(
        "--accept",
        action="append",
        default=[],
        metavar="PROVIDER",
        help="publish PROVIDER's fresh CSV even if it is implausible next to the previous one "
        "(a large drop in offers, a vanished region or GPU model, a price jump); repeatable",
    )
    b.add_argument(
        "--accept-all",
        action="store_true",
        help="--accept every provider",
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
        from gpuhunt._internal.history import remote

        previous_history = remote.previous_history(args.previous, previous, DOWNLOAD_TIMEOUT)
    integrity = None
    if args.integrity:
        tests_dir = Path(args.integrity_dir)
        if not tests_dir.is_dir():
            raise PipelineInputError(f"Integrity test folder {tests_dir} does not exist")

        def integrity(provider: str, data: bytes) -> str | None:
            return run_integrity_tests(provider, data, tests_dir)

    for name in args.accept:
        if registry.spec(name).online:
            raise PipelineInputError(f"--accept {name}: not an offline provider")
    not_due = _not_due(previous, collected) if previous is not None else {}
    build = build_catalog(
        args.version,
        collected,
        previous,
        integrity=integrity,
        previous_error=previous_error,
        accept=gate.EVERY_PROVIDER if args.accept_all else {n.lower() for n in args.accept},
        not_collected=not_due,
        previous_history=previous_history,
    )
    write_build(build, args.output)
    for o in build.outcomes:
        note = f"  ({'accepted: ' if o.status == FRESH else ''}{o.reason})" if o.reason else ""
        print(f"{o.provider:12} {o.status:13} {o.rows:7} offers{note}")
    fresh = sum(o.status == FRESH for o in build.outcomes)
    print(f"built {build.version} in {args.output}: {fresh} fresh of {len(build.outcomes)}")
    return 0


def _not_due(previous: RawCatalog, collected: dict[str, Collected]) -> dict[str, str]:
    """For each provider without a CSV whose cadence says it was not due (`freshness.due`; the
    scheduled workflow collects only due providers), the manifest's reason. Manual runs collect
    every provider, so the reason states both facts rather than one as the cause of the other."""
    now = dt.datetime.now(dt.timezone.utc)
    due = set(freshness.due(previous.manifest, now))
    ages = freshness.ages(previous.manifest, now)
    return {
        p: f"no CSV was collected; not due by its cadence (data {freshness.describe(ages.get(p))} "
        f"old, collected every {registry.spec(p).cadence_hours}h)"
        for p in registry.OFFLINE_PROVIDERS
        if p not in collected and p not in due
    }


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
