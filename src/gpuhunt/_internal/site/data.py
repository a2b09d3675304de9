"""What the catalog web page reads (pure, no I/O): a catalog's offers, its manifest and its price
history turned into one compact, column-wise JSON document.

The page decides nothing the library already decides. Every fact it filters on is written here
by the library: each offer's GPU (canonical name and memory, as `resolve_gpu` gave it), form
factor, country and area (the geography table), dense TFLOPS per GPU (the spec table), and the
GPU spellings a person may type, each mapped to the GPU models the library would match for it.
The page only compares those values with what the user picked.

Layout (`FORMAT` 1):

- `shapes`: one entry per distinct offer (provider, instance, spot and everything else but the
  region and price), columns of equal length;
- `offers`: every regional offer as (location, price), grouped by shape and cheapest first
  within each shape; shape `i` owns `offers[first[i] : first[i] + count[i]]`;
- `locations`: one entry per distinct (provider, location), with its country and area;
- `gpus`: one entry per distinct (GPU name, memory); `spellings`: a normalised spelling ->
  the GPU entries it names (the key is `gpu_key()`, which the page applies to what is typed);
- `providers`: offers, data age and source per provider, from the manifest;
- `history`: the cheapest price per GPU-hour per day per GPU model, when the catalog has one.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuhunt._internal import freshness, registry, rentable
from gpuhunt._internal.accelerators import KNOWN_ACCELERATORS
from gpuhunt._internal.gpu_names import (
    aliases_of,
    canonical_gpu_name,
    gpu_name_with_memory,
    memory_fits,
)
from gpuhunt._internal.models import CatalogItem, fill_offers, new_offers
from gpuhunt._internal.query import answers
from gpuhunt._internal.query.table import Table
from gpuhunt._internal.site import arrays, controls

FORMAT = 1

# How many times its collection cadence a provider's data may age before the page marks it
# stale: the nightly build's own alarm (docs/pipeline.md) rings at the same multiple.
STALE_CADENCES = 3


def gpu_key(text: str) -> str:
    """A typed GPU spelling as the page looks it up: lower case, letters and digits only. The
    page's `gpuKey()` is this function written in JavaScript (tested to agree)."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


@dataclass(frozen=True)
class Facts:
    """Per-offer facts the page filters on that are not `CatalogItem` fields: where a location
    is, the board's form factor and the GPU's dense TFLOPS. Passed in so that the page uses the
    same answers as the library's filters."""

    place: Callable[[str, str], tuple[str | None, str | None]]  # (provider, loc) -> country, area
    form_factor: Callable[[CatalogItem], str | None]
    tflops: Callable[[CatalogItem], float | None]  # dense BF16/FP16 TFLOPS of one GPU


def _round(x: float, digits: int = 6) -> float:
    return float(round(x, digits))


def _num(x: float | None) -> float | int | None:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return None
    return int(x) if float(x).is_integer() else _round(float(x), 3)


def gpu_label(name: str, memory: float) -> str:
    return f"{name} {_num(memory)}GB" if memory else name


def spellings(gpus: Sequence[tuple[str, float]]) -> dict[str, list[int]]:
    """Normalised spelling -> indexes into `gpus` it names, for the GPU models in a catalog.

    A spelling without memory names every size of the model; one with memory ("A100 80GB")
    the sizes within the library's tolerance, as `gpu_name="A100 80GB"` does. The spellings
    are the ones the library's resolver turns into each model: its canonical name, the name
    with a vendor or brand word, with spaces, and every alias the tables know, each checked
    through `canonical_gpu_name` / `gpu_name_with_memory` before it is listed. A spelling
    outside this list finds nothing on the page, which says so (the CLI and the library take
    any spelling their resolver reads)."""
    by_name: dict[str, list[int]] = {}
    for i, (name, _) in enumerate(gpus):
        by_name.setdefault(name, []).append(i)
    out: dict[str, set[int]] = {}

    def add(spelling: str, name: str, memory: float | None) -> None:
        # Only spellings the library itself resolves to this model go in.
        if memory is None:
            if canonical_gpu_name(spelling) != name:
                return
            wanted = by_name[name]
        else:
            if gpu_name_with_memory(spelling) != (name, memory):
                return
            wanted = [i for i in by_name[name] if memory_fits(gpus[i][1], memory)]
        if wanted:
            out.setdefault(gpu_key(spelling), set()).update(wanted)

    vendors = {a.name: a.vendor.value for a in KNOWN_ACCELERATORS}
    for name, indexes in by_name.items():
        spaced = re.sub(r"(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])", " ", name)
        forms = {name, spaced, *aliases_of(name)}
        if name.startswith("RTX") and name[3:7].isdigit():
            forms |= {f"GeForce {spaced}", name[3:7]}
        if vendor := vendors.get(name):
            forms |= {f"{vendor} {f}" for f in forms}
        # Keys drop spaces and dashes, so "A100 80GB", "A100-80GB" and "a100 80 gb" are one.
        sizes = {_num(gpus[i][1]) for i in indexes} - {None, 0}
        for f in forms:
            add(f, name, None)
            for size in sizes:
                for unit in ("GB", "GiB", "G"):
                    add(f"{f} {size}{unit}", name, float(size))  # type: ignore[arg-type]
    return {k: sorted(v) for k, v in sorted(out.items())}


