"""How old each provider's data is, and which providers the hourly collection should refresh.

Both read the manifest's per-provider `collected_at`: the time the data was recorded (an ISO
datetime from the nightly build, or a date for a snapshot made from recordings), which a
carried-over CSV keeps however many versions it is carried. Pure: manifest and clock in.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from gpuhunt._internal import registry

# The workflow runs hourly, and a collection finishes some minutes into its run: a provider
# collected at 02:40 must be due again in the 03:17 run (hourly cadence) and in tomorrow's 02:17
# run (daily), not one run later each time. Half the run interval absorbs that drift.
TOLERANCE = dt.timedelta(minutes=30)
# A recording time further ahead of the reader's clock than this is a skewed clock (the build
# machine's or ours), not news: the scheduler collects it again as if its age were unknown -
# never "fresh for years".
FUTURE_SKEW = dt.timedelta(minutes=5)
# What an age reads as when its recording time is after the reader's clock, by any amount: no
# age can be told from it (issue 50: it read `0m`, as fresh as data can be). The build report
# names every such provider.
FUTURE = "unknown (recorded in the future)"


def from_future(when: dt.datetime | None, now: dt.datetime) -> bool:
    """Whether a recording time is in the future of `now`, beyond `FUTURE_SKEW`."""
    return when is not None and when > now + FUTURE_SKEW


def in_future(when: dt.datetime | None, now: dt.datetime) -> bool:
    """Whether a recording time is after `now` at all: its age is unknown, never zero."""
    return when is not None and when > now


def age_at(when: dt.datetime | None, now: dt.datetime) -> dt.timedelta | None:
    """The age at `now` of data recorded `when`; None when not recorded or recorded after `now`
    (`in_future`)."""
    return None if when is None or in_future(when, now) else now - when


def describe_at(when: dt.datetime | None, now: dt.datetime) -> str:
    """`describe` of the age at `now`, flagged `FUTURE` for a time after `now`."""
    return FUTURE if in_future(when, now) else describe(age_at(when, now))


def recorded_at(entry: dict[str, Any] | None) -> dt.datetime | None:
    """When a manifest entry's data was recorded (UTC), or None if it does not say."""
    text = str((entry or {}).get("collected_at") or "").strip()
    if not text:
        return None
    try:
        when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:  # a date, or a naive time: the manifest is in UTC
        when = when.replace(tzinfo=dt.timezone.utc)
    return when.astimezone(dt.timezone.utc)


def entries(manifest: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    providers = (manifest or {}).get("providers")
    return {str(k): v for k, v in providers.items()} if isinstance(providers, dict) else {}


def ages(manifest: dict[str, Any] | None, now: dt.datetime) -> dict[str, dt.timedelta | None]:
    """Each provider's data age at `now` (None: the manifest does not say when it was recorded,
    or says a time after `now`: a skewed clock, `in_future`)."""
    return {
        name: age_at(recorded_at(entry), now) for name, entry in sorted(entries(manifest).items())
    }


def describe(age: dt.timedelta | None) -> str:
    """`45m`, `5h`, `12d`; `unknown` when the date is not recorded."""
    if age is None:
        return "unknown"
    minutes = int(age.total_seconds() // 60)
    if minutes < 60:
        return f"{minutes}m"
    if minutes < 48 * 60:
        return f"{minutes // 60}h"
    return f"{minutes // (24 * 60)}d"


def due(
    manifest: dict[str, Any] | None,
    now: dt.datetime,
    providers: Sequence[str] | None = None,
) -> list[str]:
    """The offline providers whose data is older than their cadence (registry `cadence_hours`),
    in registry order. A provider the previous manifest lacks, or whose recording time it does
    not know (or says is in the future: `from_future`), is due; so is one carried over after a
    failed collection, since it keeps the time of its last good one: it is retried every run
    until a collection succeeds."""
    known = entries(manifest)
    out = []
    for name in registry.OFFLINE_PROVIDERS if providers is None else providers:
        when = recorded_at(known.get(name))
        cadence = dt.timedelta(hours=registry.spec(name).cadence_hours)
        if when is None or from_future(when, now) or now - when >= cadence - TOLERANCE:
            out.append(name)
    return out
