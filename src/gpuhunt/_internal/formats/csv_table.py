"""A provider's catalog CSV read into a `Table` (pure: text in, table out).

The file is read in chunks of rows by one of three strategies, each a function below:
`read_lines` when every line is one row (no quoted field runs over a line break), cutting lines
with C-level string splits, and in the published column order converting the part of a line
after the price once per distinct part; `read_chunks` with `csv.reader` otherwise; and
`read_careful`, one row at a time stepping over rows `csv` cannot read, when a strategy hits
one. A chunk with any bad row is validated row by row with `schema.parse_row`, so only the bad
rows are skipped. Each strategy gives exactly what the row-by-row reader (`formats.csv`) gives;
`tests/_internal/formats/test_csv_table.py` checks each against it.
"""

from __future__ import annotations

import codecs
import csv
import io
import itertools
import logging
import operator
import re
from collections.abc import Iterator
from typing import Any

from gpuhunt._internal import schema
from gpuhunt._internal.formats.csv import ReadStats, careful_rows, physical_lines
from gpuhunt._internal.formats.table_builder import TableBuilder, distinct
from gpuhunt._internal.query.table import Table

logger = logging.getLogger(__name__)
_CHUNK = 16384
_SPLIT_HEAD = operator.methodcaller("split", ",", 3)
_QUOTES = operator.methodcaller("count", '"')


def build_table(
    text: str | bytes | io.TextIOBase, *, provider: str, stats: ReadStats | None = None
) -> Table:
    """Parse a provider CSV into a `Table`. Chunks of well-formed rows take a vectorised path;
    a chunk with any bad row is redone row by row so that only the bad rows are skipped. A
    file with a row `csv` cannot read, or with a bad row among rows that run over several
    lines (a stray quote swallows every line up to the next quote), is read again row by row
    from its lines (`formats.csv.careful_rows`): one bad line costs one row. Bytes (UTF-8) are
    read a block at a time without making the whole text, unless one of those rarer readings
    is needed."""
    stats = stats if stats is not None else ReadStats()

    def again() -> None:
        stats.rows = stats.skipped = 0
        stats.errors.clear()

    if isinstance(text, (bytes, bytearray)):
        try:
            table = _read_bytes(text, provider, stats)
        except (SpansLines, csv.Error):
            table = None
        if table is not None:
            return _reported(table, provider, stats)
        again()
        data = schema.decode_csv(text)
    else:
        data = text if isinstance(text, str) else text.read()
    if data.startswith("\ufeff"):  # a UTF-8 byte-order mark, as spreadsheet programs write
        data = data[1:]
    try:
        try:
            table = read(data, provider, stats)
        except SpansLines:
            again()
            table = read(data, provider, stats, strategy="chunks")
            if stats.skipped:
                again()
                table = read(data, provider, stats, strategy="careful")
    except csv.Error:
        # Rare (an over-long field, a stray NUL): redo the file one row at a time, which can
        # step over the broken rows.
        again()
        table = read(data, provider, stats, strategy="careful")
    return _reported(table, provider, stats)


def _reported(table: Table, provider: str, stats: ReadStats) -> Table:
    if stats.skipped:
        logger.warning(
            "Skipped %d malformed row(s) in the %s catalog (%s)",
            stats.skipped,
            provider,
            "; ".join(stats.errors),
        )
    return table


def read(data: str, provider: str, stats: ReadStats, strategy: str | None = None) -> Table:
    """The table of `data` read by `strategy` ("lines", "chunks" or "careful"), or by the
    fastest one that can read it."""
    reader = csv.reader(_lines(data))
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise schema.MissingColumns(f"the {provider} catalog is empty (no header)") from None
    except csv.Error as e:
        raise schema.MissingColumns(
            f"the {provider} catalog's header is unreadable ({e})"
        ) from None
    builder = TableBuilder(provider, data.count("\n") if strategy in (None, "lines") else 0)
    chunks = Chunks(builder, header, stats, quoted='"' in data)
    # NUL bytes or bytes that were not UTF-8 somewhere: every row goes through the row rules.
    chunks.careful = schema.suspect(data)
    # In the published column order each chunk of lines proves that no quoted field spans a
    # line while it is read (`factored`), so counting quotes is left to the first chunk that
    # cannot be read that way.
    published_order = header in schema.PUBLISHED_HEADERS
    body = (
        body_lines(data, check_quotes=not published_order) if strategy in (None, "lines") else None
    )
    if body is not None:
        read_lines(chunks, body)
    elif strategy == "careful":
        read_careful(chunks, physical_lines(data)[reader.line_num :], reader.line_num + 1)
    elif strategy != "lines":
        read_chunks(chunks, reader)
    chunks.builder.skipped = stats.skipped
    return chunks.builder.build()


