"""The data model: offers (`CatalogItem`) and filters (`QueryFilter`) (pure, no I/O).

The vocabulary they are written in (vendors, architectures) is `vocabulary.py`, the accelerator
descriptions sit beside their tables in `accelerators.py`; both are re-exported here, where
gpuhunt 0.1.x defined them and where callers and pickles still find them."""

from __future__ import annotations

import datetime as dt
from collections.abc import Container, Iterable
from dataclasses import dataclass, field, fields
from itertools import repeat, starmap
from typing import Any, Protocol

# The accelerator info classes say `__module__ = models` (pickles), so `typing.get_type_hints`
# resolves their annotations here: `ClassVar` and the enums must be names of this module.
from typing import ClassVar as ClassVar

from gpuhunt._internal import validate
from gpuhunt._internal.accelerators import (
    AcceleratorInfo as AcceleratorInfo,
)
from gpuhunt._internal.accelerators import (
    AMDGPUInfo as AMDGPUInfo,
)
from gpuhunt._internal.accelerators import (
    IntelAcceleratorInfo as IntelAcceleratorInfo,
)
from gpuhunt._internal.accelerators import (
    NvidiaGPUInfo as NvidiaGPUInfo,
)
from gpuhunt._internal.accelerators import (
    TenstorrentAcceleratorInfo as TenstorrentAcceleratorInfo,
)
from gpuhunt._internal.accelerators import (
    TPUInfo as TPUInfo,
)
from gpuhunt._internal.form_factor import offer_form_factor
from gpuhunt._internal.gpu_specs import offer_tflops_per_dollar
from gpuhunt._internal.offer_spec import OWN_NAMES, parse_time
from gpuhunt._internal.rentable import gpu_fraction
from gpuhunt._internal.vocabulary import AcceleratorVendor as AcceleratorVendor
from gpuhunt._internal.vocabulary import AMDArchitecture as AMDArchitecture
from gpuhunt._internal.vocabulary import CPUArchitecture as CPUArchitecture
from gpuhunt._internal.vocabulary import JSONObject as JSONObject
from gpuhunt._internal.vocabulary import JSONType as JSONType
from gpuhunt._internal.vocabulary import _CastableEnum as _CastableEnum

# What offers of one instance type share: all fields but location and price (spot too: one
# tuple fewer to gather per offer, for at most twice as many shapes).
SHAPE_FIELDS = (
    "provider",
    "instance_name",
    "cpu",
    "memory",
    "gpu_count",
    "gpu_name",
    "gpu_memory",
    "disk_size",
    "gpu_vendor",
    "flags",
    "cpu_arch",
    "provider_data",
    "spot",
)

# The library's own fields, which a shape carries after SHAPE_FIELDS: `offer_spec.OWN`'s names,
# named once there.
OWN_FIELDS = OWN_NAMES

# An instance type's shared values in the order of SHAPE_FIELDS then OWN_FIELDS (one tuple for
# all its offers).
Shape = tuple[Any, ...]


