"""The daily view of a price history (pure): the cheapest price per day, per GPU model or per
instance, of the offers matching a filter, and its terminal sparkline. The rows it reads are
`table.Span`s; `remote` fetches them, `commands` and `plot` show the answer."""

from __future__ import annotations

import datetime as dt
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuhunt._internal.gpu_names import canonical_gpu_name
from gpuhunt._internal.history.table import Span

SPARKS = "▁▂▃▄▅▆▇█"


@dataclass
class Series:
    """One line of a history: the cheapest price on each day (None: nothing on offer)."""

    name: str
    prices: list[float | None]
    where: list[str | None]  # the offer that had that price: provider/instance/location[/spot]

    def known(self) -> list[float]:
        return [p for p in self.prices if p is not None]


@dataclass
class PriceHistory:
    """Cheapest price per day, per GPU model (per GPU, $/h) or per instance ($/h)."""

    by: str  # "gpu" or "instance"
    days: list[dt.date]
    series: list[Series]
    version: str | None = None
    url: str | None = None
    missing: list[str] = field(default_factory=list)  # providers that have no history
    # Per offer and location, the share of observations it was available: a
    # `history.availability.AvailabilityHistory` when asked for with `availability=True` (typed
    # loosely: that module reads the dataset, a layer above this pure one).
    availability: Any = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "by": self.by,
            "unit": "USD per GPU per hour" if self.by == "gpu" else "USD per hour",
            "version": self.version,
            "url": self.url,
            "days": [d.isoformat() for d in self.days],
            "series": [{"name": s.name, "prices": s.prices, "where": s.where} for s in self.series],
            "missing": self.missing,
        }
        if self.availability is not None:
            out["availability"] = self.availability.to_dict()
        return out

    def rows(self) -> list[list[Any]]:
        """Long form: name, date, price, where; one row per series and day with a price."""
        return [
            [s.name, d.isoformat(), p, w]
            for s in self.series
            for d, p, w in zip(self.days, s.prices, s.where)
            if p is not None
        ]


def norm_gpu(name: str | None) -> str | None:
    if not name:
        return None
    return canonical_gpu_name(name) or name


def query(
    histories: Mapping[str, Sequence[Span]],
    *,
    gpu_name: Sequence[str] | None = None,
    provider: Sequence[str] | None = None,
    location: Sequence[str] | None = None,
    spot: bool | None = None,
    since: dt.date | None = None,
    by: str = "gpu",
) -> PriceHistory:
    """Cheapest price per day of the offers matching every filter given. By GPU the price is
    per GPU (an 8-GPU instance at $16/h is $2/GPU/h), so instance sizes compare; offers without
    GPUs appear only by instance."""
    return _query(histories, gpu_name, provider, location, spot, since, by)


def _query(
    histories: Mapping[str, Sequence[Span]],
    gpu_name: Sequence[str] | None,
    provider: Sequence[str] | None,
    location: Sequence[str] | None,
    spot: bool | None,
    since: dt.date | None,
    by: str,
) -> PriceHistory:
    if by not in ("gpu", "instance"):
        raise ValueError(f"by must be 'gpu' or 'instance', not {by!r}")
    gpus = {(norm_gpu(g) or "").lower() for g in gpu_name} if gpu_name else None
    providers = {p.lower() for p in provider} if provider else None
    locations = {x.lower() for x in location} if location else None
    picked: list[tuple[str, str, float, dt.date, dt.date]] = []  # name, where, value, from, to
    for p, spans in histories.items():
        if providers is not None and p.lower() not in providers:
            continue
        for s in spans:
            gpu = norm_gpu(s.gpu_name)
            if gpus is not None and (gpu or "").lower() not in gpus:
                continue
            if locations is not None and s.location.lower() not in locations:
                continue
            if spot is not None and s.spot != spot:
                continue
            start = max(s.from_date, since) if since else s.from_date
            if start > s.to_date:
                continue
            where = f"{p}/{s.instance_name}/{s.location}" + ("/spot" if s.spot else "")
            if by == "gpu":
                if not s.gpu_count or gpu is None:
                    continue
                picked.append((gpu, where, s.price / s.gpu_count, start, s.to_date))
            else:
                picked.append((f"{p}/{s.instance_name}", where, s.price, start, s.to_date))
    if not picked:
        return PriceHistory(by, [], [])
    first = min(x[3] for x in picked)
    last = max(x[4] for x in picked)
    n = (last - first).days + 1
    days = [first + dt.timedelta(days=i) for i in range(n)]
    by_name: dict[str, list[tuple[float, int, int, str]]] = {}
    for name, where, value, start, end in picked:
        by_name.setdefault(name, []).append(
            (value, (start - first).days, (end - first).days + 1, where)
        )
    series = []
    for name, pieces in by_name.items():
        prices: list[float | None] = [None] * n
        wheres: list[str | None] = [None] * n
        # Cheapest first, each day taken by the first span that covers it: `after[d]` leads
        # to the next day not taken yet, so every day is visited once (union-find painting).
        after = list(range(n + 1))
        # Ties go to the first offer by name, so the answer does not depend on file order.
        for value, a, b, where in sorted(pieces, key=operator.itemgetter(0, 3)):
            d = _free(after, a)
            while d < b:
                prices[d] = round(value, 6)
                wheres[d] = where
                after[d] = d + 1
                d = _free(after, d + 1)
        series.append(Series(name, prices, wheres))
    series.sort(key=lambda s: (s.known()[-1], s.name))
    return PriceHistory(by, days, series)


def _free(after: list[int], d: int) -> int:
    """The first day from `d` on that no span has taken yet."""
    root = d
    while after[root] != root:
        root = after[root]
    while after[d] != root:  # path compression
        after[d], d = root, after[d]
    return root


def sparkline(values: Sequence[float | None], width: int = 40) -> str:
    """One character per day (or per group of days, cheapest of the group, when there are more
    days than `width`); a blank where nothing was on offer."""
    vals = list(values)
    if len(vals) > width:
        groups = np.array_split(np.arange(len(vals)), width)
        vals = [min((vals[i] for i in g if vals[i] is not None), default=None) for g in groups]
    known = [v for v in vals if v is not None]
    if not known:
        return " " * len(vals)
    lo, hi = min(known), max(known)
    top = len(SPARKS) - 1
    out = []
    for v in vals:
        if v is None:
            out.append(" ")
        elif hi == lo:
            out.append(SPARKS[top // 2])
        else:
            out.append(SPARKS[round((v - lo) / (hi - lo) * top)])
    return "".join(out)
