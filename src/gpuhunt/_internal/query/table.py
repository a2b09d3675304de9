"""Offline offers held for fast queries (pure: no I/O).

Offers live in a `Table`: one numpy column per field, sorted by price, with strings stored once
and referenced by integer codes, and derived columns precomputed (effective GPU memory, total
GPU memory, compute capability). Each provider's CSV is read into a table of its own
(`formats.csv_table`), and the catalog `combine`s them into one, so an answer across providers
is already in price order. Once its offers' shapes are known (at load) the table is
`compact`ed: per row only the price, the location and a shape number stay, and every other
column is held once per shape. A query evaluates its parsed filter as vectorised masks over the
columns (`query/masks.py`), so its cost is a few passes of machine code over the rows plus
building the offers it returns (`query.answers`).

`query/match.py` (`matches`) stays the one definition of what matches;
`tests/_internal/query/test_table.py` checks the masks against it over random catalogs and
filters.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuhunt._internal import geography
from gpuhunt._internal.accelerators import get_compute_capability
from gpuhunt._internal.models import QueryFilter
from gpuhunt._internal.query import masks
from gpuhunt._internal.query.parsed import ParsedQuery, parsed


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
        self._unknown: dict[str, int] | None = None
        self._form_factors: np.ndarray | None = None
        self._states: masks.OfferStates | None = None
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
        self._cuda = self._form_factors = self._states = None

    @classmethod
    def of_shapes(
        cls,
        by_shape: Table,
        price: np.ndarray,
        location: np.ndarray,
        shape_of_row: np.ndarray,
        skipped: dict[str, int],
    ) -> Table:
        """The table `compact` leaves, made without the per-row columns it drops (a loader
        reads the shapes ready-made): a copy of `by_shape`, the table of shapes, holding per
        row only `price`, `location` and `shape_of_row`; made right after construction, so
        every cache of the copy is as a new table's."""
        table = copy.copy(by_shape)
        state = table.__dict__
        for k in SHAPE_ROW_COLUMNS:
            state.pop(k, None)
        state.update(
            price=price,
            location=location,
            skipped=skipped,
            _parts_lock=threading.Lock(),
            _shape_of_row=shape_of_row,
            _by_shape=by_shape,
        )
        return table

    @property
    def parts(self) -> Any:
        """What offers are built from (`answers.OfferParts`): None until `answers.prepare`
        (or the loader, for a table it reads ready-made) sets it, under `parts_lock`."""
        return self._parts

    @parts.setter
    def parts(self, value: Any) -> None:
        self._parts = value

    @property
    def parts_lock(self) -> threading.Lock:
        return self._parts_lock

    @property
    def by_shape(self) -> Table | None:
        """Once compacted (`compact`): the table of one row per shape, else None."""
        return self._by_shape

    @property
    def shape_of_row(self) -> np.ndarray | None:
        """Once compacted: each row's shape number (a row of `by_shape`), else None."""
        return self._shape_of_row

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

    def select(
        self, q: QueryFilter | ParsedQuery, providers: Collection[str] | None = None
    ) -> np.ndarray:
        """Row numbers (in price order) of the offers that `matches(item, q)`, of `providers`
        only if given (`query/masks.py`)."""
        return masks.select(self, parsed(q), providers)

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
        """Offers per provider whose location the geography table does not know; worked out
        on first use (every `status()` reports it) from the offers per (provider, location)
        pair, counted without sorting the rows as `places` does."""
        found = self.__dict__.get("_unknown")
        if found is None:
            n = max(len(self.locations), 1)
            pairs = self.provider.astype(np.intp) * n + self.location
            per_pair = np.bincount(pairs, minlength=len(self.providers) * n)
            counts = dict.fromkeys(self.providers, 0)
            for k in np.flatnonzero(per_pair).tolist():
                provider = self.providers[k // n]
                if geography.locate(provider, self.locations[k % n]) is None:
                    counts[provider] += int(per_pair[k])
            found = self._unknown = {p: c for p, c in counts.items() if c}
        return dict(found)

    def know_unknown_locations(self, counts: dict[str, int]) -> None:
        """Take `counts` as `unknown_locations()`' answer: worked out by the table this one
        was saved from (the loader's warm start reads both back)."""
        self._unknown = counts

    def form_factors(self) -> np.ndarray:
        """Each offer's form factor as an index into `FORM_FACTORS` (-1: unknown), worked out
        on first use (`masks.form_factors`)."""
        if self._form_factors is None:
            self._form_factors = masks.form_factors(self)
        return self._form_factors

    def cuda_version(self) -> np.ndarray:
        """Each offer's CUDA version as MAJOR * 1000 + MINOR (-1: not said), worked out on first
        use (`masks.cuda_versions`)."""
        if self._cuda is None:
            self._cuda = masks.cuda_versions(self)
        return self._cuda

    def offer_states(self) -> masks.OfferStates:
        """Each offer's availability reading, observation time and resale origin, worked out
        on first use (`masks.offer_states`)."""
        if self._states is None:
            self._states = masks.offer_states(self)
        return self._states


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
