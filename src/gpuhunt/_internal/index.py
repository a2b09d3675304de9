"""Offline offers held for fast queries (pure: no I/O).

Offers live in a `Table`: one numpy column per field, sorted by price, with strings stored once
and referenced by integer codes, and derived values precomputed (effective and total GPU
memory, each GPU name's compute capability). Each provider's CSV is parsed into a table of its
own, and the catalog `combine`s them into one, so an answer across providers is already in
price order. A query evaluates `matches` as vectorised masks over the columns, so its cost is a
few passes of machine code over the rows plus handing back the offers it returns - and those
are built lazily, when the caller reads them, then kept for later answers.

`constraints.matches` stays the one definition of what matches; the filter tests check this
module against it (docs/mutation-testing.md lists them).
"""

from __future__ import annotations

import contextlib
import csv
import gc
import io
import itertools
import json
import logging
import math
import operator
import threading
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

import numpy as np

from gpuhunt._internal import storage
from gpuhunt._internal.constraints import get_compute_capability
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem, CPUArchitecture, QueryFilter

VENDORS: list[AcceleratorVendor] = list(AcceleratorVendor)
ARCHS: list[CPUArchitecture] = list(CPUArchitecture)
_NVIDIA = VENDORS.index(AcceleratorVendor.NVIDIA)
_GOOGLE = VENDORS.index(AcceleratorVendor.GOOGLE)
_CHUNK = 16384
logger = logging.getLogger(__name__)


_gc_lock = threading.Lock()
_gc_pauses = 0
_gc_we_disabled = False


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many offers at once.

    Offers hold no reference cycles, so the collector has nothing to find in them, yet each
    burst of allocations triggers collections that rescan everything alive: building 180k offers
    took 2-3x longer with it running. Nested and concurrent pauses are counted; the collector is
    re-enabled only if it was enabled before the first pause.
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
                gc.enable()


class _Interner:
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
        # Offers built so far, by row: built on first read, then shared by every answer that
        # includes them (as gpuhunt 0.1.x shared its one list of offers). `_built` says which
        # rows are filled, so finding the missing ones of an answer is one vectorised step.
        self._objects: np.ndarray | None = None  # dtype=object
        self._built: np.ndarray | None = None
        self._store_lock = threading.Lock()

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
        columns = {k: getattr(self, k)[rows] for k in _COLUMNS}
        columns["provider"] = np.zeros(len(rows), dtype=np.int8)
        strings = {k: getattr(self, k) for k in _STRINGS.values()}
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
        if q.cpu_arch:
            m &= self.cpu_arch == ARCHS.index(CPUArchitecture.cast(q.cpu_arch))
        _range(m, self.cpu, q.min_cpu, q.max_cpu)
        _range(m, self.memory, q.min_memory, q.max_memory)
        g = np.ones(len(self), dtype=bool)
        if q.gpu_vendor:
            g &= self.gpu_vendor == VENDORS.index(AcceleratorVendor.cast(q.gpu_vendor))
        _range(g, self.gpu_count, q.min_gpu_count, q.max_gpu_count)
        if q.gpu_name is not None:
            wanted = {n.lower() for n in q.gpu_name}
            g &= _one_of(
                self.gpu_name, [i for i, n in enumerate(self.gpu_names_lower) if n in wanted]
            )
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

    # ------------------------------------------------------------------ materialise

    def items(self, rows: np.ndarray) -> list[CatalogItem]:
        """The offers of `rows`, building those not built before."""
        if len(rows) == 0:
            return []
        objects, built = self._store()
        missing = rows[~built[rows]]
        if len(missing):
            # Concurrent readers may build the same row twice; both objects are equal and the
            # second simply replaces the first.
            for r, item in zip(missing.tolist(), self._build_items(missing)):
                objects[r] = item
            built[missing] = True
        # Gathering from an object array is a C loop: a few ns an offer.
        found: list[CatalogItem] = objects[rows].tolist()
        return found

    def item(self, row: int) -> CatalogItem:
        objects = self._objects
        found = objects[row] if objects is not None else None
        return found if found is not None else self.items(np.array([row]))[0]

    def _store(self) -> tuple[np.ndarray, np.ndarray]:
        if self._objects is None or self._built is None:
            with self._store_lock:
                if self._objects is None or self._built is None:
                    self._built = np.zeros(len(self), dtype=bool)
                    self._objects = np.full(len(self), None, dtype=object)
        return self._objects, self._built

    def _build_items(self, rows: np.ndarray) -> list[CatalogItem]:
        """Build the offers of `rows` (bulk column reads, no per-row validation: the rows were
        validated when the table was built)."""
        names, locs, gnames = self.instance_names, self.locations, self.gpu_names
        fsets, pdatas = self.flag_sets, self.provider_datas
        gpu_memory = [None if x != x else x for x in self.gpu_memory[rows].tolist()]
        disk_size = [None if x != x else x for x in self.disk_size[rows].tolist()]
        columns = zip(
            self.provider[rows].tolist(),
            self.instance_name[rows].tolist(),
            self.location[rows].tolist(),
            self.price[rows].tolist(),
            self.cpu[rows].tolist(),
            self.memory[rows].tolist(),
            self.gpu_count[rows].tolist(),
            self.gpu_name[rows].tolist(),
            gpu_memory,
            self.spot[rows].tolist(),
            disk_size,
            self.gpu_vendor[rows].tolist(),
            self.flags[rows].tolist(),
            self.cpu_arch[rows].tolist(),
            self.provider_data[rows].tolist(),
        )
        new = object.__new__
        providers = self.providers
        out = []
        with _gc_paused():
            for (
                prov,
                n,
                loc,
                price,
                cpu,
                mem,
                count,
                gn,
                gmem,
                spot,
                disk,
                vend,
                fl,
                arch,
                pd,
            ) in columns:
                # Bypasses __init__/__post_init__: every row was validated when the table was built.
                item = new(CatalogItem)
                # Plain attribute stores, in field order: the fastest way to fill an instance.
                item.provider = providers[prov]
                item.instance_name = names[n]
                item.location = locs[loc]
                item.price = price
                item.cpu = cpu
                item.memory = mem
                item.gpu_count = count
                item.gpu_name = gnames[gn] if gn >= 0 else None
                item.gpu_memory = gmem
                item.spot = spot
                item.disk_size = disk
                item.gpu_vendor = VENDORS[vend] if vend >= 0 else None
                item.flags = fsets[fl].split()
                item.cpu_arch = ARCHS[arch]
                pd_text = pdatas[pd]
                item.provider_data = {} if pd_text == "{}" else json.loads(pd_text)
                out.append(item)
        return out


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


