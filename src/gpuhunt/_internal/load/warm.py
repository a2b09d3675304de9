"""A warm start that only reads: what a load derives from the disk cache's archives (the combined,
compacted table and its shapes) kept in the disk cache, so that the next process reads it back
instead of unzipping, hashing, decoding, combining and grouping again.

A snapshot is named by a key made of everything its content follows from: the format below, this
gpuhunt's version, the catalog's version(s) (`sources.cache_key`) and the sha256 of each cached
archive it was loaded from. Those hashes are not computed: every disk cache file ends with the
sha256 of its content (`cache.seal`), so reading an archive's last 64 bytes gives it. A snapshot
whose key does not match is never read, and one that does is checked like any cache file (its own
seal) and like a column file (every code in range, every number finite) before it is served.

Layout of `derived/{key}.table` (little-endian, then sealed by the cache):

    b"GPUHUNT-WARM\\n\\0\\0\\0"   16-byte magic
    uint32                       length H of the header
    H bytes                      JSON header: format, key, version, source URL, manifest,
                                 providers, skipped and unknown-location counts, the string
                                 lists, and each array's dtype, length and offset into the data
    data                         the arrays, 8-byte aligned: per row the price, location code and
                                 shape number; per shape every other column (`query.table`)

Pure parts (`encode`, `decode`) are separate from the cache I/O (`read`, `write`).
"""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import json
import logging
import struct
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuhunt._internal.formats import columns as column_files
from gpuhunt._internal.load import sources
from gpuhunt._internal.load.cache import SEAL, DiskCache
from gpuhunt._internal.load.loaded import Loaded
from gpuhunt._internal.load.tables import SideWork
from gpuhunt._internal.query import answers
from gpuhunt._internal.query.masks import ARCHS, VENDORS
from gpuhunt._internal.query.table import COLUMNS, SHAPE_ROW_COLUMNS, STRING_LISTS, Table
from gpuhunt._version import __version__

logger = logging.getLogger(__name__)

FOLDER = "derived"
MAGIC = b"GPUHUNT-WARM\n\0\0\0"
FORMAT = 3  # 2: the unknown-location counts in the header; 3: offer texts (`offer_spec`)
_ROW_ARRAYS = ("price", "location", "shape_of_row")
_LISTS = list(STRING_LISTS.values())


@dataclass(frozen=True)
class Snapshot:
    """A loaded catalog as the loader installs it."""

    table: Table
    version: str
    manifest: dict[str, Any] | None


def archive_parts(latest: Any) -> list[tuple[str, str, str]] | None:
    """The disk cache files (`DiskCache.get` parts) the catalog `latest.json` names is loaded
    from; None if it names none in a shape this version reads."""
    if not isinstance(latest, dict):
        return None
    if latest.get("layout") == "archive":
        v = latest.get("version")
        return (
            [("archive", v, "catalog.zip")]
            if isinstance(v, str) and sources.is_version(v)
            else None
        )
    versions = latest.get("versions")
    if latest.get("layout") != "per-provider" or not isinstance(versions, dict) or not versions:
        return None
    parts = []
    for p, v in sorted(versions.items()):
        # Both become file names in the cache: the version rule keeps them plain names.
        if not (isinstance(p, str) and isinstance(v, str)):
            return None
        if not (sources.is_version(p) and sources.is_version(v)):
            return None
        parts.append((p, v, "catalog.zip"))
    return parts


def key(cache: DiskCache, cache_key: str, parts: list[tuple[str, str, str]]) -> str | None:
    """The snapshot name for the catalog `cache_key` loaded from the cache files `parts`; None if
    one of them is missing or unsealed (then nothing is read or written)."""
    digest = hashlib.sha256(f"{FORMAT}\n{__version__}\n{cache_key}\n".encode())
    for part in parts:
        seal = _seal_of(cache, part)
        if seal is None:
            return None
        digest.update(f"{'/'.join(part)}={seal}\n".encode())
    return digest.hexdigest()[:40]