def provenance(
    manifest: Mapping[str, Any] | None, counts: Mapping[str, int], now: dt.datetime
) -> list[dict[str, Any]]:
    """Per provider: offers, when its data was recorded, its age, whether that is stale, and
    the source the manifest names."""
    entries = freshness.entries(dict(manifest) if manifest else None)
    out = []
    for name in sorted(set(counts) | set(entries)):
        entry = entries.get(name) or {}
        when = freshness.recorded_at(entry)
        age = freshness.age_at(when, now)
        try:
            cadence = dt.timedelta(hours=registry.spec(name).cadence_hours)
        except Exception:  # noqa: BLE001 - a provider this version does not know
            cadence = dt.timedelta(hours=24)
        source = entry.get("source")
        if isinstance(source, dict):
            source = source.get("name") or source.get("kind")
        out.append(
            {
                "name": name,
                "offers": int(counts.get(name, 0)),
                "recorded_at": when.isoformat() if when else None,
                "age": freshness.describe_at(when, now),
                "stale": bool(age is None or age > STALE_CADENCES * cadence),
                "status": entry.get("status"),
                "source": str(source) if source else None,
            }
        )
    return out


class _Shapes:
    """The page's shapes as they are met: one per distinct offer but for region and price, with
    the providers and GPU models in order of first appearance (`of` is idempotent)."""

    def __init__(self, facts: Facts, now: dt.datetime) -> None:
        self.facts, self.now = facts, now
        self.providers: list[str] = []
        self.provider_index: dict[str, int] = {}
        self.gpu_index: dict[tuple[str, float], int] = {}
        self.gpus: list[tuple[str, float]] = []
        self.gpu_vendor: list[str | None] = []
        self.index: dict[tuple[Any, ...], int] = {}
        self.rows: list[tuple[Any, ...]] = []

    def of(self, item: CatalogItem) -> int:
        """The page shape of `item` (made the first time it is met)."""
        facts = self.facts
        p = self.provider_index.get(item.provider)
        if p is None:
            p = self.provider_index[item.provider] = len(self.providers)
            self.providers.append(item.provider)
        g = -1
        if item.gpu_count and item.gpu_name:
            gk = (item.gpu_name, float(item.gpu_memory or 0))
            g = self.gpu_index.get(gk, -1)
            if g < 0:
                g = self.gpu_index[gk] = len(self.gpus)
                self.gpus.append(gk)
                self.gpu_vendor.append(item.gpu_vendor.value if item.gpu_vendor else None)
        key = (
            p,
            item.instance_name,
            bool(item.spot),
            g,
            int(item.gpu_count or 0),
            facts.form_factor(item) if g >= 0 else None,
            _num(item.cpu),
            _num(item.memory),
            _num(item.disk_size),
            _num(facts.tflops(item)) if g >= 0 else None,
            item.cpu_arch.value if item.cpu_arch else None,
            _gpu_share(item),
            *(_num(q) for q in controls.quantities(item)),
            rentable.shape_kind(item, self.now),
        )
        s = self.index.get(key)
        if s is None:
            s = self.index[key] = len(self.rows)
            self.rows.append(key)
        return s

    def columns(self, first: list[int], n: list[int]) -> dict[str, list[Any]]:
        by_column = zip(*self.rows) if self.rows else ([] for _ in _SHAPE_COLUMNS)
        cols: dict[str, list[Any]] = dict(zip(_SHAPE_COLUMNS, map(list, by_column)))
        cols["spot"] = [int(v) for v in cols["spot"]]
        return {**cols, "first": first, "n": n}


