"""`gpuhunt catalog build|publish|verify`: the argparse side of the nightly pipeline."""

from __future__ import annotations

import argparse
import datetime as dt
import logging
from pathlib import Path
from typing import Any

from gpuhunt._internal import freshness, registry
from gpuhunt._internal.errors import PipelineError, PipelineInputError
from gpuhunt._internal.load.settings import Settings
from gpuhunt._internal.load.sources import RawCatalog
from gpuhunt._internal.publish import accept as accept_file
from gpuhunt._internal.publish import gate, report
from gpuhunt._internal.publish.build import (
    FRESH,
    Build,
    Collected,
    build_catalog,
    check_version,
)
from gpuhunt._internal.publish.files import (
    DOWNLOAD_TIMEOUT,
    load_candidates,
    load_previous,
    read_input,
    write_build,
)
from gpuhunt._internal.publish.integrity import run_integrity_tests
from gpuhunt._internal.publish.s3 import ENDPOINT_ENV, PUBLIC_READ, publish
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
        "--previous's forward (an unreadable one is started again without it, and kept aside)",
    )
    b.add_argument(
        "--accept-file",
        default=None,
        metavar="PATH",
        help=f"a committed JSON file of time-limited acceptances (e.g. {accept_file.DEFAULT_PATH}"
        "; a missing file accepts nothing); see docs/pipeline.md",
    )
    b.add_argument(
        "--summary",
        default=None,
        metavar="FILE",
        help=f"write the build's summary (markdown) to FILE; it is also appended to "
        f"${report.SUMMARY_ENV} when that is set",
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
    p.add_argument(
        "--no-acl",
        action="store_true",
        help="upload without the public-read ACL (for buckets with ACLs disabled, which then "
        "need the public-read bucket policy of docs/pipeline.md)",
    )
    p.set_defaults(run=_cmd_publish)

    v = cat_sub.add_parser(
        "verify",
        help="download a published version and check it against its manifest",
    )
    v.add_argument("url", help="base URL or folder the catalog is published under")
    v.add_argument("--version", default=None, help="a version to check (default: the latest)")
    v.set_defaults(run=_cmd_verify)

    r = cat_sub.add_parser(
        "report",
        help="say which providers are fresh, carried over or stale; alert",
        description="Summarize a build folder's or a published catalog's providers: fresh, "
        "carried over (since when, why), unconfirmed changes, stale beyond the registry limit. "
        f"Posts the summary to ${report.WEBHOOK_ENV} (any URL taking JSON) when something "
        "needs a human; a failed post is reported, never an error.",
    )
    r.add_argument("source", help="a folder written by `catalog build`, or a base URL")
    r.add_argument("--summary", default=None, metavar="FILE", help="also write it to FILE")
    r.add_argument(
        "--fail-on-stale",
        action="store_true",
        help=f"exit {report.STALE_EXIT} when a provider is carried over beyond its limit",
    )
    r.add_argument(
        "--webhook",
        default=None,
        help=f"URL to POST the summary to (default: ${report.WEBHOOK_ENV})",
    )
    r.add_argument(
        "--job-summary",
        action="store_true",
        help=f"also append it to ${report.SUMMARY_ENV} (`catalog build` already does)",
    )
    r.set_defaults(run=_cmd_report)


def _cmd_build(args: argparse.Namespace) -> int:
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
    )
    for o in build.outcomes:
        note = f"  ({'accepted: ' if o.status == FRESH else ''}{o.reason})" if o.reason else ""
        print(f"{o.provider:12} {o.status:13} {o.rows:7} offers{note}")
    if summary.history_reset:
        print(f"history: {summary.history_reset}")
    report.write(summary, args.summary)
    fresh = sum(o.status == FRESH for o in build.outcomes)
    print(f"built {build.version} in {args.output}: {fresh} fresh of {len(build.outcomes)}")
    return 0


def _previous_history(
    url: str, previous: RawCatalog, reset: bool, version: str, now: dt.datetime
) -> tuple[dict[str, bytes], dict[str, Any] | None, dict[str, bytes]]:
    """(the history to carry forward, the manifest's `history_reset` or None, objects to
    publish with the version). An unreadable history never stops the build: it starts again
    with this version, and the unreadable object is published beside it under a dated name."""
    from gpuhunt._internal.history import remote
    from gpuhunt._internal.history import table as history
    from gpuhunt._internal.load import fetch

    if reset:
        return {}, {"reason": "--reset-history", "previous_version": previous.version}, {}
    try:
        return remote.previous_history(url, previous, DOWNLOAD_TIMEOUT), None, {}
    except remote.HistoryUnreadable as e:
        logger.warning("%s; the history starts again with %s", e, version)
        reason = str(e)
    kept: dict[str, bytes] = {}
    rel = f"{version}/history-unreadable-{previous.version}-{now:%Y%m%dT%H%M%SZ}.zip"
    try:
        kept[rel] = fetch.Fetcher(url.rstrip("/"), DOWNLOAD_TIMEOUT, 2).get(
            f"{previous.version}/{history.OBJECT}"
        )
    except Exception as e:  # noqa: BLE001 - what is kept aside is a courtesy, never a blocker
        logger.warning("Could not keep the unreadable history aside: %s", e)
    reset_info: dict[str, Any] = {"reason": reason, "previous_version": previous.version}
    if kept:
        reset_info["kept_as"] = rel
    return {}, reset_info, kept