def _cc_within(cc: tuple[int, int] | None, low: Any, high: Any) -> bool:
    return cc is not None and (low is None or cc >= low) and (high is None or cc <= high)


# ---------------------------------------------------------------------- building tables


class _Builder:
    """Accumulates validated rows column by column, then sorts them by price."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.parts: dict[str, list[np.ndarray]] = {k: [] for k in _NUMERIC}
        self.gpu_names = _Interner()
        self.flags = _Interner()
        self.names = _Interner()
        self.locs = _Interner()
        self.pdatas = _Interner()
        self.skipped = 0

    def add_fast(self, cols: Mapping[str, Sequence[str]], n: int) -> None:
        """Vectorised conversion of a chunk; raises ValueError if any row is bad."""
        self._append(**self._head(cols, n), **self._attributes(cols, n))

    def add_factored(
        self,
        head: Mapping[str, Sequence[str]],
        n: int,
        attributes: Mapping[str, Sequence[str]],
        which: np.ndarray,
    ) -> None:
        """Like `add_fast` for a chunk whose rows are `head` (name, location, price) plus one of
        a few distinct `attributes` rows, row k having `attributes` row `which[k]`. An instance
        type's offers differ only in region and price, so the remaining eleven fields are
        converted once per distinct combination rather than once per row."""
        distinct = self._attributes(attributes, len(next(iter(attributes.values()))))
        self._append(**self._head(head, n), **{k: v[which] for k, v in distinct.items()})

    def _head(self, cols: Mapping[str, Sequence[str]], n: int) -> dict[str, np.ndarray]:
        price = np.fromiter(map(float, cols["price"]), dtype=np.float64, count=n)
        if not np.isfinite(price).all():
            raise ValueError("non-finite number")
        for name in ("instance_name", "location"):
            if "" in cols[name]:
                raise ValueError(f"empty {name}")
        return {
            "price": price,
            "instance_name": _by_distinct(cols["instance_name"], self.names.code, np.int32),
            "location": _by_distinct(cols["location"], self.locs.code, np.int32),
        }

    def _attributes(self, cols: Mapping[str, Sequence[str]], n: int) -> dict[str, np.ndarray]:
        # Sizes repeat a handful of values across a provider's offers: parse each value once.
        memory = _by_distinct(cols["memory"], float, np.float64)
        cpu = _by_distinct(cols["cpu"], int, np.int64)
        gpu_count = _by_distinct(cols["gpu_count"], int, np.int64)
        gpu_memory = _optional_floats(cols.get("gpu_memory"), n)
        disk = _optional_floats(cols.get("disk_size"), n)
        if not np.isfinite(memory).all():
            raise ValueError("non-finite number")
        if (gpu_count < 0).any():
            raise ValueError("negative gpu_count")
        spot = _by_distinct(cols["spot"], _SPOT.__getitem__, bool)
        raw_arch = cols.get("cpu_arch")
        arch = (
            _by_distinct(raw_arch, _ARCH_CODES.__getitem__, np.int8)
            if raw_arch is not None
            else np.zeros(n, dtype=np.int8)
        )
        # GPU name, vendor and the legacy "tpu-" prefix, decided once per distinct value.
        raw_names = cols.get("gpu_name") or ("",) * n
        raw_vendors = cols.get("gpu_vendor") or ("",) * n
        name_raw_codes, name_uniques = _distinct(raw_names)
        clean = [u[4:] if u.startswith("tpu-") else u for u in name_uniques]
        name_of = np.array(
            [self.gpu_names.code(c) if c else -1 for c in clean] + [-1], dtype=np.int32
        )
        tpu_of = np.array([u.startswith("tpu-") for u in name_uniques] + [False])
        name_code = name_of[name_raw_codes]
        vendor_raw_codes, vendor_uniques = _distinct(raw_vendors)
        vendor_of = np.array(
            [VENDORS.index(AcceleratorVendor.cast(v)) if v else -1 for v in vendor_uniques] + [-1],
            dtype=np.int8,
        )
        vendor = vendor_of[vendor_raw_codes]
        vendor[(vendor == -1) & tpu_of[name_raw_codes]] = _GOOGLE
        vendor[(vendor == -1) & (gpu_count > 0)] = _NVIDIA
        raw_flags = cols.get("flags") or ("",) * n
        flags = _by_distinct(raw_flags, lambda f: self.flags.code(_norm_flags(f)), np.int32)
        raw_pd = cols.get("provider_data") or ("",) * n
        pds = _by_distinct(raw_pd, lambda p: self.pdatas.code(storage._check_json(p)), np.int32)
        return {
            "cpu": cpu,
            "memory": memory,
            "gpu_count": gpu_count,
            "gpu_memory": gpu_memory,
            "disk_size": disk,
            "spot": spot,
            "gpu_name": name_code,
            "gpu_vendor": vendor,
            "cpu_arch": arch,
            "flags": flags,
            "provider_data": pds,
        }

    def add_row(self, row: storage.ParsedRow) -> None:
        one = np.ones(1)
        self._append(
            price=one * row.price,
            cpu=np.array([row.cpu], dtype=np.int64),
            memory=one * row.memory,
            gpu_count=np.array([row.gpu_count], dtype=np.int64),
            gpu_memory=one * (np.nan if row.gpu_memory is None else row.gpu_memory),
            disk_size=one * (np.nan if row.disk_size is None else row.disk_size),
            spot=np.array([row.spot]),
            gpu_name=np.array(
                [self.gpu_names.code(row.gpu_name) if row.gpu_name else -1], dtype=np.int32
            ),
            gpu_vendor=np.array(
                [VENDORS.index(row.gpu_vendor) if row.gpu_vendor else -1], dtype=np.int8
            ),
            cpu_arch=np.array([ARCHS.index(row.cpu_arch)], dtype=np.int8),
            flags=np.array([self.flags.code(row.flags)], dtype=np.int32),
            instance_name=np.array([self.names.code(row.instance_name)], dtype=np.int32),
            location=np.array([self.locs.code(row.location)], dtype=np.int32),
            provider_data=np.array([self.pdatas.code(row.provider_data)], dtype=np.int32),
        )

    def _append(self, **columns: np.ndarray) -> None:
        for k, v in columns.items():
            self.parts[k].append(v.astype(_NUMERIC[k], copy=False))

    def build(self) -> Table:
        cols = {
            k: (np.concatenate(v) if v else np.empty(0, dtype=_NUMERIC[k]))
            for k, v in self.parts.items()
        }
        order = np.argsort(cols["price"], kind="stable")
        return Table(
            providers=[self.provider],
            provider=np.zeros(len(order), dtype=np.int8),
            **{k: v[order] for k, v in cols.items()},
            gpu_names=self.gpu_names.values,
            flag_sets=self.flags.values,
            instance_names=self.names.values,
            locations=self.locs.values,
            provider_datas=self.pdatas.values,
            skipped={self.provider: self.skipped} if self.skipped else {},
        )


_NUMERIC: dict[str, Any] = {
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
_COLUMNS: dict[str, Any] = {"provider": np.int8, **_NUMERIC}
# Code columns and the list of strings their codes point into.
_STRINGS = {
    "provider": "providers",
    "gpu_name": "gpu_names",
    "flags": "flag_sets",
    "instance_name": "instance_names",
    "location": "locations",
    "provider_data": "provider_datas",
}
_SPLIT_HEAD = operator.methodcaller("split", ",", 3)
_QUOTES = operator.methodcaller("count", '"')
_SPOT = {"True": True, "False": False, "true": True, "false": False, "TRUE": True, "FALSE": False}
_ARCH_CODES = {"": 0, "x86": 0, "arm": 1, "X86": 0, "ARM": 1}


def _norm_flags(text: str) -> str:
    return text if " " not in text or text == " ".join(text.split()) else " ".join(text.split())


def _distinct(column: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """Codes of each value into the list of distinct values, in order of first appearance."""
    codes = {v: i for i, v in enumerate(dict.fromkeys(column))}
    if len(codes) == 1:  # common: one vendor, no flags, one architecture in a whole chunk
        return np.zeros(len(column), dtype=np.int32), list(codes)
    found = np.fromiter(map(codes.__getitem__, column), dtype=np.int32, count=len(column))
    return found, list(codes)


def _by_distinct(column: Sequence[str], convert: Any, dtype: Any) -> np.ndarray:
    """`convert` applied to each value, calling it once per distinct value (catalog columns
    repeat a handful of values across thousands of rows)."""
    codes, uniques = _distinct(column)
    return np.array([convert(u) for u in uniques], dtype=dtype)[codes]


def _optional_floats(column: Sequence[str] | None, n: int) -> np.ndarray:
    """Floats where given, NaN where empty; a value spelled "nan" or "inf" is malformed."""
    if column is None:
        return np.full(n, np.nan)
    return _by_distinct(column, _optional_float, np.float64)


def _optional_float(text: str) -> float:
    if not text:
        return math.nan
    value = float(text)
    if not math.isfinite(value):
        raise ValueError("non-finite number")
    return value


def build_table(
    text: str | io.TextIOBase, *, provider: str, stats: storage.ReadStats | None = None
) -> Table:
    """Parse a provider CSV into a `Table`. Chunks of well-formed rows take a vectorised path;
    a chunk with any bad row is redone row by row so that only the bad rows are skipped."""
    stats = stats if stats is not None else storage.ReadStats()
    data = text if isinstance(text, str) else text.read()
    try:
        with _gc_paused():  # parsing allocates many short-lived lists; none hold cycles
            return _build(data, provider, stats, careful=False)
    except csv.Error:
        # Rare (an over-long field, a stray NUL): redo the file one row at a time, which can
        # step over the broken rows.
        stats.rows = stats.skipped = 0
        stats.errors.clear()
        return _build(data, provider, stats, careful=True)


def _build(data: str, provider: str, stats: storage.ReadStats, careful: bool) -> Table:
    builder = _Builder(provider)
    reader = csv.reader(io.StringIO(data))
    try:
        header = [h.strip() for h in next(reader)]
    except (StopIteration, csv.Error):
        return builder.build()
    width = len(header)
    required_present = all(name in header for name in storage.REQUIRED)

    pos = {name: i for i, name in enumerate(header)}

    def fast(chunk: list[list[str]], flat: list[str] | None = None) -> bool:
        if not required_present:
            return False
        if flat is None:
            if set(map(len, chunk)) != {width}:
                return False
            # Columns by slicing one flat list: much faster than transposing with zip(*rows).
            flat = list(itertools.chain.from_iterable(chunk))
        n = len(flat) // width
        columns = {name: flat[i::width] for i, name in enumerate(header)}
        try:
            builder.add_fast(columns, n)
        except (ValueError, KeyError, TypeError):
            return False
        stats.rows += n
        return True

    def flush(chunk: list[list[str]], first_line: int, flat: list[str] | None = None) -> None:
        if fast(chunk, flat):
            return
        if flat is not None:
            chunk = [flat[i : i + width] for i in range(0, len(flat), width)]
        # Some row is bad: validate each, keep the good ones, and convert those in one go.
        good: list[list[str]] = []
        parsed: list[storage.ParsedRow] = []
        for k, row in enumerate(chunk):
            if len(row) < width:
                row = row + [""] * (width - len(row))
            elif len(row) > width:
                row = row[:width]
            try:
                if any(len(v) > storage.MAX_FIELD_CHARS for v in row):
                    raise ValueError("field too large")
                parsed.append(storage.parse_row(lambda n, _r=row: _r[pos[n]] if n in pos else None))
            except ValueError as e:
                stats.skip(first_line + k, str(e))
                continue
            good.append(row)
        if good and not fast(good):
            for p in parsed:
                builder.add_row(p)
            stats.rows += len(parsed)

    def factored(part: list[str]) -> bool:
        # Name, location and price first (the published column order), then the rest of the
        # line, which repeats across an instance type's offers: converted once per distinct.
        flat = list(itertools.chain.from_iterable(map(_SPLIT_HEAD, part)))
        n = len(part)
        if len(flat) != 4 * n:
            return False
        head = {"instance_name": flat[0::4], "location": flat[1::4], "price": flat[2::4]}
        if quoted and any('"' in "".join(v) for v in head.values()):
            return False
        which, rests = _distinct(flat[3::4])
        try:
            rows = list(csv.reader(rests)) if quoted else [r.split(",") for r in rests]
        except csv.Error:
            return False
        if any(len(r) != width - 3 for r in rows):
            return False
        attributes = {name: [r[i] for r in rows] for i, name in enumerate(header[3:])}
        try:
            builder.add_factored(head, n, attributes, which)
        except (ValueError, KeyError, TypeError):
            return False
        stats.rows += n
        return True

    body_start = data.find("\n") + 1
    quoted = '"' in data
    lines: list[str] | None = None
    if not careful and body_start > 0:
        body = data[body_start:]
        crs, crlfs = body.count("\r"), body.count("\r\n")
        if crs and crs == crlfs == body.count("\n"):
            lines = body.split("\r\n")  # what csv.writer writes: saves a copy of the text
        elif crs == crlfs:
            lines = body.replace("\r\n", "\n").split("\n")
        # A quoted field that runs over a line break leaves an odd number of quotes on its
        # line; without any, every line is one row and lines can be split apart directly.
        if lines is not None and quoted and any(c % 2 for c in set(map(_QUOTES, lines))):
            lines = None
    if lines is not None:
        # Each chunk is cut into fields with C-level splits (csv.reader costs ~2 us a row).
        # Rows with the wrong number of fields, or a chunk that fails, go the careful way.
        published_order = header == storage.FIELDS
        commas = operator.methodcaller("count", ",")
        for start in range(0, len(lines), _CHUNK):
            part = lines[start : start + _CHUNK]
            if "" in part:
                part = [line for line in part if line]
            if not part or (published_order and factored(part)):
                continue
            if not quoted and set(map(commas, part)) == {width - 1}:
                flush([], start + 2, ",".join(part).split(","))
            else:
                flush(list(csv.reader(part)), start + 2)
    elif not careful:
        while True:
            first_line = reader.line_num + 1
            chunk = [r for r in itertools.islice(reader, _CHUNK) if r]
            if not chunk:
                break
            flush(chunk, first_line)
    else:
        chunk = []
        first_line = 2
        while True:
            try:
                for row in reader:
                    if row:
                        if not chunk:
                            first_line = reader.line_num
                        chunk.append(row)
                    if len(chunk) >= _CHUNK:
                        flush(chunk, first_line)
                        chunk = []
                break
            except csv.Error as e:
                stats.skip(reader.line_num, str(e))
        if chunk:
            flush(chunk, first_line)
    if stats.skipped:
        logger.warning(
            "Skipped %d malformed row(s) in the %s catalog (%s)",
            stats.skipped,
            provider,
            "; ".join(stats.errors),
        )
    builder.skipped = stats.skipped
    return builder.build()


# ---------------------------------------------------------------------- query results


def combine(tables: list[Table]) -> Table:
    """One table of all `tables`' offers, sorted by price; equal prices keep the order of
    `tables`, then each table's own order (what merging the per-provider answers would give)."""
    if len(tables) == 1:
        return tables[0]
    columns: dict[str, list[np.ndarray]] = {k: [] for k in _COLUMNS}
    strings = {k: _Interner() for k in _STRINGS.values()}
    skipped: dict[str, int] = {}
    for t in tables:
        for k, dtype in _COLUMNS.items():
            col = getattr(t, k)
            if k in _STRINGS:
                interner = strings[_STRINGS[k]]
                # The trailing -1 maps the "none" code (-1) to itself.
                remap = np.array([interner.code(v) for v in getattr(t, _STRINGS[k])] + [-1])
                col = remap[col]
            columns[k].append(col.astype(dtype, copy=False))
        for p, n in t.skipped.items():
            skipped[p] = skipped.get(p, 0) + n
    joined = {
        k: np.concatenate(v) if v else np.empty(0, dtype=_COLUMNS[k]) for k, v in columns.items()
    }
    order = np.argsort(joined["price"], kind="stable")
    fields: dict[str, Any] = {k: v[order] for k, v in joined.items()}
    fields.update({k: i.values for k, i in strings.items()})
    return Table(**fields, skipped=skipped)


