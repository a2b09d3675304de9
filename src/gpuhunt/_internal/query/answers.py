"""An answer: its offers built from a table's rows, and merged with online providers' offers
(pure: no I/O).

Every answer is a new list of new `CatalogItem`s, so no caller sees another's changes. An offer
has a slot per field; all but its location and price hold the values the other offers of its
instance type hold too (one `Shape` tuple per type). What offers are built from is made once per
table, at load (`prepare`): the shapes, each row's shape number and the locations, so that
building an offer is an allocation and a store a field.
"""

from __future__ import annotations

import heapq
import json
import operator
from itertools import islice
from typing import Any, NamedTuple

import numpy as np

from gpuhunt._internal import offer_spec
from gpuhunt._internal.frozen import freeze
from gpuhunt._internal.models import SHAPE_FIELDS, CatalogItem, Shape, fill_offers, new_offers
from gpuhunt._internal.query.masks import ARCHS, VENDORS
from gpuhunt._internal.query.table import Table

_PRICE = operator.attrgetter("price")


def merge_online(
    offline: list[CatalogItem], online_lists: list[list[CatalogItem]]
) -> list[CatalogItem]:
    """Merge by price like `heapq.merge`: each list keeps its own order (Vast.ai's score order,
    say), and on equal prices offline offers come first, then online in provider order."""
    if not any(online_lists):
        return offline
    return list(heapq.merge(offline, *online_lists, key=_PRICE))


class OfferParts(NamedTuple):
    """What an answer's offers are built from: one `Shape` (a tuple of the shared values) per
    distinct instance type, each row's shape number, and the locations as Python strings.
    Nothing per row is a Python object: an answer makes its prices from the table's column
    (Python floats, made in C), so a catalog holds only numpy columns and a few thousand
    tuples between queries."""

    shapes: np.ndarray  # object array of Shape
    shape_of_row: np.ndarray  # uint16, or int32 beyond 65,536 shapes
    locations: np.ndarray  # object array of str, indexed by the table's location codes
    # Shapes whose tuple is not made yet (None: all are): a catalog read back from the disk
    # cache (`load.warm`) makes each when an answer first holds one of its offers.
    unmade: np.ndarray | None = None


# Offers are filled this many at a time: the lists they are filled from (three pointers an
# offer, and the arrays they are gathered from) stay this small instead of growing with the
# answer, and the allocator does not keep their freed memory as the answer's size.
_SLICE = 1 << 16


def items(table: Table, rows: np.ndarray) -> list[CatalogItem]:
    """The offers of `rows`, new objects for every call (so no caller sees another's
    changes). An offer's fields are the values its instance type's offers share (one `Shape`
    for all the offers of a type, spot or not), its location and its price."""
    if len(rows) == 0:
        return []
    parts = prepare(table)
    every = len(rows) == len(table)  # every offer, in order (rows are distinct and sorted)
    if parts.unmade is not None:
        _make_shapes(table, parts, parts.shape_of_row if every else parts.shape_of_row[rows])
    out = new_offers(len(rows))
    unfilled = iter(out)
    for start in range(0, len(rows), _SLICE):
        part = slice(start, start + _SLICE) if every else rows[start : start + _SLICE]
        fill_offers(
            islice(unfilled, _SLICE),
            parts.shapes[parts.shape_of_row[part]].tolist(),
            parts.locations[table.location[part]].tolist(),
            table.price[part].tolist(),
        )
    return out


def prepare(table: Table) -> OfferParts:
    """What offers are built from (`OfferParts`). Made once; the catalog calls this at load
    so that the first query does not pay for it."""
    parts: OfferParts | None = table.parts
    if parts is None:
        with table.parts_lock:
            parts = table.parts
            if parts is None:
                shape_of_row, firsts = shape_groups(table)
                if len(firsts) <= 1 << 16:  # two bytes a row where the shapes allow
                    shape_of_row = shape_of_row.astype(np.uint16)
                shapes = np.empty(len(firsts), dtype=object)
                shapes[:] = _shapes(table, firsts)
                locations = np.empty(len(table.locations), dtype=object)
                locations[:] = table.locations
                parts = table.parts = OfferParts(shapes, shape_of_row, locations)
                # From here on the table keeps per row only price, location and shape number.
                table.compact(shape_of_row, firsts)
    return parts


def shapes_of(table: Table, numbers: np.ndarray) -> list[Shape]:
    """The `Shape` tuples of the shapes `numbers` of a table (`OfferParts.shapes`)."""
    parts = prepare(table)
    if parts.unmade is not None:
        _make_shapes(table, parts, numbers)
    found: list[Shape] = parts.shapes[numbers].tolist()
    return found


