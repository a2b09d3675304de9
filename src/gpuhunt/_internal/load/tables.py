"""A provider's `Table` from a raw catalog: its published column file when it has a usable one,
else a column file kept in the disk cache by an earlier parse of the same CSV, else by parsing
the CSV (and keeping the result in the disk cache for the next process)."""

from __future__ import annotations

import copy
import hashlib
import logging
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, wait
from typing import Any

import numpy as np

from gpuhunt._internal import observed
from gpuhunt._internal.formats import archive, columns
from gpuhunt._internal.formats.archive import Members
from gpuhunt._internal.load import memory, threads
from gpuhunt._internal.load.cache import DiskCache
from gpuhunt._internal.load.sources import RawCatalog
from gpuhunt._internal.load.streamed import Shaped, read_in_parts, shaped
from gpuhunt._internal.load.streamed import stream_of as _stream
from gpuhunt._internal.query import answers
from gpuhunt._internal.query.table import (
    COLUMNS,
    SHAPE_ROW_COLUMNS,
    STRING_LISTS,
    Interner,
    Table,
)

logger = logging.getLogger(__name__)

PARSED = "parsed"  # disk cache folder of tables parsed from CSVs
TRIM_AFTER_ROWS = 50_000  # a provider this large frees tens of MB once read


class SideWork:
    """What a load can do beside the thread that parses: hashing CSVs and writing parsed
    tables to the disk cache, one job after another on a thread of their own. Both let go of
    the interpreter (hashlib, file writes), so they run on another core while the loading
    thread parses (a CSV is hashed beside its own parse); on that thread they cost a fifth of
    a CSV-only load. `finish` waits for the writes, so a load that has returned has also
    written its cache."""

    def __init__(self, owner: threads.Owner | None = None) -> None:
        # `owner`: the catalog's threads, which `Catalog.close()` waits for.
        self._pool = threads.DaemonPool(1, "gpuhunt-load-side", owner)
        self._hashes: list[Future[str]] = []
        self._writes: list[Future[object]] = []

    def csv_sha256(self, raw: RawCatalog, provider: str) -> str:
        """The sha256 of `provider`'s CSV, known or worked out now. Never ahead of the load:
        reading a CSV inflates it, so hashing ahead held a second provider's CSV beside the one
        being parsed (at 1M offers, hashing them all ahead held more than the loaded catalog)."""
        return raw.sha256.get(provider) or _hash_of(raw, provider)

    def hash_beside(self, data: bytes) -> Future[str]:
        """The sha256 of `data`, worked out on the side thread (while the caller parses it)."""
        digest = self._pool.submit(_taking, archive.sha256, [data])
        self._hashes.append(digest)
        return digest

    def hash_pieces(self) -> tuple[Callable[[bytes], None], Callable[[], str]]:
        """A sha256 worked out on the side thread from pieces given one after another (its one
        thread takes them in order): `feed` each piece, then `result()` waits for the digest."""
        digest = hashlib.sha256()
        last: list[Future[None]] = []

        def feed(piece: bytes) -> None:
            last[:] = [self._pool.submit(digest.update, piece)]

        def result() -> str:
            wait(last)
            return digest.hexdigest()

        return feed, result

    def put(self, cache: DiskCache, data: bytes | list[Any], *parts: str) -> None:
        self._writes.append(self._pool.submit(_taking, lambda d: cache.put(d, *parts), [data]))

    def run(self, job: Callable[[], object]) -> None:
        """Run `job` on the side thread; `finish` waits for it like for a cache write."""
        self._writes.append(self._pool.submit(job))

    def settle(self) -> None:
        """Wait for the writes queued so far: a parsed table's bytes waiting to be written
        are not held beside the next provider's read."""
        wait(self._writes)

    def finish(self) -> None:
        # A hash the load did not wait for (its parse failed) is waited for too: no work of
        # the load runs on after it.
        pending: list[Future[Any]] = [*self._writes, *self._hashes]
        wait(pending)
        self._hashes.clear()  # nothing of the raw catalog outlives the load
        self._writes.clear()
        self._pool.shutdown(wait=False)


