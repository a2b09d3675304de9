"""Random catalogs and selective filters for the filter tests (test data, not real prices).

Every filter field is one entry of `FIELDS`: how to read its value off an offer and how to draw
a setting for it. A drawn filter sets one to three fields, with thresholds taken from the
catalog's own values - mostly from one reference offer, so answers tend to be non-empty and the
boundaries are hit exactly - using both bounds of each range, lists of one and several names, and
flag sets that do and do not cover an offer, location names and shell-style patterns in any
case, GPU names with the memory ("A100 80GB"), and CUDA versions spelled as people write them.
A new filter field joins every test by adding one entry to `FIELDS`.
"""

from __future__ import annotations

import datetime as dt
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gpuhunt import AcceleratorVendor, CatalogItem, CPUArchitecture
from gpuhunt._internal import geography
from gpuhunt._internal.constraints import get_compute_capability
from gpuhunt._internal.form_factor import form_factor_words
from gpuhunt._internal.offer_state import cuda_version_of
from gpuhunt._internal.query import spec
from tests.helpers import possible_ranges

NV, AMD, GOOGLE, INTEL = (
    AcceleratorVendor.NVIDIA,
    AcceleratorVendor.AMD,
    AcceleratorVendor.GOOGLE,
    AcceleratorVendor.INTEL,
)
# (name, vendor, memory per GPU): known GPUs, an unknown NVIDIA name, unknown memory.
GPUS: list[tuple[str, AcceleratorVendor, float | None]] = [
    ("A100", NV, 40.0),
    ("A100", NV, 80.0),
    ("A100", NV, 75.0),  # an 80 GB A100 as a driver reports it: within the 7% tolerance
    ("H100", NV, 80.0),
    ("H100", NV, None),
    ("L4", NV, 24.0),
    ("A10G", NV, 24.0),
    ("T4", NV, 16.0),
    ("B200", NV, 180.0),
    # Models whose form factor is the model's own (NVL board, superchip; NVL72 from "NVL").
    ("H100NVL", NV, 94.0),
    ("GH200", NV, 96.0),
    ("GB200", NV, 186.0),
    ("RTX4090", NV, 24.0),
    ("NewGPU", NV, 12.0),
    ("MI300X", AMD, 192.0),
    ("v5litepod", GOOGLE, None),
    ("Gaudi2", INTEL, 96.0),
]
FLAG_SETS: list[list[str]] = [
    [],
    [],
    [],
    ["oci-spot"],
    ["runpod-cluster"],
    ["gcp-a4", "gcp-g4"],
    ["azure-restricted-region"],
    ["fractional-gpu"],
]
# Where each is depends on the provider (geography.csv): "eu-west-1" is Ireland for aws and
# unknown to gcp; "mars-1" is nowhere, so `country`/`area` filters drop it.
REGIONS = [
    "us-east-1",
    "us-west-2",
    "eu-west-1",
    "europe-west4",
    "us-central1-a",
    "FIN-01",
    "mars-1",
]
# What hosts say of their CUDA version (`CatalogItem.cuda_version`), as providers write it:
# 12.10 is newer than 12.8, and a version that cannot be read counts as not given.
CUDA_VERSIONS: list[Any] = ["12.8", "12.10", "12.4", "13.0", "12", "12.2", "bad"]


# What collectors write as `provider_data["form_factor"]` (one not in FORM_FACTORS counts as
# not given) and providers' own GPU names (`gpu_type`), whose words may say a form factor.
FORM_FACTOR_DATA: list[Any] = ["sxm", "pcie", "nvl", "PCIe", "oam", "board", None]
GPU_TYPES = ["H100-80GB-SXM", "A100 PCIe 40GB", "H100 NVL", "RTX4090", "H100 SXM PCIe"]
# Instance-name endings whose words say a form factor ("gpu_1x_h100_pcie", "gpu-h100-sxm").
INSTANCE_SUFFIXES = ["", "", "", "_sxm5", "-pcie", " NVL", "-SXM4-80GB", "_pcie_sxm"]
# Instance names of families the form factor rules know (per provider; elsewhere only words).
FAMILY_NAMES = ["p5.48xlarge", "a3-highgpu-8g", "Standard_NC24ads_A100_v4", "BM.GPU.GB200.4"]


