"""Why an answer is empty or thin (`Catalog.explain`): how many of the catalog's offers each
filter leaves, in the order the filters were given; which one removed the last offers; the
cheapest offers that fail exactly one filter; and, for a GPU name no offer has, which providers
list that GPU and whether their offers are in this catalog or only online.

It reads the loaded (offline) catalog, as the CLI does; online providers are not asked, only
named when they list a GPU the catalog has no offer of. What a provider lists comes from
`resources/provider_gpus.csv` (provider, canonical GPU name, source page) and from an online
provider module's `LISTED_GPU_NAMES` (Vast.ai's search names).
"""

from __future__ import annotations

import csv
import datetime as dt
import functools
import importlib
import io
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from gpuhunt._internal import registry, rentable
from gpuhunt._internal.gpu_names import canonical_gpu_name
from gpuhunt._internal.models import CatalogItem
from gpuhunt._internal.query import answers, masks
from gpuhunt._internal.query.filters import make_filter
from gpuhunt._internal.query.spec import GPU_FILTERS, INCLUDE_KINDS, include_hidden
from gpuhunt._internal.query.table import Table

NEAR_MISSES = 3  # cheapest offers failing each filter alone, by default


@dataclass
class Step:
    """After the filters up to and including `filter=value`, `left` offers match."""

    filter: str
    value: Any
    left: int


@dataclass
class NearMiss:
    """An offer that every filter but `filter=value` lets through."""

    offer: CatalogItem
    filter: str
    value: Any


@dataclass
class GpuSource:
    """A provider that lists `gpu_name`: `online` (asked live, never in the catalog) or an
    offline provider whose offers are `in_catalog` (loaded, with offers) or not."""

    gpu_name: str
    provider: str
    online: bool
    in_catalog: bool
    source: str


@dataclass
class Explanation:
    """What `Catalog.explain(**filters)` found (see the module docstring)."""

    offers: int  # offers in the catalog before any filter
    steps: list[Step] = field(default_factory=list)
    emptied_by: Step | None = None  # the filter after which none were left
    near_misses: list[NearMiss] = field(default_factory=list)
    # GPU names given that no offer in the catalog has, and who lists them
    gpu_sources: dict[str, list[GpuSource]] = field(default_factory=dict)
    # Providers asked for that have no offer in the catalog -> whether they are online ones
    providers_without_offers: dict[str, bool] = field(default_factory=dict)
    # `max_interruption`: spot offers it removed (passing every other filter), as (of unknown
    # band, of a band above the bound); None when it is not given.
    interruption_removed: tuple[int, int] | None = None
    # Per kind `include` leaves out (`query.spec.INCLUDE_KINDS`): how many offers passing every
    # other filter it removed (one offer may be of two kinds, and counts in each).
    left_out: dict[str, int] = field(default_factory=dict)

    @property
    def left(self) -> int:
        return self.steps[-1].left if self.steps else self.offers

    def lines(self) -> list[str]:
        """The explanation as text, a line per fact (what the CLI prints)."""
        out = [f"{self.offers} offers in the catalog; each filter, in order, leaves:"]
        width = max((len(_given(s.filter, s.value)) for s in self.steps), default=0)
        for s in self.steps:
            out.append(f"  {_given(s.filter, s.value).ljust(width)}  {s.left} left")
        if self.emptied_by is not None:
            out.append(f"{_given(self.emptied_by.filter, self.emptied_by.value)} removed the last.")
        if self.interruption_removed is not None:
            unknown, above = self.interruption_removed
            out.append(
                f"max_interruption removed {unknown + above} spot offers: {above} of a band "
                f"above it, {unknown} of unknown band (AWS Spot Advisor bands only)."
            )
        removed = {k: n for k, n in self.left_out.items() if n}
        if removed:
            counts = ", ".join(f"{k} {n}" for k, n in removed.items())
            out.append(
                f"Left out as not rentable as listed: {counts} (--include KIND answers them)."
            )
        for p, online in self.providers_without_offers.items():
            if online:
                out.append(f"{p} is an online provider: its offers are asked live (--online).")
            else:
                out.append(f"This catalog has no offers of {p}.")
        for name, sources in self.gpu_sources.items():
            canonical = sources[0].gpu_name if sources else canonical_gpu_name(name)
            # The canonical name the filter was read as ("TPU v5e" is v5litepod), or that it
            # names no GPU the tables know.
            if canonical is None:
                what = f"{name!r} (a name gpuhunt does not know)"
            elif canonical.lower() != name.lower():
                what = f"{name!r} ({canonical})"
            else:
                what = f"{name!r}"
            if not sources:
                out.append(
                    f"No offer in this catalog is a {what}; no provider is known to list it."
                )
                continue
            where = "; ".join(_source_text(s) for s in sources)
            out.append(f"No offer in this catalog is a {what}. Listed by: {where}.")
        if self.near_misses:
            out.append("Cheapest offers failing only one filter:")
            for m in self.near_misses:
                o = m.offer
                gpu = f"{o.gpu_count}x{o.gpu_name}" if o.gpu_count else "no GPU"
                spot = " spot" if o.spot else ""
                out.append(
                    f"  {o.provider} {o.instance_name} {o.location} ${o.price:g}/h {gpu}{spot}: "
                    f"{_why(m)}"
                )
        return out