def _seal_of(cache: DiskCache, part: tuple[str, ...]) -> str | None:
    """The sha256 a sealed cache file ends with, read from its last bytes (not recomputed)."""
    tail = len(SEAL) + 64
    # Through the cache's own checks: a cached archive replaced by a link to a FIFO would
    # hang a plain open() here.
    end = cache.tail(tail, *part)
    if end is None or len(end) < tail:
        return None
    if not end.startswith(SEAL):
        return None
    hexdigest = end[len(SEAL) :].decode("ascii", "replace")
    return hexdigest if all(c in "0123456789abcdef" for c in hexdigest) else None


# ------------------------------------------------------------------------------- pure parts


def encode(snapshot: Snapshot, name: str) -> bytes | None:
    """The snapshot file of a loaded, compacted table; None for a table that is not compacted
    (an empty catalog), which is quick to load anyway."""
    parts = _contents(snapshot, name)
    return None if parts is None else column_files.pack(MAGIC, *parts, counts=True)


def encode_pieces(snapshot: Snapshot, name: str) -> list[Any] | None:
    """`encode`'s bytes as pieces written one after another: the table is not copied into one
    buffer to be written (at 5M offers that copy was a load's second-highest peak)."""
    parts = _contents(snapshot, name)
    return None if parts is None else column_files.pack_pieces(MAGIC, *parts, counts=True)


def _contents(
    snapshot: Snapshot, name: str
) -> tuple[dict[str, Any], str, dict[str, np.ndarray]] | None:
    table = snapshot.table
    parts = table._parts
    by_shape = table.__dict__.get("_by_shape")
    if parts is None or by_shape is None:
        return None
    arrays: dict[str, np.ndarray] = {
        "price": table.price,
        "location": table.location,
        "shape_of_row": parts.shape_of_row,
    }
    arrays.update({f"shape.{k}": getattr(by_shape, k) for k in COLUMNS})
    header = {
        "format": FORMAT,
        "key": name,
        "version": snapshot.version,
        "manifest": snapshot.manifest,
        "skipped": table.skipped,
        # What every `status()` reports, which takes the geography table to work out: read
        # back, a warm query that filters on no place loads no geography. (The key names this
        # gpuhunt's version, whose geography table it was worked out with.)
        "unknown_locations": table.unknown_locations(),
        "strings": {k: getattr(table, k) for k in _LISTS},
    }
    return header, "arrays", arrays


