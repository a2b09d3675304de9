"""`provider_data["observed_at"]`: when an offer's price was read (docs/catalog-format.md).

A published catalog's offers were read when their provider was collected: the manifest's
per-provider `collected_at` (which survives carry-overs, so a carried-over CSV keeps its own
age). An online provider's offers were read when it answered. The stamp is written once per
distinct `provider_data` text of a provider's table, not once per offer: offers of one shape
share that text, so stamping costs a few thousand JSON round trips, not a pass over the rows.
A value the offer already carries (a provider that reads its own timestamps) is kept.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping
from typing import Any

from gpuhunt._internal.models import CatalogItem

KEY = "observed_at"


def iso_z(when: dt.datetime) -> str:
    """The contract's form: ISO 8601, UTC, seconds, with `Z` (`2026-12-02T08:00:00Z`). A naive
    time is taken as UTC (the manifests and collectors write UTC)."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return when.astimezone(dt.timezone.utc).replace(microsecond=0, tzinfo=None).isoformat() + "Z"


def parse(text: Any) -> dt.datetime | None:
    """An `observed_at`/`collected_at` text as an aware UTC datetime; None when it is not one."""
    if not isinstance(text, str) or not text:
        return None
    try:
        when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return when.astimezone(dt.timezone.utc)


def collected_at(manifest: Mapping[str, Any] | None, provider: str) -> str | None:
    """The provider's collection time from a catalog manifest, in the contract's form; None
    when the manifest does not say (a per-provider-layout catalog of gpuhunt 0.1.x, a folder
    of CSVs)."""
    entry = ((manifest or {}).get("providers") or {}).get(provider)
    if not isinstance(entry, Mapping):
        return None
    when = parse(entry.get("collected_at"))
    return iso_z(when) if when is not None else None


def stamp_text(text: str, observed_at: str) -> str:
    """One provider_data JSON text with `observed_at` added (kept if already there). A text
    that is not a JSON object is left as it is: the reader already treats it as it must."""
    try:
        data = {} if text in ("", "{}") else json.loads(text)
    except ValueError:
        return text
    if not isinstance(data, dict) or KEY in data:
        return text
    data[KEY] = observed_at
    return json.dumps(data, separators=(",", ":"))


def stamp_table(table: Any, observed_at: str | None) -> Any:
    """Stamp every offer of a provider's `query.table.Table` (before it is combined and
    compacted); returns the table. The string list is replaced, not edited, since a column
    file's decoded lists may be shared with a cached table."""
    if observed_at is None:
        return table
    table.provider_datas = [stamp_text(t, observed_at) for t in table.provider_datas]
    return table


def stamp_loaded(table: Any, manifest: Mapping[str, Any] | None, provider: str) -> Any:
    """The loader's call: a published provider's table stamped with its collection time."""
    return stamp_table(table, collected_at(manifest, provider))


def stamp_items(items: Iterable[Any], when: dt.datetime) -> list[Any]:
    """Online offers stamped with the time their provider answered. `provider_data` is replaced
    by a new dict (it may be a shared default or read-only), never edited in place."""
    text = iso_z(when)
    out = []
    for item in items:
        if isinstance(item, CatalogItem):
            data = item.provider_data
            if isinstance(data, Mapping) and KEY not in data:
                item.provider_data = {**data, KEY: text}
        out.append(item)
    return out