@dataclass(slots=True)
class CatalogItem:
    """One offer: an instance type in a location at an hourly price.

    `memory`, `gpu_memory` and `disk_size` are in GB (GiB for accelerators), `price` in USD/hour.
    `flags` hide offers from consumers that cannot handle them; `provider_data` carries
    provider-specific details as JSON-compatible values, exactly as the provider gave them (the
    library never adds a key).

    After it, the library's own fields (`_internal/offer_spec.py`), keyword arguments with
    defaults, so 0.1.x-style construction is unchanged: `observed_at`, when the price was read
    (an aware UTC datetime; ISO 8601 text is accepted and converted); `available`, the
    provider's availability reading when the offer was read (None: it does not say; offers are
    never left out for it unless a query asks, `available=`); `resold_from`, whose machine
    a marketplace resale is (a gpuhunt provider name where one exists: Shadeform's
    "lambdalabs"); for a price converted to USD, `currency` (ISO 4217), `price_native`,
    `fx_rate` (USD per unit) and `fx_date` (`YYYY-MM-DD`, docs/currency.md); and
    `cuda_version`, the newest CUDA version the host runs ("12.8"), where the provider says.

    A dataclass with a slot per field, so reading any field is a slot read. Offers from the
    catalog share their instance type's values (the same objects, not copies), so their `flags`
    and `provider_data` are read-only (`FrozenList`, `FrozenDict`); replace them to change them.
    """

    provider: str
    instance_name: str
    location: str
    price: float
    cpu: int
    memory: float
    gpu_count: int
    gpu_name: str | None
    gpu_memory: float | None
    spot: bool
    disk_size: float | None
    gpu_vendor: AcceleratorVendor | None = None
    flags: list[str] = field(default_factory=list)
    cpu_arch: CPUArchitecture = CPUArchitecture.X86
    provider_data: JSONObject = field(default_factory=dict)
    observed_at: dt.datetime | None = None
    available: bool | None = None
    resold_from: str | None = None
    currency: str | None = None
    price_native: float | None = None
    fx_rate: float | None = None
    fx_date: str | None = None
    cuda_version: str | None = None
    gpu_fraction: float | None = None
    location_source: str | None = None
    momentary: bool | None = None

    def __post_init__(self) -> None:
        if self.gpu_count and self.gpu_vendor is None:
            raise ValueError(f"gpu_vendor is required when gpu_count is non-zero: {self}")
        if self.observed_at is not None and not isinstance(self.observed_at, dt.datetime):
            when = parse_time(self.observed_at)
            if when is None:
                raise ValueError(f"observed_at is not an ISO 8601 time: {self.observed_at!r:.60}")
            self.observed_at = when

    def __reduce__(self) -> Any:
        # Pickled as a constructor call: readable by any version with these fields.
        return (CatalogItem, tuple(getattr(self, f) for f in _FIELD_NAMES))

    def __setstate__(self, state: Any) -> None:
        # Pickles written by gpuhunt 0.1.x hold the instance dict.
        if isinstance(state, tuple):  # (dict, slots) as the default protocol gives
            state = {**(state[0] or {}), **(state[1] or {})}
        for f in _FIELD_NAMES:
            setattr(self, f, state.get(f))
        self.location, self.price = state["location"], state["price"]

    @property
    def price_per_gpu(self) -> float | None:
        """Hourly price divided by the GPU count, or None for offers without GPUs; a share of
        a GPU counts as that share (`rentable.gpu_fraction`), so 1/6 of an A10 at $0.454 is
        $2.724 per GPU."""
        if not self.gpu_count:
            return None
        fraction = self.gpu_fraction or gpu_fraction(self.provider, self.instance_name)
        return self.price / (self.gpu_count * float(fraction) if fraction else self.gpu_count)

    @property
    def total_gpu_memory(self) -> float:
        return self.gpu_count * self.gpu_memory if self.gpu_count and self.gpu_memory else 0.0

    @property
    def form_factor(self) -> str | None:
        """How the offer's GPUs are built: "sxm", "pcie", "nvl", "superchip", "nvl72" or "oam";
        None when unknown or the offer has no GPU. Derived from the GPU model, `provider_data`
        and the instance type (`_internal/form_factor.py`), so it is not a field: catalog CSVs
        keep 0.1.x's columns, and `asdict` and the constructor are unchanged."""
        return offer_form_factor(
            self.provider, self.instance_name, self.gpu_name, self.gpu_count, self.provider_data
        )

    @property
    def tflops_per_dollar(self) -> float | None:
        """Dense BF16 (FP16 where the GPU has no BF16) TFLOPS of all the offer's GPUs per USD
        per hour, from the vendor datasheet figure in `gpuhunt.gpu_spec`; None when the GPU has
        no published figure there, or the offer no GPU or no price."""
        return offer_tflops_per_dollar(self)


