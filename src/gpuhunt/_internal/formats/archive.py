"""Catalog archives (pure: bytes in, bytes out): a zip of `{provider}.csv` files, their
`{provider}.columns` files (see `formats.columns`) and `manifest.json`. Reading one refuses
members with unexpected names, paths, or sizes beyond a cap (no zip bombs), judged from the
central directory before anything is inflated. Members are inflated when asked for (`Members`):
one the manifest does not list is never inflated, and a CSV whose column file matches the
manifest's `columns_sha256` is inflated, and checked against the manifest's sha256, only if
something reads it. Every other CSV is checked against the manifest when the archive is read.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import re
import stat
import zlib
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gpuhunt._internal.errors import CatalogIntegrityError

if TYPE_CHECKING:
    import zipfile

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
MANIFEST_NAME = "manifest.json"
MAX_MEMBER_BYTES = 512 * 1024 * 1024  # a real provider CSV is a few MB; AWS per-zone ~10 MB
MAX_TOTAL_BYTES = 2 * 1024 * 1024 * 1024
MAX_COMPRESSION_RATIO = 200  # CSVs compress ~10x; bombs compress 1000x
# A plain name, no folders: `{provider}.csv`, `{provider}.columns` (see `formats.columns`), and room
# for kinds of member later versions may add, which this version does not read.
_MEMBER_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}\.[a-z]{1,16}$")
_READ_SUFFIXES = (".csv", COLUMNS_SUFFIX := ".columns")
_COMPRESSIONS = (0, 8)  # zipfile.ZIP_STORED, ZIP_DEFLATED: zipfile is imported when a zip is read


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_archive(
    csvs: dict[str, bytes], manifest: dict[str, Any], columns: dict[str, bytes] | None = None
) -> bytes:
    """A catalog zip: `{provider}.csv` for each entry, its `{provider}.columns` if given, and
    `manifest.json`. Fixed timestamps: the same input gives the same bytes."""
    import zipfile  # here: a warm start reads no zip

    members = {f"{p}.csv": data for p, data in csvs.items()}
    members.update({f"{p}{COLUMNS_SUFFIX}": data for p, data in (columns or {}).items()})
    members[MANIFEST_NAME] = json.dumps(manifest, indent=2, sort_keys=True).encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name in sorted(members, key=lambda n: (n == MANIFEST_NAME, n)):
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, members[name])
    return buf.getvalue()


class _Later:
    """A member not inflated yet: where it is, and the sha256 it must have (if known)."""

    __slots__ = ("zip", "info", "source", "sha256")

    def __init__(
        self, z: zipfile.ZipFile, info: zipfile.ZipInfo, source: str, sha256: str | None
    ) -> None:
        self.zip, self.info, self.source, self.sha256 = z, info, source, sha256


class Members(MutableMapping[str, bytes]):
    """name -> bytes, where an entry may be a zip member inflated (and checked against its
    manifest sha256) on first read. Membership, length and iteration inflate nothing; reading
    an entry (`[]`, `get`, `items`, `values`) does, and raises `CatalogIntegrityError` if the
    bytes are not what the manifest says: bytes that do not match are never handed out."""

    def __init__(self, ready: dict[str, bytes] | None = None) -> None:
        self._items: dict[str, bytes | _Later] = dict(ready or {})

    def defer(self, key: str, later: _Later) -> None:
        self._items[key] = later

    def move_to(self, other: Members, key: str) -> None:
        """Put `key` into `other` as it is here: still not inflated if it was not."""
        other._items[key] = self._items[key]

    def pop_unread(self, key: str) -> None:
        """Remove `key` without inflating it (`pop` would read it first)."""
        self._items.pop(key, None)

    def inflated(self, key: str) -> bool:
        return not isinstance(self._items[key], _Later)

    def stream(self, key: str) -> tuple[int, Iterator[bytes]] | None:
        """For an entry not inflated yet: its declared size and its bytes inflated a piece at
        a time, held to its manifest sha256 when the last piece is read (the generator raises
        `CatalogIntegrityError` then, or on a corrupt member); nothing is kept here. None for
        an entry already in memory."""
        item = self._items[key]
        if not isinstance(item, _Later):
            return None
        return item.info.file_size, _pieces(item)

    def __getitem__(self, key: str) -> bytes:
        item = self._items[key]
        if not isinstance(item, _Later):
            return item
        data = _inflate(item.zip, item.info, item.source)
        if item.sha256 is not None and sha256(data) != item.sha256:
            raise CatalogIntegrityError(
                f"{item.source}: {item.info.filename} does not match the sha256 in its manifest"
            )
        self._items[key] = data
        return data

    def __setitem__(self, key: str, value: bytes) -> None:
        self._items[key] = value

    def __delitem__(self, key: str) -> None:
        del self._items[key]

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Members({list(self._items)})"


def _inflate(z: zipfile.ZipFile, info: zipfile.ZipInfo, source: str) -> bytes:
    """One member's bytes, never more than its (already capped) declared size. Inflated a
    piece at a time into one buffer of that size (a bytearray, used as bytes): reading it
    whole joins the pieces, which held two to three copies of a CSV at a load's peak."""
    import zipfile  # here: a warm start reads no zip

    content = bytearray(info.file_size)
    view = memoryview(content)
    size = 0
    try:
        with z.open(info) as member:
            while True:
                # One byte past the declared size at most: a lying header cannot expand further.
                piece = member.read(min(_PIECE, info.file_size + 1 - size))
                if not piece:
                    break
                if size + len(piece) > info.file_size:
                    size += len(piece)
                    break
                view[size : size + len(piece)] = piece
                size += len(piece)
    except (zipfile.BadZipFile, EOFError, OSError, zlib.error) as e:
        raise CatalogIntegrityError(f"{source}: member {info.filename} is corrupt ({e})") from None
    finally:
        view.release()
    if size != info.file_size:
        raise CatalogIntegrityError(f"{source}: member {info.filename} has the wrong size")
    return content  # type: ignore[return-value]


