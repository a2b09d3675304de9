"""Downloading a published catalog: the network half of loading, kept apart from the local
sources (`load.sources`) because it is the only half that must bound time, size and retries and
that knows how the nightly build lays a catalog out under a base URL.

Published layouts under a base URL (see docs/catalog-format.md):
- archive: `{base}/version` names V; `{base}/V/catalog.zip` holds every `{provider}.csv`, its
  `{provider}.columns` (the parsed table, see `formats.columns`) and a `manifest.json` with
  their sha256;
- per provider (what gpuhunt 0.1.x reads): `{base}/{provider}/version` and
  `{base}/{provider}/V/catalog.zip` holding `{provider}.csv`.
The loader tries the archive layout first and falls back to the per-provider one when the base
has no `version` object. A `file://` base or a plain path is read the same way, so a published
folder on disk goes through the same checks as the bucket it mirrors.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from typing import Any

import requests

from gpuhunt._internal.errors import (
    CatalogDownloadError,
    CatalogError,
    CatalogIntegrityError,
    DownloadStopped,
    UnknownCatalogError,
)
from gpuhunt._internal.formats.archive import Archive, Members, read_archive
from gpuhunt._internal.load import threads, transport
from gpuhunt._internal.load.cache import DiskCache
from gpuhunt._internal.load.context import Context
from gpuhunt._internal.load.sources import (
    NotFound,
    RawCatalog,
    Unchanged,
    check_url_allowed,
    is_version,
    local_path,
)

# The records keep the logger name they had before the download code left `sources`, so that
# logging set up for them still applies.
logger = logging.getLogger("gpuhunt._internal.load.sources")

MAX_SMALL_OBJECT = 4096  # a `version` object is a line of text
_READ_CHUNK = 64 * 1024


class Fetcher:
    """Reads objects under a base URL or folder, with timeouts and bounded retries.

    Every download is bounded in time and size: each request's timeouts are cut to what is left
    before `deadline` (a value of the context's clock, or None), the body is streamed and checked
    against the deadline between reads (a server dripping one byte at a time cannot stretch a
    load), and a body larger than `max_bytes` is refused from its Content-Length or as soon as
    that many bytes arrived, before it is held whole in memory.

    Its session, clock and stop signal come from `context` (the catalog's: its transport, its
    timeouts, `Catalog.close()` stopping a download between reads); default: a context of the
    default settings.
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
        on_answer: Callable[[], None] | None = None,
        context: Context | None = None,
    ) -> None:
        self.context = context = context if context is not None else Context()
        self.base = base.rstrip("/")
        self.on_answer = on_answer  # called when a request gets an answer (any status)
        check_url_allowed(self.base, allow_http=allow_http)
        self.local = local_path(self.base)
        self.timeout = timeout
        self.deadline = deadline
        self.max_bytes = max_bytes
        self.http = (
            # A 429/503 the session retries is an answer too (`Downloads.wait`'s first-answer
            # window must not expire while it sleeps on `Retry-After`).
            context.new_session(retries=retries, backoff_factor=0.3, on_response=on_answer)
            if self.local is None
            else None
        )
        if self.http is not None and hasattr(self.http, "hop_check"):
            # Every hop of a redirect meets the rule the first URL met (not only the first).
            self.http.hop_check = lambda url: _hop_allowed(url, allow_http)
        self.downloads = 0  # objects fetched over the network, for tests and stats
        # The stop signal of the work running now: a `close()` that begins after this download
        # started stops it; one that began before does not (`threads.Owner.close`).
        self._stopping = context.threads.stopping

    def _left(self, where: str) -> float | None:
        if self._stopping.is_set():
            raise DownloadStopped(f"{where}: stopped (the catalog was closed)")
        if self.deadline is None:
            return None
        left = self.deadline - self.context.clock()
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
            if self.on_answer is not None:
                self.on_answer()
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
        except requests.Timeout as e:
            raise CatalogDownloadError(f"{where}: timed out", request=e.request) from None
        except transport.RedirectRefused as e:
            raise CatalogIntegrityError(f"{where}: {e}") from None
        except requests.RequestException as e:
            raise CatalogDownloadError(f"{where}: {type(e).__name__}", request=e.request) from None
        if self.on_answer is not None:
            self.on_answer()
        with r:
            if r.status_code in (403, 404):  # S3 answers 403 for a missing key without list rights
                raise NotFound(f"{where}: HTTP {r.status_code}", response=r)
            if r.status_code != 200:
                raise CatalogDownloadError(f"{where}: HTTP {r.status_code}", response=r)
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