_SHAPE_COLUMNS = (
    "provider",
    "instance",
    "spot",
    "gpu",
    "count",
    "form_factor",
    "cpu",
    "memory",
    "disk",
    "tflops",
    "arch",
    "share",  # the share of one GPU the offer's GPU is (1/6 for NV6ads_A10_v5), else 1
    *controls.QUANTITY_COLUMNS,  # `controls.page_filters`
    "hidden",  # what the page leaves out unless asked: "fractional", ... (`rentable.shape_kind`)
)


def _gpu_share(item: CatalogItem) -> float:
    share = item.gpu_fraction or rentable.gpu_fraction(item.provider, item.instance_name)
    return 1 if share is None else _round(float(share))


class _Locations:
    """One entry per distinct (provider, location), in order of first appearance."""

    def __init__(self, facts: Facts, shapes: _Shapes) -> None:
        self.facts = facts
        self.shapes = shapes
        self.index: dict[tuple[str, str], int] = {}
        # restricted: 1 for a region that needs the provider's approval (`rentable`)
        names = ("provider", "name", "country", "area", "restricted")
        self.cols: dict[str, list[Any]] = {k: [] for k in names}

    def of(self, provider: str, location: str) -> int:
        k = (provider, location)
        loc = self.index.get(k)
        if loc is None:
            loc = self.index[k] = len(self.cols["name"])
            country, area = self.facts.place(provider, location)
            self.cols["provider"].append(self.shapes.provider_index[provider])
            self.cols["name"].append(location)
            self.cols["country"].append(country)
            self.cols["area"].append(area)
            self.cols["restricted"].append(int(rentable.is_restricted_location(provider, location)))
        return loc


def build(
    items: Iterable[CatalogItem],
    facts: Facts,
    *,
    version: str | None,
    manifest: Mapping[str, Any] | None = None,
    history: Mapping[str, Any] | None = None,
    now: dt.datetime | None = None,
) -> dict[str, Any]:
    """The page's JSON document for `items` (a catalog's offers, any order)."""
    now = now or dt.datetime.now(dt.timezone.utc)
    shapes = _Shapes(facts, now)
    locs = _Locations(facts, shapes)
    per_shape: list[list[tuple[float, int]]] = []
    counts: dict[str, int] = {}
    # Offers of one instance type differ only in region and price: everything else is worked
    # out once per distinct combination of the fields below (`raw`), not once per offer.
    raw_index: dict[tuple[Any, ...], int] = {}
    for item in items:
        if item.price is None or not math.isfinite(item.price):
            continue
        counts[item.provider] = counts.get(item.provider, 0) + 1
        raw = (
            item.provider,
            item.instance_name,
            item.spot,
            item.gpu_name,
            item.gpu_memory,
            item.gpu_count,
            item.cpu,
            item.memory,
            item.disk_size,
            item.cpu_arch,
            id(item.provider_data),  # shared by an instance type's offers; read by facts
        )
        s = raw_index.get(raw, -1)
        if s < 0:
            s = raw_index[raw] = shapes.of(item)
            per_shape.extend([] for _ in range(len(shapes.rows) - len(per_shape)))
        loc = locs.of(item.provider, item.location)
        per_shape[s].append((_round(float(item.price)), loc))
    first: list[int] = []
    n: list[int] = []
    offer_loc: list[int] = []
    offer_price: list[float] = []
    names = locs.cols["name"]
    for prices in per_shape:
        first.append(len(offer_loc))
        n.append(len(prices))
        # Cheapest first; equal prices by location name, so the page's pick is deterministic.
        for price, loc in sorted(prices, key=lambda x: (x[0], names[x[1]])):
            offer_loc.append(loc)
            offer_price.append(price)
    offers = {"loc": offer_loc, "price": offer_price}
    return _document(
        shapes, locs, first, n, offers, provenance(manifest, counts, now), version, now, history
    )


def as_built(doc: dict[str, Any]) -> dict[str, Any]:
    """A document of `table_document` as `build` makes it: its regional offers as lists."""
    doc["offers"] = {k: v.tolist() for k, v in doc["offers"].items()}
    return doc