class Offers(Sequence[CatalogItem]):
    """The answer to a query: a read-only sequence of `CatalogItem`s in price order.

    Offers are built when first read and then kept by the catalog, so a query that matches 100k
    offers but whose caller looks at the cheapest ten costs ten offers, not 100k, and reading an
    answer again costs a list lookup per offer. Behaves like a list for reading: `len`,
    indexing, slicing (gives a list), iteration, `==` with a list, `+`.
    """

    __slots__ = ("_table", "_rows", "_extra")

    def __init__(
        self,
        table: Table | None,
        rows: np.ndarray,
        extra: list[CatalogItem | int] | None = None,
    ) -> None:
        self._table = table
        self._rows = rows  # the table's rows, in answer order
        self._extra = extra  # final order mixing online items and positions in `rows`

    @classmethod
    def from_items(cls, items: list[CatalogItem]) -> Offers:
        return cls(None, np.empty(0, dtype=np.int64), list(items))

    def __len__(self) -> int:
        return len(self._extra) if self._extra is not None else len(self._rows)

    def _offline(self, pos: int) -> CatalogItem:
        table = self._table
        assert table is not None
        objects = table._objects
        row = int(self._rows[pos])
        found = objects[row] if objects is not None else None
        if found is None:
            # Build the neighbours too: whoever reads one offer usually reads the next ones.
            table.items(self._rows[pos : pos + _BLOCK])
            found = table.item(row)
        return found

    def _at(self, i: int) -> CatalogItem:
        if self._extra is None:
            return self._offline(i)
        entry = self._extra[i]
        return self._offline(entry) if isinstance(entry, int) else entry

    @overload
    def __getitem__(self, i: int) -> CatalogItem: ...
    @overload
    def __getitem__(self, i: slice) -> list[CatalogItem]: ...
    def __getitem__(self, i: int | slice) -> CatalogItem | list[CatalogItem]:
        if isinstance(i, slice):
            if self._extra is None and self._table is not None:
                return self._table.items(self._rows[i])  # numpy slices as lists do
            return [self._at(k) for k in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("Offers index out of range")
        return self._at(i)

    def __iter__(self) -> Iterator[CatalogItem]:
        table, rows = self._table, self._rows
        if self._extra is None and table is not None:
            # Built a block at a time, so a caller that stops early pays for little more than
            # it read; an answer read before is handed out at a list lookup per offer.
            return itertools.chain.from_iterable(
                table.items(rows[s : s + _ITER_BLOCK]) for s in range(0, len(rows), _ITER_BLOCK)
            )
        return (self._at(i) for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Offers, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: Sequence[CatalogItem]) -> list[CatalogItem]:
        return list(self) + list(other)

    def __radd__(self, other: Sequence[CatalogItem]) -> list[CatalogItem]:
        return list(other) + list(self)

    def __repr__(self) -> str:
        head = ", ".join(repr(x) for x in self[:3])
        more = f", ... ({len(self)} offers)" if len(self) > 3 else ""
        return f"Offers([{head}{more}])"


_BLOCK = 256
_ITER_BLOCK = 16384