def _hop_allowed(url: str, allow_http: bool) -> None:
    try:
        check_url_allowed(url, allow_http=allow_http)
    except CatalogError as e:
        raise transport.RedirectRefused(f"redirect refused: {e}") from None


def _check_version(text: str, where: str) -> str:
    v = text.strip()
    if not is_version(v):
        raise CatalogIntegrityError(f"{where}: not a catalog version: {v[:40]!r}")
    return v


def _same_version(archive: Archive, v: str, where: str) -> Archive:
    """`archive`, if its manifest names the version its pointer named (or names none, as
    archives from before manifests carried it); else refused, as `gpuhunt catalog verify`
    refuses it: an archive served as another version would be cached and trusted as that."""
    named = (archive.manifest or {}).get("version")
    if named is not None and str(named) != v:
        raise CatalogIntegrityError(
            f"{where}: manifest names version {str(named)[:40]!r}, not {v!r}"
        )
    return archive


def version_key(v: str) -> list[tuple[int, int | str]]:
    """Orders version names as numbers where they have digits ("v10" after "v9")."""
    return [(0, int(t)) if t.isdigit() else (1, t) for t in re.split(r"(\d+)", v) if t]


def _went_back(cache: DiskCache | None, current: str | None, v: str) -> str | None:
    """The version the latest pointer named before, if `v` is older than it."""
    before = current
    if before is None and cache is not None:
        latest = cache.get_json("latest.json")
        if isinstance(latest, dict) and latest.get("layout") == "archive":
            before = str(latest.get("version"))
    if before is not None and is_version(before) and version_key(v) < version_key(before):
        return before
    return None


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
    on_answer: Callable[[], None] | None = None,
    context: Context | None = None,
) -> RawCatalog:
    """The catalog published under `base` (latest, or `version`). Verified archives are stored
    in `cache`; a pinned version already in the cache is not downloaded again. Raises
    `Unchanged` when the latest archive version is `current` (nothing to download or parse).
    `on_answer` is called whenever the server answers a request (see `Downloads.wait`)."""
    fetcher = Fetcher(
        base,
        timeout,
        retries,
        allow_http=allow_http,
        deadline=deadline,
        max_bytes=max_bytes,
        on_answer=on_answer,
        context=context,
    )
    if on_fetcher:
        on_fetcher(fetcher)
    if fetcher.local is not None and not fetcher.local.is_dir():
        # A path the user gave that cannot be used is their input to fix (exit 2), not a
        # failure of a server.
        what = "a file, not a folder" if fetcher.local.exists() else "not there"
        raise UnknownCatalogError(f"The catalog folder {fetcher.local} is {what}")
    source = "directory" if fetcher.local is not None else "network"
    cache = cache if fetcher.local is None else None
    try:
        v = version or _check_version(
            fetcher.get("version", max_bytes=MAX_SMALL_OBJECT).decode("utf-8", "replace"),
            f"{transport.safe_url(base)}/version",
        )
    except NotFound:
        v = None
    if v is not None and v == current:
        if cache:
            _checked(cache, {"layout": "archive", "version": v})
        raise Unchanged(v)
    if v is not None:
        back = _went_back(cache, current, v) if version is None else None
        cached = cache.get("archive", v, "catalog.zip") if cache else None
        if cached is not None:
            try:
                archive = _same_version(
                    read_archive(cached, source=f"cached {v}/catalog.zip"), v, f"cached {v}"
                )
                if cache and version is None:
                    _checked(cache, {"layout": "archive", "version": v})
                return RawCatalog.of(archive, v, "disk-cache", base, went_back_from=back)
            except CatalogIntegrityError:
                pass
        try:
            data = fetcher.get(f"{v}/catalog.zip")
        except NotFound:
            if version is None:
                raise
            data = None  # a pinned version may exist only in the per-provider layout
        if data is not None:
            where = f"{transport.safe_url(base)}/{v}/catalog.zip"
            archive = _same_version(read_archive(data, source=where), v, where)
            # The pointer names only what is on the disk: if the archive could not be
            # written (a full disk), it keeps naming the previous, intact version. A pinned
            # version is not the latest, so it moves no pointer.
            if cache and cache.put(data, "archive", v, "catalog.zip") and version is None:
                _checked(cache, {"layout": "archive", "version": v})
            return RawCatalog.of(archive, v, source, base, went_back_from=back)
    return fetch_per_provider(fetcher, providers, version, cache, source)