def _read_bytes(data: bytes, provider: str, stats: ReadStats) -> Table | None:
    """`read` of UTF-8 bytes whose every line is one row, decoding a block of lines at a time
    (`Body`): the text of the whole file is never made. None (nothing read) when the file
    needs a reading of its whole text: a header with quotes or a lone CR, NUL bytes or bytes
    that are not UTF-8 (the row rules see those rows), lines that are not rows."""
    skip = len(BOM) if data.startswith(BOM) else 0
    end = data.find(b"\n", skip)
    if end < 0:
        return None
    head = data[skip : end + 1]
    core = head[:-2] if head.endswith(b"\r\n") else head[:-1]
    if b'"' in head or b"\r" in core or b"\0" in data or not utf8_text(data):
        return None
    header = [h.strip() for h in next(csv.reader([head.decode()]))]
    # At most a row a line: each column is filled in place (`TableBuilder`).
    builder = TableBuilder(provider, data.count(b"\n", end + 1) + 1)
    chunks = Chunks(builder, header, stats, quoted=b'"' in data)
    published_order = header in schema.PUBLISHED_HEADERS
    body = body_lines(data, check_quotes=not published_order, start=end + 1)
    if body is None:
        return None
    read_lines(chunks, body)
    chunks.builder.skipped = stats.skipped
    return chunks.builder.build()


BOM = b"\xef\xbb\xbf"  # a UTF-8 byte-order mark, as spreadsheet programs write


def utf8_text(data: bytes) -> bool:
    """Whether `data` is UTF-8, checked a piece at a time (no text of the whole is made)."""
    if data.isascii():
        return True
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        for at in range(0, len(data), 1 << 22):
            decoder.decode(data[at : at + (1 << 22)])
        decoder.decode(b"", True)
    except UnicodeDecodeError:
        return False
    return True


def _lines(data: str) -> Iterator[str]:
    """The lines of `data` as `io.StringIO(data, newline="")` gives them - cut after LF, CRLF
    or a lone CR, as the csv module wants its input - made one at a time: StringIO copies the
    whole text first (4 bytes a character), which cost more than the header it is mostly
    used for."""
    for m in _LINE.finditer(data):
        yield m.group()


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


class SpansLines(Exception):
    """A quoted field runs over a line break: the text cannot be cut into rows at line breaks."""


def _odd_quotes(lines: list[str]) -> bool:
    return any(c % 2 for c in set(map(_QUOTES, lines)))


def split_lines(data: str, check_quotes: bool = True) -> list[str] | None:
    """The body's lines, if every line is one row (LF or CRLF endings, or both; no lone CR;
    no quoted field running over a line break, unless `check_quotes` is off: the caller
    checks); else None. (All at once: the reader takes them a block at a time, `body_lines`.)"""
    body = body_lines(data, check_quotes)
    if body is None:
        return None
    return [line for _, lines in body for line in lines]


