"""Offline offers held for fast queries (pure: no I/O).

Offers live in a `Table`: one numpy column per field, sorted by price, with strings stored once
and referenced by integer codes, and derived columns precomputed (effective GPU memory, total
GPU memory, compute capability). Each provider's CSV is read into a table of its own
(`formats.csv_table`), and the catalog `combine`s them into one, so an answer across providers
is already in price order. A query evaluates `matches` as vectorised masks over the columns, so
its cost is a few passes of machine code over the rows plus handing back the offers it returns -
and those are built lazily, when the caller reads them, then kept for later answers.

`constraints.matches` stays the one definition of what matches; `tests/_internal/query/test_table.py`
checks this module against it over random catalogs and filters.
"""

from __future__ import annotations

import contextlib
import gc
import json
import threading
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuhunt._internal.constraints import (
    CUDA_KEY,
    get_compute_capability,
    location_matches,
    offer_cuda_version,
    parse_version,
)
from gpuhunt._internal.gpu_names import VRAM_TOLERANCE, gpu_name_with_memory
from gpuhunt._internal.models import (
    SHAPE_FIELDS,
    AcceleratorVendor,
    CatalogItem,
    CPUArchitecture,
    QueryFilter,
    Shape,
    build_offers,
    freeze,
)

VENDORS: list[AcceleratorVendor] = list(AcceleratorVendor)
ARCHS: list[CPUArchitecture] = list(CPUArchitecture)
_NVIDIA = VENDORS.index(AcceleratorVendor.NVIDIA)
_NO_CUDA = -1  # in `Table.cuda_version`: the offer's provider does not say


_gc_lock = threading.Lock()
_gc_pauses = 0
_gc_we_disabled = False


@contextlib.contextmanager
def gc_paused(promote: bool = False) -> Iterator[None]:
    """Pause the cyclic garbage collector while building many offers at once.

    Offers hold no reference cycles, so the collector has nothing to find in them, yet each
    burst of allocations triggers collections that rescan everything alive: building 180k offers
    took 2-3x longer with it running. Nested and concurrent pauses are counted; the collector is
    re-enabled only if it was enabled before the first pause.

    With `promote`, what was allocated meanwhile is moved to the oldest generation when the
    collector is re-enabled (`gc.freeze()` + `gc.unfreeze()`, a constant-time move), instead of
    being traced by the young collection that the next allocation would start: that one trace
    of a large answer cost a third of building it. Skipped when the process has frozen objects
    of its own (a pre-fork server), whose freeze must stay as it is.
    """
    global _gc_pauses, _gc_we_disabled
    with _gc_lock:
        if _gc_pauses == 0 and gc.isenabled():
            gc.disable()
            _gc_we_disabled = True
        _gc_pauses += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_we_disabled:
                _gc_we_disabled = False
                if promote and gc.get_freeze_count() == 0:
                    gc.freeze()
                    gc.unfreeze()
                gc.enable()


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
        # What offers are built from (see `prepare`): made once, on the first read or at load.
        self._parts: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        self._parts_lock = threading.Lock()
        self._cuda: np.ndarray | None = None

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
        m = np.ones(len(self), dtype=bool)
        if providers is not None:
            m &= _one_of(self.provider, [i for i, p in enumerate(self.providers) if p in providers])
        if q.provider is not None:  # as `matches` reads it: case-insensitive
            named = {p.lower() for p in q.provider}
            m &= _one_of(self.provider, [i for i, p in enumerate(self.providers) if p in named])
        _range(m, self.price, q.min_price, q.max_price)
        if q.spot is not None:
            m &= self.spot == bool(q.spot)
        if q.location is not None:
            m &= _one_of(
                self.location,
                [i for i, loc in enumerate(self.locations) if location_matches(loc, q.location)],
            )
        if q.min_cuda is not None:
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
        return np.flatnonzero(m)

    def _gpu_name_mask(self, names: list[str]) -> np.ndarray:
        """`constraints.gpu_name_wanted` over the table: names as written, plus the GPU and
        memory of names that give one ("A100 80GB")."""
        wanted = {n.lower() for n in names}
        mask = _one_of(
            self.gpu_name, [i for i, n in enumerate(self.gpu_names_lower) if n in wanted]
        )
        for n in names:
            spec = gpu_name_with_memory(n)
            if spec is None:
                continue
            name, size = spec[0].lower(), spec[1]
            codes = [i for i, x in enumerate(self.gpu_names_lower) if x == name]
            # NaN (unknown memory) compares False, as `memory_fits(None, ...)` is False.
            fits = np.abs(self.gpu_memory - size) <= VRAM_TOLERANCE * size
            mask |= _one_of(self.gpu_name, codes) & fits
        return mask

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

    # ------------------------------------------------------------------ materialise

    def items(self, rows: np.ndarray) -> list[CatalogItem]:
        """The offers of `rows`, new objects for every call (so no caller sees another's
        changes). An offer shares the fields of its instance type (one `Shape` for all the
        offers of a type, spot or not) and holds its location and price: three stores."""
        if len(rows) == 0:
            return []
        shape_of_row, shapes, locations, prices = self.prepare()
        with gc_paused(promote=True):
            return build_offers(
                shapes[shape_of_row[rows]].tolist(),
                locations[self.location[rows]].tolist(),
                prices[rows].tolist(),
            )

    def prepare(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """What offers are built from: each row's shape code, the `Shape`s, the locations and
        the prices as Python objects (in object arrays, so an answer gathers them in C, and
        floats are made once rather than for every answer). Made once; the catalog calls this
        at load so that the first query does not pay for it."""
        parts = self._parts
        if parts is None:
            with self._parts_lock:
                parts = self._parts
                if parts is None:
                    shape_of_row, firsts = self._shape_groups()
                    shapes = np.empty(len(firsts), dtype=object)
                    shapes[:] = self._shapes(firsts)
                    locations = np.empty(len(self.locations), dtype=object)
                    locations[:] = self.locations
                    prices = np.empty(len(self), dtype=object)
                    prices[:] = self.price.tolist()
                    parts = self._parts = (shape_of_row, shapes, locations, prices)
        return parts

    def _shape_groups(self) -> tuple[np.ndarray, np.ndarray]:
        """Each row's shape number and a row of each shape. Offers of one provider, instance
        type and spot-ness nearly always agree on every other shape field: group by those
        three (counting, no sort), check the rest, and group exactly only if that fails."""
        n = len(self)
        key = (self.instance_name.astype(np.int64) * len(self.providers) + self.provider) * 2
        key += self.spot
        if n == 0:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int64)
        present = np.zeros(int(key.max()) + 1, dtype=bool)
        present[key] = True
        groups = (np.cumsum(present) - 1)[key]
        firsts = np.empty(int(groups.max()) + 1, dtype=np.int64)
        firsts[groups] = np.arange(n)  # some row of each group: all are checked below
        rest = [getattr(self, c) for c in _SHAPE_COLUMNS if c not in _GROUPED]
        for column in rest:
            bits = _as_bits(column)
            if not np.array_equal(bits[firsts][groups], bits):
                return _distinct_rows([getattr(self, c) for c in _SHAPE_COLUMNS])
        return groups.astype(np.int32), firsts

    def _shapes(self, rows: np.ndarray) -> list[Shape]:
        """One `Shape` for each of `rows`; flags and provider_data read once per distinct text
        and shared read-only (`freeze`)."""
        names, gnames, providers = self.instance_names, self.gpu_names, self.providers
        flag_lists: dict[int, Any] = {}
        datas: dict[int, Any] = {}
        out = []
        for prov, n, cpu, mem, count, gn, gmem, disk, vend, fl, arch, pd, spot in zip(
            *(getattr(self, name)[rows].tolist() for name in _SHAPE_COLUMNS)
        ):
            flags = flag_lists.get(fl)
            if flags is None:
                flags = flag_lists[fl] = freeze(self.flag_sets[fl].split())
            data = datas.get(pd)
            if data is None:
                text = self.provider_datas[pd]
                data = datas[pd] = freeze({} if text == "{}" else json.loads(text))
            out.append(
                Shape(
                    providers[prov],
                    names[n],
                    cpu,
                    mem,
                    count,
                    gnames[gn] if gn >= 0 else None,
                    None if gmem != gmem else gmem,  # NaN: unknown
                    None if disk != disk else disk,
                    VENDORS[vend] if vend >= 0 else None,
                    flags,
                    ARCHS[arch],
                    data,
                    spot,
                )
            )
        return out


