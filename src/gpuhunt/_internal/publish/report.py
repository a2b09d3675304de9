"""What each build says about staleness (docs/pipeline.md, "Alerts"): per provider fresh or
carried over (since when, for how long, why), refused and unconfirmed changes, a price history
started again; written to the job summary (`$GITHUB_STEP_SUMMARY`) and a file by `catalog
build`, and checked after publishing by `catalog report --fail-on-stale`, which also posts it to
`GPUHUNT_ALERT_WEBHOOK` when something needs a human.

A provider is **stale** when its published data is older than its registry limit
(`ProviderSpec.stale_limit_hours`, 3x its cadence by default). Pure apart from `post`.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gpuhunt._internal import freshness, registry
from gpuhunt._internal.errors import UnknownProviderError

logger = logging.getLogger(__name__)

WEBHOOK_ENV = "GPUHUNT_ALERT_WEBHOOK"
SUMMARY_ENV = "GITHUB_STEP_SUMMARY"
STALE_EXIT = 3  # `catalog report --fail-on-stale`: published, but some provider is stale


@dataclass
class ProviderLine:
    provider: str
    status: str
    rows: int
    collected_at: str | None
    age_hours: float | None
    limit_hours: int | None
    stale: bool
    from_version: str | None
    reason: str | None = None  # why the fresh CSV was not used
    pending: str | None = None  # "2 of 3": an unconfirmed change
    accepted: str | None = None  # fresh despite the gate: by whom, over what
    availability: str | None = None  # it stopped reporting availability (`publish.dataset`)
    future: bool = False  # recorded after the report's time: its age is unknown (a skewed clock)


@dataclass
class Report:
    version: str
    built_at: str | None
    now: str
    providers: list[ProviderLine]
    history_reset: str | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def stale(self) -> list[ProviderLine]:
        return [p for p in self.providers if p.stale]

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["stale"] = [p.provider for p in self.stale]
        return out


def _limit(provider: str) -> int | None:
    try:
        return registry.spec(provider).stale_limit_hours
    except UnknownProviderError:
        return None


def build_report(manifest: dict[str, Any], now: dt.datetime) -> Report:
    lines: list[ProviderLine] = []
    problems: list[str] = []
    for name, entry in sorted(freshness.entries(manifest).items()):
        when = freshness.recorded_at(entry)
        future = freshness.in_future(when, now)
        if future:
            problems.append(
                f"{name} was recorded at {entry.get('collected_at')}, in the future of this "
                "report (a skewed clock); its age counts as unknown"
            )
            when = None
        age = None if when is None else max((now - when).total_seconds() / 3600, 0.0)
        limit = _limit(name)
        status = str(entry.get("status"))
        # A fresh entry was collected by this build; data of unknown age counts as stale.
        stale = status != "fresh" and limit is not None and (age is None or age > limit)
        pending = entry.get("pending")
        line = ProviderLine(
            name,
            status,
            int(entry.get("rows") or 0),
            entry.get("collected_at"),
            None if age is None else round(age, 2),
            limit,
            stale,
            entry.get("from_version"),
            entry.get("reason"),
            (
                f"{len(pending.get('collections') or [])} of {pending.get('confirmations')}"
                if isinstance(pending, dict)
                else None
            ),
            (
                f"{entry.get('accepted_by')}: {entry['accepted_despite']}"
                if entry.get("accepted_despite")
                else None
            ),
            entry.get("availability_lost"),
            future,
        )
        lines.append(line)
        if stale:
            problems.append(
                f"{name} is stale: its data is {_hours(age)} old (limit {limit}h), carried over "
                f"from {line.from_version}: {line.reason}"
            )
        elif status != "fresh" and line.reason and line.reason.startswith("implausible"):
            problems.append(f"{name} refused: {line.reason}")
        if line.availability:
            problems.append(line.availability)
    reset = manifest.get("history_reset")
    reset_text = None
    if isinstance(reset, dict):
        kept = (
            f"; the unreadable file is kept as {reset['kept_as']}" if reset.get("kept_as") else ""
        )
        reset_text = (
            f"the price history starts again with this version: {reset.get('reason')}{kept}"
        )
        problems.append(reset_text)
    return Report(
        str(manifest.get("version")),
        manifest.get("built_at"),
        now.astimezone(dt.timezone.utc).replace(microsecond=0).isoformat(),
        lines,
        reset_text,
        problems,
    )


def _hours(age: float | None) -> str:
    return freshness.describe(None if age is None else dt.timedelta(hours=age))


def markdown(report: Report) -> str:
    out = [f"## Catalog {report.version}", ""]
    if report.stale:
        names = ", ".join(p.provider for p in report.stale)
        out += [f"**Stale: {names}** (carried over longer than the limit)", ""]
    out += [
        "| provider | status | offers | data from | age | limit | note |",
        "|---|---|---|---|---|---|---|",
    ]
    for p in report.providers:
        status = "STALE" if p.stale else p.status.replace("_", " ")
        notes = []
        if p.status != "fresh":
            notes.append(f"since {p.from_version}: {p.reason}")
        if p.pending:
            notes.append(f"unconfirmed change, {p.pending} collections")
        if p.accepted:
            notes.append(f"accepted by {p.accepted}")
        if p.availability:
            notes.append(p.availability)
        if p.future:
            notes.append(
                f"recorded in the future of this report ({p.collected_at}): a skewed clock"
            )
        note = "; ".join(notes).replace("|", "\\|").replace("\n", " ")
        out.append(
            f"| {p.provider} | {status} | {p.rows} | {p.collected_at or 'unknown'} | "
            f"{freshness.FUTURE if p.future else _hours(p.age_hours)} | {p.limit_hours}h | {note} |"
        )
    if report.history_reset:
        out += ["", f"**History:** {report.history_reset}"]
    return "\n".join(out) + "\n"


def write(report: Report, path: str | Path | None = None) -> None:
    """The summary into `path` (if given) and appended to the job summary when there is one."""
    text = markdown(report)
    if path:
        Path(path).write_text(text, encoding="utf-8")
    job_summary = os.environ.get(SUMMARY_ENV)
    if job_summary:
        with open(job_summary, "a", encoding="utf-8") as f:
            f.write(text + "\n")


def post(url: str, report: Report, timeout: tuple[float, float] = (5.0, 20.0)) -> str | None:
    """POST the summary as JSON (`text` for chat webhooks such as Slack's, `report` for
    programs); returns why it failed, or None. Never raises: an alert must not fail a publish."""
    import requests

    payload = {"text": markdown(report), "report": report.to_json()}
    try:
        r = requests.post(url, json=payload, timeout=timeout)
    except requests.RequestException as e:
        return type(e).__name__  # its message would show the URL, which is a secret

    if r.status_code >= 300:
        return f"HTTP {r.status_code}"
    return None