def table_document(
    tables: Table | Sequence[Table],
    facts: Facts,
    *,
    version: str | None,
    manifest: Mapping[str, Any] | None = None,
    history: Mapping[str, Any] | None = None,
    now: dt.datetime | None = None,
) -> dict[str, Any]:
    """The document `build` makes of every offer of `tables`, from their columns, with the
    regional offers left as numpy columns (`offers`: "loc" int64, "price" float64), as
    `catalog site` writes them (`as_built`: as lists). `tables`: a catalog's table, or
    its providers' tables in the catalog's order, which give the page of the table `combine`
    would join of them without joining a million rows. The facts are asked once per shape of
    offers (a few thousand); grouping, counting and ordering the offers is a few passes of
    numpy over integer codes, with no object and no Python dict per offer."""
    now = now or dt.datetime.now(dt.timezone.utc)
    parts = arrays.offer_rows([tables] if isinstance(tables, Table) else list(tables))
    shapes = _Shapes(facts, now)
    locs = _Locations(facts, shapes)
    # Shapes, then (provider, location) pairs, as `build` meets them reading the joined rows.
    made: list[dict[int, CatalogItem]] = []
    for part in parts:
        present = np.flatnonzero(np.bincount(part.shape, minlength=part.n_shapes))
        one = new_offers(len(present))
        fill_offers(one, answers.shapes_of(part.table, present), [""] * len(one), [0.0] * len(one))
        made.append(dict(zip(present.tolist(), one)))
    page_shape = [np.full(part.n_shapes, -1, dtype=np.int64) for part in parts]
    for k, s in arrays.first_met([(part.shape, part.n_shapes, part.price) for part in parts]):
        page_shape[k][s] = shapes.of(made[k][s])
    loc_of_pair = [np.zeros(part.n_pairs, dtype=np.int64) for part in parts]
    for k, code in arrays.first_met([(part.pair, part.n_pairs, part.price) for part in parts]):
        t = parts[k].table
        p, loc = divmod(code, max(len(t.locations), 1))
        loc_of_pair[k][code] = locs.of(t.providers[p], t.locations[loc])
    rounded = [arrays.rounded(part.price) for part in parts]
    page_of_row = _joined([page_shape[k][part.shape] for k, part in enumerate(parts)])
    loc_of_row = _joined([loc_of_pair[k][part.pair] for k, part in enumerate(parts)])
    price_rank = _joined([arrays.price_ranks(r) for r in rounded])
    name_rank = arrays.ranks(locs.cols["name"])[loc_of_row]
    order = arrays.offer_order(page_of_row, price_rank, name_rank)
    n = np.bincount(page_of_row, minlength=len(shapes.rows))
    first = np.concatenate(([0], np.cumsum(n)[:-1])) if len(n) else n
    counts: dict[str, int] = {}
    for part in parts:
        for name, c in part.per_provider().items():
            counts[name] = counts.get(name, 0) + c
    offers = {"loc": loc_of_row[order], "price": _joined(rounded, np.float64)[order]}
    prov = provenance(manifest, counts, now)
    return _document(shapes, locs, first.tolist(), n.tolist(), offers, prov, version, now, history)


def _joined(columns: list[np.ndarray], dtype: Any = np.int64) -> np.ndarray:
    return np.concatenate(columns) if columns else np.zeros(0, dtype=dtype)


def _document(
    shapes: _Shapes,
    locs: _Locations,
    first: list[int],
    n: list[int],
    offers: dict[str, Any],
    made: list[dict[str, Any]],
    version: str | None,
    now: dt.datetime,
    history: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The page's document, however its parts were worked out (`build`, `table_document`):
    `first`/`n` each shape's offers, `made` the providers' provenance."""
    gpus = shapes.gpus
    return {
        "format": FORMAT,
        "version": version,
        "generated_at": now.replace(microsecond=0).isoformat(),
        "providers": shapes.providers,
        "provenance": made,
        "locations": locs.cols,
        "gpus": {
            "name": [name for name, _ in gpus],
            "memory": [_num(m) for _, m in gpus],
            "label": [gpu_label(name, m) for name, m in gpus],
            "vendor": shapes.gpu_vendor,
        },
        "spellings": spellings(gpus),
        "shapes": shapes.columns(first, n),
        "offers": offers,
        "history": dict(history) if history else None,
        "filters": controls.page_filters(),
    }