# The columns whose values make up an offer's `Shape`: the table has a column of each name.
_SHAPE_COLUMNS = SHAPE_FIELDS


_GROUPED = ("provider", "instance_name", "spot")


def _distinct_rows(columns: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """For rows given as parallel columns: each row's group number and each group's first row,
    where a group is the rows equal in every column. Rows are hashed to 64 bits and grouped by
    hash (one sort of integers); a check that each group's rows really are equal catches a
    collision, which falls back to an exact grouping."""
    n = len(columns[0]) if columns else 0
    if n == 0:
        return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int64)
    bits = [_as_bits(c) for c in columns]
    h = np.zeros(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for b in bits:
            h ^= b + np.uint64(0x9E3779B97F4A7C15) + (h << np.uint64(6)) + (h >> np.uint64(2))
            h *= np.uint64(0xBF58476D1CE4E5B9)
    _, firsts, groups = np.unique(h, return_index=True, return_inverse=True)
    groups = groups.reshape(-1)
    if not all(np.array_equal(b[firsts][groups], b) for b in bits):
        _, firsts, groups = np.unique(
            np.stack(bits, axis=1), axis=0, return_index=True, return_inverse=True
        )
        groups = groups.reshape(-1)
    return groups.astype(np.int32), firsts


def _as_bits(column: np.ndarray) -> np.ndarray:
    """A column's values as 64-bit patterns, equal exactly when the values are (every NaN
    alike)."""
    if column.dtype.kind == "f":
        c = column.astype(np.float64)
        return np.where(np.isnan(c), np.float64(np.nan), c).view(np.uint64)
    return column.astype(np.int64).view(np.uint64)


def _one_of(column: np.ndarray, codes: list[int]) -> np.ndarray:
    """Rows whose code is one of `codes` (np.isin sorts; one comparison or a lookup is
    several times faster on a code column)."""
    if len(codes) == 1:
        return column == codes[0]
    if not codes:
        return np.zeros(len(column), dtype=bool)
    lookup = np.zeros(max(codes) + 2, dtype=bool)  # the last entry answers code -1
    lookup[codes] = True
    return lookup[np.minimum(column, max(codes) + 1)]


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