class Body:
    """The lines after the header, cut from the text a block of about `_CHUNK` lines at a
    time, each block as `(index of its first line, its lines)`; iterable again from the start.
    A list of every line at once costs about twice the text (a string object a line), which at
    a million offers was the largest thing a cold load held. `data` may be UTF-8 bytes: each
    block is decoded on its own (a line break is never inside a character's bytes)."""

    def __init__(self, data: Any, start: int, sep: str, mixed: bool, lines: int) -> None:
        self.data, self.start, self.sep, self.mixed = data, start, sep, mixed
        self.is_bytes = isinstance(data, (bytes, bytearray))
        self.cut = sep.encode() if self.is_bytes else sep
        # Characters a block spans: the average line's length times a chunk of lines.
        self.block = max(64, (len(data) - start) * _CHUNK // max(1, lines))
        self.first = 0  # the index of the body's first line (a streamed block's, `csv_stream`)

    def __iter__(self) -> Iterator[tuple[int, list[str]]]:
        data, cut_at, n = self.data, self.cut, len(self.data)
        pos, index = self.start, self.first
        while pos < n:
            cut = data.find(cut_at, pos + self.block) if pos + self.block < n else -1
            if cut < 0:
                raw, pos = data[pos:], n
            else:
                raw, pos = data[pos:cut], cut + len(cut_at)
            piece: str = raw.decode() if self.is_bytes else raw
            del raw
            if self.mixed:
                if cut >= 0 and piece.endswith("\r"):  # the CR of the CRLF it was cut at
                    piece = piece[:-1]
                piece = piece.replace("\r\n", "\n")
            lines = piece.split(self.sep if not self.mixed else "\n")
            yield index, lines
            index += len(lines)

    def odd_quotes(self) -> bool:
        """Whether a line has an odd number of quotes (a quoted field runs over a break)."""
        return any(_odd_quotes(lines) for _, lines in self)


def body_lines(data: Any, check_quotes: bool = True, start: int | None = None) -> Body | None:
    """The body's lines (`Body`), if every line is one row, as `split_lines` says; else None.
    Only counts over the text decide it: no line is cut yet. `data` is text, or UTF-8 bytes
    with `start` where the body starts."""
    lf, cr, crlf, quote = ("\n", "\r", "\r\n", '"')
    if isinstance(data, (bytes, bytearray)):
        lf, cr, crlf, quote = (b"\n", b"\r", b"\r\n", b'"')  # type: ignore[assignment]
    body_start = data.find(lf) + 1 if start is None else start
    if body_start == 0 and start is None:
        return None
    crs = data.count(cr, body_start)
    lfs = data.count(lf, body_start)
    if not crs:
        body = Body(data, body_start, "\n", False, lfs)
    elif crs == lfs == data.count(crlf, body_start):  # what csv.writer writes
        body = Body(data, body_start, "\r\n", False, lfs)
    elif crs == data.count(crlf, body_start):  # LF and CRLF mixed, no lone CR
        body = Body(data, body_start, "\n", True, lfs)
    else:
        return None
    # A quoted field that runs over a line break leaves an odd number of quotes on its line;
    # without any, every line is one row and lines can be split apart directly.
    if check_quotes and data.find(quote, body_start) >= 0 and body.odd_quotes():
        return None
    return body


def read_lines(chunks: Chunks, body: Body) -> None:
    """Strategy for text whose every line is one row: each chunk of lines is cut into fields
    with C-level splits (`csv.reader` costs ~2 us a row), or factored in the published order."""
    published_order = chunks.header in schema.PUBLISHED_HEADERS
    commas = operator.methodcaller("count", ",")
    checked = not (chunks.quoted and published_order)  # body_lines counted the quotes
    for index, lines in body:
        # No line over the cap means no field over it: one pass per block instead of one a
        # field.
        chunks.short = bool(lines) and max(map(len, lines)) <= schema.MAX_FIELD_CHARS
        for at in range(0, len(lines), _CHUNK):
            part = lines[at : at + _CHUNK]
            start = index + at
            if "" in part:
                part = [line for line in part if line]
            if not part or (published_order and chunks.factored(part)):
                continue
            if not checked:
                if body.odd_quotes():
                    raise SpansLines
                checked = True
            if not chunks.quoted and set(map(commas, part)) == {chunks.width - 1}:
                chunks.flush([], start + 2, ",".join(part).split(","))
            else:
                chunks.flush(list(csv.reader(part)), start + 2)


def read_chunks(chunks: Chunks, reader: Any) -> None:
    """Strategy for any text `csv` can read: `csv.reader`'s rows, a chunk at a time."""
    while True:
        first_line = reader.line_num + 1
        chunk = [r for r in itertools.islice(reader, _CHUNK) if r]
        if not chunk:
            break
        chunks.flush(chunk, first_line)


def read_careful(chunks: Chunks, lines: list[str], first_line: int) -> None:
    """Strategy for text with rows `csv` cannot read (an over-long field, a NUL, a stray
    quote): row by row from its physical lines, each bad row skipped and counted, and a bad
    row that ran over several lines costs only its first line (`careful_rows`)."""
    pos, width = chunks.pos, chunks.width

    def check(row: list[str]) -> list[str]:
        schema.check_fields(row, width)
        if len(row) < width:
            row = row + [""] * (width - len(row))
        schema.parse_row(lambda n: row[pos[n]] if n in pos else None)
        return row

    chunk: list[list[str]] = []
    for row in careful_rows(lines, check, chunks.stats, first_line):
        chunk.append(row)
        if len(chunk) >= _CHUNK:
            chunks.flush(chunk, first_line)  # every row good: no line number is used
            chunk = []
    if chunk:
        chunks.flush(chunk, first_line)


class Chunks:
    """Chunks of rows of one file into its `TableBuilder`: vectorised when every row of a chunk
    is good, else row by row so that only the bad rows are skipped."""

    def __init__(
        self, builder: TableBuilder, header: list[str], stats: ReadStats, quoted: bool
    ) -> None:
        self.builder = builder
        self.header = header
        self.width = len(header)
        # A file without the required columns is refused whole (`MissingColumns`).
        self.pos = schema.check_header(header)
        self.stats = stats
        self.quoted = quoted  # whether any field of the file is quoted
        self.careful = False  # rows take the fast paths only after the row rules passed
        self.short = False  # every line is known to be within schema.MAX_FIELD_CHARS

    def flush(self, chunk: list[list[str]], first_line: int, flat: list[str] | None = None) -> None:
        """Add a chunk of rows (or, as `flat`, their fields one after another)."""
        if self._fast(chunk, flat):
            return
        width = self.width
        if flat is not None:
            chunk = [flat[i : i + width] for i in range(0, len(flat), width)]
        # Some row is bad: validate each, keep the good ones, and convert those in one go.
        good: list[list[str]] = []
        parsed: list[schema.ParsedRow] = []
        pos = self.pos
        for k, row in enumerate(chunk):
            try:
                schema.check_fields(row, width)
                if len(row) < width:
                    row = row + [""] * (width - len(row))
                parsed.append(schema.parse_row(lambda n, _r=row: _r[pos[n]] if n in pos else None))
            except ValueError as e:
                self.stats.skip(first_line + k, str(e))
                continue
            good.append(row)
        if good and not self._fast(good, checked=True):
            for p in parsed:
                self.builder.add_row(p)
            self.stats.rows += len(parsed)

    def _fast(
        self, chunk: list[list[str]], flat: list[str] | None = None, checked: bool = False
    ) -> bool:
        # `checked`: rows that passed `schema.check_fields` already. Otherwise a suspect file
        # (careful) takes no fast path, and a field over the size cap sends the chunk back.
        if self.careful and not checked:
            return False
        width = self.width
        if flat is None:
            if set(map(len, chunk)) != {width}:
                return False
            # Columns by slicing one flat list: much faster than transposing with zip(*rows).
            flat = list(itertools.chain.from_iterable(chunk))
        if flat and not self.short and max(map(len, flat)) > schema.MAX_FIELD_CHARS:
            return False
        n = len(flat) // width
        columns = {name: flat[i::width] for i, name in enumerate(self.header)}
        try:
            self.builder.add_fast(columns, n)
        except (ValueError, KeyError, TypeError):
            return False
        self.stats.rows += n
        return True

    def factored(self, part: list[str]) -> bool:
        """Add lines in the published column order: name, location and price, then the rest of
        the line, which repeats across an instance type's offers and is converted once per
        distinct rest. False, adding nothing, if the lines do not all fit that shape."""
        flat = list(itertools.chain.from_iterable(map(_SPLIT_HEAD, part)))
        n = len(part)
        if self.careful or len(flat) != 4 * n:
            return False
        if not self.short and max(map(len, flat)) > schema.MAX_FIELD_CHARS:
            return False
        head = {"instance_name": flat[0::4], "location": flat[1::4], "price": flat[2::4]}
        if self.quoted and any('"' in "".join(v) for v in head.values()):
            return False
        which, rests = distinct(flat[3::4])
        try:
            rows = list(csv.reader(rests)) if self.quoted else [r.split(",") for r in rests]
        except csv.Error:
            return False
        # One record per rest: a rest whose quoted field runs on would have taken in another
        # (or hit the end), so this also proves that no field of the chunk spans a line.
        if len(rows) != len(rests) or any(len(r) != self.width - 3 for r in rows):
            return False
        attributes = {name: [r[i] for r in rows] for i, name in enumerate(self.header[3:])}
        try:
            self.builder.add_factored(head, n, attributes, which)
        except (ValueError, KeyError, TypeError):
            return False
        self.stats.rows += n
        return True