def _taking(job: Callable[[Any], Any], held: list[Any]) -> Any:
    """`job` of the one item of `held`, which it takes out: a worker thread keeps its last
    task until it takes the next, and a CSV or a table's columns must not stay alive with it."""
    return job(held.pop())


def _hash_of(raw: RawCatalog, provider: str) -> str:
    streamed = _stream(raw, provider)
    if streamed is None:
        return archive.sha256(raw.csvs[provider])
    # Hashed as it is inflated: a CSV whose parsed table is in the disk cache is never whole
    # in memory, and one that is not is parsed as a stream after.
    digest = hashlib.sha256()
    for piece in streamed[1]:
        digest.update(piece)
    return digest.hexdigest()


def _fed(pieces: Iterator[bytes], feed: Callable[[bytes], None]) -> Iterator[bytes]:
    for piece in pieces:
        feed(piece)
        yield piece


def provider_table(
    raw: RawCatalog,
    provider: str,
    cache: DiskCache | None,
    cached: set[str],
    side: SideWork | None = None,
    *,
    consume: bool = False,
) -> Table:
    """A provider's offers from its published column file when it has a usable one, else from
    a column file cached by an earlier parse of the same CSV, else by parsing the CSV. A CSV
    without the required columns raises `schema.MissingColumns` (the caller keeps the
    provider's previous offers). With `side`, hashing and cache writes run beside the parse.
    With `consume`, `raw` lets go of the CSV's bytes as its parse starts, so that the parse
    holds the only reference (a load that reads `raw` only once: see `release`)."""
    # The CSV is read (inflated from its archive, checked against the manifest) only if it is
    # parsed or hashed: a column file the manifest vouches for comes with the CSV's sha256.
    packed = raw.columns.get(provider)
    if packed is None and cache is None:
        return _parsed(raw, provider, consume)
    fresh = packed is None and not raw.sha256.get(provider)
    if fresh and cache is not None and side is not None and not _parsed_before(cache, provider):
        # No table parsed earlier to look up by the CSV's hash: it is hashed beside its parse
        # (the hash names the parsed table kept for the next process), a piece at a time
        # when the CSV is parsed as it is inflated.
        streamed = _stream(raw, provider)
        if streamed is not None:
            feed, digest_of = side.hash_pieces()
            table = _parsed(raw, provider, consume, streamed, feed)
            _keep_parsed(table, digest_of(), provider, cache, cached, side)
            return table
        digest = side.hash_beside(raw.csvs[provider])
        table = _parsed(raw, provider, consume)
        _keep_parsed(table, digest.result(), provider, cache, cached, side)
        return table
    csv_sha256 = (
        side.csv_sha256(raw, provider)
        if side is not None
        else raw.sha256.get(provider) or archive.sha256(raw.csvs[provider])
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
    table = _parsed(raw, provider, consume)
    if cache is not None:
        _keep_parsed(table, csv_sha256, provider, cache, cached, side)
    return table


def _keep_parsed(
    table: Table,
    csv_sha256: str,
    provider: str,
    cache: DiskCache,
    cached: set[str],
    side: SideWork | None,
) -> None:
    """Keep a table parsed from the CSV with `csv_sha256` for the next process."""
    name = f"{provider}-{csv_sha256[:32]}.columns"
    cached.add(name)
    # Written from the table's own columns (no packed copy of it at the load's peak).
    packed_table = columns.encode_pieces(table, csv_sha256)
    if side is not None:
        side.put(cache, packed_table, PARSED, name)
    else:
        cache.put(packed_table, PARSED, name)


def _parsed_before(cache: DiskCache, provider: str) -> bool:
    """Whether the disk cache holds a table of `provider` parsed from some CSV."""
    try:
        with os.scandir(cache.dir / PARSED) as entries:
            return any(e.name.startswith(f"{provider}-") for e in entries)
    except OSError:
        return False


def _parsed(
    raw: RawCatalog,
    provider: str,
    consume: bool,
    streamed: tuple[int, Iterator[bytes]] | None = None,
    feed: Callable[[bytes], None] | None = None,
) -> Table:
    # The CSV parser is imported when a CSV is parsed: a warm start reads no CSV.
    from gpuhunt._internal.formats.csv_table import build_table

    streamed = streamed if streamed is not None else _stream(raw, provider)
    if streamed is not None:
        # Parsed as it is inflated: neither the archive's CSV nor its text is ever whole in
        # memory (`formats.csv_stream`); `feed` sees every piece (the hash beside the parse).
        from gpuhunt._internal.formats.csv_stream import build_table_streamed

        size, pieces = streamed
        csvs = raw.csvs
        return build_table_streamed(
            pieces if feed is None else _fed(pieces, feed),
            provider=provider,
            size=size,
            whole=lambda: csvs[provider],
        )
    held = [raw.csvs[provider]]
    if consume:
        raw.csvs[provider] = b""
    # Parsed from the bytes a block at a time: the whole text is never made beside them.
    return build_table(held.pop(), provider=provider)


def release(raw: RawCatalog, provider: str) -> None:
    """Let go of `provider`'s CSV and column file in `raw` once its table is built, so that a
    load holds one provider's bytes beside the tables rather than every provider's until it
    ends (its name stays in `raw.csvs`: the catalog still has the provider). Only for a raw
    catalog read for this one load, as the loader's are."""
    raw.csvs[provider] = b""
    if isinstance(raw.columns, Members):
        raw.columns.pop_unread(provider)
    else:
        raw.columns.pop(provider, None)


def combine_freeing(tables: list[Table]) -> Table:
    """`query.table.combine` of `tables` made one column at a time, each provider table's
    column let go as soon as it is in the combined one: a load holds its provider tables and
    one combined column at a time, not the provider tables, the joined columns and the sorted
    columns together (a third of the cold load's peak). The tables are left without their
    columns: only for tables made for this combine."""
    if len(tables) == 1:
        return tables[0]
    for t in tables:  # derived per row; the combined table derives its own
        t.__dict__.pop("gpu_memory_eff", None)
        t.__dict__.pop("total_gpu_memory", None)
    order = np.argsort(np.concatenate([t.price for t in tables]), kind="stable")
    fields: dict[str, Any] = {}
    for name, codes in STRING_LISTS.items():
        interner = Interner()
        remaps = [np.array([interner.code(v) for v in getattr(t, codes)] + [-1]) for t in tables]
        fields[codes] = interner.values
        fields[name] = _joined(tables, name, order, remaps)
    for name in COLUMNS:
        if name not in STRING_LISTS:
            fields[name] = _joined(tables, name, order, None)
    skipped: dict[str, int] = {}
    for t in tables:
        for p, n in t.skipped.items():
            skipped[p] = skipped.get(p, 0) + n
    return Table(**fields, skipped=skipped)


def _joined(
    tables: list[Table], name: str, order: np.ndarray, remaps: list[np.ndarray] | None
) -> np.ndarray:
    dtype = COLUMNS[name]
    parts = []
    for k, t in enumerate(tables):
        col = t.__dict__.pop(name)  # this table's copy goes once the joined one is made
        parts.append((remaps[k][col] if remaps is not None else col).astype(dtype, copy=False))
    joined = np.concatenate(parts) if parts else np.empty(0, dtype=dtype)
    del parts
    out: np.ndarray = joined[order]
    return out


def read_shaped(
    raw: RawCatalog, provider: str, cache: DiskCache | None, cached: set[str], side: SideWork
) -> Shaped:
    """`provider_table` as a load reads it: the CSV's bytes held by its parse only, the
    table stamped with its collection time (`observed`) and kept only as its shapes and three
    arrays a row (`combine_shaped`), and the provider's bytes in `raw` let go (`release`)."""
    side.settle()
    part = read_in_parts(raw, provider)
    if part is not None:
        release(raw, provider)
        memory.release_free_memory()
        return part
    table = provider_table(raw, provider, cache, cached, side, consume=True)
    part = shaped(observed.stamp_loaded(table, raw.manifest, provider))
    release(raw, provider)  # (a column file's table is a view on its bytes: both go now)
    if len(table) >= TRIM_AFTER_ROWS:
        del table
        # What reading a large provider freed goes back before the next is read: glibc keeps
        # it otherwise, and the next provider's read adds to it (`load.memory`).
        memory.release_free_memory()
    return part


def combine_shaped(parts: list[Shaped]) -> Table:
    """One compacted table of `parts`, in price order (equal prices keep the order of `parts`,
    then each part's own), as `combine_freeing` and `Table.compact` would make it from the
    whole tables, without ever holding every column of every offer: a cold load holds the
    shapes and three arrays a row of the providers read so far, beside the one it reads (the
    combined table of every column was twice the loaded catalog at 1M offers). The parts' row
    arrays are let go as they are joined."""
    skipped: dict[str, int] = {}
    for part in parts:
        for p, n in part.shapes.skipped.items():
            skipped[p] = skipped.get(p, 0) + n
    if sum(len(part.price) for part in parts) == 0:
        return combine_freeing([part.shapes for part in parts])
    shape_cols: dict[str, Any] = {}
    location_remaps: list[np.ndarray] = []
    for column, name in STRING_LISTS.items():
        interner = Interner()
        remaps = [
            np.array([interner.code(v) for v in getattr(part.shapes, name)] + [-1])
            for part in parts
        ]
        shape_cols[name] = interner.values
        shape_cols[column] = np.concatenate(
            [remaps[k][getattr(part.shapes, column)] for k, part in enumerate(parts)]
        ).astype(COLUMNS[column], copy=False)
        if column == "location":
            location_remaps = remaps
    for column, dtype in COLUMNS.items():
        if column not in STRING_LISTS:
            shape_cols[column] = np.concatenate(
                [getattr(part.shapes, column) for part in parts]
            ).astype(dtype, copy=False)
    n_shapes = len(shape_cols["price"])
    # Each combined array is joined from the parts' pieces in its final type, each part's
    # array let go once joined: at 5M offers the parts' arrays, int64 pieces and the joined
    # copies at once were the column-file load's peak.
    price = _glued([part.price for part in parts], np.float64)
    for part in parts:
        part.price = np.empty(0)
    # Half the int64 argsort gives: held beside the parts while every row array is reordered.
    order = np.argsort(price, kind="stable").astype(np.int32 if len(price) < 1 << 31 else np.int64)
    price = price[order]
    offsets = np.cumsum([0] + [len(part.shapes) for part in parts]).tolist()
    small = n_shapes <= 1 << 16  # two bytes a row where the shapes allow, as `prepare` does
    kind: Any = np.uint16 if small else np.int32
    pieces = []
    for k, part in enumerate(parts):
        # In the combined type before adding: a part's may be two bytes, the offsets are not.
        pieces.append(part.shape_of_row.astype(kind) + kind(offsets[k]))
        part.shape_of_row = np.empty(0)
    shape_of_row = _glued(pieces, kind)[order]
    kind = np.uint16 if len(shape_cols["locations"]) <= 1 << 16 else np.int32
    pieces = []
    for k, part in enumerate(parts):
        pieces.append(location_remaps[k].astype(kind)[part.location])
        part.location = np.empty(0)
    location = _glued(pieces, kind)[order]
    del order
    return _compacted(Table(**shape_cols), price, location, shape_of_row, skipped)


def _glued(pieces: list[np.ndarray], dtype: Any) -> np.ndarray:
    """`pieces` joined (and let go)."""
    joined = np.concatenate(pieces).astype(dtype, copy=False)
    pieces.clear()
    return joined


def _compacted(
    by_shape: Table,
    price: np.ndarray,
    location: np.ndarray,
    shape_of_row: np.ndarray,
    skipped: dict[str, int],
) -> Table:
    """The table `Table.compact` leaves: a copy of the table of shapes holding per row only
    the price, location and shape number (made right after construction, so every cache of
    the copy is as a new table's). Each shape's tuple is made when an answer first holds one
    of its offers (`answers`)."""
    table = copy.copy(by_shape)
    state = table.__dict__
    for k in SHAPE_ROW_COLUMNS:
        state.pop(k, None)
    state.update(
        price=price,
        location=location,
        skipped=skipped,
        _parts_lock=threading.Lock(),
        _shape_of_row=shape_of_row,
        _by_shape=by_shape,
    )
    locations = np.empty(len(table.locations), dtype=object)
    locations[:] = table.locations
    shapes = np.empty(len(by_shape), dtype=object)
    unmade = np.ones(len(by_shape), dtype=bool)
    table._parts = answers.OfferParts(shapes, shape_of_row, locations, unmade)
    return table