def _why(m: NearMiss) -> str:
    # An offer whose provider says nothing (no availability reading, no date) does not fail
    # those filters by a value it has: say that, not "fails available=True".
    if m.filter == "available" and m.offer.available is None:
        return f"its provider does not report availability ({_given(m.filter, m.value)})"
    if m.filter == "max_age" and m.offer.observed_at is None:
        return f"its price has no date ({_given(m.filter, m.value)})"
    if m.filter == "include":  # which kind it is: what `--include KIND` asks for
        kind = rentable.hidden_kind(m.offer, include_hidden(m.value))
        return f"{kind or 'not rentable as listed'} (--include {kind or 'all'})"
    return f"fails {_given(m.filter, m.value)}"


def _given(name: str, value: Any) -> str:
    if isinstance(value, dt.timedelta):  # as --max-age takes it: 30d, 12h, 90m, 45s
        return f"{name}={_age_text(value)}"
    if name == "include" and not value:  # the doors' default: rentable offers only
        return "include=(rentable only)"
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        value = value[0] if len(value) == 1 else ",".join(value)
    return f"{name}={value!r}"


def _age_text(age: dt.timedelta) -> str:
    seconds = age.total_seconds()
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


def _source_text(s: GpuSource) -> str:
    if s.online:
        return f"{s.provider} (online: asked live with --online)"
    if s.in_catalog:
        return f"{s.provider} (in this catalog, without such an offer now)"
    return f"{s.provider} (offline provider; this catalog has none of its offers)"


@functools.lru_cache(maxsize=1)
def listed_gpus() -> dict[str, dict[str, str]]:
    """Canonical GPU name -> {provider: source} of the providers known to list it."""
    out: dict[str, dict[str, str]] = {}
    text = resources.files("gpuhunt.resources").joinpath("provider_gpus.csv").read_text("utf-8")
    for row in csv.DictReader(io.StringIO(text)):
        out.setdefault(row["gpu_name"], {})[row["provider"]] = row["source"]
    for spec in registry.PROVIDERS:
        if not spec.online:
            continue
        try:
            module = importlib.import_module(spec.module)
        except ImportError:  # a provider whose SDK is missing cannot be asked anyway
            continue
        for name in getattr(module, "LISTED_GPU_NAMES", ()):
            canonical = canonical_gpu_name(name)
            if canonical is not None:
                out.setdefault(canonical, {}).setdefault(
                    spec.name, f"{spec.module}.LISTED_GPU_NAMES"
                )
    return out


