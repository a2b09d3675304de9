"""The files a catalog carries beside its CSVs for issue 49 (docs/costs.md), read when first
asked for: each provider's commitment terms (`{provider}.terms`) and the spot interruption
bands (`aws.interruption`). A query that asks for none of it reads nothing; one that does
reads each file once per loaded catalog (`sides_of` keeps the `Sides` on the loaded table).

Where the files are read from follows where the catalog was: the bundled snapshot's zip, a
published layout in a folder, a `GPUHUNT_CATALOG_DIR` folder, or the zip kept in the disk cache
for a downloaded catalog. The per-provider layout's zips carry no side files yet (the publish
build writes them into the archive layout's zip only), so its side files are unknown.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpuhunt._internal.costs.interruption import SUFFIX as BANDS_SUFFIX
from gpuhunt._internal.costs.interruption import BandTable, read_bands
from gpuhunt._internal.costs.terms import Term
from gpuhunt._internal.errors import CatalogIntegrityError
from gpuhunt._internal.formats.archive import read_archive, sha256
from gpuhunt._internal.formats.terms import SUFFIX as TERMS_SUFFIX
from gpuhunt._internal.formats.terms import read_terms
from gpuhunt._internal.load.cache import DiskCache
from gpuhunt._internal.load.loaded import Loaded

Reader = Callable[[str], "bytes | None"]
MAX_SIDE_BYTES = 64 * 1024 * 1024  # a terms file of every AWS region is a few MB


class Sides:
    """Terms and bands of one loaded catalog, each file parsed on first use (thread-safe)."""

    def __init__(self, read: Reader, where: str = "catalog") -> None:
        self._read = read
        self.where = where
        self._lock = threading.Lock()
        self._terms: dict[str, list[Term] | None] = {}
        self._bands: dict[str, BandTable | None] = {}

    def terms(self, provider: str) -> list[Term] | None:
        """The provider's terms, or None when the catalog carries no terms file for it."""
        with self._lock:
            if provider not in self._terms:
                name = provider + TERMS_SUFFIX
                data = self._read(name)
                self._terms[provider] = (
                    None if data is None else read_terms(data, source=f"{self.where}: {name}")
                )
            return self._terms[provider]

    def bands(self, provider: str = "aws") -> BandTable | None:
        """The provider's interruption bands, or None when the catalog carries none."""
        with self._lock:
            if provider not in self._bands:
                name = provider + BANDS_SUFFIX
                data = self._read(name)
                self._bands[provider] = (
                    None
                    if data is None
                    else BandTable(read_bands(data, source=f"{self.where}: {name}"))
                )
            return self._bands[provider]


def zip_reader(data: bytes, manifest: dict[str, Any] | None) -> Reader:
    """Members of a catalog zip by name, held to the manifest's `sides` sha256 when it has one."""

    def read(name: str) -> bytes | None:
        import io
        import zipfile

        with zipfile.ZipFile(io.BytesIO(data)) as z:
            try:
                info = z.getinfo(name)
            except KeyError:
                return None
            if info.file_size > MAX_SIDE_BYTES:
                raise CatalogIntegrityError(f"catalog member {name} is too large")
            content = z.read(info)
        expected = (((manifest or {}).get("sides") or {}).get(name) or {}).get("sha256")
        if expected and sha256(content) != expected:
            raise CatalogIntegrityError(f"catalog member {name} does not match its manifest")
        return content

    return read


def folder_reader(folder: Path) -> Reader:
    def read(name: str) -> bytes | None:
        f = folder / name
        return f.read_bytes() if f.is_file() else None

    return read


def bundled_reader() -> Reader:
    from importlib import resources

    data = resources.files("gpuhunt.resources").joinpath("catalog.zip").read_bytes()
    archive = read_archive(data, source="bundled catalog.zip")
    return zip_reader(data, archive.manifest)


def _nothing(name: str) -> bytes | None:
    return None


def reader_of(loaded: Loaded, cache_dir: Path | None) -> Reader:
    """Where `loaded`'s side files are: see the module docstring. A catalog read from a
    per-provider layout has one zip per provider, each with its own files."""
    if loaded.source == "bundled":
        return bundled_reader()
    if loaded.source == "directory":  # a published layout in a folder, or plain CSVs
        folder = Path(loaded.url)
        zipped = folder / loaded.version / "catalog.zip"
        if loaded.version and zipped.is_file():
            return zip_reader(zipped.read_bytes(), loaded.manifest)
        return folder_reader(folder)
    if loaded.source not in ("network", "disk-cache"):
        return _nothing
    cache = DiskCache(loaded.url, cache_dir)
    data = cache.get("archive", loaded.version, "catalog.zip") if loaded.version else None
    return zip_reader(data, loaded.manifest) if data else _nothing


_ATTACH = threading.Lock()


def sides_of(loaded: Loaded, cache_dir: Path | None) -> Sides:
    """The loaded catalog's `Sides`, made on first use and kept on its table (so the
    `max_interruption` mask, which sees only the table, finds the same bands)."""
    table = loaded.table
    found = table.__dict__.get("sides")
    if found is None:
        with _ATTACH:
            found = table.__dict__.get("sides")
            if found is None:
                found = Sides(reader_of(loaded, cache_dir), where=loaded.source)
                table.__dict__["sides"] = found
    assert isinstance(found, Sides)
    return found
