"""The first `limit` offers of an answer, chosen on a table's columns (pure: no I/O).

`Catalog.query` builds every matching offer, and a door then sorts them (`--sort`), collapses
them to one per offer (`all_regions=false`) and keeps the first `limit`: at 180,000 matches
that is 180,000 objects built to show 100. Here the same answer is worked out on the column
arrays of the rows `Table.select` matched: a sort key per row (`sort_key`), a partial sort for
the first `limit` (`np.partition`, then a stable sort of the few rows at or below the cut), and
for a collapsed answer each group's first appearance, cheapest location and locations, all
with numpy; only the chosen rows are then built as offers (`answers.items`). `total` counts
every match, as before.

What "the same answer" means is pinned by the code it replaces (`render.sort_offers`: a stable
sort of the price-ordered answer by a key; `collapse.collapse_regions`), and
`tests/_internal/query/test_top.py` compares the two over random catalogs, every sort, both
views and many limits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuhunt._internal import registry
from gpuhunt._internal.collapse import CollapsedOffer
from gpuhunt._internal.form_factor import offer_form_factor
from gpuhunt._internal.gpu_specs import dense_tflops
from gpuhunt._internal.models import SHAPE_FIELDS, CatalogItem, QueryFilter
from gpuhunt._internal.query.answers import items, prepare, shapes_of
from gpuhunt._internal.query.filters import with_enumerated
from gpuhunt._internal.query.parsed import parsed
from gpuhunt._internal.query.table import Table
from gpuhunt._internal.rows import offer_row

SORTS = ("price", "price-per-gpu", "gpu-memory", "tflops-per-dollar")
_COUNT, _GPU, _MEMORY = (SHAPE_FIELDS.index(f) for f in ("gpu_count", "gpu_name", "gpu_memory"))
_PROVIDER, _NAME, _DATA = (
    SHAPE_FIELDS.index(f) for f in ("provider", "instance_name", "provider_data")
)


@dataclass(frozen=True)
class Top:
    """The first offers of an answer: `rows`, table row numbers in the answer's order (for a
    collapsed answer, each distinct offer's cheapest location); `locations`, for a collapsed
    answer, each one's locations, cheapest first (None when every region is a row); `total`,
    the offers (or distinct offers) matched; `matched`, the offers matched with every region
    a row; `dearest`, for a collapsed answer, each one's dearest location's price."""

    rows: np.ndarray
    locations: list[list[str]] | None
    total: int
    matched: int
    dearest: list[float] | None = None


def top(table: Table, rows: np.ndarray, sort: str, limit: int, all_regions: bool) -> Top:
    """The first `limit` offers of the answer made of `rows` (row numbers in price order, as
    `Table.select` gives them), sorted as `--sort sort` sorts, every region a row or collapsed
    as `collapse_regions` does."""
    if limit < 1:
        raise ValueError(f"limit must be at least 1, not {limit}")
    key = sort_key(table, rows, sort)
    if all_regions:
        return Top(rows[_first(key, len(rows), limit)], None, len(rows), len(rows))
    return _collapsed(table, rows, key, limit)


def _shape_column(table: Table, name: str, rows: np.ndarray) -> np.ndarray:
    """A per-shape column's values for `rows` (read at the shape, not spread to every row)."""
    parts = prepare(table)
    by_shape = table.by_shape
    if by_shape is None:  # an empty table is never compacted
        column: np.ndarray = getattr(table, name)
        return np.asarray(column[rows])
    shaped: np.ndarray = getattr(by_shape, name)
    return np.asarray(shaped[parts.shape_of_row[rows]])


