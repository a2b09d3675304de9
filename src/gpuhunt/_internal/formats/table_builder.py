"""Text columns of catalog CSV rows into the typed columns of a `Table` (pure: no I/O).

The same rules as `schema.parse_row`, applied to whole columns: each distinct value of a column
is converted once, since catalog columns repeat a handful of values across thousands of rows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from gpuhunt._internal import schema
from gpuhunt._internal.models import AcceleratorVendor
from gpuhunt._internal.query.table import ARCHS, STORED_COLUMNS, VENDORS, Interner, Table

_NVIDIA = VENDORS.index(AcceleratorVendor.NVIDIA)
_GOOGLE = VENDORS.index(AcceleratorVendor.GOOGLE)


class TableBuilder:
    """Accumulates validated rows column by column, then sorts them by price."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.parts: dict[str, list[np.ndarray]] = {k: [] for k in STORED_COLUMNS}
        self.gpu_names = Interner()
        self.flags = Interner()
        self.names = Interner()
        self.locs = Interner()
        self.pdatas = Interner()
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
        name_raw_codes, name_uniques = distinct(raw_names)
        clean = [u[4:] if u.startswith("tpu-") else u for u in name_uniques]
        name_of = np.array(
            [self.gpu_names.code(c) if c else -1 for c in clean] + [-1], dtype=np.int32
        )
        tpu_of = np.array([u.startswith("tpu-") for u in name_uniques] + [False])
        name_code = name_of[name_raw_codes]
        vendor_raw_codes, vendor_uniques = distinct(raw_vendors)
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
        pds = _by_distinct(raw_pd, lambda p: self.pdatas.code(schema.check_json(p)), np.int32)
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

    def add_row(self, row: schema.ParsedRow) -> None:
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
            self.parts[k].append(v.astype(STORED_COLUMNS[k], copy=False))

    def build(self) -> Table:
        cols = {
            k: (np.concatenate(v) if v else np.empty(0, dtype=STORED_COLUMNS[k]))
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


_SPOT = {"True": True, "False": False, "true": True, "false": False, "TRUE": True, "FALSE": False}
_ARCH_CODES = {"": 0, "x86": 0, "arm": 1, "X86": 0, "ARM": 1}


def _norm_flags(text: str) -> str:
    return text if " " not in text or text == " ".join(text.split()) else " ".join(text.split())


def distinct(column: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """Codes of each value into the list of distinct values, in order of first appearance."""
    codes = {v: i for i, v in enumerate(dict.fromkeys(column))}
    if len(codes) == 1:  # common: one vendor, no flags, one architecture in a whole chunk
        return np.zeros(len(column), dtype=np.int32), list(codes)
    found = np.fromiter(map(codes.__getitem__, column), dtype=np.int32, count=len(column))
    return found, list(codes)


def _by_distinct(column: Sequence[str], convert: Any, dtype: Any) -> np.ndarray:
    """`convert` applied to each value, calling it once per distinct value (catalog columns
    repeat a handful of values across thousands of rows)."""
    codes, uniques = distinct(column)
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
