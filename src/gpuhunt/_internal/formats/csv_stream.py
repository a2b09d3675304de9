"""A provider's catalog CSV parsed as it is inflated (pure: pieces of bytes in, a `Table` out).

`csv_table.build_table` reads a CSV's bytes whole: at 5M offers the largest provider's CSV
(120 MB) was held beside the archive it came from and the table being built, and a cold load
peaked at 4x the loaded catalog (issue 50). Here the pieces of a zip member are joined into
blocks of whole lines (about `BLOCK` bytes) and each block goes through the same line reader
(`csv_table.read_lines`) into one `TableBuilder`: a load holds one block of the CSV at a time.
A block that reader cannot take (a quoted field over a line break, a lone CR, a NUL, bytes that
are not UTF-8, a header with quotes: the rarer readings that need the whole text) makes the
whole file go through `build_table` instead, from `whole()`, so the table is always what
`build_table` gives.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable

from gpuhunt._internal import schema
from gpuhunt._internal.formats import csv_table
from gpuhunt._internal.formats.csv import ReadStats
from gpuhunt._internal.formats.table_builder import TableBuilder
from gpuhunt._internal.query.table import Table

BLOCK = 4 << 20  # bytes of whole lines parsed at a time
PART_ROWS = 1 << 17  # rows of a part given to `emit` (about 9 MB of columns)


class _Whole(Exception):
    """The file needs a reading of its whole text."""


def build_table_streamed(
    pieces: Iterable[bytes],
    *,
    provider: str,
    size: int,
    whole: Callable[[], bytes],
    stats: ReadStats | None = None,
    emit: Callable[[Table | None], None] | None = None,
) -> Table:
    """`build_table` of the bytes that `pieces` gives (`size` of them, as declared), read a
    block of lines at a time; `whole()` gives every byte again for the rarer readings. An
    exception from `pieces` (a corrupt member, a sha256 that does not match) propagates: what
    was built is dropped.

    With `emit`, the offers are given a part at a time: every `PART_ROWS` rows or so a table of
    those rows goes to `emit` (each sorted by price; their string lists grow from part to part),
    and the returned table holds the last rows; `emit(None)` says that the parts given so far
    are void (the file is read whole after all: the returned table holds every row)."""
    stats = stats if stats is not None else ReadStats()
    it = iter(pieces)
    try:
        return _streamed(it, provider, size, stats, emit)
    except (_Whole, csv_table.SpansLines, csv.Error):
        stats.rows = stats.skipped = 0
        stats.errors.clear()
        if emit is not None:
            emit(None)
    # The rest is read through first: whoever watches the pieces (a hash) sees every byte,
    # and the member's own checks run.
    for _ in it:
        pass
    return csv_table.build_table(whole(), provider=provider, stats=stats)


def _streamed(
    pieces: Iterable[bytes],
    provider: str,
    size: int,
    stats: ReadStats,
    emit: Callable[[Table | None], None] | None,
) -> Table:
    pending = bytearray()
    reader: _Blocks | None = None
    for piece in pieces:
        pending += piece
        while len(pending) >= BLOCK:
            # Whole lines of about a block (a line longer than a block is taken whole).
            cut = pending.rfind(b"\n", 0, BLOCK) + 1 or pending.find(b"\n", BLOCK) + 1
            if cut == 0:
                break  # one line longer than a block, not ended yet
            block = bytes(pending[:cut])
            del pending[:cut]
            if reader is None:
                reader = _Blocks(block, provider, size, stats, emit)
            else:
                reader.read(block)
    if pending or reader is None:
        block = bytes(pending)
        del pending
        if reader is None:
            reader = _Blocks(block, provider, size, stats, emit)
        else:
            reader.read(block)
    reader.chunks.builder.skipped = stats.skipped
    return reader.chunks.builder.build()


class _Blocks:
    """The reader's state across blocks: the header, the builder and the lines read so far."""

    def __init__(
        self,
        first: bytes,
        provider: str,
        size: int,
        stats: ReadStats,
        emit: Callable[[Table | None], None] | None,
    ) -> None:
        # The same header rules as `csv_table._read_bytes`, which the whole text would take.
        skip = len(csv_table.BOM) if first.startswith(csv_table.BOM) else 0
        end = first.find(b"\n", skip)
        if end < 0:
            raise _Whole
        head = first[skip : end + 1]
        core = head[:-2] if head.endswith(b"\r\n") else head[:-1]
        if b'"' in head or b"\r" in core or not csv_table.utf8_text(head):
            raise _Whole
        header = [h.strip() for h in next(csv.reader([head.decode()]))]
        # Rows expected at most, from the first block's line length: the builder fills one
        # array a column (pages never written are never resident); more rows than this only
        # switch it to joining chunks.
        lines = max(1, first.count(b"\n"))
        capacity = int(size / (len(first) / lines) * 1.25) + 1024
        self.emit = emit
        # A part is taken once a block leaves it at `PART_ROWS` rows or more: room for that
        # and one more block's rows.
        self.part_capacity = PART_ROWS + lines * 2 + 1024
        if emit is not None:
            capacity = min(capacity, self.part_capacity)
        self.chunks = csv_table.Chunks(TableBuilder(provider, capacity), header, stats, False)
        self.published_order = header == schema.FIELDS
        self.index = 0
        self.read(first, start=end + 1)

    def read(self, block: bytes, start: int = 0) -> None:
        if b"\0" in block or not csv_table.utf8_text(block):
            raise _Whole  # the row rules see those rows, over the whole text
        # Whether a field is quoted decides the reading of each block's lines on its own.
        self.chunks.quoted = b'"' in block
        body = csv_table.body_lines(block, check_quotes=not self.published_order, start=start)
        if body is None:
            raise _Whole
        body.first = self.index
        csv_table.read_lines(self.chunks, body)
        self.index += block.count(b"\n", start) + (0 if block.endswith(b"\n") else 1)
        builder = self.chunks.builder
        if self.emit is not None and builder.rows >= PART_ROWS:
            self.emit(builder.take(self.part_capacity))
