"""The answer to a query: `Offers`, a lazy read-only sequence over a `Table`'s rows, and the
merge of online providers' offers into it (pure: no I/O)."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterator, Sequence
from typing import Any, overload

import numpy as np

from gpuhunt._internal.models import CatalogItem
from gpuhunt._internal.query.table import Table


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
        row = int(self._rows[pos])
        found = table.built(row)
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


def merge_online(offline: Offers, online_lists: list[list[CatalogItem]]) -> Offers:
    """Merge by price like `heapq.merge`: each list keeps its own order (Vast.ai's score order,
    say), and on equal prices offline offers come first, then online in provider order."""
    if not any(online_lists):
        return offline
    table, rows = offline._table, offline._rows
    offline_prices = table.price[rows] if table is not None else np.empty(0)
    streams: list[Any] = [((price, pos) for pos, price in enumerate(offline_prices.tolist()))]
    streams += [((item.price, item) for item in items) for items in online_lists]
    order: list[CatalogItem | int] = [
        entry for _, entry in heapq.merge(*streams, key=lambda x: x[0])
    ]
    return Offers(table, rows, order)
