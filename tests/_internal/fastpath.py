"""The vectorised query path under test, reached from this one place.

The table code is moving between modules (`_internal/index.py` -> a `query` subpackage); the
filter tests import it only through here, so retargeting the import lines below is all a move
needs.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from gpuhunt._internal import index as fast  # the table, its `select` and `combine`
from gpuhunt._internal import storage  # the CSV writer (tables are built from what users load)
from gpuhunt._internal.models import CatalogItem, QueryFilter

Table = fast.Table


def table_of(items: Sequence[CatalogItem], providers: Sequence[str]) -> Table:
    """One combined table, built from each provider's CSV as a catalog load builds it."""
    tables = [
        fast.build_table(storage.dumps([i for i in items if i.provider == p]).decode(), provider=p)
        for p in providers
    ]
    return fast.combine(tables)


def select(table: Table, q: QueryFilter, providers: Collection[str] | None = None) -> list:
    """The offers `table.select` answers, in its order."""
    return table.items(table.select(q, providers))
