"""`CatalogItem.observed_at`: when an offer's price was read (docs/catalog-format.md).

A published catalog's offers were read when their provider was collected: the manifest's
per-provider `collected_at` (which survives carry-overs, so a carried-over CSV keeps its own
age). An online provider's offers were read when it answered. The stamp is written once per
distinct offer text of a provider's table (`offer_spec`: provider_data and the own fields),
not once per offer: offers of one shape share that text, so stamping costs a few thousand
string joins, not a pass over the rows. A value the offer already carries (a provider that
reads its own timestamps) is kept; `provider_data` is never touched.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any

from gpuhunt._internal import offer_spec
from gpuhunt._internal.models import CatalogItem
from gpuhunt._internal.offer_spec import iso_z

KEY = "observed_at"


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


def provider_ages(
    manifest: Mapping[str, Any] | None, providers: Iterable[str], now: dt.datetime
) -> dict[str, dict[str, Any]]:
    """Per provider, how old its data is, as the servers' answers carry it beside `catalog`:
    `collected_at` (the manifest's, None when it does not say), `age_seconds` at `now` (None
    when unknown, and for a collection time in the future: never 0 for a clock that is
    behind) and `source` (what kind of source the manifest names: a price list, recorded
    answers, a third-party catalog, the published catalog; None when it does not say)."""
    entries = (manifest or {}).get("providers") or {}
    out: dict[str, dict[str, Any]] = {}
    for p in sorted(set(providers)):
        entry = entries.get(p)
        at = collected_at(manifest, p)
        when = parse(at)
        age = None if when is None or when > now else int((now - when).total_seconds())
        source = entry.get("source") if isinstance(entry, Mapping) else None
        if isinstance(source, Mapping):
            source = source.get("kind") or source.get("name")
        out[p] = {
            "collected_at": at,
            "age_seconds": age,
            "source": source if isinstance(source, str) else None,
        }
    return out


def stamp_text(text: str, observed_at: str) -> str:
    """One offer text with `observed_at` set (kept if it already has one)."""
    return offer_spec.with_cell(text, KEY, observed_at)


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
    """Online offers stamped with the time their provider answered (`observed_at`, kept where
    the provider set it); their `provider_data` stays as the provider made it."""
    at = offer_spec.parse_time(iso_z(when))
    out = []
    for item in items:
        if isinstance(item, CatalogItem) and item.observed_at is None:
            item.observed_at = at
        out.append(item)
    return out
