"""The fast path's half of a query (pure): a parsed filter (`query/parsed.py`) evaluated as numpy
masks over a `Table`'s columns, and the columns derived from what offers carry (form factor,
CUDA version, availability, age, resale), each worked out once per distinct value.

`query/match.py` is the other half, one offer at a time, reading the same parsed form; a
differential test compares the two over random catalogs and filters, and another over the
bundled catalog.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from gpuhunt._internal import geography, offer_spec, rentable
from gpuhunt._internal.accelerators import MEMORY_TOLERANCE
from gpuhunt._internal.costs import bands
from gpuhunt._internal.form_factor import (
    FORM_FACTOR_KEY,
    FORM_FACTORS,
    data_form_factor,
    instance_form_factor,
    model_form_factor,
    refine,
)
from gpuhunt._internal.gpu_names import tpu_generation
from gpuhunt._internal.offer_state import cuda_version_of
from gpuhunt._internal.query import spec as query_spec
from gpuhunt._internal.query.parsed import ParsedQuery
from gpuhunt._internal.vocabulary import AcceleratorVendor, CPUArchitecture


class Table(Protocol):
    """What the masks read of a `query.table.Table` (which imports this module, so it is named
    by its columns here rather than imported): the columns, the string lists their codes point
    into, the derived columns and, once compacted, the table of its shapes."""

    providers: list[str]
    provider: np.ndarray
    price: np.ndarray
    cpu: np.ndarray
    memory: np.ndarray
    gpu_count: np.ndarray
    gpu_memory: np.ndarray
    disk_size: np.ndarray
    spot: np.ndarray
    gpu_name: np.ndarray
    gpu_vendor: np.ndarray
    cpu_arch: np.ndarray
    flags: np.ndarray
    instance_name: np.ndarray
    location: np.ndarray
    provider_data: np.ndarray
    gpu_names: list[str]
    flag_sets: list[str]
    instance_names: list[str]
    locations: list[str]
    provider_datas: list[str]
    gpu_memory_eff: np.ndarray
    total_gpu_memory: np.ndarray
    gpu_name_ccs: list[tuple[int, int] | None]
    gpu_names_lower: list[str]

    def __len__(self) -> int: ...

    @property
    def by_shape(self) -> Table | None: ...

    @property
    def shape_of_row(self) -> np.ndarray | None: ...

    def places(self) -> tuple[list[geography.Place | None], np.ndarray]: ...

    def form_factors(self) -> np.ndarray: ...

    def cuda_version(self) -> np.ndarray: ...

    def offer_states(self) -> OfferStates: ...


VENDORS: list[AcceleratorVendor] = list(AcceleratorVendor)
ARCHS: list[CPUArchitecture] = list(CPUArchitecture)
NVIDIA = VENDORS.index(AcceleratorVendor.NVIDIA)
NO_CUDA = -1  # in `Table.cuda_version`: the offer's provider does not say
NO_FORM_FACTOR = -1  # in `Table.form_factors`: unknown
NO_TIME = np.iinfo(np.int64).min  # in `OfferStates.observed_at`: not said


def select(table: Table, p: ParsedQuery, providers: Collection[str] | None) -> np.ndarray:
    """Row numbers (in price order) of the offers of `table` that `matches(item, p)`, of
    `providers` only if given."""
    by_shape, shape_of_row = table.by_shape, table.shape_of_row
    if by_shape is None or shape_of_row is None:
        m = shape_mask(table, p, providers)
    else:  # the filters on shape fields once per shape, then spread to the rows
        m = shape_mask(by_shape, p, providers)[shape_of_row]
    _range(m, table.price, p.min_price, p.max_price)
    if p.location_pattern is not None:
        pattern = p.location_pattern
        m &= one_of(
            table.location,
            [i for i, loc in enumerate(table.locations) if pattern.match(loc) is not None],
        )
    if p.wants_place:
        places, codes = table.places()
        countries = None if p.countries is None else list(p.countries)
        areas = None if p.areas is None else list(p.areas)
        m &= one_of(
            codes,
            [k for k, x in enumerate(places) if geography.place_matches(x, countries, areas)],
        )
    if p.max_interruption is not None:  # per row, not per shape: the band is per location
        m &= interruption_mask(table, p.max_interruption)
    return np.flatnonzero(m)


def interruption_mask(t: Table, max_interruption: float) -> np.ndarray:
    """`max_interruption` over the rows: the bands are those the catalog carries beside its
    CSVs (`load.sides`, kept on the table as `sides`); a table without them has no known
    band, so its spot rows are left out, as `match.matches` leaves out a lone spot offer."""
    spot = np.asarray(t.spot, dtype=bool)
    upper = np.full(len(t), np.nan)
    rows = np.flatnonzero(spot)
    upper[rows] = band_uppers(t, rows)
    return bands.spot_band_mask(spot, upper, max_interruption)


def band_uppers(t: Table, rows: np.ndarray) -> np.ndarray:
    """The upper bound (%) of the interruption band of each of `rows` (spot rows), NaN where
    unknown."""
    sides = t.__dict__.get("sides")
    if sides is None or not len(rows):
        return np.full(len(rows), np.nan)
    _, upper, _ = bands.row_bands(
        sides,
        np.asarray(t.providers, dtype=str)[t.provider[rows]],
        np.asarray(t.instance_names, dtype=str)[t.instance_name[rows]],
        np.asarray(t.locations, dtype=str)[t.location[rows]],
        np.ones(len(rows), dtype=bool),
    )
    return upper


def shape_mask(t: Table, p: ParsedQuery, providers: Collection[str] | None) -> np.ndarray:
    """The rows of `t` that pass the filters on shape fields (all but price and location)."""
    m = np.ones(len(t), dtype=bool)
    if providers is not None:
        m &= one_of(t.provider, [i for i, x in enumerate(t.providers) if x in providers])
    if p.providers is not None:
        named = p.providers
        m &= one_of(t.provider, [i for i, x in enumerate(t.providers) if x.lower() in named])
    if p.spot is not None:
        m &= t.spot == p.spot
    if p.min_cuda is not None:
        m &= (t.gpu_count > 0) & (t.gpu_vendor == NVIDIA)  # asks for an NVIDIA GPU
        cuda = t.cuda_version()
        m &= (cuda == NO_CUDA) | (cuda >= version_code(p.min_cuda))
    if p.cpu_arch is not None:
        m &= t.cpu_arch == ARCHS.index(p.cpu_arch)
    _range(m, t.cpu, p.min_cpu, p.max_cpu)
    _range(m, t.memory, p.min_memory, p.max_memory)
    g = np.ones(len(t), dtype=bool)
    if p.gpu_vendor is not None:
        g &= t.gpu_vendor == VENDORS.index(p.gpu_vendor)
    _range(g, t.gpu_count, p.min_gpu_count, p.max_gpu_count)
    if p.gpu_names is not None:
        g &= gpu_name_mask(t, p)
    if p.min_compute_capability is not None or p.max_compute_capability is not None:
        low, high = p.min_compute_capability, p.max_compute_capability
        ok = np.array(
            [cc is not None and _within(cc, low, high) for cc in t.gpu_name_ccs] + [False],
            dtype=bool,
        )  # the trailing False answers gpu_name -1 (no name)
        g &= ok[t.gpu_name] & (t.gpu_vendor == NVIDIA)
    _range(g, t.gpu_memory_eff, p.min_gpu_memory, p.max_gpu_memory)
    _range(g, t.total_gpu_memory, p.min_total_gpu_memory, p.max_total_gpu_memory)
    if p.min_gpu_count == 0:
        g |= t.gpu_count == 0
    m &= g
    if p.min_disk_size is not None or p.max_disk_size is not None:
        d = np.ones(len(t), dtype=bool)
        _range(d, t.disk_size, p.min_disk_size, p.max_disk_size)
        m &= d | np.isnan(t.disk_size)
    if p.allowed_flags is not None:
        allowed = p.allowed_flags
        ok = np.array([all(f in allowed for f in s.split()) for s in t.flag_sets], dtype=bool)
        m &= ok[t.flags]
    if p.available is not None or p.resale is not None or p.max_age is not None:
        m &= state_mask(t.offer_states(), p)
    for name, value in p.own:
        m &= MASKS[name](t, value)
    return m


def _min_memory_per_gpu(t: Table, low: float) -> np.ndarray:
    has_gpu = t.gpu_count > 0
    # Divided as `match` divides (IEEE division rounds alike), not `memory >= low * count`.
    per_gpu = np.divide(t.memory, t.gpu_count, out=np.zeros(len(t)), where=has_gpu)
    found: np.ndarray = has_gpu & (per_gpu >= low)
    return found


def _include(t: Table, value: Any, now: dt.datetime | None = None) -> np.ndarray:
    """The rows `rentable.hidden_kind` keeps, each offer text and flag set read once."""
    hidden = query_spec.include_hidden(value)
    m = np.ones(len(t), dtype=bool)
    if not hidden:
        return m
    if "restricted" in hidden:
        ok = np.array([not rentable.is_restricted(s.split()) for s in t.flag_sets], dtype=bool)
        m &= ok[t.flags]
    if hidden & {"fractional", "stale-listings", "enumerated"}:
        now = now or dt.datetime.now(dt.timezone.utc)
        fraction, momentary, enumerated = _kinds_of_texts(t)
        if "enumerated" in hidden:
            m &= ~enumerated[t.provider_data]
        if "fractional" in hidden:
            flagged = np.array(
                [rentable.FRACTIONAL_GPU_FLAG in s.split() for s in t.flag_sets], dtype=bool
            )
            m &= ~(fraction[t.provider_data] | flagged[t.flags])
        if "stale-listings" in hidden and momentary.any():
            # A momentary listing is kept while younger than its provider's cadence.
            cadence = [rentable.listing_cadence(x) for x in t.providers]
            oldest = np.array(
                [NO_TIME if c is None else _micros(now - c) for c in cadence], dtype=np.int64
            )
            seen = t.offer_states().observed_at
            limit = oldest[t.provider]
            aged = (limit != NO_TIME) & ((seen == NO_TIME) | (seen < limit))
            m &= ~(momentary[t.provider_data] & aged)
    return m


def _kinds_of_texts(t: Table) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per offer text (`offer_spec`), whether it says a share of a GPU, a momentary listing and
    an enumerated location; read once per list of texts and kept on the table (a stamp
    replaces the list: `observed.stamp_table`)."""
    kept: dict[str, Any] = vars(t)
    texts = t.provider_datas
    cached = kept.get("_kinds_of_texts")
    found = cached[1] if cached is not None and cached[0] is texts else None
    if found is None:
        n = len(t.provider_datas)
        found = tuple(np.zeros(n + 1, dtype=bool) for _ in range(3))  # [-1]: code -1
        fraction, momentary, enumerated = found
        for k, text in enumerate(t.provider_datas):
            if offer_spec.SEP not in text:
                continue
            own = dict(zip(offer_spec.OWN_NAMES, offer_spec.own_values(text)))
            fraction[k] = own["gpu_fraction"] is not None
            momentary[k] = bool(own["momentary"])
            enumerated[k] = own["location_source"] == "enumerated"
        kept["_kinds_of_texts"] = (texts, found)
    return found


