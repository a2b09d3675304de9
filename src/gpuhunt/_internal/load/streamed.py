"""A large CSV-only provider read into its shapes a part at a time (issue 50): the table of every
column is never made for the whole provider, only for a part of `csv_stream.PART_ROWS` rows,
whose shapes are taken at once (`shaped`); the parts' shapes are then joined into the
provider's (`join`). At 5M offers the largest provider's table of every column (1.1M offers,
75 MB) was held until its shapes were taken, as much as the loaded catalog by itself.

Such a provider's table is not kept in the disk cache's `parsed/` folder (there is no whole
table to write): the next process reads the whole catalog from the warm-start snapshot
(`load.warm`), and parses the provider again only when that does not match."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuhunt._internal import observed
from gpuhunt._internal.formats.archive import Members
from gpuhunt._internal.load.sources import RawCatalog
from gpuhunt._internal.query import answers
from gpuhunt._internal.query.table import COLUMNS, STRING_LISTS, Table

# A CSV at least this large (as declared in its archive) is read into shapes a part at a time;
# a smaller one is parsed whole and its table kept in the disk cache as before.
MIN_BYTES = 32 << 20


@dataclass
class Shaped:
    """A provider's offers as a compacted table keeps them (`Table.compact`): its shapes (one
    row each, every column), and per row only the price, the location and the shape number."""

    shapes: Table
    price: np.ndarray
    location: np.ndarray  # codes into `shapes.locations`
    shape_of_row: np.ndarray  # rows of `shapes`


def shaped(table: Table) -> Shaped:
    """`table` grouped into its shapes (`answers`' grouping, per provider: a shape never spans
    two). The per-row arrays are copies, so nothing of `table` (a column file's whole buffer,
    for a table read from one) stays alive through them."""
    groups, firsts = answers.shape_groups(table)
    shapes = Table(
        **{k: getattr(table, k)[firsts] for k in COLUMNS},
        **{k: getattr(table, k) for k in STRING_LISTS.values()},
        skipped=dict(table.skipped),
    )
    location = _small(table.location, len(table.locations))
    return Shaped(shapes, np.array(table.price), location, _small(groups, len(shapes)))


def _small(codes: np.ndarray, n: int) -> np.ndarray:
    """A copy of `codes` (into a list of `n`) in two bytes a row where `n` allows: the parts'
    row arrays are held together until they are combined (issue 50)."""
    return codes.astype(np.uint16) if n <= 1 << 16 else np.array(codes, dtype=np.int32)


def stream_of(raw: RawCatalog, provider: str) -> tuple[int, Iterator[bytes]] | None:
    """The provider's CSV as its archive member's pieces, if it is still in its archive."""
    csvs = raw.csvs
    return csvs.stream(provider) if isinstance(csvs, Members) else None


def read_in_parts(raw: RawCatalog, provider: str) -> Shaped | None:
    """The provider's shapes, read a part at a time, if its CSV is at least `MIN_BYTES`, still
    in its archive and without a column file; else None (nothing read)."""
    if provider in raw.columns:
        return None
    streamed = stream_of(raw, provider)
    if streamed is None or streamed[0] < MIN_BYTES:
        return None
    # The CSV parser is imported when a CSV is parsed: a warm start reads no CSV.
    from gpuhunt._internal.formats.csv_stream import build_table_streamed

    parts: list[Shaped] = []

    def emit(table: Table | None) -> None:
        if table is None:
            parts.clear()  # read whole after all: the last table holds every row
        else:
            parts.append(shaped(table))

    size, pieces = streamed
    csvs = raw.csvs
    last = build_table_streamed(
        pieces, provider=provider, size=size, whole=lambda: csvs[provider], emit=emit
    )
    parts.append(shaped(last))
    del last
    part = join(parts)
    observed.stamp_loaded(part.shapes, raw.manifest, provider)
    return part


def join(parts: list[Shaped]) -> Shaped:
    """One provider's parts as one: their shapes joined and made distinct again (a shape met in
    several parts is kept once), their rows in the parts' order. Every part's codes index the
    last part's string lists (the parts of one file share its builder's lists)."""
    if len(parts) == 1:
        return parts[0]
    last = parts[-1].shapes
    lists: dict[str, Any] = {name: getattr(last, name) for name in STRING_LISTS.values()}
    skipped: dict[str, int] = {}
    for part in parts:
        for p, n in part.shapes.skipped.items():
            skipped[p] = skipped.get(p, 0) + n
    joined: dict[str, Any] = {
        k: np.concatenate([getattr(part.shapes, k) for part in parts]) for k in COLUMNS
    }
    every = Table(**joined, **lists)
    groups, firsts = answers.shape_groups(every)
    distinct: dict[str, Any] = {k: v[firsts] for k, v in joined.items()}
    del joined
    shapes = Table(**distinct, **lists, skipped=skipped)
    del every
    offsets = np.cumsum([0] + [len(part.shapes) for part in parts[:-1]])
    rows = [part.shape_of_row.astype(np.int64) + offsets[k] for k, part in enumerate(parts)]
    shape_of_row = _small(groups[np.concatenate(rows)], len(shapes))
    del rows
    price = np.concatenate([part.price for part in parts])
    location = np.concatenate([part.location for part in parts])
    parts.clear()
    return Shaped(shapes, price, location, shape_of_row)
