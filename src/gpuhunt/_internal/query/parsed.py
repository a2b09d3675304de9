"""A `QueryFilter` read once, at the door, into the one form every path evaluates (pure).

`QueryFilter` is the public, 0.1.x-shaped object callers build by hand (a bare string where a
list is meant, `"8.9"` or `8.9` for a version, "RTX 4090" for `RTX4090`). `parse` turns it into
a `ParsedQuery`: provider names checked against the registry and lower-cased, GPU names resolved
through the alias table (and what a name gives besides: memory, form factor, count), versions as
`(major, minor)`, enums cast, location patterns compiled, countries and areas checked. `matches`
(`query/match.py`), the fast path (`query/table.py`), `explain`, the catalog's warnings and
providers' pushdowns all read this form, so a filter means the same on every path, or is
refused by `parse` with the same error on every path.

Adding a filter: its entry in the query spec (`query/spec.py`), its `QueryFilter` field and
`Catalog.query` keyword, and, for an `own` filter, its predicate (`match.PREDICATES`) and mask
(`masks.MASKS`); its value reaches them through `ParsedQuery.own`. See docs/design.md.
"""

from __future__ import annotations

import datetime as dt
import difflib
import fnmatch
import re
from collections.abc import Container, Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from gpuhunt._internal import geography, registry, validate
from gpuhunt._internal.errors import UnknownProviderError
from gpuhunt._internal.gpu_names import GpuNameSpec, canonical_gpu_name, gpu_name_spec
from gpuhunt._internal.models import AcceleratorVendor, CPUArchitecture, QueryFilter
from gpuhunt._internal.query import spec

# Where a filter's parsed form is kept in its `__dict__` (not a field: `asdict`, `==` and
# `repr` ignore it); `QueryFilter.__setattr__` drops it with the check mark.
PARSED = validate.PARSED


@dataclass(frozen=True)
class ParsedQuery:
    """What a filter asks for, in the form the matchers compare against. `None` is "not
    given" throughout; names are lower-cased."""

    providers: frozenset[str] | None = None
    cpu_arch: CPUArchitecture | None = None
    min_cpu: float | None = None
    max_cpu: float | None = None
    min_memory: float | None = None
    max_memory: float | None = None
    min_gpu_count: float | None = None
    max_gpu_count: float | None = None
    gpu_vendor: AcceleratorVendor | None = None
    # Offer GPU names (lower-case) wanted as they are: each name as written and its canonical
    # spelling ("rtx 4090" and "rtx4090").
    gpu_names: frozenset[str] | None = None
    # Names that give more than a GPU ("A100 80GB", "H100 SXM", "A100:8"): what each gives.
    gpu_specs: tuple[GpuNameSpec, ...] = ()
    min_gpu_memory: float | None = None
    max_gpu_memory: float | None = None
    min_total_gpu_memory: float | None = None
    max_total_gpu_memory: float | None = None
    min_disk_size: float | None = None
    max_disk_size: float | None = None
    min_price: float | None = None
    max_price: float | None = None
    min_compute_capability: tuple[int, int] | None = None
    max_compute_capability: tuple[int, int] | None = None
    spot: bool | None = None
    allowed_flags: Container[str] | None = None
    locations: tuple[str, ...] | None = None  # as given, for messages
    location_pattern: re.Pattern[str] | None = None
    min_cuda: tuple[int, int] | None = None
    countries: tuple[str, ...] | None = None  # upper-case ISO codes
    areas: tuple[str, ...] | None = None  # lower-case area names
    available: bool | None = None
    max_age: dt.timedelta | None = None
    resale: bool | None = None
    max_interruption: float | None = None  # per row: the band depends on the location
    # The filters evaluated by their own predicate and mask (`spec.OWN`) that are set, as
    # (name, value) in spec order.
    own: tuple[tuple[str, Any], ...] = ()

    @property
    def wants_gpu_name(self) -> bool:
        return self.gpu_names is not None

    @property
    def wants_place(self) -> bool:
        return self.countries is not None or self.areas is not None

    def max_age_cutoff(self, now: dt.datetime | None = None) -> dt.datetime:
        """The oldest observation time `max_age` keeps, at `now` (default: the clock's now)."""
        assert self.max_age is not None
        return (now or dt.datetime.now(dt.timezone.utc)) - self.max_age


# Fields whose checked value (`validate.check_field`) is already the form the matchers compare:
# numbers, flags, a flag container, a timedelta.
AS_GIVEN = tuple(
    o.name
    for o in spec.FILTERS
    if o.check in ("count", "size", "flag", "flag_set", "age") and not o.own
)


