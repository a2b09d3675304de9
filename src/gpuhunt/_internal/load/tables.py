"""A provider's `Table` from a raw catalog: its published column file when it has a usable one,
else a column file kept in the disk cache by an earlier parse of the same CSV, else by parsing
the CSV (and keeping the result in the disk cache for the next process)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future, wait

from gpuhunt._internal import schema
from gpuhunt._internal.formats import archive, columns
from gpuhunt._internal.load import threads
from gpuhunt._internal.load.cache import DiskCache
from gpuhunt._internal.load.sources import RawCatalog
from gpuhunt._internal.query.table import Table

logger = logging.getLogger(__name__)

PARSED = "parsed"  # disk cache folder of tables parsed from CSVs


class SideWork:
    """What a load can do beside the thread that parses: hashing CSVs and writing parsed
    tables to the disk cache, one job after another on a thread of their own. Both let go of
    the interpreter (hashlib, file writes), so they run on another core while the loading
    thread parses the next CSV; on that thread they cost a fifth of a CSV-only load. `finish`
    waits for the writes, so a load that has returned has also written its cache."""

    def __init__(self, owner: threads.Owner | None = None) -> None:
        # `owner`: the catalog's threads, which `Catalog.close()` waits for.
        self._pool = threads.DaemonPool(1, "gpuhunt-load-side", owner)
        self._hashes: dict[str, Future[str]] = {}
        self._writes: list[Future[object]] = []

    def hash_ahead(self, raw: RawCatalog, providers: list[str]) -> None:
        """Start hashing the CSVs of `providers` whose hash is not known yet, in this order."""
        for p in providers:
            if p in raw.csvs and p not in raw.sha256:
                self._hashes[p] = self._pool.submit(archive.sha256, raw.csvs[p])

    def csv_sha256(self, raw: RawCatalog, provider: str) -> str:
        known = raw.sha256.get(provider)
        if known:
            return known
        ahead = self._hashes.get(provider)
        return ahead.result() if ahead is not None else archive.sha256(raw.csvs[provider])

    def put(self, cache: DiskCache, data: bytes, *parts: str) -> None:
        self._writes.append(self._pool.submit(cache.put, data, *parts))

    def run(self, job: Callable[[], object]) -> None:
        """Run `job` on the side thread; `finish` waits for it like for a cache write."""
        self._writes.append(self._pool.submit(job))

    def finish(self) -> None:
        wait(self._writes)
        self._hashes.clear()  # nothing of the raw catalog outlives the load
        self._writes.clear()
        self._pool.shutdown(wait=False)


def provider_table(
    raw: RawCatalog,
    provider: str,
    cache: DiskCache | None,
    cached: set[str],
    side: SideWork | None = None,
) -> Table:
    """A provider's offers from its published column file when it has a usable one, else from
    a column file cached by an earlier parse of the same CSV, else by parsing the CSV. A CSV
    without the required columns raises `schema.MissingColumns` (the caller keeps the
    provider's previous offers). With `side`, hashing and cache writes run beside the parse."""
    csv = raw.csvs[provider]
    packed = raw.columns.get(provider)
    if packed is None and cache is None:
        return _parsed(csv, provider)
    csv_sha256 = (
        side.csv_sha256(raw, provider)
        if side is not None
        else raw.sha256.get(provider) or archive.sha256(csv)
    )
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
    table = _parsed(csv, provider)
    if cache is not None:
        packed_table = columns.encode(table, csv_sha256)
        if side is not None:
            side.put(cache, packed_table, PARSED, name)
        else:
            cache.put(packed_table, PARSED, name)
    return table


def _parsed(csv: bytes, provider: str) -> Table:
    # The CSV parser is imported when a CSV is parsed: a warm start reads no CSV.
    from gpuhunt._internal.formats.csv_table import build_table

    return build_table(schema.decode_csv(csv), provider=provider)
