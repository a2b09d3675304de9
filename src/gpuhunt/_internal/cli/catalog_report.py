"""`gpuhunt catalog report`: which providers of a build or a published catalog are fresh,
carried over or stale; alert a webhook when something needs a human."""

from __future__ import annotations

import argparse
import datetime as dt
import os
from pathlib import Path

from gpuhunt._internal import registry
from gpuhunt._internal.cli import render
from gpuhunt._internal.cli.commands import command
from gpuhunt._internal.errors import PipelineError
from gpuhunt._internal.publish import report


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", help="a folder written by `catalog build`, or a base URL")
    p.add_argument("--summary", default=None, metavar="FILE", help="also write it to FILE")
    p.add_argument(
        "--fail-on-stale",
        action="store_true",
        help=f"exit {report.STALE_EXIT} when a provider is carried over beyond its limit",
    )
    p.add_argument(
        "--webhook",
        default=None,
        help=f"URL to POST the summary to (default: ${report.WEBHOOK_ENV})",
    )
    p.add_argument(
        "--job-summary",
        action="store_true",
        help=f"also append it to ${report.SUMMARY_ENV} (`catalog build` already does)",
    )


@command(
    "catalog",
    "report",
    help="say which providers are fresh, carried over or stale; alert",
    description="Summarize a build folder's or a published catalog's providers: fresh, "
    "carried over (since when, why), unconfirmed changes, stale beyond the registry limit. "
    f"Posts the summary to ${report.WEBHOOK_ENV} (any URL taking JSON) when something "
    "needs a human; a failed post is reported, never an error.",
    arguments=_arguments,
)
def run(args: argparse.Namespace) -> int:
    from gpuhunt._internal.load import fetch
    from gpuhunt._internal.load.settings import Settings
    from gpuhunt._internal.publish.files import DOWNLOAD_TIMEOUT

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
    render.emit(render.Answer(text=lambda: text))
    if args.summary:
        Path(args.summary).write_text(text, encoding="utf-8")
    if args.job_summary:
        report.write(summary)
    webhook = args.webhook or os.environ.get(report.WEBHOOK_ENV) or ""
    if webhook and summary.problems:
        failed = report.post(webhook, summary)
        if failed:
            # The catalog is published already; a broken alert channel must not undo that.
            render.emit(render.text(f"warning: the alert webhook failed ({failed})"))
        else:
            render.emit(render.text("alert posted to the webhook"))
    stale = summary.stale
    if stale and args.fail_on_stale:
        names = ", ".join(p.provider for p in stale)
        render.emit(render.text(f"stale beyond the limit: {names}"))
        return report.STALE_EXIT
    return 0