# The masks of the spec's `own` filters (`spec.OWN`), by name: `shape_mask` applies each set one.
MASKS: dict[str, Callable[[Table, Any], np.ndarray]] = {
    "min_memory_per_gpu": _min_memory_per_gpu,
    "include": _include,
}


def gpu_name_mask(t: Table, p: ParsedQuery) -> np.ndarray:
    """`match.spec_matches` and the names of `p.gpu_names` over the table."""
    assert p.gpu_names is not None
    wanted = p.gpu_names
    # "v5litepod-8" (GCP names the TPU slice) is a slice of the generation "v5litepod".
    mask = one_of(
        t.gpu_name,
        [i for i, n in enumerate(t.gpu_names_lower) if n in wanted or tpu_generation(n) in wanted],
    )
    for spec in p.gpu_specs:
        name = spec.name.lower()
        part = one_of(t.gpu_name, [i for i, x in enumerate(t.gpu_names_lower) if x == name])
        if spec.memory is not None:
            size = spec.memory
            # NaN (unknown memory) compares False, as `memory_fits(None, ...)` is False.
            part &= np.abs(t.gpu_memory - size) <= MEMORY_TOLERANCE * size
        if spec.gpu_count is not None:
            part &= t.gpu_count == spec.gpu_count
        if spec.form_factor is not None:
            ff = t.form_factors()
            part &= (ff == NO_FORM_FACTOR) | (ff == FORM_FACTORS.index(spec.form_factor))
        mask |= part
    return mask


