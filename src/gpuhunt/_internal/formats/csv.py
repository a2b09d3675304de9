"""The catalog CSV, row by row (pure: text in, offers out).

One file per provider, the same columns in the same order as gpuhunt 0.1.x publishes
(`schema.FIELDS`), so catalogs are interchangeable both ways. The provider is the file's name.
Older files without `gpu_vendor`/`cpu_arch`/`flags`/`provider_data` read as they always did (see
`schema`). A malformed row is skipped, counted and logged; it never costs the rest of the file.
This is the reference reader; `formats.csv_table` reads the same files into a `Table` faster.
"""

from __future__ import annotations

import csv
import io
import json
import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from gpuhunt._internal.models import CatalogItem, CPUArchitecture
from gpuhunt._internal.schema import (
    FIELDS,
    MissingColumns,
    ParsedRow,
    check_fields,
    check_header,
    parse_row,
)

logger = logging.getLogger(__name__)


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


def iter_rows(
    f: IO[str], *, provider: str, stats: ReadStats | None = None, quiet: bool = False
) -> Iterator[ParsedRow]:
    """Validated rows of a provider CSV; bad rows are skipped and counted in `stats`. A file
    without the required columns raises `schema.MissingColumns`."""
    stats = stats if stats is not None else ReadStats()
    reader = csv.reader(f)
    try:
        header = next(reader)
    except StopIteration:
        raise MissingColumns(f"the {provider} catalog is empty (no header)") from None
    except csv.Error as e:
        raise MissingColumns(f"the {provider} catalog's header is unreadable ({e})") from None
    pos = check_header(header)  # raises MissingColumns: the file is refused, not emptied
    width = len(header)
    line = 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as e:  # e.g. a field over the size limit; the reader goes on after it
            line += 1
            stats.skip(line, str(e))
            continue
        line += 1
        if not row:
            continue
        if len(row) < width:
            row = row + [""] * (width - len(row))

        def get(name: str, _row: list[str] = row) -> str | None:
            i = pos.get(name)
            return None if i is None else _row[i]

        try:
            check_fields(row, width)
            parsed = parse_row(get)
        except ValueError as e:
            stats.skip(line, str(e))
            continue
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
    values["provider_data"] = json.loads(row.provider_data)
    return CatalogItem(provider=provider, **values)


def load(f: IO[str], *, provider: str, stats: ReadStats | None = None) -> Iterator[CatalogItem]:
    """Offers of a provider CSV, in file order; malformed rows skipped (see `iter_rows`)."""
    for row in iter_rows(f, provider=provider, stats=stats):
        yield to_item(row, provider)


def load_path(path: str, *, provider: str) -> list[CatalogItem]:
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
        return list(load(f, provider=provider))