def fetch_per_provider(
    fetcher: Fetcher,
    providers: list[str],
    version: str | None,
    cache: DiskCache | None,
    source: str,
) -> RawCatalog:
    def one(provider: str) -> tuple[str, bytes, bool]:
        """The provider's version, its archive's bytes, and whether the disk cache had them."""
        v = version or _check_version(
            fetcher.get(f"{provider}/version", max_bytes=MAX_SMALL_OBJECT).decode(
                "utf-8", "replace"
            ),
            f"{provider}/version",
        )
        cached = cache.get(provider, v, "catalog.zip") if cache else None
        if cached is not None:
            return v, cached, True
        try:
            return v, fetcher.get(f"{provider}/{v}/catalog.zip"), False
        except NotFound:
            if version is not None:
                raise
            # The pointer was published before its archive (or the archive was removed): the
            # provider is published, and broken for now - a failure, so that the loaded
            # catalog keeps its previous offers, not "no such provider", which would drop it.
            raise CatalogDownloadError(
                f"{provider}/version names {v}, whose catalog.zip is not there"
            ) from None

    def opened(provider: str, v: str, data: bytes, from_cache: bool) -> Archive:
        """The archive read, on this thread: what it expands to (the CSVs, the column files)
        is allocated in one thread's malloc arena instead of one per download thread. glibc's
        `malloc_trim` gives back the free memory inside an arena but not the free top of a
        thread's arena, so each download thread that had expanded an archive kept up to
        several megabytes of it resident after the load (17 MB at 180,000 offers)."""
        if from_cache:
            try:
                archive = read_archive(data, source=f"cached {provider}/{v}")
                if provider in archive.csvs:
                    return archive
            except CatalogIntegrityError:
                pass
            data = fetcher.get(f"{provider}/{v}/catalog.zip")
        archive = read_archive(data, source=f"{provider}/{v}/catalog.zip")
        if provider not in archive.csvs:
            raise CatalogIntegrityError(f"{provider}/{v}/catalog.zip has no {provider}.csv")
        if cache:
            cache.put(data, provider, v, "catalog.zip")
        return archive

    # Daemon threads: a download abandoned at the load's deadline never holds the process up.
    with threads.DaemonPool(8, "gpuhunt-fetch", fetcher.context.threads) as pool:
        futures = {p: pool.submit(one, p) for p in providers}
    raw = RawCatalog(Members(), version or "", source, fetcher.base)
    first_error: Exception | None = None
    for p, fut in futures.items():
        try:
            v, data, from_cache = fut.result()
            archive = opened(p, v, data, from_cache)
            raw.versions[p] = v
            raw.take(p, archive)
        except NotFound as e:
            if version is not None:
                raise CatalogDownloadError(
                    f"Catalog version {version} is not published for {p}"
                ) from e
            logger.debug("No %s catalog under %s", p, transport.safe_url(fetcher.base))
        except DownloadStopped:
            raise  # `Catalog.close()` stopped the whole load, not one provider's download
        except CatalogError as e:
            if version is not None:
                raise
            kept = _previous(cache, p)
            if kept is not None:
                # A new process has no loaded table to keep serving as a running one does:
                # the version the cache served before stands in, and the reason is reported.
                raw.versions[p] = kept[0]
                raw.take(p, kept[1])
                reason = f"{e}; serving its cached version {kept[0]}"
                raw.problems.append(f"{p}: {reason}")
                logger.warning("Could not load the %s catalog: %s", p, reason)
                continue
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
        if versions == raw.versions and not raw.problems:
            _checked(cache, {"layout": "per-provider", "versions": versions})
        elif versions:  # on disk, but not what the network named: no fresh check to record
            cache.put_json({"layout": "per-provider", "versions": versions}, "latest.json")
    raw.version = version or max(raw.versions.values())
    return raw


def _previous(cache: DiskCache | None, provider: str) -> tuple[str, Archive] | None:
    """The version of `provider` the disk cache's latest pointer names and its archive, if that
    archive is there, intact and holds the provider's CSV; else None."""
    latest = cache.get_json("latest.json") if cache is not None else None
    named = latest.get("versions") if isinstance(latest, dict) else None
    v = named.get(provider) if isinstance(named, dict) else None
    if cache is None or not isinstance(v, str) or not is_version(v):
        return None
    data = cache.get(provider, v, "catalog.zip")
    if data is None:
        return None
    try:
        archive = read_archive(data, source=f"cached {provider}/{v}")
    except CatalogIntegrityError:
        return None
    return (v, archive) if provider in archive.csvs else None


def _checked(cache: DiskCache, latest: dict[str, Any]) -> None:
    """Record in the disk cache which catalog is the latest, and that the network said so now
    (so that other processes may use it without asking again, see `sources.fresh_in_cache`)."""
    cache.put_json({**latest, "checked_at": time.time()}, "latest.json")