@dataclass(frozen=True)
class OfferStates:
    """Per row: the availability reading (1 True, 0 False, -1 not said), the observation time
    (microseconds since the epoch, `NO_TIME` if not said) and whether it is a resale."""

    available: np.ndarray
    observed_at: np.ndarray
    resale: np.ndarray


def state_mask(states: OfferStates, p: ParsedQuery, now: dt.datetime | None = None) -> np.ndarray:
    """The rows passing `available`, `resale` and `max_age` (as `match._offer_state_matches`)."""
    m = np.ones(len(states.available), dtype=bool)
    if p.available is not None:
        m &= states.available == int(p.available)
    if p.resale is not None:
        m &= states.resale == p.resale
    if p.max_age is not None:
        oldest = _micros(p.max_age_cutoff(now))
        m &= (states.observed_at != NO_TIME) & (states.observed_at >= oldest)
    return m


def offer_states(t: Table) -> OfferStates:
    """`OfferStates` of every row, each offer text (`offer_spec`) read once, and only those
    that carry an own field."""
    n = len(t.provider_datas)
    available = np.full(n + 1, -1, dtype=np.int8)  # the last entry answers code -1
    observed = np.full(n + 1, NO_TIME, dtype=np.int64)
    resale = np.zeros(n + 1, dtype=bool)
    for k, text in enumerate(t.provider_datas):
        if offer_spec.SEP not in text:
            continue
        own = dict(zip(offer_spec.OWN_NAMES, offer_spec.own_values(text)))
        reading = own["available"]
        available[k] = -1 if reading is None else int(reading)
        seen = own["observed_at"]
        observed[k] = NO_TIME if seen is None else _micros(seen)
        resale[k] = bool(own["resold_from"])
    rows = t.provider_data
    return OfferStates(available[rows], observed[rows], resale[rows])


