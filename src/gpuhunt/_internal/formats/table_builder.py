"""Text columns of catalog CSV rows into the typed columns of a `Table` (pure: no I/O).

The same rules as `schema.parse_row`, applied to whole columns: each distinct value of a column
is converted once, since catalog columns repeat a handful of values across thousands of rows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from gpuhunt._internal import offer_spec, schema
from gpuhunt._internal.query.masks import ARCHS, VENDORS
from gpuhunt._internal.query.table import STORED_COLUMNS, Interner, Table


class TableBuilder:
    """Accumulates validated rows column by column, then sorts them by price."""

    def __init__(self, provider: str, capacity: int = 0) -> None:
        """`capacity`: the rows expected at most (a file's line count): each column is then
        one array of that size filled in place, instead of chunks joined at the end (the
        chunks and the joined copy at once, and the heap they fragment)."""
        self.provider = provider
        self.parts: dict[str, list[np.ndarray]] = {k: [] for k in STORED_COLUMNS}
        self.filled: dict[str, np.ndarray] | None = (
            {k: np.empty(capacity, dtype=t) for k, t in STORED_COLUMNS.items()}
            if capacity > 0
            else None
        )
        self.rows = 0
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
        low, _, high, _ = schema.BOUNDS["price"]  # `schema.value_problem`'s rule, vectorised
        if not (np.isfinite(price) & (price > low) & (price <= high)).all():
            raise ValueError("a price that is not a finite positive number")
        for name in ("instance_name", "location"):
            if "" in cols[name]:
                raise ValueError(f"empty {name}")
        return {
            "price": price,
            "instance_name": _by_distinct(cols["instance_name"], self.names.code, np.int32),
            "location": _by_distinct(cols["location"], self.locs.code, np.int32),
        }

    def _attributes(self, cols: Mapping[str, Sequence[str]], n: int) -> dict[str, np.ndarray]:
        # Each value is converted by its `schema` rule once per distinct value of its column.
        gpu_count = _by_distinct(cols["gpu_count"], schema.gpu_count, np.int64)
        gpu_name, gpu_vendor = self._gpus(cols, n, gpu_count > 0)
        return {
            "cpu": _by_distinct(
                cols["cpu"], lambda t: schema.sane("cpu", schema.integer(t, "cpu")), np.int64
            ),
            "memory": _by_distinct(
                cols["memory"],
                lambda t: schema.sane("memory", schema.finite(t, "memory")),
                np.float64,
            ),
            "gpu_count": gpu_count,
            "gpu_memory": _optional_floats(cols.get("gpu_memory"), n, "gpu_memory"),
            "disk_size": _optional_floats(cols.get("disk_size"), n, "disk_size"),
            "spot": _by_distinct(cols["spot"], schema.spot, bool),
            "gpu_name": gpu_name,
            "gpu_vendor": gpu_vendor,
            "cpu_arch": _by_distinct(
                cols.get("cpu_arch") or ("",) * n,
                lambda t: ARCHS.index(schema.cpu_arch(t)),
                np.int8,
            ),
            "flags": _by_distinct(
                cols.get("flags") or ("",) * n, lambda t: self.flags.code(schema.flags(t)), np.int32
            ),
            "provider_data": self._offer_texts(cols, n),
        }

    def _offer_texts(self, cols: Mapping[str, Sequence[str]], n: int) -> np.ndarray:
        """Codes of the rows' offer texts (`offer_spec`): provider_data and the own columns'
        cells, converted once per distinct combination."""
        data = cols.get("provider_data") or ("",) * n
        own = [cols.get(c) for c in offer_spec.OWN_COLUMNS]
        if all(c is None for c in own):  # a file from before the own columns
            return _by_distinct(
                data,
                lambda t: self.pdatas.code(offer_spec.migrate(schema.check_json(t))),
                np.int32,
            )
        given = [c if c is not None else ("",) * n for c in own]
        keys = list(map(offer_spec.SEP.join, zip(data, *given)))

        def code(key: str) -> int:
            cells = key.split(offer_spec.SEP)
            if len(cells) != len(given) + 1:
                raise ValueError("a control character in an offer's cell")
            text = offer_spec.offer_text(
                schema.check_json(cells[0]), dict(zip(offer_spec.OWN_COLUMNS, cells[1:])).get
            )
            return self.pdatas.code(text)

        return _by_distinct(keys, code, np.int32)

    def _gpus(
        self, cols: Mapping[str, Sequence[str]], n: int, has_gpus: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """GPU name and vendor codes, by `schema.gpu` once per distinct (name, vendor, whether
        the row has GPUs): the vendor of an older file's row depends on all three."""
        name_codes, names = distinct(cols.get("gpu_name") or ("",) * n)
        vendor_codes, vendors = distinct(cols.get("gpu_vendor") or ("",) * n)
        key = (name_codes.astype(np.int64) * len(vendors) + vendor_codes) * 2 + has_gpus
        keys, inverse = np.unique(key, return_inverse=True)
        name_of, vendor_of = [], []
        for k in keys.tolist():
            pair, has = divmod(k, 2)
            name, vendor = schema.gpu(
                names[pair // len(vendors)], vendors[pair % len(vendors)], has
            )
            name_of.append(self.gpu_names.code(name) if name else -1)
            vendor_of.append(VENDORS.index(vendor) if vendor else -1)
        return (
            np.array(name_of, dtype=np.int32)[inverse],
            np.array(vendor_of, dtype=np.int8)[inverse],
        )

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
        n = len(columns["price"])
        filled = self.filled
        if filled is not None and self.rows + n > len(filled["price"]):
            # More rows than expected: what is filled becomes a chunk, chunks from here on.
            for k, a in filled.items():
                self.parts[k].append(a[: self.rows].copy())
            self.filled = filled = None
        if filled is not None:
            for k, v in columns.items():
                filled[k][self.rows : self.rows + n] = v
        else:
            for k, v in columns.items():
                self.parts[k].append(v.astype(STORED_COLUMNS[k], copy=False))
        self.rows += n

    def take(self, capacity: int) -> Table:
        """The rows so far as a table (`build`), the builder then empty for more rows of the same
        file, filling arrays of `capacity` rows: its string lists go on growing, so the codes of
        every part index the last part's lists (`load.tables` joins the parts' shapes)."""
        table = self.build()
        self.rows = 0
        self.filled = {k: np.empty(capacity, dtype=t) for k, t in STORED_COLUMNS.items()}
        return table

    def build(self) -> Table:
        """The table, sorted by price. Made a column at a time, each column's chunks let go
        once it is joined and sorted: the chunks, the joined and the sorted copies of every
        column at once were three times the table."""
        parts = self.parts
        self.parts = {k: [] for k in STORED_COLUMNS}
        filled, self.filled = self.filled, None

        def joined(k: str) -> np.ndarray:
            if filled is not None:
                parts.pop(k)
                return filled.pop(k)[: self.rows]
            chunks = parts.pop(k)
            out = np.concatenate(chunks) if chunks else np.empty(0, dtype=STORED_COLUMNS[k])
            chunks.clear()
            return out

        price = joined("price")
        order = np.argsort(price, kind="stable")
        cols = {"price": price[order]}
        del price
        for k in list(parts):
            cols[k] = joined(k)[order]
        return Table(
            providers=[self.provider],
            provider=np.zeros(len(order), dtype=np.int8),
            **cols,
            gpu_names=self.gpu_names.values,
            flag_sets=self.flags.values,
            instance_names=self.names.values,
            locations=self.locs.values,
            provider_datas=self.pdatas.values,
            skipped={self.provider: self.skipped} if self.skipped else {},
        )


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
    converted: np.ndarray = np.array([convert(u) for u in uniques], dtype=dtype)[codes]
    return converted


def _optional_floats(column: Sequence[str] | None, n: int, name: str) -> np.ndarray:
    """Floats where given, NaN where empty or where the column is absent."""
    if column is None:
        return np.full(n, np.nan)
    return _by_distinct(
        column,
        lambda t: _nan_if_none(schema.sane(name, schema.optional_finite(t, name))),
        np.float64,
    )


def _nan_if_none(value: float | None) -> float:
    return math.nan if value is None else value
