"""The vectorised query path under test, and the CSV format it is loaded from, reached from this
one place.

The filter tests import the table code (`query/table.py`) and the CSV format (`formats/`) only
through here, so a module move is one edit.
"""

from __future__ import annotations

import io
from collections.abc import Collection, Iterable, Sequence

from gpuhunt._internal.formats.csv import load, write_csv
from gpuhunt._internal.formats.csv_table import build_table
from gpuhunt._internal.models import CatalogItem, QueryFilter
from gpuhunt._internal.query import answers
from gpuhunt._internal.query.table import Table, combine


def csv_bytes(items: Iterable[CatalogItem]) -> bytes:
    """A provider CSV of `items`, as the catalog publishes it."""
    buf = io.StringIO(newline="")
    write_csv(items, buf)
    return buf.getvalue().encode()


def read_csv(data: bytes, provider: str) -> list[CatalogItem]:
    """The offers of a provider CSV as the plain row reader reads them (no table code)."""
    return list(load(io.StringIO(data.decode(), newline=""), provider=provider))


def table_of(items: Sequence[CatalogItem], providers: Sequence[str]) -> Table:
    """One combined table, built from each provider's CSV as a catalog load builds it."""
    tables = [
        build_table(csv_bytes([i for i in items if i.provider == p]).decode(), provider=p)
        for p in providers
    ]
    return combine(tables)


def select(table: Table, q: QueryFilter, providers: Collection[str] | None = None) -> list:
    """The offers `table.select` answers, in its order."""
    return answers.items(table, table.select(q, providers))
