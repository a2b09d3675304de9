"""Where a catalog comes from: a published URL (either layout), a local folder, or the snapshot
bundled in the package. Each returns raw CSV text per provider plus where it came from; building
the query structures is `load.tables`' job.

Published layouts under a base URL (see docs/catalog-format.md):
- archive: `{base}/version` names V; `{base}/V/catalog.zip` holds every `{provider}.csv`, its
  `{provider}.columns` (the parsed table, see `formats.columns`) and a `manifest.json` with their sha256;
- per provider (what gpuhunt 0.1.x reads): `{base}/{provider}/version` and
  `{base}/{provider}/V/catalog.zip` holding `{provider}.csv`.
The loader tries the archive layout first and falls back to the per-provider one when the base
has no `version` object.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import requests

from gpuhunt._internal.errors import CatalogDownloadError, CatalogError, CatalogIntegrityError
from gpuhunt._internal.formats.archive import Archive, read_archive
from gpuhunt._internal.load import threads, transport
from gpuhunt._internal.load.cache import DiskCache

logger = logging.getLogger(__name__)

_VERSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass
class RawCatalog:
    csvs: dict[str, bytes]  # provider -> CSV
    version: str
    source: str  # "network", "disk-cache", "directory", "bundled"
    url: str
    manifest: dict[str, Any] | None = None
    versions: dict[str, str] = field(default_factory=dict)  # per-provider layout: each version
    problems: list[str] = field(default_factory=list)  # why providers could not be loaded
    failed: list[str] = field(default_factory=list)  # those providers' names
    columns: dict[str, bytes] = field(default_factory=dict)  # provider -> column file
    sha256: dict[str, str] = field(default_factory=dict)  # provider -> its CSV's, if known

    @classmethod
    def of(cls, archive: Archive, version: str, source: str, url: str) -> RawCatalog:
        return cls(
            archive.csvs,
            version,
            source,
            url,
            archive.manifest,
            columns=archive.columns,
            sha256=archive.sha256,
        )

    def take(self, provider: str, archive: Archive) -> None:
        """Add `provider`'s CSV from `archive`, with its column file and hash if it has them."""
        self.csvs[provider] = archive.csvs[provider]
        if provider in archive.columns:
            self.columns[provider] = archive.columns[provider]
        if provider in archive.sha256:
            self.sha256[provider] = archive.sha256[provider]


class NotFound(CatalogDownloadError):
    pass


class Unchanged(Exception):
    """The latest published version is the one already loaded."""


def is_version(text: str) -> bool:
    """Whether `text` is a well-formed catalog version name, such as 20261129-1."""
    return _VERSION.match(text) is not None


def _check_version(text: str, where: str) -> str:
    v = text.strip()
    if not is_version(v):
        raise CatalogIntegrityError(f"{where}: not a catalog version: {v[:40]!r}")
    return v


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
        raise CatalogError(
            f"Unsupported catalog URL scheme {parts.scheme!r} in {transport.safe_url(url)}"
        )
    if allow_http:
        return
    host = parts.hostname or ""
    try:
        if ipaddress.ip_address(host).is_loopback:
            return
    except ValueError:
        if host == "localhost":
            return
    raise CatalogError(
        f"Refusing plain-http catalog URL {transport.safe_url(url)}: use https, a loopback "
        "address, or set GPUHUNT_ALLOW_HTTP=1"
    )


MAX_SMALL_OBJECT = 4096  # a `version` object is a line of text
_READ_CHUNK = 64 * 1024


