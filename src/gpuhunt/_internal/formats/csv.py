"""The catalog CSV, row by row (pure: text in, offers out).

One file per provider: the 14 columns gpuhunt 0.1.x publishes, in its order, then the library's
own (`schema.FIELDS`, from `offer_spec`), so catalogs are interchangeable both ways. The
provider is the file's name.
Older files without `gpu_vendor`/`cpu_arch`/`flags`/`provider_data` read as they always did (see
`schema`). A malformed row is skipped, counted and logged; it never costs the rest of the file.
This is the reference reader; `formats.csv_table` reads the same files into a `Table` faster.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any, TypeVar

from gpuhunt._internal import offer_spec
from gpuhunt._internal.errors import MissingColumns
from gpuhunt._internal.models import OWN_FIELDS, CatalogItem, CPUArchitecture
from gpuhunt._internal.schema import (
    FIELDS,
    ParsedRow,
    check_fields,
    check_header,
    parse_row,
)

logger = logging.getLogger(__name__)
T = TypeVar("T")


# --------------------------------------------------------------------------- writing


def _opt(value: Any) -> str:
    return "" if value is None else str(value)


def item_to_row(item: CatalogItem) -> list[str]:
    return [
        item.instance_name,
        item.location,
        str(item.price),
        str(item.cpu),
        str(item.memory),
        str(item.gpu_count),
        _opt(item.gpu_name),
        _opt(item.gpu_memory),
        str(item.spot),
        _opt(item.disk_size),
        item.gpu_vendor.value if item.gpu_vendor else "",
        " ".join(item.flags),
        CPUArchitecture.cast(item.cpu_arch).value,
        json.dumps(item.provider_data, sort_keys=True),
        *offer_spec.item_cells(item),
    ]


def write_csv(items: Iterable[CatalogItem], f: IO[str]) -> int:
    writer = csv.writer(f, lineterminator="\r\n")
    writer.writerow(FIELDS)
    n = 0
    for item in items:
        writer.writerow(item_to_row(item))
        n += 1
    return n


def write_csv_file(items: Iterable[CatalogItem], path: str) -> int:
    """Write a provider's catalog CSV; returns the number of rows."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        return write_csv(items, f)


def csv_bytes(items: Iterable[CatalogItem]) -> bytes:
    """A provider's catalog CSV as UTF-8 bytes."""
    buf = io.StringIO(newline="")
    write_csv(items, buf)
    return buf.getvalue().encode("utf-8")


@dataclass
class ReadStats:
    rows: int = 0
    skipped: int = 0
    errors: list[str] = field(default_factory=list)  # the first few, for messages

    def skip(self, line: int, reason: str) -> None:
        self.skipped += 1
        if len(self.errors) < 5:
            self.errors.append(f"line {line}: {reason}")


class _Feed:
    """Lines handed to a `csv.reader` one at a time, with the index of the next one, so that
    a reader can be started again at any line."""

    def __init__(self, lines: list[str], at: int = 0) -> None:
        self.lines = lines
        self.at = at

    def __iter__(self) -> _Feed:
        return self

    def __next__(self) -> str:
        if self.at >= len(self.lines):
            raise StopIteration
        self.at += 1
        return self.lines[self.at - 1]


def careful_rows(
    lines: list[str], check: Callable[[list[str]], T], stats: ReadStats, first_line: int = 2
) -> Iterator[T]:
    """What `check` makes of each row of `lines` (physical lines with their endings, the
    header left out; `first_line` is the first one's number in the file). A row that `csv`
    cannot read or `check` refuses (a ValueError) is skipped and counted; when it ran over
    several lines - a stray quote swallows every line up to the next quote - only its first
    line is counted and skipped, and reading starts again at the next line, so one bad line
    costs one row, never the rest of the file."""
    feed = _Feed(lines)
    reader = csv.reader(feed)
    while feed.at < len(lines):
        start = feed.at
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as e:
            problem: str | None = str(e)
        else:
            if not row:
                continue
            try:
                value = check(row)
                problem = None
            except ValueError as e:
                problem = str(e)
        if problem is None:
            yield value  # counted by the caller, as it keeps it
            continue
        spanned = feed.at - start
        if spanned > 1:
            problem = f"{problem} (a row starting here ran over {spanned} lines)"
        stats.skip(first_line + start, problem)
        # Start again right after the row's first line, with a reader in a clean state.
        feed.at = start + 1
        reader = csv.reader(feed)


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def physical_lines(text: str) -> list[str]:
    """The lines of `text` with their endings, cut after LF, CRLF or a lone CR only, as the
    csv module cuts them (`str.splitlines` would also cut at U+2028 and others, inside a
    field)."""
    return _LINE.findall(text)


def header_and_lines(text: str, provider: str) -> tuple[list[str], list[str]]:
    """A CSV text's header (a UTF-8 byte-order mark before it taken off) and its other
    physical lines; raises `MissingColumns` for a file without a readable header."""
    lines = physical_lines(text)
    if lines and lines[0].startswith("\ufeff"):
        lines[0] = lines[0][1:]
    feed = _Feed(lines)
    try:
        header = next(csv.reader(feed))
    except StopIteration:
        raise MissingColumns(f"the {provider} catalog is empty (no header)") from None
    except csv.Error as e:
        raise MissingColumns(f"the {provider} catalog's header is unreadable ({e})") from None
    return header, lines[feed.at :]


def iter_rows(
    f: IO[str], *, provider: str, stats: ReadStats | None = None, quiet: bool = False
) -> Iterator[ParsedRow]:
    """Validated rows of a provider CSV; bad rows are skipped and counted in `stats`, one bad
    line costing one row (`careful_rows`). A file without the required columns raises
    `schema.MissingColumns`."""
    stats = stats if stats is not None else ReadStats()
    header, lines = header_and_lines(f.read(), provider)
    pos = check_header(header)  # raises MissingColumns: the file is refused, not emptied
    width = len(header)

    def check(row: list[str]) -> ParsedRow:
        check_fields(row, width)
        if len(row) < width:
            row = row + [""] * (width - len(row))
        return parse_row(lambda name: None if (i := pos.get(name)) is None else row[i])

    for parsed in careful_rows(lines, check, stats):
        stats.rows += 1
        yield parsed
    if stats.skipped and not quiet:
        logger.warning(
            "Skipped %d malformed row(s) in the %s catalog (%s)",
            stats.skipped,
            provider,
            "; ".join(stats.errors),
        )


def to_item(row: ParsedRow, provider: str) -> CatalogItem:
    values = dict(vars(row))  # every schema field, as CatalogItem names it
    values["flags"] = row.flags.split()
    values["provider_data"] = json.loads(offer_spec.provider_text(row.provider_data))
    values.update(zip(OWN_FIELDS, offer_spec.own_values(row.provider_data)))
    return CatalogItem(provider=provider, **values)


def load(f: IO[str], *, provider: str, stats: ReadStats | None = None) -> Iterator[CatalogItem]:
    """Offers of a provider CSV, in file order; malformed rows skipped (see `iter_rows`)."""
    for row in iter_rows(f, provider=provider, stats=stats):
        yield to_item(row, provider)


def load_path(path: str, *, provider: str) -> list[CatalogItem]:
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
        return list(load(f, provider=provider))