def sort_key(table: Table, rows: np.ndarray, sort: str) -> np.ndarray | None:
    """Each row's key in `--sort sort` (None: price, the rows' own order). A stable sort by it
    of the price-ordered rows is `render.sort_offers`' answer: its keys' second part, the price,
    is the order the rows are already in."""
    if sort == "price" or len(rows) == 0:
        return None
    price = table.price[rows]
    count = _shape_column(table, "gpu_count", rows)
    if sort == "price-per-gpu":
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(count > 0, price / np.maximum(count, 1), np.inf)
    if sort == "gpu-memory":
        memory = np.nan_to_num(_shape_column(table, "gpu_memory", rows), nan=0.0)
        return -memory * count  # type: ignore[no-any-return]
    if sort == "tflops-per-dollar":
        figure = _tflops_per_shape(table, rows)
        usable = ~np.isnan(figure) & (price > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(usable, -(figure / np.where(usable, price, 1.0)), np.inf)
    raise ValueError(f"unknown sort {sort!r}: one of {', '.join(SORTS)}")


def _tflops_per_shape(table: Table, rows: np.ndarray) -> np.ndarray:
    """Each row's dense TFLOPS of all its GPUs (NaN: no published figure), as
    `gpu_specs.offer_tflops_per_dollar` reads it, worked out once per shape and kept with the
    table (a shape's figure never changes)."""
    parts = prepare(table)
    numbers = parts.shape_of_row[rows]
    known: dict[int, float] = table.__dict__.setdefault("_tflops_by_shape", {})
    wanted = np.unique(numbers)
    todo = [n for n in wanted.tolist() if n not in known]
    if todo:
        for number, shape in zip(todo, shapes_of(table, np.asarray(todo, dtype=np.int64))):
            count, gpu = shape[_COUNT], shape[_GPU]
            figure = None
            if count and gpu:
                form = offer_form_factor(shape[_PROVIDER], shape[_NAME], gpu, count, shape[_DATA])
                figure = dense_tflops(gpu, form, shape[_MEMORY])
            known[number] = np.nan if figure is None else figure * count
    lookup = np.array([known[n] for n in wanted.tolist()], dtype=np.float64)
    return lookup[np.searchsorted(wanted, numbers)]  # type: ignore[no-any-return]


def _first(key: np.ndarray | None, n: int, limit: int) -> np.ndarray:
    """Positions of the first `limit` of `n` rows in a stable sort by `key`."""
    if key is None:
        return np.arange(min(n, limit))
    if limit < n:
        # Every row below the cut is in, and rows at the cut are taken in their own order:
        # the stable sort of these few is the head of the stable sort of all.
        cut = np.partition(key, limit - 1)[limit - 1]
        candidates = np.flatnonzero(key <= cut)
    else:
        candidates = np.arange(n)
    return candidates[np.argsort(key[candidates], kind="stable")][:limit]


def _first_of(groups: np.ndarray, n: int, k: np.ndarray, at: np.ndarray) -> np.ndarray:
    """For each of `n` groups, the smallest `at` among its members whose `k` is the group's
    least (the int64 maximum for a group without members): its first member in a stable sort
    by `k`. Linear: `ufunc.at` over the members, no sort."""
    least = np.full(n, np.inf)
    np.minimum.at(least, groups, k)
    tied = k == least[groups]
    first = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, groups[tied], at[tied])
    return first


def _groups_of_shapes(table: Table) -> np.ndarray:
    """Each shape's distinct offer (provider, instance type, spot) as a number; kept with the
    table (its shapes never change)."""
    found: np.ndarray | None = table.__dict__.get("_offer_of_shape")
    if found is None:
        by_shape = table.by_shape
        assert by_shape is not None
        name = by_shape.instance_name.astype(np.int64)
        key = (name * len(table.providers) + by_shape.provider) * 2 + by_shape.spot
        found = np.unique(key, return_inverse=True)[1].reshape(-1)
        table.__dict__["_offer_of_shape"] = found
    return found


def _collapsed(table: Table, rows: np.ndarray, key: np.ndarray | None, limit: int) -> Top:
    """`collapse_regions` of the sorted answer, first `limit` distinct offers."""
    n = len(rows)
    if n == 0:
        return Top(rows[:0], [], 0, 0, [])
    parts = prepare(table)
    position = np.arange(n, dtype=np.int64)
    k = np.zeros(n) if key is None else key
    of_shape = _groups_of_shapes(table)
    group = of_shape[parts.shape_of_row[rows]]
    count = int(of_shape.max()) + 1
    # A group's place in the answer is its first row's, in a stable sort by key.
    least = np.full(count, np.inf)
    np.minimum.at(least, group, k)
    first = _first_of(group, count, k, position)
    present = np.flatnonzero(first < n)
    ranked = present[np.lexsort((first[present], least[present]))]
    chosen = ranked[:limit]  # group numbers, in the answer's order
    rank = np.full(count, -1, dtype=np.int64)
    rank[chosen] = np.arange(len(chosen))
    sub = np.flatnonzero(rank[group] >= 0)
    g, p, sk = rank[group[sub]], table.price[rows[sub]], k[sub]
    # The offer shown: the cheapest row, the first in the answer of equally cheap ones.
    cheapest = np.full(len(chosen), np.inf)
    np.minimum.at(cheapest, g, p)
    at_cheapest = p == cheapest[g]
    shown = _first_of(g[at_cheapest], len(chosen), sk[at_cheapest], sub[at_cheapest])
    dearest = np.full(len(chosen), -np.inf)
    np.maximum.at(dearest, g, p)
    # Locations: each once at its lowest price, cheapest first, ties in order of first
    # appearance in the answer.
    location = table.location[rows[sub]].astype(np.int64)
    pairs, pair = np.unique(g * max(len(table.locations), 1) + location, return_inverse=True)
    pair = pair.reshape(-1)
    lowest = np.full(len(pairs), np.inf)
    np.minimum.at(lowest, pair, p)
    pair_key = np.full(len(pairs), np.inf)
    np.minimum.at(pair_key, pair, sk)
    pair_first = _first_of(pair, len(pairs), sk, sub)
    pair_group = pairs // max(len(table.locations), 1)
    order = np.lexsort((pair_first, pair_key, lowest, pair_group))
    names = table.locations
    locations: list[list[str]] = [[] for _ in range(len(chosen))]
    for gi, li in zip(pair_group[order].tolist(), (pairs[order] % max(len(names), 1)).tolist()):
        locations[gi].append(names[li])
    return Top(rows[shown], locations, len(present), n, dearest.tolist())