class Fetcher:
    """Reads objects under a base URL or folder, with timeouts and bounded retries.

    Every download is bounded in time and size: each request's timeouts are cut to what is left
    before `deadline` (a `time.monotonic()` value, or None), the body is streamed and checked
    against the deadline between reads (a server dripping one byte at a time cannot stretch a
    load), and a body larger than `max_bytes` is refused from its Content-Length or as soon as
    that many bytes arrived, before it is held whole in memory.
    """

    def __init__(
        self,
        base: str,
        timeout: tuple[float, float],
        retries: int,
        *,
        allow_http: bool = False,
        deadline: float | None = None,
        max_bytes: int = 256 * 1024 * 1024,
    ) -> None:
        self.base = base.rstrip("/")
        check_url_allowed(self.base, allow_http=allow_http)
        self.local = local_path(self.base)
        self.timeout = timeout
        self.deadline = deadline
        self.max_bytes = max_bytes
        self.http = (
            transport.new_session(retries=retries, backoff_factor=0.3)
            if self.local is None
            else None
        )
        self.downloads = 0  # objects fetched over the network, for tests and stats

    def _left(self, where: str) -> float | None:
        if self.deadline is None:
            return None
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise CatalogDownloadError(f"{where}: timed out (the load's time limit passed)")
        return left

    def get(self, path: str, *, max_bytes: int | None = None) -> bytes:
        where = f"{transport.safe_url(self.base)}/{path}"
        limit = self.max_bytes if max_bytes is None else max_bytes
        if self.local is not None:
            try:
                f = (self.local / path).open("rb")
            except FileNotFoundError:
                raise NotFound(f"{where}: not found") from None
            except OSError as e:
                raise CatalogDownloadError(f"{where}: {e.strerror}") from None
            with f:
                data = f.read(limit + 1)
            if len(data) > limit:
                raise CatalogIntegrityError(f"{where}: larger than {limit} bytes")
            return data
        assert self.http is not None
        self.downloads += 1
        left = self._left(where)
        connect, read = self.timeout
        if left is not None:
            connect, read = min(connect, left), min(read, left)
        try:
            r = self.http.get(f"{self.base}/{path}", timeout=(connect, read), stream=True)
        except requests.Timeout:
            raise CatalogDownloadError(f"{where}: timed out") from None
        except requests.RequestException as e:
            raise CatalogDownloadError(f"{where}: {type(e).__name__}") from None
        with r:
            if r.status_code in (403, 404):  # S3 answers 403 for a missing key without list rights
                raise NotFound(f"{where}: HTTP {r.status_code}")
            if r.status_code != 200:
                raise CatalogDownloadError(f"{where}: HTTP {r.status_code}")
            expected = r.headers.get("Content-Length", "")
            # With a Content-Encoding the header counts encoded bytes, not what is read here.
            encoded = r.headers.get("Content-Encoding", "identity").lower() != "identity"
            if expected.isdigit() and int(expected) > limit:
                raise CatalogIntegrityError(
                    f"{where}: {int(expected)} bytes announced, over the {limit}-byte cap"
                )
            data = self._read_body(r, where, limit)
        if not encoded and expected.isdigit() and int(expected) != len(data):
            raise CatalogIntegrityError(f"{where}: truncated download")
        return data

    def _read_body(self, r: requests.Response, where: str, limit: int) -> bytes:
        chunks: list[bytes] = []
        size = 0
        try:
            while True:
                self._left(where)
                # read1: whatever has arrived (at most a chunk), so a slow drip still comes
                # back here between bytes and the deadline is checked.
                chunk = r.raw.read1(_READ_CHUNK, decode_content=True)
                if not chunk:
                    break
                size += len(chunk)
                if size > limit:
                    raise CatalogIntegrityError(f"{where}: larger than the {limit}-byte cap")
                chunks.append(chunk)
        except CatalogError:
            raise
        except Exception as e:  # noqa: BLE001 - socket, protocol and decoding errors alike
            if "timed out" in str(e).lower() or isinstance(e, TimeoutError):
                raise CatalogDownloadError(f"{where}: timed out") from None
            raise CatalogIntegrityError(
                f"{where}: truncated download ({type(e).__name__})"
            ) from None
        return b"".join(chunks)


def fetch(
    base: str,
    providers: list[str],
    *,
    version: str | None,
    cache: DiskCache | None,
    timeout: tuple[float, float],
    retries: int,
    on_fetcher: Callable[[Fetcher], None] | None = None,
    current: str | None = None,
    allow_http: bool = False,
    deadline: float | None = None,
    max_bytes: int = 256 * 1024 * 1024,
) -> RawCatalog:
    """The catalog published under `base` (latest, or `version`). Verified archives are stored
    in `cache`; a pinned version already in the cache is not downloaded again. Raises
    `Unchanged` when the latest archive version is `current` (nothing to download or parse)."""
    fetcher = Fetcher(
        base, timeout, retries, allow_http=allow_http, deadline=deadline, max_bytes=max_bytes
    )
    if on_fetcher:
        on_fetcher(fetcher)
    source = "directory" if fetcher.local is not None else "network"
    cache = cache if fetcher.local is None else None
    try:
        v = version or _check_version(
            fetcher.get("version", max_bytes=MAX_SMALL_OBJECT).decode("utf-8", "replace"),
            f"{base}/version",
        )
    except NotFound:
        v = None
    if v is not None and v == current:
        if cache:
            _checked(cache, {"layout": "archive", "version": v})
        raise Unchanged(v)
    if v is not None:
        cached = cache.get("archive", v, "catalog.zip") if cache else None
        if cached is not None:
            try:
                archive = read_archive(cached, source=f"cached {v}/catalog.zip")
                if cache and version is None:
                    _checked(cache, {"layout": "archive", "version": v})
                return RawCatalog.of(archive, v, "disk-cache", base)
            except CatalogIntegrityError:
                pass
        try:
            data = fetcher.get(f"{v}/catalog.zip")
        except NotFound:
            if version is None:
                raise
            data = None  # a pinned version may exist only in the per-provider layout
        if data is not None:
            archive = read_archive(data, source=f"{base}/{v}/catalog.zip")
            # The pointer names only what is on the disk: if the archive could not be
            # written (a full disk), it keeps naming the previous, intact version. A pinned
            # version is not the latest, so it moves no pointer.
            if cache and cache.put(data, "archive", v, "catalog.zip") and version is None:
                _checked(cache, {"layout": "archive", "version": v})
            return RawCatalog.of(archive, v, source, base)
    return fetch_per_provider(fetcher, providers, version, cache, source)