def _pieces(item: _Later) -> Iterator[bytes]:
    """`item`'s bytes a piece at a time, never past its (capped) declared size, checked against
    its sha256 (if known) at the end: a caller parsing as it reads drops what it built if the
    last piece raises."""
    import zipfile  # here: a warm start reads no zip

    info, source = item.info, item.source
    digest = hashlib.sha256() if item.sha256 is not None else None
    size = 0
    try:
        with item.zip.open(info) as member:
            while True:
                piece = member.read(min(_PIECE, info.file_size + 1 - size))
                if not piece:
                    break
                size += len(piece)
                if size > info.file_size:
                    break
                if digest is not None:
                    digest.update(piece)
                yield piece
    except (zipfile.BadZipFile, EOFError, OSError, zlib.error) as e:
        raise CatalogIntegrityError(f"{source}: member {info.filename} is corrupt ({e})") from None
    if size != info.file_size:
        raise CatalogIntegrityError(f"{source}: member {info.filename} has the wrong size")
    if digest is not None and digest.hexdigest() != item.sha256:
        raise CatalogIntegrityError(
            f"{source}: {info.filename} does not match the sha256 in its manifest"
        )


def _digest(z: zipfile.ZipFile, info: zipfile.ZipInfo, source: str) -> str:
    """A member's sha256, inflated a piece at a time: checked now, held only when it is read
    (`Members`), so an archive's column files are not all in memory while it is read."""
    import zipfile  # here: a warm start reads no zip

    digest = hashlib.sha256()
    size = 0
    try:
        with z.open(info) as member:
            while size <= info.file_size:
                piece = member.read(min(_PIECE, info.file_size + 1 - size))
                if not piece:
                    break
                size += len(piece)
                digest.update(piece)
    except (zipfile.BadZipFile, EOFError, OSError, zlib.error) as e:
        raise CatalogIntegrityError(f"{source}: member {info.filename} is corrupt ({e})") from None
    if size != info.file_size:
        raise CatalogIntegrityError(f"{source}: member {info.filename} has the wrong size")
    return digest.hexdigest()


_PIECE = 1 << 20


@dataclass
class Archive:
    csvs: Members  # provider -> CSV bytes, inflated when read
    manifest: dict[str, Any] | None
    # provider -> column file, inflated when read
    columns: Members = field(default_factory=Members)
    # provider -> its CSV's: computed, or for a CSV not inflated, the manifest's (checked on read).
    sha256: dict[str, str] = field(default_factory=dict)
    # Members left unread: CSVs of providers the manifest does not list (see `read_archive`).
    ignored: list[str] = field(default_factory=list)


def read_archive(data: bytes, *, source: str = "catalog.zip") -> Archive:
    """Open a catalog zip safely and verify it against its manifest, if it has one.

    Raises `CatalogIntegrityError` naming `source` and the member at fault, and only that:
    whatever decoding these bytes raises (a manifest nested too deep, a codec the zip module
    lacks) is a refusal of the archive, never an escape.
    """
    try:
        return _read_archive(data, source)
    except CatalogIntegrityError:
        raise
    except Exception as e:  # noqa: BLE001 - untrusted bytes: every failure is a refusal
        raise CatalogIntegrityError(
            f"{source}: not a readable catalog archive ({type(e).__name__})"
        ) from None