def explain(table: Table | None, given: dict[str, Any], limit: int = NEAR_MISSES) -> Explanation:
    """The explanation of `Catalog.query(**given)` over `table` (None: nothing loaded)."""
    given = {k: v for k, v in given.items() if v is not None}
    make_filter(**given)  # a bad value (an unknown provider too) raises here, as in `query`
    if table is None:
        return Explanation(offers=0)
    found = Explanation(offers=len(table))
    names = list(given)
    prefix: dict[str, Any] = {}
    for name in names:
        prefix[name] = given[name]
        left = len(table.select(make_filter(**prefix)))
        step = Step(name, given[name], left)
        found.steps.append(step)
        if left == 0 and found.emptied_by is None:
            found.emptied_by = step
    answer = set(table.select(make_filter(**given)).tolist())
    # With one filter every other offer fails it: near misses say something only with two.
    for name in names if len(names) > 1 else []:
        others = {k: v for k, v in given.items() if k != name}
        rows = [r for r in table.select(make_filter(**others)).tolist() if r not in answer]
        found.near_misses += _cheapest(table, rows, name, given[name], limit)
    if "max_interruption" in given:
        import numpy as np

        others = {k: v for k, v in given.items() if k != "max_interruption"}
        passing = table.select(make_filter(**others))
        removed = passing[~np.isin(passing, np.fromiter(answer, dtype=np.int64, count=len(answer)))]
        upper = masks.band_uppers(table, removed)
        unknown = int(np.isnan(upper).sum())
        found.interruption_removed = (unknown, len(removed) - unknown)
    counts = table.counts()
    for p in _as_list(given.get("provider")):
        spec = registry.spec(p)
        if not counts.get(spec.name):
            found.providers_without_offers[spec.name] = spec.online
    for name in _as_list(given.get("gpu_name")):
        if len(table.select(make_filter(gpu_name=name))) == 0:
            found.gpu_sources[name] = gpu_sources(table, name)
    if "include" in given:
        found.left_out = _left_out(table, given)
    return found


def _left_out(table: Table, given: dict[str, Any]) -> dict[str, int]:
    """Per kind `include` leaves out, the offers passing every other filter that it alone
    would remove (an answer that has only enumerated locations keeps them: 0)."""
    others = {k: v for k, v in given.items() if k != "include"}
    passing = len(table.select(make_filter(**others)))
    out = {}
    for kind in sorted(include_hidden(given["include"]), key=INCLUDE_KINDS.index):
        rest = [k for k in INCLUDE_KINDS if k != kind]
        out[kind] = passing - len(table.select(make_filter(**others, include=rest)))
    return out


def _cheapest(table: Table, rows: list[int], name: str, value: Any, limit: int) -> list[NearMiss]:
    """The cheapest `limit` offers of `rows` (in price order), each (provider, instance type,
    spot) once; machines without GPUs are no near misses of a GPU filter."""
    import numpy as np

    out: list[NearMiss] = []
    seen: set[tuple[str, str, bool]] = set()
    for start in range(0, len(rows), 256):
        chunk = answers.items(table, np.array(rows[start : start + 256], dtype=np.int64))
        for i in chunk:
            key = (i.provider, i.instance_name, i.spot)
            if key in seen or (name in GPU_FILTERS and not i.gpu_count):
                continue
            seen.add(key)
            out.append(NearMiss(i, name, value))
            if len(out) == limit:
                return out
    return out


def gpu_sources(table: Table, name: str) -> list[GpuSource]:
    """The providers known to list GPU `name`, offline ones first, each once."""
    canonical = canonical_gpu_name(name) or name
    listed = listed_gpus().get(canonical, {})
    counts = table.counts()
    out = [
        GpuSource(canonical, p, registry.spec(p).online, counts.get(p, 0) > 0, source)
        for p, source in listed.items()
    ]
    return sorted(out, key=lambda s: (s.online, s.provider))


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)