def parsed(q: QueryFilter | ParsedQuery) -> ParsedQuery:
    """`q` parsed (once per filter: kept on it until one of its fields is set again)."""
    if isinstance(q, ParsedQuery):
        return q
    state = q.__dict__
    found = state.get(PARSED)
    if found is None or not state.get(validate.CHECKED):
        validate.ensure_checked(q)
        found = parse(q)
        state[PARSED] = found
    assert isinstance(found, ParsedQuery)
    return found


def parse(q: QueryFilter) -> ParsedQuery:
    """Read every field of `q`; a value that cannot be read is a ValueError (TypeError for a
    wrong type) naming the field, the same whichever path asks."""
    names = _as_tuple(q.gpu_name)
    locations = _as_tuple(q.location)
    countries = _as_tuple(q.country)
    areas = _as_tuple(q.area)
    return ParsedQuery(
        **{name: getattr(q, name) for name in AS_GIVEN},
        providers=_providers(_as_tuple(q.provider)),
        cpu_arch=CPUArchitecture.cast(q.cpu_arch) if q.cpu_arch else None,
        gpu_vendor=AcceleratorVendor.cast(q.gpu_vendor) if q.gpu_vendor else None,
        gpu_names=_gpu_names(names),
        gpu_specs=_gpu_specs(names),
        min_compute_capability=_version(q.min_compute_capability, "min_compute_capability"),
        max_compute_capability=_version(q.max_compute_capability, "max_compute_capability"),
        locations=locations,
        location_pattern=None if locations is None else location_pattern(locations),
        # Read always: the fast path keeps both numbers within 0..999 (`masks.version_code`).
        min_cuda=validate.parse_version(q.min_cuda, "min_cuda"),
        countries=None
        if countries is None
        else tuple(geography.check_values("country", countries)),
        areas=None if areas is None else tuple(geography.check_values("area", areas)),
        own=tuple((o.name, v) for o in spec.OWN if (v := getattr(q, o.name)) is not None),
    )


def _version(value: Any, what: str) -> tuple[int, int] | None:
    # A compute capability given as a pair of ints is compared as it is, (major, minor).
    if isinstance(value, tuple) and len(value) == 2 and all(map(validate.is_int, value)):
        return int(value[0]), int(value[1])
    return validate.parse_version(value, what)


def _as_tuple(value: str | Iterable[str] | None) -> tuple[str, ...] | None:
    # A bare string is one name, never its letters.
    if value is None:
        return None
    return (value,) if isinstance(value, str) else tuple(value)


def _providers(names: tuple[str, ...] | None) -> frozenset[str] | None:
    if names is None:
        return None
    return frozenset(provider_name(n) for n in names)


def provider_name(name: str) -> str:
    """The registry's name of provider `name` (any case); an unknown name is an
    `UnknownProviderError` (a ValueError) with the closest known names."""
    try:
        return registry.spec(name.strip()).name
    except UnknownProviderError:
        pass
    known = list(registry.ALL_PROVIDERS)
    key = name.strip().lower()
    close = [p for p in known if key and (p.startswith(key) or key.startswith(p))]
    close += [p for p in difflib.get_close_matches(key, known, n=3, cutoff=0.6) if p not in close]
    hint = f"; did you mean {' or '.join(repr(c) for c in close[:3])}?" if close else ""
    raise UnknownProviderError(
        f"Unknown provider: {name!r}{hint} (known: {', '.join(known)})"
    ) from None


def _gpu_names(names: tuple[str, ...] | None) -> frozenset[str] | None:
    """The offer GPU names (lower-case) matched by name: each name as written and, for a
    name that gives nothing more than the GPU, its canonical spelling (so "RTX 4090" finds
    "RTX4090" offers while a name only a provider uses still matches itself)."""
    if names is None:
        return None
    out = {n.lower() for n in names}
    for n in names:
        if gpu_name_spec(n) is not None:  # raises ValueError for a bad count or form factor
            continue  # "A100 80GB": plain "A100" would match every A100
        c = canonical_gpu_name(n)
        if c is not None:
            out.add(c.lower())
    return frozenset(out)


def _gpu_specs(names: tuple[str, ...] | None) -> tuple[GpuNameSpec, ...]:
    if names is None:
        return ()
    return tuple(s for s in map(gpu_name_spec, names) if s is not None)


@lru_cache(maxsize=256)
def location_pattern(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One case-insensitive regex for location names and shell-style patterns."""
    return re.compile("|".join(fnmatch.translate(p) for p in patterns) or "(?!)", re.IGNORECASE)