def _read_archive(data: bytes, source: str) -> Archive:
    import zipfile  # here: a warm start reads no zip

    try:
        z = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, EOFError) as e:
        raise CatalogIntegrityError(f"{source}: not a readable zip archive ({e})") from None
    infos = z.infolist()
    total = 0
    for info in infos:
        name = info.filename
        if name != MANIFEST_NAME and not _MEMBER_NAME.match(name):
            raise CatalogIntegrityError(f"{source}: unexpected member {name[:80]!r}")
        kind = stat.S_IFMT(info.external_attr >> 16)  # 0: no Unix file type recorded
        if info.is_dir() or kind not in (0, stat.S_IFREG):
            # A symlink member would be served as its target's path text.
            raise CatalogIntegrityError(f"{source}: member {name} is not a regular file")
        if info.compress_type not in _COMPRESSIONS:
            raise CatalogIntegrityError(
                f"{source}: member {name} uses compression method {info.compress_type}, "
                "which catalogs do not use"
            )
        if info.file_size > MAX_MEMBER_BYTES:
            raise CatalogIntegrityError(f"{source}: member {name} is too large")
        if info.compress_size and info.file_size / info.compress_size > MAX_COMPRESSION_RATIO:
            raise CatalogIntegrityError(f"{source}: member {name} is suspiciously compressed")
        total += info.file_size
    if total > MAX_TOTAL_BYTES:
        raise CatalogIntegrityError(f"{source}: archive expands beyond the size cap")
    # The last entry of a name wins, as zipfile's own lookup by name does.
    by_name = {info.filename: info for info in infos}
    manifest = None
    if MANIFEST_NAME in by_name:
        text = _inflate(z, by_name[MANIFEST_NAME], source)
        try:
            manifest = json.loads(text)
            if not isinstance(manifest, dict):
                raise ValueError("not an object")
        except (ValueError, RecursionError) as e:
            raise CatalogIntegrityError(
                f"{source}: manifest.json is not valid ({type(e).__name__})"
            ) from None
    providers = [n[: -len(".csv")] for n in by_name if n.endswith(".csv")]
    ignored: list[str] = []
    listed = manifest.get("providers") if manifest is not None else None
    if isinstance(listed, dict) and listed:
        # The manifest says what the archive holds: a member it does not list (slipped in,
        # or left by a tool that packed a folder) is no part of the catalog, whatever it is,
        # and is never inflated.
        ignored = [f"{p}.csv" for p in providers if p not in listed]
        providers = [p for p in providers if p in listed]
        if ignored:
            logger.warning(
                "%s: ignoring %s, which its manifest does not list", source, ", ".join(ignored)
            )
    entries = (manifest.get("providers") or {}) if manifest is not None else {}
    csvs = Members()
    columns = Members()
    hashes: dict[str, str] = {}
    for provider in providers:
        entry = (entries.get(provider) or {}) if manifest is not None else {}
        expected = entry.get("sha256")
        wanted = entry.get("columns_sha256")
        packed_info = by_name.get(f"{provider}{COLUMNS_SUFFIX}")
        csv_info = by_name[f"{provider}.csv"]
        if packed_info is not None:
            if manifest is None:
                columns.defer(provider, _Later(z, packed_info, source, None))
            elif wanted and _digest(z, packed_info, source) == wanted:
                # Checked, and inflated again when read: one provider's column file in
                # memory at a time, not the whole catalog's (issue 40). Not hashed again
                # then: the zip's bytes are immutable, so they inflate to what was checked.
                columns.defer(provider, _Later(z, packed_info, source, None))
            else:
                # Only a faster way to the same offers: without it the CSV is parsed instead.
                logger.warning(
                    "%s: %s%s does not match its manifest; parsing the CSV instead",
                    source,
                    provider,
                    COLUMNS_SUFFIX,
                )
        if expected and provider in columns:
            # The column file is what a load reads, and it matched the manifest: the CSV is
            # inflated, and held to the manifest's sha256, only if something reads it.
            csvs.defer(provider, _Later(z, csv_info, source, str(expected)))
            hashes[provider] = str(expected)
        elif expected:
            content = _inflate(z, csv_info, source)
            hashes[provider] = sha256(content)
            if hashes[provider] != expected:
                raise CatalogIntegrityError(
                    f"{source}: {provider}.csv does not match the sha256 in its manifest"
                )
            csvs[provider] = content
        else:
            csvs.defer(provider, _Later(z, csv_info, source, None))
    for provider in entries:
        if provider not in csvs:
            raise CatalogIntegrityError(
                f"{source}: {provider}.csv listed in the manifest is missing"
            )
    return Archive(csvs=csvs, manifest=manifest, columns=columns, sha256=hashes, ignored=ignored)
