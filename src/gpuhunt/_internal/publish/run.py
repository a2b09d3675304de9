"""`run_build`: what `gpuhunt catalog build` does, without its options or its printing (those are
`cli/catalog_build.py`): read the collected CSVs and the previous catalog, carry the price
history forward, gate each provider and write the build."""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path
from typing import Any

from gpuhunt._internal import errors, freshness, registry
from gpuhunt._internal.errors import PipelineInputError
from gpuhunt._internal.load.sources import RawCatalog
from gpuhunt._internal.publish import accept as accept_file
from gpuhunt._internal.publish import gate, report
from gpuhunt._internal.publish.build import Build, build_catalog, check_version
from gpuhunt._internal.publish.converge import Collected
from gpuhunt._internal.publish.files import (
    DOWNLOAD_TIMEOUT,
    load_candidates,
    load_previous,
    read_input,
    write_build,
)
from gpuhunt._internal.publish.integrity import run_integrity_tests

logger = logging.getLogger(__name__)


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
    except errors.HistoryUnreadable as e:
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
    allow_http: bool = False,
) -> tuple[Build, report.Report]:
    """`catalog build` without the printing: the build written to `output`, and its summary.
    `now` is the build's clock (the simulation test runs months of hourly builds on its own);
    `allow_http` lets the previous catalog be read over plain http (the command passes
    `GPUHUNT_ALLOW_HTTP`: only the top reads the environment)."""
    check_version(version)
    now = now or dt.datetime.now(dt.timezone.utc)
    collected = read_input(input_dir)
    previous, previous_error = (None, None)
    if previous_url:
        previous, previous_error = load_previous(previous_url, allow_http=allow_http)
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
        candidates = load_candidates(previous_url, previous, allow_http=allow_http)
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