def choose(
    table: Table, q: QueryFilter, sort: str, limit: int | None, all_regions: bool
) -> Top | None:
    """`top` of the answer `Catalog.query` gives `q` from `table` (every row: `limit` None);
    None where the table alone does not give it: a query naming only online providers, or one
    the table's online providers (the bundled snapshot's stand-ins) would answer in part.
    A door checks itself that the catalog has no online provider added."""
    wanted = parsed(q).providers
    asked = [p for p in table.providers if wanted is None or p in wanted]
    offline = [p for p in registry.OFFLINE_PROVIDERS if wanted is None or p in wanted]
    if not offline or any(registry.spec(p).online for p in asked):
        return None
    among = None if set(table.providers) <= set(offline) else offline
    rows = table.select(q, among)
    wider = None if len(rows) else with_enumerated(q)
    if wider is not None:  # as `Catalog.query`: no listed offer, the enumerated ones
        rows = table.select(wider, among)
    return top(table, rows, sort, limit or max(len(rows), 1), all_regions)


def row_batches(found: Top, table: Table, at_once: int = 256) -> Iterator[list[dict[str, Any]]]:
    """The JSON rows (`rows.offer_row`) of `found`, built `at_once` offers at a time; a
    collapsed answer's rows have their `locations` too."""
    for start in range(0, len(found.rows), at_once):
        batch = []
        for n, item in enumerate(_built(table, found.rows[start : start + at_once])):
            out = offer_row(item)
            if found.locations is not None:
                out["locations"] = found.locations[start + n]
            batch.append(out)
        yield batch


def _built(table: Table, rows: np.ndarray) -> list[CatalogItem]:
    """The offers of `rows`, in their order (`items` takes sorted distinct rows)."""
    distinct, where = np.unique(rows, return_inverse=True)
    made = items(table, distinct)
    return [made[i] for i in where.reshape(-1).tolist()]


def offers_of(found: Top, table: Table) -> list[CatalogItem] | list[CollapsedOffer]:
    """The offers of `found`, built: each a `CatalogItem`, or for a collapsed answer a
    `CollapsedOffer` (what `collapse_regions` gives) of its cheapest location."""
    built = _built(table, found.rows)
    if found.locations is None or found.dearest is None:
        return built
    return [
        CollapsedOffer(i, locations, dearest)
        for i, locations, dearest in zip(built, found.locations, found.dearest)
    ]


def array_chunks(
    batches: Iterable[list[Any]], dumps: Callable[[Any], bytes], chunk_bytes: int = 1 << 16
) -> Iterator[bytes]:
    """`dumps(rows)`, byte for byte, where `rows` are the `batches` one after another, in
    pieces of about `chunk_bytes`; each batch is encoded when it is reached, by one `dumps`
    call. `dumps` writes compact JSON (separators `,` and `:`) or indented JSON (the CLI's
    `indent=2`): either way a list is its items between `[` and `]` with a `,` before each
    item's leading whitespace, and the whitespace before the `]` (an indented list's newline)
    is the last batch's own."""
    buffer, size, tail = [b"["], 0, b""
    first = True
    for batch in batches:
        if not batch:
            continue
        inner = dumps(batch)[1:-1]
        encoded = inner.rstrip()
        tail = inner[len(encoded) :]
        buffer.append(encoded if first else b"," + encoded)
        size += len(encoded) + 1
        first = False
        if size >= chunk_bytes:
            yield b"".join(buffer)
            buffer, size = [], 0
    buffer.append(tail + b"]")
    yield b"".join(buffer)


def json_chunks(
    batches: Iterable[list[Any]],
    total: int,
    catalog: Any,
    dumps: Callable[[Any], bytes],
    chunk_bytes: int = 1 << 16,
    providers: Any = None,
) -> Iterator[bytes]:
    """`dumps({"offers": rows, "total": total, "catalog": catalog})`, byte for byte (with
    `"providers": providers` last when given), where
    `rows` are the `batches` one after another, in pieces of about `chunk_bytes`; each batch is
    encoded when it is reached, by one `dumps` call (`dumps` writes compact JSON, so a list is
    its items joined by `,` between `[` and `]`, and an object its members between `{` and
    `}`)."""
    yield b'{"offers":'
    yield from array_chunks(batches, dumps, chunk_bytes)
    tail = b"" if providers is None else b',"providers":' + dumps(providers)
    yield b',"total":' + dumps(total) + b',"catalog":' + dumps(catalog) + tail + b"}"
