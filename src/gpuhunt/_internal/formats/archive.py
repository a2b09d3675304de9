"""Catalog archives (pure: bytes in, bytes out): a zip of `{provider}.csv` files, their
`{provider}.columns` files (see `formats.columns`) and `manifest.json`. Reading one refuses
members with unexpected names, paths, or sizes beyond a cap (no zip bombs), and checks every CSV
against the sha256 the manifest gives for it.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import re
import stat
import zipfile
import zlib
from dataclasses import dataclass, field
from typing import Any

from gpuhunt._internal.errors import CatalogIntegrityError

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
_COMPRESSIONS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_archive(
    csvs: dict[str, bytes], manifest: dict[str, Any], columns: dict[str, bytes] | None = None
) -> bytes:
    """A catalog zip: `{provider}.csv` for each entry, its `{provider}.columns` if given, and
    `manifest.json`. Fixed timestamps: the same input gives the same bytes."""
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


@dataclass
class Archive:
    csvs: dict[str, bytes]  # provider -> CSV bytes
    manifest: dict[str, Any] | None
    columns: dict[str, bytes] = field(default_factory=dict)  # provider -> column file
    sha256: dict[str, str] = field(default_factory=dict)  # provider -> its CSV's, if computed
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
    try:
        z = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, EOFError) as e:
        raise CatalogIntegrityError(f"{source}: not a readable zip archive ({e})") from None
    with z:
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
        members: dict[str, bytes] = {}
        for info in infos:
            if info.filename != MANIFEST_NAME and not info.filename.endswith(_READ_SUFFIXES):
                continue
            try:
                with z.open(info) as member:
                    # Read one byte past the declared size: a lying header cannot expand further.
                    content = member.read(info.file_size + 1)
            except (zipfile.BadZipFile, EOFError, OSError, zlib.error) as e:
                raise CatalogIntegrityError(
                    f"{source}: member {info.filename} is corrupt ({e})"
                ) from None
            if len(content) != info.file_size:
                raise CatalogIntegrityError(f"{source}: member {info.filename} has the wrong size")
            members[info.filename] = content
    manifest = None
    if MANIFEST_NAME in members:
        try:
            manifest = json.loads(members.pop(MANIFEST_NAME))
            if not isinstance(manifest, dict):
                raise ValueError("not an object")
        except (ValueError, RecursionError) as e:
            raise CatalogIntegrityError(
                f"{source}: manifest.json is not valid ({type(e).__name__})"
            ) from None
    csvs = {n[: -len(".csv")]: data for n, data in members.items() if n.endswith(".csv")}
    columns = {
        n[: -len(COLUMNS_SUFFIX)]: data
        for n, data in members.items()
        if n.endswith(COLUMNS_SUFFIX) and n[: -len(COLUMNS_SUFFIX)] in csvs
    }
    hashes: dict[str, str] = {}
    ignored: list[str] = []
    listed = manifest.get("providers") if manifest is not None else None
    if isinstance(listed, dict) and listed:
        # The manifest says what the archive holds: a member it does not list (slipped in,
        # or left by a tool that packed a folder) is no part of the catalog, whatever it is.
        for provider in [p for p in csvs if p not in listed]:
            del csvs[provider]
            columns.pop(provider, None)
            ignored.append(f"{provider}.csv")
        if ignored:
            logger.warning(
                "%s: ignoring %s, which its manifest does not list", source, ", ".join(ignored)
            )
    if manifest is not None:
        entries = manifest.get("providers") or {}
        for provider, content in csvs.items():
            entry = entries.get(provider) or {}
            expected = entry.get("sha256")
            if expected:
                hashes[provider] = sha256(content)
                if hashes[provider] != expected:
                    raise CatalogIntegrityError(
                        f"{source}: {provider}.csv does not match the sha256 in its manifest"
                    )
            wanted = entry.get("columns_sha256")
            if provider in columns and (not wanted or sha256(columns[provider]) != wanted):
                # Only a faster way to the same offers: without it the CSV is parsed instead.
                logger.warning(
                    "%s: %s%s does not match its manifest; parsing the CSV instead",
                    source,
                    provider,
                    COLUMNS_SUFFIX,
                )
                del columns[provider]
        for provider in entries:
            if provider not in csvs:
                raise CatalogIntegrityError(
                    f"{source}: {provider}.csv listed in the manifest is missing"
                )
    return Archive(csvs=csvs, manifest=manifest, columns=columns, sha256=hashes, ignored=ignored)
