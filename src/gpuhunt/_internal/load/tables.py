"""A provider's `Table` from a raw catalog: its published column file when it has a usable one,
else a column file kept in the disk cache by an earlier parse of the same CSV, else by parsing
the CSV (and keeping the result in the disk cache for the next process)."""

from __future__ import annotations

import logging

from gpuhunt._internal import schema
from gpuhunt._internal.formats import archive, columns
from gpuhunt._internal.formats.csv_table import build_table
from gpuhunt._internal.load.cache import DiskCache
from gpuhunt._internal.load.sources import RawCatalog
from gpuhunt._internal.query.table import Table

logger = logging.getLogger(__name__)

PARSED = "parsed"  # disk cache folder of tables parsed from CSVs


def provider_table(
    raw: RawCatalog, provider: str, cache: DiskCache | None, cached: set[str]
) -> Table:
    """A provider's offers from its published column file when it has a usable one, else from
    a column file cached by an earlier parse of the same CSV, else by parsing the CSV. A CSV
    without the required columns raises `schema.MissingColumns` (the caller keeps the
    provider's previous offers)."""
    csv = raw.csvs[provider]
    packed = raw.columns.get(provider)
    if packed is None and cache is None:
        return build_table(schema.decode_csv(csv), provider=provider)
    csv_sha256 = raw.sha256.get(provider) or archive.sha256(csv)
    if packed is not None:
        try:
            return columns.decode(packed, provider=provider, csv_sha256=csv_sha256)
        except Exception as e:  # noqa: BLE001 - untrusted bytes: any failure means "not used"
            logger.warning("Not using the %s column file (%s); parsing its CSV", provider, e)
    name = f"{provider}-{csv_sha256[:32]}.columns"
    if cache is not None:
        cached.add(name)
        earlier = cache.get(PARSED, name)
        if earlier is not None:
            try:
                return columns.decode(earlier, provider=provider, csv_sha256=csv_sha256)
            except Exception as e:  # noqa: BLE001 - a damaged cache file is only not used
                logger.debug("Ignoring the cached %s table: %s", provider, e)
    table = build_table(schema.decode_csv(csv), provider=provider)
    if cache is not None:
        cache.put(columns.encode(table, csv_sha256), PARSED, name)
    return table
