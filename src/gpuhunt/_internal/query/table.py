"""Offline offers held for fast queries (pure: no I/O).

Offers live in a `Table`: one numpy column per field, sorted by price, with strings stored once
and referenced by integer codes, and derived columns precomputed (effective GPU memory, total
GPU memory, compute capability). Each provider's CSV is read into a table of its own
(`formats.csv_table`), and the catalog `combine`s them into one, so an answer across providers
is already in price order. Once its offers' shapes are known (at load) the table is
`compact`ed: per row only the price, the location and a shape number stay, and every other
column is held once per shape. A query evaluates `matches` as vectorised masks over the columns, so
its cost is a few passes of machine code over the rows plus building the offers it returns
(`query.answers`).

`constraints.matches` stays the one definition of what matches; `tests/_internal/query/test_table.py`
checks this module against it over random catalogs and filters.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuhunt._internal import geography
from gpuhunt._internal.constraints import (
    CUDA_KEY,
    get_compute_capability,
    location_matches,
    offer_cuda_version,
    parse_version,
)
from gpuhunt._internal.form_factor import (
    FORM_FACTOR_KEY,
    FORM_FACTORS,
    data_form_factor,
    instance_form_factor,
    model_form_factor,
    refine,
)
from gpuhunt._internal.gpu_names import VRAM_TOLERANCE, gpu_name_spec, tpu_generation
from gpuhunt._internal.models import AcceleratorVendor, CPUArchitecture, QueryFilter

VENDORS: list[AcceleratorVendor] = list(AcceleratorVendor)
ARCHS: list[CPUArchitecture] = list(CPUArchitecture)
_NVIDIA = VENDORS.index(AcceleratorVendor.NVIDIA)
_NO_CUDA = -1  # in `Table.cuda_version`: the offer's provider does not say
_NO_FORM_FACTOR = -1  # in `Table.form_factors`: unknown


class Interner:
    def __init__(self) -> None:
        self.codes: dict[str, int] = {}
        self.values: list[str] = []

    def code(self, value: str) -> int:
        c = self.codes.get(value)
        if c is None:
            c = self.codes[value] = len(self.values)
            self.values.append(value)
        return c


@dataclass
class Table:
    """Offers of one or more providers, one numpy column per field, sorted by price (ties keep
    provider order, then file order). String columns hold codes into the lists below."""

    providers: list[str]
    provider: np.ndarray  # index into providers
    price: np.ndarray
    cpu: np.ndarray
    memory: np.ndarray
    gpu_count: np.ndarray
    gpu_memory: np.ndarray  # NaN = unknown
    disk_size: np.ndarray  # NaN = unknown
    spot: np.ndarray
    gpu_name: np.ndarray  # code into gpu_names, -1 = none
    gpu_vendor: np.ndarray  # index into VENDORS, -1 = none
    cpu_arch: np.ndarray  # index into ARCHS
    flags: np.ndarray  # code into flag_sets
    instance_name: np.ndarray
    location: np.ndarray
    provider_data: np.ndarray
    gpu_names: list[str]
    flag_sets: list[str]
    instance_names: list[str]
    locations: list[str]
    provider_datas: list[str]
    skipped: dict[str, int] = field(default_factory=dict)  # malformed rows left out, by provider

    def __post_init__(self) -> None:
        has_mem = (self.gpu_count > 0) & ~np.isnan(self.gpu_memory)
        self.gpu_memory_eff = np.where(has_mem, self.gpu_memory, 0.0)
        self.total_gpu_memory = np.where(has_mem, self.gpu_count * self.gpu_memory, 0.0)
        # Per GPU name (None: not a known NVIDIA model); compared as tuples, as `matches` does.
        self.gpu_name_ccs = [get_compute_capability(n) for n in self.gpu_names]
        self.gpu_names_lower = [n.lower() for n in self.gpu_names]
        # What offers are built from (`answers.prepare`): made once, at load or on first use.
        self._parts: Any = None
        self._parts_lock = threading.Lock()
        self._cuda: np.ndarray | None = None
        self._places: tuple[list[geography.Place | None], np.ndarray] | None = None
        self._form_factors: np.ndarray | None = None
        # Set by `compact`: the table of one row per shape, and each row's shape number.
        self._by_shape: Table | None = None
        self._shape_of_row: np.ndarray | None = None

    def __getattr__(self, name: str) -> Any:
        # Only reached for an attribute the instance does not hold: once compacted, a
        # per-row shape column, rebuilt from the shapes for the rare reader that needs it
        # (a provider's part kept across a reload, equality, the status counts).
        by_shape = self.__dict__.get("_by_shape")
        if by_shape is not None and name in SHAPE_ROW_COLUMNS:
            return getattr(by_shape, name)[self.__dict__["_shape_of_row"]]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def compact(self, shape_of_row: np.ndarray, firsts: np.ndarray) -> None:
        """Keep per row only the price, the location and a shape number (`answers.prepare`
        groups the rows into shapes: offers equal in every field but location and price):
        every other column is held once per shape, in a table of its own whose rows are the
        shapes, and filters on them are evaluated there and then spread to the rows. About
        12 bytes a row instead of 88, for a few thousand shapes."""
        if self._by_shape is not None or len(self) == 0:
            return
        columns = {k: getattr(self, k)[firsts] for k in COLUMNS}
        strings = {k: getattr(self, k) for k in STRING_LISTS.values()}
        by_shape = Table(**columns, **strings)
        if len(self.locations) <= 1 << 16 and int(self.location.min()) >= 0:
            self.location = self.location.astype(np.uint16)
        # Set before the per-row columns go, so that a reader meanwhile finds one or the other.
        self.__dict__["_shape_of_row"] = shape_of_row
        self.__dict__["_by_shape"] = by_shape
        for k in SHAPE_ROW_COLUMNS:
            self.__dict__.pop(k, None)
        self._cuda = self._form_factors = None

    def after_fork(self) -> None:
        self._parts_lock = threading.Lock()  # a parent thread may have held it at the fork

    def counts(self) -> dict[str, int]:
        """Offers per provider."""
        found = np.bincount(self.provider, minlength=len(self.providers)).tolist()
        return dict(zip(self.providers, found))

    def part(self, provider: str) -> Table | None:
        """The offers of one provider, as a table of their own (None if it has none)."""
        if provider not in self.providers:
            return None
        rows = np.flatnonzero(self.provider == self.providers.index(provider))
        if len(rows) == 0:
            return None
        columns = {k: getattr(self, k)[rows] for k in COLUMNS}
        columns["provider"] = np.zeros(len(rows), dtype=np.int8)
        strings = {k: getattr(self, k) for k in STRING_LISTS.values()}
        strings["providers"] = [provider]
        return Table(
            **columns,
            **strings,
            skipped={provider: self.skipped[provider]} if provider in self.skipped else {},
        )

    def __len__(self) -> int:
        return len(self.price)

    # ------------------------------------------------------------------ query

    def select(self, q: QueryFilter, providers: Collection[str] | None = None) -> np.ndarray:
        """Row numbers (in price order) of the offers that `matches(item, q)`, of `providers`
        only if given."""
        by_shape, shape_of_row = self._by_shape, self._shape_of_row
        if by_shape is None or shape_of_row is None:
            m = self._shape_mask(q, providers)
        else:  # the filters on shape fields once per shape, then spread to the rows
            m = by_shape._shape_mask(q, providers)[shape_of_row]
        _range(m, self.price, q.min_price, q.max_price)
        if q.location is not None:
            m &= _one_of(
                self.location,
                [i for i, loc in enumerate(self.locations) if location_matches(loc, q.location)],
            )
        if q.country is not None or q.area is not None:
            places, codes = self.places()
            countries = None if q.country is None else [c.upper() for c in q.country]
            areas = None if q.area is None else [a.lower() for a in q.area]
            m &= _one_of(
                codes,
                [k for k, p in enumerate(places) if geography.place_matches(p, countries, areas)],
            )
        return np.flatnonzero(m)

    def _shape_mask(self, q: QueryFilter, providers: Collection[str] | None) -> np.ndarray:
        """The rows that pass the filters on shape fields (all but price and location)."""
        m = np.ones(len(self), dtype=bool)
        if providers is not None:
            m &= _one_of(self.provider, [i for i, p in enumerate(self.providers) if p in providers])
        if q.provider is not None:  # as `matches` reads it: case-insensitive
            named = {p.lower() for p in q.provider}
            m &= _one_of(self.provider, [i for i, p in enumerate(self.providers) if p in named])
        if q.spot is not None:
            m &= self.spot == bool(q.spot)
        if q.min_cuda is not None:
            m &= (self.gpu_count > 0) & (self.gpu_vendor == _NVIDIA)  # asks for an NVIDIA GPU
            cuda = self.cuda_version()
            wanted = _version_code(parse_version(q.min_cuda, "min_cuda"))  # type: ignore[arg-type]
            m &= (cuda == _NO_CUDA) | (cuda >= wanted)
        if q.cpu_arch:
            m &= self.cpu_arch == ARCHS.index(CPUArchitecture.cast(q.cpu_arch))
        _range(m, self.cpu, q.min_cpu, q.max_cpu)
        _range(m, self.memory, q.min_memory, q.max_memory)
        g = np.ones(len(self), dtype=bool)
        if q.gpu_vendor:
            g &= self.gpu_vendor == VENDORS.index(AcceleratorVendor.cast(q.gpu_vendor))
        _range(g, self.gpu_count, q.min_gpu_count, q.max_gpu_count)
        if q.gpu_name is not None:
            g &= self._gpu_name_mask(q.gpu_name)
        if q.min_compute_capability is not None or q.max_compute_capability is not None:
            low, high = q.min_compute_capability, q.max_compute_capability
            ok = np.array(
                [_cc_within(cc, low, high) for cc in self.gpu_name_ccs] + [False], dtype=bool
            )  # the trailing False answers gpu_name -1 (no name)
            g &= ok[self.gpu_name] & (self.gpu_vendor == _NVIDIA)
        _range(g, self.gpu_memory_eff, q.min_gpu_memory, q.max_gpu_memory)
        _range(g, self.total_gpu_memory, q.min_total_gpu_memory, q.max_total_gpu_memory)
        if q.min_gpu_count == 0:
            g |= self.gpu_count == 0
        m &= g
        if q.min_disk_size is not None or q.max_disk_size is not None:
            d = np.ones(len(self), dtype=bool)
            _range(d, self.disk_size, q.min_disk_size, q.max_disk_size)
            m &= d | np.isnan(self.disk_size)
        if q.allowed_flags is not None:
            allowed = q.allowed_flags
            ok = np.array(
                [all(f in allowed for f in s.split()) for s in self.flag_sets], dtype=bool
            )
            m &= ok[self.flags]
        return m

    def _gpu_name_mask(self, names: list[str]) -> np.ndarray:
        """`constraints.gpu_name_wanted` over the table: names as written, plus the GPU of
        names that give a memory, form factor or count ("A100 80GB", "H100 SXM", "A100:8")
        with what they give."""
        wanted = {n.lower() for n in names}
        mask = _one_of(
            self.gpu_name,
            [
                i
                for i, n in enumerate(self.gpu_names_lower)
                if n in wanted or tpu_generation(n) in wanted  # "v5litepod-8" for "v5litepod"
            ],
        )
        for n in names:
            spec = gpu_name_spec(n)
            if spec is None:
                continue
            name = spec.name.lower()
            part = _one_of(
                self.gpu_name, [i for i, x in enumerate(self.gpu_names_lower) if x == name]
            )
            if spec.memory is not None:
                size = spec.memory
                # NaN (unknown memory) compares False, as `memory_fits(None, ...)` is False.
                part &= np.abs(self.gpu_memory - size) <= VRAM_TOLERANCE * size
            if spec.gpu_count is not None:
                part &= self.gpu_count == spec.gpu_count
            if spec.form_factor is not None:
                ff = self.form_factors()
                part &= (ff == _NO_FORM_FACTOR) | (ff == FORM_FACTORS.index(spec.form_factor))
            mask |= part
        return mask

    def places(self) -> tuple[list[geography.Place | None], np.ndarray]:
        """Each offer's place (`geography.locate`) as a code into the returned list of the
        distinct places of its (provider, location) pairs; worked out on first use."""
        found = self._places
        if found is None:
            n = max(len(self.locations), 1)
            pairs = self.provider.astype(np.int64) * n + self.location
            distinct, inverse = np.unique(pairs, return_inverse=True)
            places = [
                geography.locate(self.providers[int(k) // n], self.locations[int(k) % n])
                for k in distinct
            ]
            found = self._places = (places, inverse.reshape(-1).astype(np.int64))
        return found

    def unknown_locations(self) -> dict[str, int]:
        """Offers per provider whose location the geography table does not know."""
        places, codes = self.places()
        unknown = np.array([p is None for p in places] + [False], dtype=bool)[codes]
        found = np.bincount(self.provider[unknown], minlength=len(self.providers)).tolist()
        return {p: n for p, n in zip(self.providers, found) if n}

    def form_factors(self) -> np.ndarray:
        """Each offer's form factor (`form_factor.offer_form_factor`) as an index into
        `FORM_FACTORS`, `_NO_FORM_FACTOR` where unknown; worked out on first use from its
        parts, each once per distinct value: the GPU name, the provider_data text, and the
        provider and instance type."""
        found = self._form_factors
        if found is None:
            n_ff, code = len(FORM_FACTORS), _form_factor_code
            # The trailing entry answers gpu_name -1 (no name; masked out below).
            by_model = np.array(
                [code(model_form_factor(g)) for g in self.gpu_names] + [_NO_FORM_FACTOR]
            )
            by_data = np.array(
                [
                    code(data_form_factor(json.loads(t)))
                    if (FORM_FACTOR_KEY in t or "gpu_type" in t)
                    else _NO_FORM_FACTOR
                    for t in self.provider_datas
                ],
                dtype=np.int64,
            )
            # One instance form factor per (provider, instance name) that occurs.
            key = self.instance_name.astype(np.int64) * len(self.providers) + self.provider
            keys, of_row = np.unique(key, return_inverse=True)
            by_instance = np.array(
                [
                    code(
                        instance_form_factor(
                            self.providers[k % len(self.providers)],
                            self.instance_names[k // len(self.providers)],
                        )
                    )
                    for k in keys.tolist()
                ],
                dtype=np.int64,
            )
            ff = by_model[self.gpu_name]
            ff = np.where(ff == _NO_FORM_FACTOR, by_data[self.provider_data], ff)
            ff = np.where(ff == _NO_FORM_FACTOR, by_instance[of_row.ravel()], ff)
            # `refine`, per GPU name and form factor (the last column: unknown).
            refined = np.array(
                [
                    [
                        code(refine(g, FORM_FACTORS[f] if f < n_ff else None))
                        for f in range(n_ff + 1)
                    ]
                    for g in [*self.gpu_names, None]
                ],
                dtype=np.int64,
            ).reshape(len(self.gpu_names) + 1, n_ff + 1)
            ff = refined[self.gpu_name, np.where(ff == _NO_FORM_FACTOR, n_ff, ff)]
            no_gpu = (self.gpu_count == 0) | (self.gpu_name < 0)
            found = self._form_factors = np.where(no_gpu, _NO_FORM_FACTOR, ff).astype(np.int8)
        return found

    def cuda_version(self) -> np.ndarray:
        """Each offer's CUDA version (`constraints.offer_cuda_version`) as MAJOR * 1000 + MINOR
        (`_version_code`), `_NO_CUDA` where its provider does not say; worked out on first use."""
        found = self._cuda
        if found is None:
            codes = [_NO_CUDA] * len(self.provider_datas)  # every offer has a provider_data code
            for k, text in enumerate(self.provider_datas):
                if CUDA_KEY in text:  # most offers say nothing: skip decoding their JSON
                    v = offer_cuda_version(json.loads(text))
                    codes[k] = _NO_CUDA if v is None else _version_code(v)
            found = self._cuda = np.array(codes, dtype=np.int64)[self.provider_data]
        return found


def _form_factor_code(value: str | None) -> int:
    return _NO_FORM_FACTOR if value is None else FORM_FACTORS.index(value)


def _one_of(column: np.ndarray, codes: list[int]) -> np.ndarray:
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


def _version_code(version: tuple[int, int]) -> int:
    """A (major, minor) version as one integer that sorts like the tuple, for a numpy column
    (12.10 > 12.8, 13.0 > 12.999): `parse_version` keeps both numbers within 0..999."""
    return int(version[0]) * 1000 + int(version[1])


def _cc_within(cc: tuple[int, int] | None, low: Any, high: Any) -> bool:
    return cc is not None and (low is None or cc >= low) and (high is None or cc <= high)


STORED_COLUMNS: dict[str, Any] = {
    "price": np.float64,
    "cpu": np.int64,
    "memory": np.float64,
    "gpu_count": np.int32,
    "gpu_memory": np.float64,
    "disk_size": np.float64,
    "spot": np.bool_,
    "gpu_name": np.int32,
    "gpu_vendor": np.int8,
    "cpu_arch": np.int8,
    "flags": np.int32,
    "instance_name": np.int32,
    "location": np.int32,
    "provider_data": np.int32,
}
COLUMNS: dict[str, Any] = {"provider": np.int8, **STORED_COLUMNS}
# What a compacted table holds once per shape rather than per row (`Table.compact`).
SHAPE_ROW_COLUMNS = frozenset(COLUMNS) - {"price", "location"} | {
    "gpu_memory_eff",
    "total_gpu_memory",
}
# Code columns and the list of strings their codes point into.
STRING_LISTS = {
    "provider": "providers",
    "gpu_name": "gpu_names",
    "flags": "flag_sets",
    "instance_name": "instance_names",
    "location": "locations",
    "provider_data": "provider_datas",
}


def combine(tables: list[Table]) -> Table:
    """One table of all `tables`' offers, sorted by price; equal prices keep the order of
    `tables`, then each table's own order (what merging the per-provider answers would give)."""
    if len(tables) == 1:
        return tables[0]
    columns: dict[str, list[np.ndarray]] = {k: [] for k in COLUMNS}
    strings = {k: Interner() for k in STRING_LISTS.values()}
    skipped: dict[str, int] = {}
    for t in tables:
        for k, dtype in COLUMNS.items():
            col = getattr(t, k)
            if k in STRING_LISTS:
                interner = strings[STRING_LISTS[k]]
                # The trailing -1 maps the "none" code (-1) to itself.
                remap = np.array([interner.code(v) for v in getattr(t, STRING_LISTS[k])] + [-1])
                col = remap[col]
            columns[k].append(col.astype(dtype, copy=False))
        for p, n in t.skipped.items():
            skipped[p] = skipped.get(p, 0) + n
    joined = {
        k: np.concatenate(v) if v else np.empty(0, dtype=COLUMNS[k]) for k, v in columns.items()
    }
    order = np.argsort(joined["price"], kind="stable")
    fields: dict[str, Any] = {k: v[order] for k, v in joined.items()}
    fields.update({k: i.values for k, i in strings.items()})
    return Table(**fields, skipped=skipped)