def _make_shapes(table: Table, parts: OfferParts, numbers: np.ndarray) -> None:
    """Make the tuples of the shapes `numbers` that are not made yet (from the table of shapes
    that a compacted table holds)."""
    by_shape = table.by_shape
    assert parts.unmade is not None and by_shape is not None
    wanted = np.flatnonzero(np.bincount(numbers, minlength=len(parts.shapes)))
    if not parts.unmade[wanted].any():
        return
    with table.parts_lock:
        todo = wanted[parts.unmade[wanted]]
        for number, shape in zip(todo.tolist(), _shapes(by_shape, todo)):
            parts.shapes[number] = shape
        parts.unmade[todo] = False  # after the tuples are in: a reader never sees a gap


def shape_groups(table: Table) -> tuple[np.ndarray, np.ndarray]:
    """Each row's shape number and a row of each shape. Offers of one provider, instance
    type and spot-ness nearly always agree on every other shape field: group by those
    three (counting, no sort), check the rest, and group exactly only if that fails."""
    n = len(table)
    key = (table.instance_name.astype(np.int64) * len(table.providers) + table.provider) * 2
    key += table.spot
    if n == 0:
        return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int64)
    present = np.zeros(int(key.max()) + 1, dtype=bool)
    present[key] = True
    groups = (np.cumsum(present) - 1)[key]
    firsts = np.empty(int(groups.max()) + 1, dtype=np.int64)
    firsts[groups] = np.arange(n)  # some row of each group: all are checked below
    rest = [getattr(table, c) for c in _SHAPE_COLUMNS if c not in _GROUPED]
    for column in rest:
        bits = _as_bits(column)
        if not np.array_equal(bits[firsts][groups], bits):
            return _distinct_rows([getattr(table, c) for c in _SHAPE_COLUMNS])
    return groups.astype(np.int32), firsts


def _shapes(table: Table, rows: np.ndarray) -> list[Shape]:
    """One `Shape` for each of `rows`; flags and the offer text (provider_data and the own
    fields) read once per distinct text, provider_data shared read-only (`freeze`)."""
    names, gnames, providers = table.instance_names, table.gpu_names, table.providers
    flag_lists: dict[int, Any] = {}
    datas: dict[int, Any] = {}
    out = []
    for prov, n, cpu, mem, count, gn, gmem, disk, vend, fl, arch, pd, spot in zip(
        *(getattr(table, name)[rows].tolist() for name in _SHAPE_COLUMNS)
    ):
        flags = flag_lists.get(fl)
        if flags is None:
            flags = flag_lists[fl] = freeze(table.flag_sets[fl].split())
        said = datas.get(pd)
        if said is None:
            text = table.provider_datas[pd]  # the offer text (`offer_spec`)
            own = offer_spec.own_values(text)
            text = offer_spec.provider_text(text)
            said = datas[pd] = (freeze({} if text == "{}" else json.loads(text)), own)
        data, own = said
        out.append(
            (
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
                *own,
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
    bits = [_as_bits(c) for c in columns]
    _, firsts, groups = np.unique(_row_hashes(bits), return_index=True, return_inverse=True)
    groups = groups.reshape(-1)
    if not all(np.array_equal(b[firsts][groups], b) for b in bits):
        _, firsts, groups = np.unique(
            np.stack(bits, axis=1), axis=0, return_index=True, return_inverse=True
        )
        groups = groups.reshape(-1)
    return groups.astype(np.int32), firsts


def _row_hashes(bits: list[np.ndarray]) -> np.ndarray:
    """A 64-bit hash of each row of parallel columns of 64-bit patterns. Only its speed
    depends on its quality: `_distinct_rows` checks the groups it gives."""
    h = np.zeros(len(bits[0]), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for b in bits:
            h ^= b + np.uint64(0x9E3779B97F4A7C15) + (h << np.uint64(6)) + (h >> np.uint64(2))
            h *= np.uint64(0xBF58476D1CE4E5B9)
    return h


def _as_bits(column: np.ndarray) -> np.ndarray:
    """A column's values as 64-bit patterns, equal exactly when the values are (every NaN
    alike)."""
    if column.dtype.kind == "f":
        c = column.astype(np.float64)
        return np.where(np.isnan(c), np.float64(np.nan), c).view(np.uint64)
    return column.astype(np.int64).view(np.uint64)
