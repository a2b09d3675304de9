"""Where a catalog comes from when nothing has to be downloaded: the disk cache, a folder of
CSVs, the snapshot bundled in the package; and what every source, downloads included
(`load.fetch`), hands on: a `RawCatalog` of CSV bytes per provider plus where it came from.
Building the query structures is `load.tables`' job.

The rules a download shares with these sources live here too, so that a catalog is judged the
same however it arrived: which URLs may be read (`check_url_allowed`), what a version name looks
like, and how the disk cache records the latest catalog (`cache_key`, `fresh_in_cache`).
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import time
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from gpuhunt._internal.errors import CatalogError, GPUHuntError
from gpuhunt._internal.errors import NotFound as NotFound  # importable from here, as before
from gpuhunt._internal.errors import Unchanged as Unchanged
from gpuhunt._internal.formats.archive import Archive, Members, read_archive
from gpuhunt._internal.load.cache import DiskCache
from gpuhunt._internal.load.urls import safe_url

logger = logging.getLogger(__name__)

_VERSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass
class RawCatalog:
    # provider -> CSV; from an archive, a `Members` whose CSVs are inflated when read
    csvs: MutableMapping[str, bytes]
    version: str
    source: str  # "network", "disk-cache", "directory", "bundled"
    url: str
    manifest: dict[str, Any] | None = None
    versions: dict[str, str] = field(default_factory=dict)  # per-provider layout: each version
    problems: list[str] = field(default_factory=list)  # why providers could not be loaded
    failed: list[str] = field(default_factory=list)  # those providers' names
    # provider -> column file; from an archive, a `Members` inflated when read
    columns: MutableMapping[str, bytes] = field(default_factory=Members)
    sha256: dict[str, str] = field(default_factory=dict)  # provider -> its CSV's, if known
    # The latest pointer named a newer version before this one (`fetch._went_back`).
    went_back_from: str | None = None

    @classmethod
    def of(
        cls,
        archive: Archive,
        version: str,
        source: str,
        url: str,
        went_back_from: str | None = None,
    ) -> RawCatalog:
        return cls(
            archive.csvs,
            version,
            source,
            url,
            archive.manifest,
            columns=archive.columns,
            sha256=archive.sha256,
            went_back_from=went_back_from,
            problems=[f"{name}: not listed in the manifest; ignored" for name in archive.ignored],
        )

    def take(self, provider: str, archive: Archive) -> None:
        """Add `provider`'s CSV from `archive`, with its column file and hash if it has them
        (a CSV not inflated yet stays so)."""
        if isinstance(self.csvs, Members):
            archive.csvs.move_to(self.csvs, provider)
        else:
            self.csvs[provider] = archive.csvs[provider]
        if provider in archive.columns:
            if isinstance(self.columns, Members):
                archive.columns.move_to(self.columns, provider)
            else:
                self.columns[provider] = archive.columns[provider]
        if provider in archive.sha256:
            self.sha256[provider] = archive.sha256[provider]


def is_version(text: str) -> bool:
    """Whether `text` is a well-formed catalog version name, such as 20261129-1."""
    return _VERSION.match(text) is not None


def local_path(url: str) -> Path | None:
    """The folder a `file://` URL or a plain path names; None for a network URL."""
    if url.startswith("file://"):
        return Path(unquote(urlsplit(url).path))
    if "://" not in url:
        return Path(url)
    return None


def check_url_allowed(url: str, *, allow_http: bool = False) -> None:
    """Plain http only to loopback, or with `allow_http` (`GPUHUNT_ALLOW_HTTP=1`): a catalog
    decides what machines orchestrators buy, so it must not be open to tampering on the way."""
    parts = urlsplit(url)
    if parts.scheme in ("https", "file", ""):
        return
    if parts.scheme != "http":
        raise CatalogError(f"Unsupported catalog URL scheme {parts.scheme!r} in {safe_url(url)}")
    if allow_http:
        return
    import ipaddress  # here: only a plain-http URL needs it

    host = parts.hostname or ""
    try:
        if ipaddress.ip_address(host).is_loopback:
            return
    except ValueError:
        if host == "localhost":
            return
    raise CatalogError(
        f"Refusing plain-http catalog URL {safe_url(url)}: use https, a loopback "
        "address, or set GPUHUNT_ALLOW_HTTP=1"
    )


def cache_key(raw: RawCatalog) -> str:
    """What `fresh_in_cache` names the catalog `raw` by: its version(s)."""
    if raw.versions:
        return "per-provider " + ",".join(f"{p}={v}" for p, v in sorted(raw.versions.items()))
    return f"archive {raw.version}"


def fresh_in_cache(cache: DiskCache, max_age: float) -> tuple[str, float] | None:
    """If the network named the latest catalog less than `max_age` seconds ago (in this
    process or another), and the disk cache holds it: its `cache_key` and that age."""
    latest = cache.get_json("latest.json")
    if not isinstance(latest, dict):
        return None
    checked = latest.get("checked_at")
    if not isinstance(checked, (int, float)) or isinstance(checked, bool):
        return None
    age = time.time() - checked
    if not 0 <= age < max_age:  # a clock set back makes a negative age: ask the network
        return None
    if latest.get("layout") == "archive":
        return f"archive {latest.get('version')}", age
    versions = latest.get("versions")
    if latest.get("layout") != "per-provider" or not isinstance(versions, dict):
        return None
    return "per-provider " + ",".join(f"{p}={v}" for p, v in sorted(versions.items())), age


def from_cache(base: str, cache: DiskCache) -> RawCatalog | None:
    """The newest catalog this machine downloaded from `base`, for starting without network."""
    latest = cache.get_json("latest.json")
    if not isinstance(latest, dict):
        return None
    try:
        if latest.get("layout") == "archive":
            v = str(latest["version"])
            data = cache.get("archive", v, "catalog.zip")
            if data is None:
                return None
            archive = read_archive(data, source=f"cached {v}/catalog.zip")
            return RawCatalog.of(archive, v, "disk-cache", base)
        versions = {str(k): str(v) for k, v in dict(latest.get("versions") or {}).items()}
        raw = RawCatalog(Members(), "", "disk-cache", base, None, versions)
        for p, v in versions.items():
            data = cache.get(p, v, "catalog.zip")
            if data is not None:
                raw.take(p, read_archive(data, source=f"cached {p}/{v}"))
        if not raw.csvs:
            return None
        raw.version = max(versions.values())
        return raw
    except Exception as e:  # noqa: BLE001 - whatever is wrong with it, the cache is only unused
        logger.warning("Ignoring the disk cache: %s", e)
        return None


def from_directory(path: str, providers: list[str]) -> RawCatalog:
    """Plain `{provider}.csv` files in a folder (`GPUHUNT_CATALOG_DIR`)."""
    folder = Path(path)
    csvs = {}
    for p in providers:
        f = folder / f"{p}.csv"
        if f.is_file():
            csvs[p] = f.read_bytes()
    if not csvs:
        raise CatalogError(
            f"No provider CSVs ({', '.join(p + '.csv' for p in providers[:3])}, ...) in {folder}"
        )
    return RawCatalog(csvs, "local", "directory", str(folder))


def has_bundled() -> bool:
    """Whether the snapshot is in this installation (without reading it)."""
    # Imported here, as below: importlib.resources brings tempfile, shutil and zipfile, which
    # a load from the disk cache does without.
    from importlib import resources

    try:
        return resources.files("gpuhunt.resources").joinpath("catalog.zip").is_file()
    except (ModuleNotFoundError, OSError):
        return False


def bundled() -> RawCatalog:
    """The snapshot shipped inside the package."""
    from importlib import resources

    try:
        data = resources.files("gpuhunt.resources").joinpath("catalog.zip").read_bytes()
    except (FileNotFoundError, ModuleNotFoundError, OSError) as e:
        raise CatalogError("The bundled catalog snapshot is missing from this installation") from e
    archive = read_archive(data, source="bundled catalog.zip")
    version = str((archive.manifest or {}).get("version", "bundled"))
    return RawCatalog.of(archive, version, "bundled", "bundled")


def bundled_providers() -> set[str]:
    """The providers the bundled snapshot holds (none in an installation without it)."""
    try:
        manifest = bundled().manifest or {}
    except GPUHuntError:
        return set()
    return set(manifest.get("providers") or {})


def snapshot_age_days(
    manifest: dict[str, Any] | None, now: dt.datetime | None = None
) -> int | None:
    """Age of the oldest recording a snapshot's providers came from; None when not recorded, or
    recorded after today (a skewed clock: never 0 days)."""
    dates = []
    for entry in ((manifest or {}).get("providers") or {}).values():
        text = str((entry or {}).get("collected_at") or "")[:10]
        try:
            dates.append(dt.date.fromisoformat(text))
        except ValueError:
            continue
    if not dates:
        return None
    today = (now or dt.datetime.now(dt.timezone.utc)).date()
    days = (today - min(dates)).days
    if days < 0:  # recorded "in the future": a skewed clock, here or where it was built
        logger.warning(
            "The catalog says its data was recorded on %s, after today (%s): a skewed clock; "
            "its age is unknown",
            min(dates),
            today,
        )
        return None
    return days
