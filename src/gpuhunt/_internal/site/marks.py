"""What the catalog page shows beside each offer's price, and the availability beside the
price chart (issues 37 and 38; docs/availability.md): `doc["marks"]` of the page's document,
apart from `data.build` and keyed by what an offer is, not by the document's row numbers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from gpuhunt._internal.models import CatalogItem
from gpuhunt._internal.observed import collected_at as observed_at_of
from gpuhunt._internal.offer_spec import iso_z
from gpuhunt._internal.query import answers
from gpuhunt._internal.query.table import Table

MARKS_FORMAT = 1


def offer_key(provider: str, instance: str, spot: bool, location: str | None = None) -> str:
    """The page's key of an offer (`location` None: of its instance type); the page builds the
    same text from the document's columns."""
    key = f"{provider}|{instance}|{int(bool(spot))}"
    return key if location is None else f"{key}|{location}"


def offer_marks(
    items: Sequence[CatalogItem],
    manifest: Mapping[str, Any] | None = None,
    availability: Any = None,
) -> dict[str, Any]:
    """`doc["marks"]`: per provider when its offers were observed (the manifest's
    `collected_at`, or an offer's own `observed_at` where it differs); per offer its
    availability reading and, for a converted price, the native price, currency, rate and rate
    date; per instance type whose machine a resale is; and `availability`, per GPU model, each
    provider's share of available observations over the window (`availability`: a
    `history.availability.AvailabilityHistory`, or None)."""
    observed: dict[str, str] = {}
    for p, entry in ((manifest or {}).get("providers") or {}).items():
        when = observed_at_of(manifest, p)
        if when is not None and isinstance(entry, Mapping):
            observed[p] = when
    own: dict[str, str] = {}
    available: dict[str, int] = {}
    converted: dict[str, list[Any]] = {}
    resold: dict[str, str] = {}
    for i in items:
        at = iso_z(i.observed_at) if i.observed_at is not None else None
        if at is not None and at != observed.get(i.provider):
            own[offer_key(i.provider, i.instance_name, i.spot)] = at
        if i.resold_from:
            resold[offer_key(i.provider, i.instance_name, i.spot)] = i.resold_from
        if isinstance(i.available, bool):
            available[offer_key(i.provider, i.instance_name, i.spot, i.location)] = int(i.available)
        if i.currency and i.currency != "USD":
            converted[offer_key(i.provider, i.instance_name, i.spot, i.location)] = [
                i.currency,
                i.price_native,
                i.fx_rate,
                i.fx_date,
            ]
    return {
        "format": MARKS_FORMAT,
        "observed": observed,
        "observed_own": own,
        "available": available,
        "converted": converted,
        "resold": resold,
        "availability": _availability_by_gpu(availability),
    }


def offer_marks_from_table(
    tables: Table | Sequence[Table],
    manifest: Mapping[str, Any] | None = None,
    availability: Any = None,
) -> dict[str, Any]:
    """`offer_marks` of every offer of `tables` (a catalog's table, or its providers' tables in
    the catalog's order, read as `combine` would join them), with offers made only for the
    shapes that have a mark to give (an availability reading, a converted price, a resale, an
    observation time of its own): at a million offers of which none say any of that, no
    object per offer."""
    from gpuhunt._internal.models import OWN_FIELDS, SHAPE_FIELDS

    tables = [t for t in ([tables] if isinstance(tables, Table) else tables) if len(t)]
    at_provider = SHAPE_FIELDS.index("provider")
    at_own = {name: len(SHAPE_FIELDS) + k for k, name in enumerate(OWN_FIELDS)}
    observed = {p: observed_at_of(manifest, p) for p in ((manifest or {}).get("providers") or {})}
    found: list[CatalogItem] = []
    keys: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # price, table, row
    for k, table in enumerate(tables):
        parts = answers.prepare(table)
        n_shapes = len(parts.shapes)
        shapes = answers.shapes_of(table, np.arange(n_shapes, dtype=np.int64))
        marked = np.zeros(n_shapes, dtype=bool)
        for s, shape in enumerate(shapes):
            at, cur = shape[at_own["observed_at"]], shape[at_own["currency"]]
            marked[s] = (
                isinstance(shape[at_own["available"]], bool)
                or bool(shape[at_own["resold_from"]])
                or (bool(cur) and cur != "USD")
                or (at is not None and iso_z(at) != observed.get(shape[at_provider]))
            )
        rows = np.flatnonzero(marked[np.asarray(parts.shape_of_row, dtype=np.int64)])
        found += answers.items(table, rows)
        keys.append((table.price[rows], np.full(len(rows), k), rows))
    if len(tables) > 1 and found:  # in the joined order: by price, then table, then row
        price, table_of_row, row = (np.concatenate(c) for c in zip(*keys))
        found = [found[i] for i in np.lexsort((row, table_of_row, price)).tolist()]
    return offer_marks(found, manifest, availability)


def _availability_by_gpu(got: Any) -> dict[str, Any] | None:
    """Per GPU model: [provider, offers, observations, share available] over the window, the
    share weighted by observations (offers that never reported are left out of it)."""
    if got is None or not getattr(got, "rows", None):
        return None
    sums: dict[tuple[str, str], list[float]] = {}
    for r in got.rows:
        if not r.gpu_name or not r.gpu_count:
            continue
        s = sums.setdefault((r.gpu_name, r.provider), [0, 0, 0.0, 0])
        s[0] += 1
        s[1] += r.observations
        if r.available_share is not None and r.reported:
            s[2] += r.available_share * r.reported
            s[3] += r.reported
    by_gpu: dict[str, list[list[Any]]] = {}
    for (gpu, provider), (offers, n, yes, reported) in sorted(sums.items()):
        share = round(yes / reported, 4) if reported else None
        by_gpu.setdefault(gpu, []).append([provider, int(offers), int(n), share])
    return {
        "since": got.since.isoformat() if got.since else None,
        "by_gpu": by_gpu,
    }