def fetch_per_provider(
    fetcher: Fetcher,
    providers: list[str],
    version: str | None,
    cache: DiskCache | None,
    source: str,
) -> RawCatalog:
    def one(provider: str) -> tuple[str, Archive]:
        v = version or _check_version(
            fetcher.get(f"{provider}/version", max_bytes=MAX_SMALL_OBJECT).decode(
                "utf-8", "replace"
            ),
            f"{provider}/version",
        )
        cached = cache.get(provider, v, "catalog.zip") if cache else None
        if cached is not None:
            try:
                archive = read_archive(cached, source=f"cached {provider}/{v}")
                if provider in archive.csvs:
                    return v, archive
            except CatalogIntegrityError:
                pass
        data = fetcher.get(f"{provider}/{v}/catalog.zip")
        archive = read_archive(data, source=f"{provider}/{v}/catalog.zip")
        if provider not in archive.csvs:
            raise CatalogIntegrityError(f"{provider}/{v}/catalog.zip has no {provider}.csv")
        if cache:
            cache.put(data, provider, v, "catalog.zip")
        return v, archive

    # Daemon threads: a download abandoned at the load's deadline never holds the process up.
    with threads.DaemonPool(8, "gpuhunt-fetch") as pool:
        futures = {p: pool.submit(one, p) for p in providers}
    raw = RawCatalog({}, version or "", source, fetcher.base)
    first_error: Exception | None = None
    for p, fut in futures.items():
        try:
            raw.versions[p], archive = fut.result()
            raw.take(p, archive)
        except NotFound as e:
            if version is not None:
                raise CatalogDownloadError(
                    f"Catalog version {version} is not published for {p}"
                ) from e
            logger.debug("No %s catalog under %s", p, transport.safe_url(fetcher.base))
        except CatalogError as e:
            if version is not None:
                raise
            logger.warning("Could not load the %s catalog: %s", p, e)
            raw.problems.append(f"{p}: {e}")
            raw.failed.append(p)
            first_error = first_error or e
    if not raw.csvs:
        raise first_error or NotFound(
            f"No catalog published under {transport.safe_url(fetcher.base)}"
        )
    if cache and version is None:
        # Name only archives on the disk; a provider whose new one could not be written keeps
        # the version the pointer named before, if that one is still there.
        before = cache.get_json("latest.json")
        named = before.get("versions") if isinstance(before, dict) else None
        versions = {
            str(p): str(v)
            for p, v in (named if isinstance(named, dict) else {}).items()
            if cache.exists(str(p), str(v), "catalog.zip")
        }
        versions.update(
            {p: v for p, v in raw.versions.items() if cache.exists(p, v, "catalog.zip")}
        )
        if versions == raw.versions:
            _checked(cache, {"layout": "per-provider", "versions": versions})
        elif versions:  # on disk, but not what the network named: no fresh check to record
            cache.put_json({"layout": "per-provider", "versions": versions}, "latest.json")
    raw.version = version or max(raw.versions.values())
    return raw


def _checked(cache: DiskCache, latest: dict[str, Any]) -> None:
    """Record in the disk cache which catalog is the latest, and that the network said so now
    (so that other processes may use it without asking again, see `fresh_in_cache`)."""
    cache.put_json({**latest, "checked_at": time.time()}, "latest.json")


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
        raw = RawCatalog({}, "", "disk-cache", base, None, versions)
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


def bundled() -> RawCatalog:
    """The snapshot shipped inside the package."""
    try:
        data = resources.files("gpuhunt.resources").joinpath("catalog.zip").read_bytes()
    except (FileNotFoundError, ModuleNotFoundError, OSError) as e:
        raise CatalogError("The bundled catalog snapshot is missing from this installation") from e
    archive = read_archive(data, source="bundled catalog.zip")
    version = str((archive.manifest or {}).get("version", "bundled"))
    return RawCatalog.of(archive, version, "bundled", "bundled")


def snapshot_age_days(
    manifest: dict[str, Any] | None, now: dt.datetime | None = None
) -> int | None:
    """Age of the oldest recording a snapshot's providers came from."""
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
    return (today - min(dates)).days