def decode(data: bytes | bytearray | memoryview, name: str) -> Snapshot:
    """The catalog in a snapshot file named `name`; ValueError saying what is wrong otherwise.
    The arrays are read-only views on `data`, not copies."""
    view = memoryview(data)
    if bytes(view[: len(MAGIC)]) != MAGIC or len(view) < len(MAGIC) + 4:
        raise ValueError("not a snapshot file")
    (size,) = struct.unpack_from("<I", view, len(MAGIC))
    start = len(MAGIC) + 4 + size
    if start > len(view):
        raise ValueError("header runs past the end of the file")
    try:
        header = json.loads(bytes(view[len(MAGIC) + 4 : start]))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise ValueError(f"header is not JSON ({type(e).__name__})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueError("unknown snapshot format")
    if header.get("key") != name:
        raise ValueError("it was made for another catalog")
    arrays = _arrays(view, start, header.get("arrays"))
    strings = header.get("strings")
    if not isinstance(strings, dict):
        raise ValueError("no string lists")
    lists: dict[str, list[str]] = {}
    for k in _LISTS:
        values = strings.get(k)
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise ValueError(f"string list {k} is missing or not strings")
        lists[k] = values
    shape_cols = {k: arrays[f"shape.{k}"] for k in COLUMNS}
    n_shapes = len(shape_cols["price"])
    if any(len(c) != n_shapes for c in shape_cols.values()):
        raise ValueError("the shape columns differ in length")
    rows = len(arrays["price"])
    if len(arrays["location"]) != rows or len(arrays["shape_of_row"]) != rows:
        raise ValueError("the row arrays differ in length")
    _check(arrays, shape_cols, lists, n_shapes)
    skipped = header.get("skipped")
    if not isinstance(skipped, dict) or not all(
        isinstance(k, str) and isinstance(v, int) for k, v in skipped.items()
    ):
        raise ValueError("bad skipped counts")
    unknown = header.get("unknown_locations")
    if not isinstance(unknown, dict) or not all(
        k in lists["providers"] and isinstance(v, int) and v > 0 for k, v in unknown.items()
    ):
        raise ValueError("bad unknown-location counts")
    version = header.get("version")
    manifest = header.get("manifest")
    if not isinstance(version, str) or not (manifest is None or isinstance(manifest, dict)):
        raise ValueError("bad version or manifest")
    table = _compacted(shape_cols, lists, arrays, skipped)
    table._unknown = dict(unknown)
    return Snapshot(table, version, manifest)


def _arrays(view: memoryview, start: int, layout: Any) -> dict[str, np.ndarray]:
    if not isinstance(layout, dict):
        raise ValueError("no array layout")
    wanted = {**{k: None for k in _ROW_ARRAYS}, **{f"shape.{k}": COLUMNS[k] for k in COLUMNS}}
    out = {}
    for k, dtype in wanted.items():
        spec = layout.get(k)
        if not isinstance(spec, dict):
            raise ValueError(f"array {k} is missing")
        try:
            want = np.dtype(str(spec.get("dtype")))
        except TypeError:
            raise ValueError(f"array {k} has a bad dtype") from None
        allowed = (
            [np.dtype(dtype).newbyteorder("<")]
            if dtype is not None
            else [np.dtype("<f8")]
            if k == "price"
            else [np.dtype("<u2"), np.dtype("<i4")]
        )
        if want not in allowed:
            raise ValueError(f"array {k} has dtype {want.str}")
        count, offset = spec.get("count"), spec.get("offset")
        if not isinstance(count, int) or not isinstance(offset, int) or count < 0 or offset < 0:
            raise ValueError(f"array {k} has a bad count or offset")
        if start + offset + count * want.itemsize > len(view):
            raise ValueError(f"array {k} runs past the end of the file")
        a = np.frombuffer(view, dtype=want, count=count, offset=start + offset)
        a.flags.writeable = False  # as a column file's: nobody writes to a loaded column
        out[k] = a
    return out


def _check(
    arrays: dict[str, np.ndarray],
    shape_cols: dict[str, np.ndarray],
    lists: dict[str, list[str]],
    n_shapes: int,
) -> None:
    """What a query relies on: codes in range, prices finite and sorted (what a column file is
    checked for, `formats.columns`)."""
    if n_shapes == 0 or len(arrays["price"]) == 0:
        raise ValueError("an empty catalog is not kept")
    column_files.check_codes(arrays["shape_of_row"], n_shapes, "shape_of_row")
    column_files.check_codes(arrays["location"], len(lists["locations"]), "location")
    for column, name in STRING_LISTS.items():
        if column != "location":
            column_files.check_codes(shape_cols[column], len(lists[name]), column)
    price = arrays["price"]
    if not np.isfinite(price).all() or (len(price) > 1 and (np.diff(price) < 0).any()):
        raise ValueError("prices are not finite and in order")
    column_files.check_numbers({k: v for k, v in shape_cols.items() if k != "price"})
    column_files.check_codes(shape_cols["gpu_vendor"], len(VENDORS), "gpu_vendor")
    column_files.check_codes(shape_cols["cpu_arch"], len(ARCHS), "cpu_arch")
    for text in lists["provider_datas"]:
        column_files.check_offer_text(text)


def _compacted(
    shape_cols: dict[str, np.ndarray],
    lists: dict[str, list[str]],
    arrays: dict[str, np.ndarray],
    skipped: dict[str, int],
) -> Table:
    """The table `Table.compact` leaves, made without the per-row columns it drops: a table
    of the shapes, and a copy of it holding per row only the price, location and shape number
    (made right after construction, so every cache of the copy is as a new table's)."""
    fields: dict[str, Any] = {**shape_cols, **lists}
    by_shape = Table(**fields)
    table = copy.copy(by_shape)
    state = table.__dict__
    for k in SHAPE_ROW_COLUMNS:
        state.pop(k, None)
    state.update(
        price=arrays["price"],
        location=arrays["location"],
        skipped=dict(skipped),
        _parts_lock=threading.Lock(),
        _shape_of_row=arrays["shape_of_row"],
        _by_shape=by_shape,
    )
    locations = np.empty(len(table.locations), dtype=object)
    locations[:] = table.locations
    # Each shape's tuple is made when an answer first holds one of its offers (`answers`).
    shapes = np.empty(len(by_shape), dtype=object)
    unmade = np.ones(len(by_shape), dtype=bool)
    table._parts = answers.OfferParts(shapes, arrays["shape_of_row"], locations, unmade)
    return table


# ---------------------------------------------------------------------------------- the I/O


def read(cache: DiskCache, name: str) -> Snapshot | None:
    """The snapshot `name` from the disk cache, or None (missing, damaged, or refused, which is
    logged at debug level: the load then does the work itself)."""
    data = cache.get(FOLDER, f"{name}.table")
    if data is None:
        return None
    try:
        return decode(data, name)
    except Exception as e:  # noqa: BLE001 - a damaged cache file is only not used
        logger.debug("Not using the warm-start snapshot: %s", e)
        cache.delete(FOLDER, f"{name}.table")
        return None


def write(cache: DiskCache, snapshot: Snapshot, name: str) -> bool:
    """Keep `snapshot` as `name`, and only it (earlier catalogs' snapshots are removed)."""
    data = encode_pieces(snapshot, name)
    if data is None:
        return False
    written = cache.put(data, FOLDER, f"{name}.table")
    cache.prune(FOLDER, {f"{name}.table"})
    return written


def _parts_of(raw: sources.RawCatalog) -> list[tuple[str, str, str]]:
    """The disk cache files the catalog `raw` was read from (or written to, downloaded)."""
    if raw.versions:
        return [(p, v, "catalog.zip") for p, v in sorted(raw.versions.items())]
    return [("archive", raw.version, "catalog.zip")]


def latest(cache: DiskCache, cache_key: str, url: str, loaded_at: float) -> Loaded | None:
    """The catalog `cache_key`, which the disk cache's `latest.json` names, as a load from the
    disk cache serves it, if an earlier load kept its snapshot (None otherwise)."""
    name = key(cache, cache_key, archive_parts(cache.get_json("latest.json")) or [])
    snapshot = read(cache, name) if name is not None else None
    if snapshot is None:
        return None
    now = dt.datetime.now(dt.timezone.utc)
    return Loaded(
        snapshot.table,
        snapshot.version,
        "disk-cache",
        url,
        loaded_at,
        now,
        snapshot.manifest,
        degraded=False,
        cache_key=cache_key,
        unchecked=True,
    )


def read_for(cache: DiskCache, raw: sources.RawCatalog) -> Snapshot | None:
    """The snapshot of the catalog `raw`, if an earlier load of the same cached archives kept
    one (a catalog with a provider missing or refused has none)."""
    if raw.problems or raw.failed:
        return None
    name = key(cache, sources.cache_key(raw), _parts_of(raw))
    return read(cache, name) if name is not None else None


def keep(cache: DiskCache, raw: sources.RawCatalog, table: Table, side: SideWork) -> None:
    """Keep what a load derived from the cached archives of `raw` for the next process, on the
    load's side thread (the load returns once it is written)."""
    parts = _parts_of(raw)
    snapshot = Snapshot(table, raw.version, raw.manifest)
    cache_key = sources.cache_key(raw)

    def job() -> None:
        name = key(cache, cache_key, parts)
        if name is not None:
            write(cache, snapshot, name)

    side.run(job)