def _micros(when: dt.datetime) -> int:
    # Whole microseconds, exact (a float timestamp would round at the boundary).
    return (when - _EPOCH) // dt.timedelta(microseconds=1)


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def form_factors(t: Table) -> np.ndarray:
    """Each offer's form factor (`form_factor.offer_form_factor`) as an index into
    `FORM_FACTORS`, `NO_FORM_FACTOR` where unknown, from its parts, each once per distinct
    value: the GPU name, the provider_data text, and the provider and instance type."""
    n_ff, code = len(FORM_FACTORS), _form_factor_code
    # The trailing entry answers gpu_name -1 (no name; masked out below).
    by_model = np.array([code(model_form_factor(g)) for g in t.gpu_names] + [NO_FORM_FACTOR])
    by_data = np.array(
        [
            code(data_form_factor(json.loads(offer_spec.provider_text(x))))
            if (FORM_FACTOR_KEY in x or "gpu_type" in x)
            else NO_FORM_FACTOR
            for x in t.provider_datas
        ],
        dtype=np.int64,
    )
    # One instance form factor per (provider, instance name) that occurs.
    key = t.instance_name.astype(np.int64) * len(t.providers) + t.provider
    keys, of_row = np.unique(key, return_inverse=True)
    by_instance = np.array(
        [
            code(
                instance_form_factor(
                    t.providers[k % len(t.providers)], t.instance_names[k // len(t.providers)]
                )
            )
            for k in keys.tolist()
        ],
        dtype=np.int64,
    )
    ff = by_model[t.gpu_name]
    ff = np.where(ff == NO_FORM_FACTOR, by_data[t.provider_data], ff)
    ff = np.where(ff == NO_FORM_FACTOR, by_instance[of_row.ravel()], ff)
    # `refine`, per GPU name and form factor (the last column: unknown).
    refined = np.array(
        [
            [code(refine(g, FORM_FACTORS[f] if f < n_ff else None)) for f in range(n_ff + 1)]
            for g in [*t.gpu_names, None]
        ],
        dtype=np.int64,
    ).reshape(len(t.gpu_names) + 1, n_ff + 1)
    ff = refined[t.gpu_name, np.where(ff == NO_FORM_FACTOR, n_ff, ff)]
    no_gpu = (t.gpu_count == 0) | (t.gpu_name < 0)
    found: np.ndarray = np.where(no_gpu, NO_FORM_FACTOR, ff).astype(np.int8)
    return found


def cuda_versions(t: Table) -> np.ndarray:
    """Each offer's CUDA version (`offer_state.cuda_version_of` its `cuda_version`) as
    `version_code`, `NO_CUDA` where its provider does not say."""
    codes = [NO_CUDA] * len(t.provider_datas)  # every offer has an offer text code
    for k, text in enumerate(t.provider_datas):
        if offer_spec.SEP in text:  # most offers say nothing: skip reading their cells
            v = cuda_version_of(offer_spec.own_value(text, "cuda_version"))
            codes[k] = NO_CUDA if v is None else version_code(v)
    found: np.ndarray = np.array(codes, dtype=np.int64)[t.provider_data]
    return found


def _form_factor_code(value: str | None) -> int:
    return NO_FORM_FACTOR if value is None else FORM_FACTORS.index(value)


def one_of(column: np.ndarray, codes: list[int]) -> np.ndarray:
    """Rows whose code is one of `codes` (np.isin sorts; one comparison or a lookup is
    several times faster on a code column)."""
    if len(codes) == 1:
        equal: np.ndarray = column == codes[0]
        return equal
    if not codes:
        return np.zeros(len(column), dtype=bool)
    lookup = np.zeros(max(codes) + 2, dtype=bool)  # the last entry answers code -1
    lookup[codes] = True
    picked: np.ndarray = lookup[np.minimum(column, max(codes) + 1)]
    return picked


def _range(mask: np.ndarray, column: np.ndarray, low: Any, high: Any) -> None:
    if low is not None:
        mask &= column >= low
    if high is not None:
        mask &= column <= high


def version_code(version: tuple[int, int]) -> int:
    """A (major, minor) version as one integer that sorts like the tuple, for a numpy column
    (12.10 > 12.8, 13.0 > 12.999): `parse_version` keeps both numbers within 0..999."""
    return int(version[0]) * 1000 + int(version[1])


def _within(cc: tuple[int, int], low: Any, high: Any) -> bool:
    return (low is None or cc >= low) and (high is None or cc <= high)