_FIELD_NAMES = tuple(f.name for f in fields(CatalogItem))


def _fields_by_name(self: CatalogItem) -> dict[str, Any]:
    """The fields by name, for code written when offers had an instance dict (`vars(item)`,
    `item.__dict__`). A snapshot: changing it does not change the offer."""
    return {f: getattr(self, f) for f in _FIELD_NAMES}


def _with_fields_view(cls: type) -> Any:
    """`cls` made again with `__dict__` as `_fields_by_name`: `dataclass(slots=True)` drops a
    `__dict__` from the class body, and a class's `__dict__` cannot be set once it exists."""
    slots = cls.__dict__["__slots__"]
    namespace = {k: v for k, v in cls.__dict__.items() if k not in slots}
    namespace["__dict__"] = property(_fields_by_name)
    new = type(cls)(cls.__name__, cls.__bases__, namespace)
    new.__qualname__ = cls.__qualname__
    return new


CatalogItem = _with_fields_view(CatalogItem)  # type: ignore[misc]

_NEW_ARGS = (CatalogItem,)


def new_offers(n: int) -> list[CatalogItem]:
    """`n` offers with no field set yet, for `fill_offers`. All are made at once, by a C loop
    (starmap hands `object.__new__` one ready-made argument tuple: map would build a tuple a
    call): the collections their allocation starts then find them empty, quick to trace."""
    return list(starmap(object.__new__, repeat(_NEW_ARGS, n)))


def fill_offers(
    offers: Iterable[CatalogItem],
    shapes: list[Shape],
    locations: list[str],
    prices: list[float],
) -> None:
    """Set the fields of `offers` from their parts, one per position, until `offers` ends (no
    validation: the catalog's rows were validated when it was read). A slot store a field, no
    object made."""
    for item, shape, location, price in zip(offers, shapes, locations, prices):
        (
            item.provider,
            item.instance_name,
            item.cpu,
            item.memory,
            item.gpu_count,
            item.gpu_name,
            item.gpu_memory,
            item.disk_size,
            item.gpu_vendor,
            item.flags,
            item.cpu_arch,
            item.provider_data,
            item.spot,
            item.observed_at,
            item.available,
            item.resold_from,
            item.currency,
            item.price_native,
            item.fx_rate,
            item.fx_date,
            item.cuda_version,
            item.gpu_fraction,
            item.location_source,
            item.momentary,
        ) = shape
        item.location = location
        item.price = price