def run_build(
    input_dir: str | Path,
    version: str,
    output: str | Path,
    *,
    previous_url: str | None = None,
    integrity_dir: str | Path | None = None,
    accept: list[str] = [],  # noqa: B006 - read only
    accept_all: bool = False,
    accept_path: str | Path | None = None,
    reset_history: bool = False,
    now: dt.datetime | None = None,
) -> tuple[Build, report.Report]:
    """`catalog build` without the printing: the build written to `output`, and its summary.
    `now` is the build's clock (the simulation test runs months of hourly builds on its own)."""
    check_version(version)
    now = now or dt.datetime.now(dt.timezone.utc)
    collected = read_input(input_dir)
    previous, previous_error = (None, None)
    if previous_url:
        previous, previous_error = load_previous(
            previous_url, allow_http=Settings.from_env().allow_http
        )
        if previous_error:
            logger.warning("Could not read the previous catalog: %s", previous_error)
    previous_history: dict[str, bytes] = {}
    history_reset: dict[str, Any] | None = None
    kept: dict[str, bytes] = {}
    candidates: dict[str, bytes] = {}
    if previous is not None and previous_url:
        previous_history, history_reset, kept = _previous_history(
            previous_url, previous, reset_history, version, now
        )
        candidates = load_candidates(
            previous_url, previous, allow_http=Settings.from_env().allow_http
        )
    integrity = None
    if integrity_dir is not None:
        tests_dir = Path(integrity_dir)
        if not tests_dir.is_dir():
            raise PipelineInputError(f"Integrity test folder {tests_dir} does not exist")

        def integrity(provider: str, data: bytes) -> str | None:
            return run_integrity_tests(provider, data, tests_dir)

    for name in accept:
        if registry.spec(name).online:
            raise PipelineInputError(f"--accept {name}: not an offline provider")
    accepted_by = accept_file.active(accept_path, now) if accept_path else {}
    accepted: Any = gate.EVERY_PROVIDER if accept_all else {n.lower() for n in accept}
    if not accept_all:
        accepted |= set(accepted_by)
    not_due = _not_due(previous, collected, now) if previous is not None else {}
    build = build_catalog(
        version,
        collected,
        previous,
        integrity=integrity,
        previous_error=previous_error,
        built_at=now.astimezone(dt.timezone.utc).replace(microsecond=0).isoformat(),
        accept=accepted,
        not_collected=not_due,
        previous_history=previous_history,
        accepted_by={
            **accepted_by,
            **{n.lower(): "the maintainer (--accept)" for n in accept},
        },
        candidates=candidates,
        history_reset=history_reset,
        extra_objects=kept,
    )
    write_build(build, output)
    return build, report.build_report(build.manifest, now)


def _not_due(
    previous: RawCatalog, collected: dict[str, Collected], now: dt.datetime
) -> dict[str, str]:
    """For each provider without a CSV whose cadence says it was not due (`freshness.due`; the
    scheduled workflow collects only due providers), the manifest's reason. Manual runs collect
    every provider, so the reason states both facts rather than one as the cause of the other."""
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
        acl=None if args.no_acl else PUBLIC_READ,
    )
    where = f"s3://{args.bucket}/{args.prefix.strip('/')}".rstrip("/")
    print(
        f"published {result.version} to {where}: {len(result.uploaded)} uploaded, "
        f"{len(result.skipped)} already there, {len(result.pointers)} pointers"
    )
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    checked = verify(args.url, version=args.version, allow_http=Settings.from_env().allow_http)
    entries = checked.manifest["providers"]
    for p, e in sorted(entries.items()):
        print(f"{p:12} {e['status']:13} {e['rows']:7} offers  from {e.get('from_version')}")
    history_note = f", price history {checked.history_rows} rows" if checked.history_rows else ""
    print(
        f"OK: {args.url.rstrip('/')} version {checked.version}, {len(entries)} providers"
        + history_note
    )
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    import os

    from gpuhunt._internal.load import fetch

    raw = fetch.fetch(
        args.source,
        list(registry.OFFLINE_PROVIDERS),
        version=None,
        cache=None,
        timeout=DOWNLOAD_TIMEOUT,
        retries=2,
        allow_http=Settings.from_env().allow_http,
    )
    if raw.manifest is None:
        raise PipelineError(
            f"{args.source}: no manifest to report on (not built by `catalog build`)"
        )
    summary = report.build_report(raw.manifest, dt.datetime.now(dt.timezone.utc))
    text = report.markdown(summary)
    print(text, end="")
    if args.summary:
        Path(args.summary).write_text(text, encoding="utf-8")
    if args.job_summary:
        report.write(summary)
    webhook = args.webhook or os.environ.get(report.WEBHOOK_ENV) or ""
    if webhook and summary.problems:
        failed = report.post(webhook, summary)
        if failed:
            # The catalog is published already; a broken alert channel must not undo that.
            print(f"warning: the alert webhook failed ({failed})")
        else:
            print("alert posted to the webhook")
    stale = summary.stale
    if stale and args.fail_on_stale:
        names = ", ".join(p.provider for p in stale)
        print(f"stale beyond the limit: {names}")
        return report.STALE_EXIT
    return 0
