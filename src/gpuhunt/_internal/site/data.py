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

from gpuhunt._internal import freshness, registry
from gpuhunt._internal.accelerators import KNOWN_ACCELERATORS
from gpuhunt._internal.gpu_names import (
    aliases_of,
    canonical_gpu_name,
    gpu_name_with_memory,
    memory_fits,
)
from gpuhunt._internal.models import CatalogItem
from gpuhunt._internal.observed import collected_at as observed_at_of

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
        age = (now - when) if when else None
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
                "age": freshness.describe(age) if when else "unknown",
                "stale": bool(age is None or age > STALE_CADENCES * cadence),
                "status": entry.get("status"),
                "source": str(source) if source else None,
            }
        )
    return out


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
    loc_index: dict[tuple[str, str], int] = {}
    locs: dict[str, list[Any]] = {"provider": [], "name": [], "country": [], "area": []}
    gpu_index: dict[tuple[str, float], int] = {}
    gpus: list[tuple[str, float]] = []
    gpu_vendor: list[str | None] = []
    providers: list[str] = []
    provider_index: dict[str, int] = {}
    shape_index: dict[tuple[Any, ...], int] = {}
    shape_rows: list[tuple[Any, ...]] = []
    per_shape: list[list[tuple[float, int]]] = []
    counts: dict[str, int] = {}

    def _shape_of(item: CatalogItem) -> int:
        p = provider_index.get(item.provider)
        if p is None:
            p = provider_index[item.provider] = len(providers)
            providers.append(item.provider)
        g = -1
        if item.gpu_count and item.gpu_name:
            gk = (item.gpu_name, float(item.gpu_memory or 0))
            g = gpu_index.get(gk, -1)
            if g < 0:
                g = gpu_index[gk] = len(gpus)
                gpus.append(gk)
                gpu_vendor.append(item.gpu_vendor.value if item.gpu_vendor else None)
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
        )
        s = shape_index.get(key)
        if s is None:
            s = shape_index[key] = len(shape_rows)
            shape_rows.append(key)
            per_shape.append([])
        return s

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
            s = raw_index[raw] = _shape_of(item)
        lk = (item.provider, item.location)
        loc = loc_index.get(lk)
        if loc is None:
            loc = loc_index[lk] = len(locs["name"])
            country, area = facts.place(item.provider, item.location)
            locs["provider"].append(provider_index[item.provider])
            locs["name"].append(item.location)
            locs["country"].append(country)
            locs["area"].append(area)
        per_shape[s].append((_round(float(item.price)), loc))
    cols: dict[str, list[Any]] = {
        k: []
        for k in (
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
            "first",
            "n",
        )
    }
    offer_loc: list[int] = []
    offer_price: list[float] = []
    for row, prices in zip(shape_rows, per_shape):
        for name, value in zip(list(cols)[:11], row):
            cols[name].append(int(value) if name == "spot" else value)
        cols["first"].append(len(offer_loc))
        cols["n"].append(len(prices))
        # Cheapest first; equal prices by location name, so the page's pick is deterministic.
        for price, loc in sorted(prices, key=lambda x: (x[0], locs["name"][x[1]])):
            offer_loc.append(loc)
            offer_price.append(price)
    return {
        "format": FORMAT,
        "version": version,
        "generated_at": now.replace(microsecond=0).isoformat(),
        "providers": providers,
        "provenance": provenance(manifest, counts, now),
        "locations": locs,
        "gpus": {
            "name": [n for n, _ in gpus],
            "memory": [_num(m) for _, m in gpus],
            "label": [gpu_label(n, m) for n, m in gpus],
            "vendor": gpu_vendor,
        },
        "spellings": spellings(gpus),
        "shapes": cols,
        "offers": {"loc": offer_loc, "price": offer_price},
        "history": dict(history) if history else None,
    }


# --------------------------------------------------------------------------- offer marks
# What the page shows beside each offer's price, and the availability beside the price chart
# (issues 37 and 38; docs/availability.md). Kept in this one function, apart from `build`, and
# keyed by what an offer is (provider, instance, spot, location), not by `build`'s row numbers,
# so that `build` can change its layout without this having to follow.

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
    seen: dict[int, tuple[Any, Any, Any]] = {}  # id(provider_data) -> what it says, read once
    for i in items:
        data = i.provider_data
        said = seen.get(id(data))
        if said is None:
            at = data.get("observed_at") if data else None
            cur = data.get("currency") if data else None
            said = seen[id(data)] = (
                at if isinstance(at, str) else None,
                data.get("resold_from") if data else None,
                cur if isinstance(cur, str) and cur != "USD" else None,
            )
        at, origin, currency = said
        if at is not None and at != observed.get(i.provider):
            own[offer_key(i.provider, i.instance_name, i.spot)] = at
        if isinstance(origin, str) and origin:
            resold[offer_key(i.provider, i.instance_name, i.spot)] = origin
        reading = data.get("available") if data else None
        if isinstance(reading, bool):
            available[offer_key(i.provider, i.instance_name, i.spot, i.location)] = int(reading)
        if currency is not None:
            converted[offer_key(i.provider, i.instance_name, i.spot, i.location)] = [
                currency,
                data.get("price_native"),
                data.get("fx_rate"),
                data.get("fx_date"),
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