@dataclass
class QueryFilter:
    """Filters for `Catalog.query`; every field is also a keyword of `Catalog.query`.

    Ranges are inclusive and `None` means unbounded. `provider` and `gpu_name` compare
    case-insensitively; a GPU name that gives the memory ("A100 80GB") asks for that memory too,
    one that gives a form factor ("H100 SXM", `h100-pcie`) for that form factor or an unknown
    one, and `NAME:COUNT` ("A100:8") for exactly that many GPUs.
    `spot=False` keeps on-demand offers only, `True` spot only. `allowed_flags=None` allows every
    flag; otherwise each flag of an offer must be allowed. `location` holds location names or
    shell-style patterns (`"europe-*"`), compared case-insensitively. `min_cuda` keeps offers
    with an NVIDIA GPU whose host runs that CUDA version or newer, or whose provider does not say (as
    `min/max_disk_size` keep offers of unknown disk size). Memory is in GB, GPU memory in GiB,
    prices in USD per hour. `country` (ISO 3166 alpha-2 codes) and `area` (`north-america`,
    `south-america`, `europe`, `middle-east`, `africa`, `asia-pacific`) keep offers whose
    location the geography table places there (`gpuhunt._internal.geography`); an offer whose
    location it does not know is kept only when neither is given.

    `available=True` keeps offers whose provider read them as available when they were
    observed, `False` those it read as unavailable (offers whose provider does not say are left
    out either way). `max_age` (a `timedelta`) leaves out offers observed longer ago than that,
    and offers of unknown age. `resale=False` leaves out marketplace resales of another cloud's
    machine (`CatalogItem.resold_from`), `True` keeps only them. `min_memory_per_gpu` (GB of
    RAM per GPU) keeps offers with GPUs whose RAM divided by their GPU count is at least that.
    `max_interruption` (percent) keeps spot offers whose interruption band's upper bound is at
    most that (docs/costs.md); spot offers of unknown band are left out, on-demand ones kept.
    `include` (None: leave nothing out, as 0.1.x) leaves out offers a person cannot simply rent
    as listed, except the kinds it names: "restricted" (a region that needs the provider's
    approval), "fractional" (a share of a GPU), "stale-listings" (a marketplace host's listing
    older than its provider's cadence, or undated), "enumerated" (a location a third-party
    catalog enumerates; an answer with no other offer keeps them), or "all"; `[]` leaves out
    all four, as `gpuhunt query` does.

    Each field is an entry of the query spec (`gpuhunt._internal.query.spec`), which says how
    it is checked, read from text and offered on every door.
    """

    provider: list[str] | None = None
    cpu_arch: CPUArchitecture | None = None
    min_cpu: int | None = None
    max_cpu: int | None = None
    min_memory: float | None = None
    max_memory: float | None = None
    min_gpu_count: int | None = None
    max_gpu_count: int | None = None
    gpu_vendor: AcceleratorVendor | None = None
    gpu_name: list[str] | None = None
    min_gpu_memory: float | None = None
    max_gpu_memory: float | None = None
    min_total_gpu_memory: float | None = None
    max_total_gpu_memory: float | None = None
    min_disk_size: int | None = None
    max_disk_size: int | None = None
    min_price: float | None = None
    max_price: float | None = None
    min_compute_capability: tuple[int, int] | None = None
    max_compute_capability: tuple[int, int] | None = None
    spot: bool | None = None
    allowed_flags: Container[str] | None = None
    location: list[str] | None = None
    min_cuda: tuple[int, int] | None = None
    country: list[str] | None = None
    area: list[str] | None = None
    available: bool | None = None
    max_age: dt.timedelta | None = None
    resale: bool | None = None
    min_memory_per_gpu: float | None = None
    max_interruption: float | None = None
    include: str | list[str] | None = None

    # Arguments are checked where they enter (`gpuhunt._internal.validate`): each field on every
    # assignment, the ranges across fields when the filter is made and, for a filter changed
    # since, by `matches()`. A wrong type is a TypeError, an impossible value a ValueError.
    def __setattr__(self, name: str, value: Any) -> None:
        if name in _QUERY_FIELDS:
            validate.check_field(name, value)
            # The parsed form (`validate.PARSED`) is read only while this mark is set.
            self.__dict__.pop(validate.CHECKED, None)
        object.__setattr__(self, name, value)

    def __post_init__(self) -> None:
        validate.check_ranges(self)
        self.__dict__[validate.CHECKED] = True

    def __getstate__(self) -> dict[str, Any]:
        # The parsed form is a cache, made again on use: a pickle without it is read by any
        # version (0.1.x has no class to rebuild it from).
        return {k: v for k, v in self.__dict__.items() if k != validate.PARSED}

    def __repr__(self) -> str:
        set_fields = ", ".join(
            f"{f.name}={getattr(self, f.name)!r}"
            for f in fields(self)
            if getattr(self, f.name) is not None
        )
        return f"QueryFilter({set_fields})"


_QUERY_FIELDS = frozenset(f.name for f in fields(QueryFilter))


class LiveProvider(Protocol):
    """What a `Catalog` needs of a provider it queries live (`Catalog.add_provider`): its name
    and its offers for a filter. Every provider class of the `providers` package is one."""

    NAME: str

    def get(
        self, query_filter: QueryFilter | None = None, balance_resources: bool = True
    ) -> list[CatalogItem]: ...
