"""A provider's catalog CSV read into a `Table` (pure: text in, table out).

Lines are cut with C-level string splits rather than `csv.reader` whenever the text allows it,
in one of three ways (each is `read_*` below), and a chunk with any bad row is validated row by
row with `schema.parse_row`, so only the bad rows are skipped. The three ways give exactly what
the row-by-row reader (`formats.csv`) gives; `tests/_internal/formats/test_csv_table.py` checks it.
"""

from __future__ import annotations

import csv
import io
import itertools
import logging
import operator

from gpuhunt._internal import schema
from gpuhunt._internal.formats.csv import ReadStats
from gpuhunt._internal.formats.table_builder import TableBuilder, distinct
from gpuhunt._internal.query.table import Table, gc_paused

logger = logging.getLogger(__name__)
_CHUNK = 16384
_SPLIT_HEAD = operator.methodcaller("split", ",", 3)
_QUOTES = operator.methodcaller("count", '"')


def _odd_quotes(lines: list[str]) -> bool:
    return any(c % 2 for c in set(map(_QUOTES, lines)))


def build_table(
    text: str | io.TextIOBase, *, provider: str, stats: ReadStats | None = None
) -> Table:
    """Parse a provider CSV into a `Table`. Chunks of well-formed rows take a vectorised path;
    a chunk with any bad row is redone row by row so that only the bad rows are skipped."""
    stats = stats if stats is not None else ReadStats()
    data = text if isinstance(text, str) else text.read()
    try:
        with gc_paused():  # parsing allocates many short-lived lists; none hold cycles
            try:
                return _build(data, provider, stats, careful=False)
            except _SpansLines:
                stats.rows = stats.skipped = 0
                stats.errors.clear()
                return _build(data, provider, stats, careful=False, split_lines=False)
    except csv.Error:
        # Rare (an over-long field, a stray NUL): redo the file one row at a time, which can
        # step over the broken rows.
        stats.rows = stats.skipped = 0
        stats.errors.clear()
        return _build(data, provider, stats, careful=True)


class _SpansLines(Exception):
    """A quoted field runs over a line break: the text cannot be cut into rows at line breaks."""


def _build(
    data: str, provider: str, stats: ReadStats, careful: bool, split_lines: bool = True
) -> Table:
    builder = TableBuilder(provider)
    reader = csv.reader(io.StringIO(data))
    try:
        header = [h.strip() for h in next(reader)]
    except (StopIteration, csv.Error):
        return builder.build()
    width = len(header)
    required_present = all(name in header for name in schema.REQUIRED)

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
        parsed: list[schema.ParsedRow] = []
        for k, row in enumerate(chunk):
            if len(row) < width:
                row = row + [""] * (width - len(row))
            elif len(row) > width:
                row = row[:width]
            try:
                if any(len(v) > schema.MAX_FIELD_CHARS for v in row):
                    raise ValueError("field too large")
                parsed.append(schema.parse_row(lambda n, _r=row: _r[pos[n]] if n in pos else None))
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
        which, rests = distinct(flat[3::4])
        try:
            rows = list(csv.reader(rests)) if quoted else [r.split(",") for r in rests]
        except csv.Error:
            return False
        # One record per rest: a rest whose quoted field runs on would have taken in another
        # (or hit the end), so this also proves that no field of the chunk spans a line.
        if len(rows) != len(rests) or any(len(r) != width - 3 for r in rows):
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
    published_order = header == schema.FIELDS
    if not careful and split_lines and body_start > 0:
        body = data[body_start:]
        crs, crlfs = body.count("\r"), body.count("\r\n")
        if crs and crs == crlfs == body.count("\n"):
            lines = body.split("\r\n")  # what csv.writer writes: saves a copy of the text
        elif crs == crlfs:
            lines = body.replace("\r\n", "\n").split("\n")
        # A quoted field that runs over a line break leaves an odd number of quotes on its
        # line; without any, every line is one row and lines can be split apart directly. In
        # the published order each chunk proves it while being read (`factored`), so counting
        # is left to the first chunk that cannot be read that way.
        if lines is not None and quoted and not published_order and _odd_quotes(lines):
            lines = None
    if lines is not None:
        # Each chunk is cut into fields with C-level splits (csv.reader costs ~2 us a row).
        # Rows with the wrong number of fields, or a chunk that fails, go the careful way.
        commas = operator.methodcaller("count", ",")
        checked = not (quoted and published_order)
        for start in range(0, len(lines), _CHUNK):
            part = lines[start : start + _CHUNK]
            if "" in part:
                part = [line for line in part if line]
            if not part or (published_order and factored(part)):
                continue
            if not checked:
                if _odd_quotes(lines):
                    raise _SpansLines
                checked = True
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