# Observation times: a day old, years old, and none (undated).
OBSERVED = [
    (dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "2020-01-01T00:00:00Z",
    None,
]
MAX_AGES = [dt.timedelta(days=30), dt.timedelta(days=36500), dt.timedelta(0)]


def random_offer_fields(rnd: random.Random) -> dict[str, Any]:
    """Keyword arguments of an offer's provider_data and the library's own fields: half the
    offers say which CUDA version their host runs (as RunPod and Vast.ai do); some say their
    form factor or carry the provider's GPU name (provider_data); some whether they were
    available, when they were observed (recently, long ago) and whose machine they resell."""
    own: dict[str, Any] = {"cuda_version": rnd.choice(CUDA_VERSIONS)} if rnd.random() < 0.5 else {}
    data: dict[str, Any] = {}
    if rnd.random() < 0.2:
        data["form_factor"] = rnd.choice(FORM_FACTOR_DATA)
    if rnd.random() < 0.1:
        data["gpu_type"] = rnd.choice(GPU_TYPES)
    if rnd.random() < 0.4:
        own["available"] = rnd.random() < 0.6
    if rnd.random() < 0.6:
        own["observed_at"] = rnd.choice(OBSERVED)
    if rnd.random() < 0.15:
        own["resold_from"] = rnd.choice(["lambdalabs", "scaleway"])
    if rnd.random() < 0.1:
        own["gpu_fraction"] = rnd.choice([1 / 6, 0.5])
    if rnd.random() < 0.3:
        own["location_source"] = rnd.choice(["listed", "enumerated"])
    if rnd.random() < 0.3:
        own["momentary"] = rnd.choice([True, None])
    return {"provider_data": data, **own}


def _with_row(fields: dict[str, Any], k: int) -> dict[str, Any]:
    if k % 10 == 0:
        fields["provider_data"] = {**fields["provider_data"], "row": k}
    return fields


def random_instance_name(rnd: random.Random, k: int) -> str:
    """An instance type's name: mostly made up, with words that may say a form factor, or
    a real family's name."""
    if rnd.random() < 0.15:
        return rnd.choice(FAMILY_NAMES) + f"-{k}" * (rnd.random() < 0.3)
    return f"type{k}{rnd.choice(INSTANCE_SUFFIXES)}"


def random_shape(rnd: random.Random) -> dict[str, Any]:
    """An instance type: everything of an offer but provider, location, price and spot."""
    shape: dict[str, Any] = dict(
        cpu=rnd.choice([2, 4, 8, 8, 16, 32, 96, 192]),
        memory=rnd.choice([4.0, 16.0, 32.0, 32.0, 64.0, 256.0, 1152.0]),
        disk_size=rnd.choice([None, None, 50.0, 100.0, 2000.0]),
        flags=list(rnd.choice(FLAG_SETS)),
        cpu_arch=CPUArchitecture.ARM if rnd.random() < 0.2 else CPUArchitecture.X86,
        gpu_count=0,
        gpu_name=None,
        gpu_memory=None,
        gpu_vendor=None,
    )
    kind = rnd.random()
    if kind < 0.7:
        name, vendor, memory = rnd.choice(GPUS)
        count = rnd.choice([1, 1, 2, 4, 8])
        shape.update(gpu_count=count, gpu_name=name, gpu_vendor=vendor, gpu_memory=memory)
    elif kind < 0.75:
        # A GPU-less row that still names a GPU (as some CSVs do): GPU filters see no GPU.
        shape.update(gpu_name="H100", gpu_memory=80.0)
    elif kind < 0.78:
        # An NVIDIA GPU whose model is not given.
        shape.update(gpu_count=1, gpu_vendor=NV)
    return shape


def random_offers(
    rnd: random.Random,
    n: int,
    providers: Sequence[str],
    *,
    n_shapes: int = 8,
    prices: Sequence[float] = (0.35, 0.5, 1.0, 1.0, 2.5, 3.2, 10.0),
) -> list[CatalogItem]:
    """`n` offers of a few instance types, prices from a short list so that ties happen."""
    shapes = [random_shape(rnd) for _ in range(max(1, n_shapes))]
    names = [random_instance_name(rnd, k) for k in range(len(shapes))]
    out = []
    for k in range(n):
        shape = rnd.choice(shapes)
        out.append(
            CatalogItem(
                provider=rnd.choice(list(providers)),
                instance_name=names[shapes.index(shape)],
                location=rnd.choice(REGIONS),
                price=rnd.choice(list(prices)),
                spot=rnd.random() < 0.3,
                **_with_row(random_offer_fields(rnd), k),
                **shape,
            )
        )
    return out


# ---------------------------------------------------------------------- values read off offers


def gpu_memory_of(o: CatalogItem) -> float:
    """Memory per GPU as filters see it: 0 when there is no GPU or the size is unknown."""
    return o.gpu_memory if o.gpu_count > 0 and o.gpu_memory is not None else 0.0


def total_gpu_memory_of(o: CatalogItem) -> float:
    return o.gpu_count * o.gpu_memory if o.gpu_count > 0 and o.gpu_memory is not None else 0.0


def compute_capability_of(o: CatalogItem) -> tuple[int, int] | None:
    if o.gpu_vendor != NV or not o.gpu_name:
        return None
    return get_compute_capability(o.gpu_name)


def cuda_of(o: CatalogItem) -> tuple[int, int] | None:
    return cuda_version_of(o.cuda_version)


def above(v: Any) -> Any:
    """The next threshold past `v`: the least change a `>=` versus `>` mistake would notice."""
    if isinstance(v, tuple):
        return (v[0], v[1] + 1)
    if isinstance(v, int):
        return v + 1
    return math.nextafter(v, math.inf)


def below(v: Any) -> Any:
    if isinstance(v, tuple):
        return (v[0], v[1] - 1)
    if isinstance(v, int):
        return v - 1
    return math.nextafter(v, -math.inf)


# ---------------------------------------------------------------------- the fields

Draw = Callable[[random.Random, CatalogItem, Sequence[CatalogItem]], dict[str, Any]]


@dataclass(frozen=True)
class Field:
    """A filter field (a min/max pair counts as one): `draw(rnd, ref, offers)` gives the
    `QueryFilter` keywords of one setting, mostly from the reference offer `ref`."""

    name: str
    draw: Draw


def range_field(
    name: str, low: str | None, high: str | None, value: Callable[[CatalogItem], Any]
) -> Field:
    """A range: at the reference value, both bounds, exact, or just past the value."""

    def draw(rnd: random.Random, ref: CatalogItem, offers: Sequence[CatalogItem]) -> dict:
        known = [v for v in map(value, offers) if v is not None]
        if not known:
            return {}
        v = value(ref)
        if v is None:
            v = rnd.choice(known)
        other = rnd.choice(known)
        modes = ["at", "at", "both", "exact", "outside"]
        mode = rnd.choice(modes)
        bounds = [b for b in (low, high) if b is not None]
        which = rnd.choice(bounds)
        if high is not None and v == min(known):  # `low=v` would keep every offer
            which = high
        elif low is not None and v == max(known):
            which = low
        if mode == "at" or len(bounds) == 1 and mode in ("both", "exact"):
            return {which: v}
        if mode == "both":
            a, b = sorted((v, other))
            return {low: a, high: b}  # type: ignore[dict-item]
        if mode == "exact":
            return {low: v, high: v}  # type: ignore[dict-item]
        # Just outside the reference value: it falls out, neighbours may stay. Not below 0,
        # which filters refuse (counts and sizes are never negative).
        past = above(v) if which == low else below(v)
        if not isinstance(past, tuple) and past < 0:
            return {which: v}
        return {which: past}

    return Field(name, draw)


def names_field(
    name: str, value: Callable[[CatalogItem], str | None], unknown: str | None
) -> Field:
    """A list of names: the reference's, sometimes with others, in other case, or unknown."""

    def draw(rnd: random.Random, ref: CatalogItem, offers: Sequence[CatalogItem]) -> dict:
        pool = sorted({v for v in map(value, offers) if v})
        first = value(ref) or (rnd.choice(pool) if pool else unknown)
        names = [first] if first else []
        names += rnd.sample(pool, min(len(pool), rnd.choice([0, 0, 1, 2])))
        if rnd.random() < 0.3:
            names = [n.upper() if rnd.random() < 0.5 else n.lower() for n in names]
        if unknown is not None and rnd.random() < 0.15:
            names.append(unknown)
        return {name: names}

    return Field(name, draw)


def _draw_location(rnd: random.Random, ref: CatalogItem, offers: Sequence[CatalogItem]) -> dict:
    """Locations as names or shell-style patterns that hit the reference offer's (`"us-*"`,
    `"europe-west?"`, `"[eu]*"`), in any case, alone or with others, or a name nothing has."""
    pool = sorted({o.location for o in offers})
    loc = ref.location
    mode = rnd.choice(["name", "name", "prefix", "one char", "class", "case", "unknown"])
    if mode == "prefix":
        first = loc[: rnd.randint(1, max(1, len(loc) - 1))] + "*"
    elif mode == "one char":
        k = rnd.randrange(len(loc))
        first = loc[:k] + "?" + loc[k + 1 :]
    elif mode == "class":
        first = f"[{loc[0]}x]{loc[1:]}"
    elif mode == "case":
        first = loc.swapcase()
    elif mode == "unknown":
        first = "mars-1"
    else:
        first = loc
    names = [first] + rnd.sample(pool, min(len(pool), rnd.choice([0, 0, 0, 1, 2])))
    return {"location": names}


def _draw_min_cuda(rnd: random.Random, ref: CatalogItem, offers: Sequence[CatalogItem]) -> dict:
    """A minimum CUDA version at, just above or just below a host's, or any host's; spelled as a
    tuple, "12.8", 12.0 or 12. Offers that do not say their version are kept."""
    known = sorted({v for v in map(cuda_of, offers) if v is not None})
    if not known:
        return {"min_cuda": (12, 0)}
    v = cuda_of(ref) or rnd.choice(known)
    v = rnd.choice([v, v, above(v), below(v) if v[1] > 0 else v, rnd.choice(known)])
    spelled: Any = v
    if rnd.random() < 0.5:
        spelled = f"{v[0]}.{v[1]}"
    elif v[1] == 0 and rnd.random() < 0.5:
        spelled = rnd.choice([v[0], float(v[0])])
    return {"min_cuda": spelled}


# How people write a form factor into a GPU name: "H100 SXM", "h100-pcie", "H100-SXM5",
# "H100 NVL" (a model of its own), "GB200 NVL72".
FORM_FACTOR_WORDS = [" SXM", "-sxm5", " PCIe", "-pcie", " NVL", " NVL72", " superchip", " OAM"]


def _draw_gpu_name(rnd: random.Random, ref: CatalogItem, offers: Sequence[CatalogItem]) -> dict:
    """GPU names as `names_field` draws them, or with the memory of some offer's GPU
    ("A100 80GB", "a100-40gb"), which matches that GPU within the tolerance only; any of
    them may say a form factor ("H100 SXM", `a100-40gb-pcie`: that one or unknown) or a
    count ("A100:8", the reference offer's count or another's: exactly that many)."""
    kw = _names_gpu.draw(rnd, ref, offers)
    if rnd.random() < 0.35:
        sized = [o for o in offers if o.gpu_name and o.gpu_memory]
        if sized:
            o = ref if ref.gpu_name and ref.gpu_memory else rnd.choice(sized)
            size = round(o.gpu_memory)  # type: ignore[arg-type]
            if rnd.random() < 0.3:  # another known size of a GPU with two
                size = {40: 80, 80: 40, 75: 40}.get(size, size)
            sep = rnd.choice([" ", "-"])
            named = f"{o.gpu_name}{sep}{size}GB"
            kw["gpu_name"] = [rnd.choice([named, named.lower()])] + kw["gpu_name"][1:]
    names = kw["gpu_name"]
    if names and not form_factor_words(names[0]) and rnd.random() < 0.3:
        word = ref.form_factor if ref.form_factor and rnd.random() < 0.5 else None
        spelled = f" {word}" if word else rnd.choice(FORM_FACTOR_WORDS)
        names[0] = names[0] + spelled
    if names and rnd.random() < 0.25:
        counts = sorted({o.gpu_count for o in offers if o.gpu_count})
        count = ref.gpu_count if ref.gpu_count and rnd.random() < 0.6 else None
        names[0] += f":{count or rnd.choice(counts or [1])}"
    return kw


def equals_field(name: str, value: Callable[[CatalogItem], Any], domain: Sequence[Any]) -> Field:
    """One value: the reference's, or any of `domain`."""

    def draw(rnd: random.Random, ref: CatalogItem, offers: Sequence[CatalogItem]) -> dict:
        v = value(ref)
        return {name: rnd.choice(list(domain)) if v is None or rnd.random() < 0.25 else v}

    return Field(name, draw)


def _draw_flags(rnd: random.Random, ref: CatalogItem, offers: Sequence[CatalogItem]) -> dict:
    """Allowed flags that cover the reference offer (maybe with more), or miss one of its flags,
    as any kind of container."""
    pool = sorted({f for o in offers for f in o.flags})
    allowed = set(ref.flags)
    mode = rnd.choice(["cover", "cover", "more", "miss"])
    if mode == "more":
        allowed |= set(rnd.sample(pool, min(len(pool), 2)))
    elif mode == "miss":
        allowed -= {rnd.choice(ref.flags)} if ref.flags else allowed
    kind = rnd.choice([list, set, tuple, frozenset])
    return {"allowed_flags": kind(sorted(allowed))}


def _place_field(
    name: str, value: Callable[[geography.Place], str | None], pool: list[str]
) -> Field:
    """Countries or areas: the reference offer's (when its location is known), in any case,
    alone or with others, or one no offer is in."""

    def draw(rnd: random.Random, ref: CatalogItem, offers: Sequence[CatalogItem]) -> dict:
        place = geography.locate(ref.provider, ref.location)
        own = value(place) if place is not None else None
        names = [own] if own else []
        names += rnd.sample(pool, rnd.choice([0, 0, 1, 2]))
        if not names or rnd.random() < 0.3:
            names = [n.upper() if rnd.random() < 0.5 else n.lower() for n in names or pool[:1]]
        return {name: names}

    return Field(name, draw)


def _draw_memory_per_gpu(
    rnd: random.Random, ref: CatalogItem, offers: Sequence[CatalogItem]
) -> dict:
    """The reference offer's RAM per GPU (the boundary, which it matches), just above it, or
    a value of the domain (0 keeps every offer with GPUs)."""
    if ref.gpu_count and rnd.random() < 0.7:
        value = ref.memory / ref.gpu_count
        if rnd.random() < 0.3:
            value = math.nextafter(value, math.inf)
        return {"min_memory_per_gpu": value}
    return {"min_memory_per_gpu": rnd.choice([0, 0.5, 8, 16.0, 64, 1e6])}


def _draw_include(rnd: random.Random, ref: CatalogItem, offers: Sequence[CatalogItem]) -> dict:
    """Rentable only ([]), every offer ("all"), or some kinds, as a list or joined by commas."""
    kinds = rnd.sample(list(spec.INCLUDE_KINDS), rnd.choice([0, 0, 1, 2, 3]))
    if rnd.random() < 0.1:
        return {"include": "all"}
    return {"include": ",".join(kinds) if kinds and rnd.random() < 0.3 else kinds}


_names_gpu = names_field("gpu_name", lambda o: o.gpu_name, unknown="NewGPU9")

FIELDS: list[Field] = [
    names_field("provider", lambda o: o.provider, unknown=None),
    equals_field("spot", lambda o: o.spot, [True, False]),
    equals_field("cpu_arch", lambda o: o.cpu_arch, list(CPUArchitecture)),
    range_field("price", "min_price", "max_price", lambda o: o.price),
    range_field("cpu", "min_cpu", "max_cpu", lambda o: o.cpu),
    range_field("memory", "min_memory", "max_memory", lambda o: o.memory),
    range_field("gpu_count", "min_gpu_count", "max_gpu_count", lambda o: o.gpu_count),
    equals_field("gpu_vendor", lambda o: o.gpu_vendor, list(AcceleratorVendor)),
    Field("gpu_name", _draw_gpu_name),
    range_field("gpu_memory", "min_gpu_memory", "max_gpu_memory", gpu_memory_of),
    range_field(
        "total_gpu_memory", "min_total_gpu_memory", "max_total_gpu_memory", total_gpu_memory_of
    ),
    range_field("disk_size", "min_disk_size", "max_disk_size", lambda o: o.disk_size),
    range_field(
        "compute_capability",
        "min_compute_capability",
        "max_compute_capability",
        compute_capability_of,
    ),
    Field("allowed_flags", _draw_flags),
    Field("location", _draw_location),
    Field("min_cuda", _draw_min_cuda),
    _place_field("country", lambda p: p.country, ["US", "IE", "NL", "FI", "JP"]),
    _place_field("area", lambda p: p.area, list(geography.AREAS)),
    equals_field("available", lambda o: o.available, [True, False]),
    equals_field("resale", lambda o: o.resold_from is not None, [True, False]),
    equals_field("max_age", lambda o: None, MAX_AGES),
    Field("min_memory_per_gpu", _draw_memory_per_gpu),
    # No bands beside generated offers: every spot offer is of unknown band, so left out.
    equals_field("max_interruption", lambda o: None, [5.0, 10.0, 100.0]),
    Field("include", _draw_include),
]
GPU_FIELDS = {
    "gpu_count",
    "gpu_vendor",
    "gpu_name",
    "gpu_memory",
    "total_gpu_memory",
    "compute_capability",
}


def draw_filter(
    rnd: random.Random,
    offers: Sequence[CatalogItem],
    fields: Sequence[Field] = FIELDS,
    *,
    chosen: Sequence[Field] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """`QueryFilter` keywords setting one to three fields (or the `chosen` ones), and the names
    of those fields."""
    if chosen is None:
        chosen = rnd.sample(list(fields), min(len(fields), rnd.choice([1, 2, 2, 3])))
    ref = rnd.choice(list(offers))
    kw: dict[str, Any] = {}
    for f in chosen:
        kw.update(f.draw(rnd, ref, offers))
    names = [f.name for f in chosen]
    if GPU_FIELDS & set(names) and "gpu_count" not in names and rnd.random() < 0.25:
        kw["min_gpu_count"] = 0  # GPU filters then skip GPU-less offers
    return possible_ranges(kw), names
