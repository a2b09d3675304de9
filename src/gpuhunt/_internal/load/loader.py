"""`Loader`: how a `Catalog` gets its offline offers and keeps them fresh - the loading order,
the fallbacks, the backoff after a failure, the reload in the background - and what it has
loaded. `Catalog` owns one and asks it for the current table; queries never take its lock.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import re
import threading
import time
from collections.abc import Callable

from gpuhunt._internal import backoff, registry
from gpuhunt._internal.errors import (
    CatalogDownloadError,
    CatalogError,
    DownloadStopped,
    GPUHuntError,
)
from gpuhunt._internal.load import disk, memory, sources, streamed, tables, unreachable, warm
from gpuhunt._internal.load.cache import DiskCache
from gpuhunt._internal.load.context import Context
from gpuhunt._internal.load.download import BACKGROUND_FACTOR, Download, Downloads
from gpuhunt._internal.load.loaded import Loaded as Loaded  # importable from here, as before
from gpuhunt._internal.load.settings import Settings
from gpuhunt._internal.query import answers
from gpuhunt._internal.query.table import Table

# The catalog's records, so that its log messages keep the logger name they always had.
logger = logging.getLogger("gpuhunt._internal.catalog")

RETRY_AFTER_FAILURE = backoff.DEFAULT  # backoff between failed reloads: first, cap
# Seconds a load that has a fallback (the disk cache, the bundled snapshot, a loaded catalog)
# waits for the catalog server's first answer before it falls back: a silent server costs a
# CLI run this much, not the whole load limit. A server that answers gets the whole limit.
FIRST_ANSWER_TIMEOUT = 3.0


class Loader:
    """The catalog's loading policy and the state it keeps; see `Catalog.load`."""

    def __init__(
        self,
        url: str,
        settings: Settings,
        *,
        reload_interval: float,
        auto_reload: bool,
        timeout: tuple[float, float],
        retries: int,
        load_timeout: float,
        context: Context | None = None,
    ) -> None:
        # The catalog's settings, transport, clock and threads (`load.context`).
        self._context = context if context is not None else Context(settings=settings)
        self._clock = self._context.clock
        self.url = url
        self.reload_interval = reload_interval
        self.auto_reload = auto_reload
        self._settings = settings
        self._timeout = timeout
        self._retries = retries
        self._load_timeout = load_timeout
        self.loaded: Loaded | None = None
        self._lock = threading.Lock()  # one load at a time; queries never take it
        # The latest catalog's download, which a bounded load waits for only so long.
        self.download = self._downloads()
        self._reload_lock = threading.Lock()  # guards `reloading` only
        self.reloading = False
        self.last_error: str | None = None
        self.last_attempt: dt.datetime | None = None
        self._failures = 0
        self.retry_at = 0.0
        self.downloads = 0  # requests that fetched a body, over the catalog's life
        # Set when the latest pointer went back to an older version; cleared by a newer one.
        self.went_back: str | None = None
        self._warned_back: set[tuple[str, str]] = set()

    def after_fork(self) -> None:
        """In a forked child: no load, reload or download of the parent's is running here."""
        self._lock = threading.Lock()
        self._reload_lock = threading.Lock()
        self.reloading = False
        self.download = self._downloads()
        if self.loaded is not None:
            self.loaded.table.after_fork()

    @property
    def load_timeout(self) -> float:
        return self._load_timeout

    def _downloads(self) -> Downloads:
        return Downloads(
            lambda deadline, answered: self._fetch(None, deadline, answered),
            self._adopt,
            clock=self._clock,
            start=self._context.threads.start,
            stopping=lambda: self._context.threads.stopping,
        )

    def load(self, version: str | None = None, refresh: bool = False) -> None:
        """`Catalog.load`: the network is asked unless it named the latest catalog (as the disk
        cache records) less than `load_checked_within` and `reload_interval` ago."""
        trusted = self._settings.load_checked_within if version is None and not refresh else 0
        with self._lock:
            self._load(version, version is None, True, min(trusted, self.reload_interval))

    def _load(
        self,
        version: str | None,
        may_fall_back: bool,
        refresh: bool = False,
        fresh_for: float | None = None,
    ) -> None:
        try:
            self._load_once(version, may_fall_back, refresh, fresh_for)
        finally:
            # What the load freed (archives, CSV text, columns before combining) goes back to
            # the OS, now that nothing of it is referenced (`load.memory`).
            memory.release_free_memory()

    def _load_once(
        self, version: str | None, may_fall_back: bool, refresh: bool, fresh_for: float | None
    ) -> None:
        # `fresh_for`: how old a check the disk cache records may be to be trusted (None: as
        # old as `reload_interval`, unless `refresh`).
        self.last_attempt = dt.datetime.now(dt.timezone.utc)
        trusted = (0.0 if refresh else self.reload_interval) if fresh_for is None else fresh_for
        if version is None and trusted > 0 and self._from_fresh_cache(trusted):
            self._failures, self.retry_at, self.last_error = 0, 0.0, None
            return
        if version is None and not refresh and self.loaded is None and self._recently_silent():
            return
        try:
            if may_fall_back and self._bounded():
                raw = self.download.wait(self._load_timeout, answer_within=self._answer_within())
            elif self._bounded():
                # No fallback to go to: the download gets the longer, background budget.
                limit = self._load_timeout * BACKGROUND_FACTOR
                raw = self._fetch(version, self._clock() + limit)
            else:
                raw = self._fetch(version)
        except sources.Unchanged:
            self._unchanged()
            return
        except Exception as e:  # anything from untrusted bytes is a refusal
            # A download `Catalog.close()` stopped says nothing about the server: no backoff,
            # and nothing written for other processes to avoid it.
            closing = isinstance(e, DownloadStopped)
            if closing:
                self.last_error = str(e)
            else:
                self._note_failure(e)
            if may_fall_back and isinstance(e, CatalogDownloadError) and not closing:
                self._remember_silence(e)
            if not may_fall_back:
                if isinstance(e, GPUHuntError):
                    raise
                raise CatalogError(f"Could not load catalog version {version}: {e}") from e
            if self.loaded is not None:
                logger.warning(
                    "Catalog reload failed, serving version %s still: %s", self.loaded.version, e
                )
                return
            self._install(self._last_resort(e), degraded=True)
            return
        self._succeeded(raw)

    def _unchanged(self) -> None:
        loaded = self.loaded
        if loaded is not None:  # keep it, fresh again
            self.loaded = dataclasses.replace(loaded, loaded_at=self._clock())
        self._failures, self.retry_at, self.last_error = 0, 0.0, None
        self._forget_silence()

    def _succeeded(self, raw: sources.RawCatalog) -> None:
        self._forget_silence()
        self._failures = 0
        self.retry_at = 0.0
        self.last_error = None if not raw.problems else "; ".join(raw.problems)
        self._note_went_back(raw)
        self._install(raw)
        self._tidy_cache(raw)

    def _note_went_back(self, raw: sources.RawCatalog) -> None:
        """A pointer going back (a rollback of a bad build, or a misconfigured publisher) is
        followed, as the publisher asked, but said once and kept in `status()`."""
        before = raw.went_back_from
        if before is None:
            self.went_back = None
            return
        self.went_back = f"the latest version pointer went back from {before} to {raw.version}"
        if (before, raw.version) not in self._warned_back:
            self._warned_back.add((before, raw.version))
            logger.warning("Catalog: %s; loading %s", self.went_back, raw.version)

    def _tidy_cache(self, raw: sources.RawCatalog) -> None:
        if raw.source in ("network", "disk-cache"):
            disk.tidy(self._disk_cache(raw.url), raw)

    def _bounded(self) -> bool:
        return self._load_timeout > 0 and not self._settings.catalog_dir

    def _answer_within(self) -> float | None:
        """How long to wait for the server's first answer: short when there is a fallback."""
        if self.loaded is not None or sources.has_bundled():
            return FIRST_ANSWER_TIMEOUT
        if sources.local_path(self.url) is None and self._disk_cache(self.url).exists(
            "latest.json"
        ):
            return FIRST_ANSWER_TIMEOUT
        return None

    # ------------------------------------------- failed checks remembered across processes

    def _shares_failures(self) -> bool:
        return not self._settings.catalog_dir and sources.local_path(self.url) is None

    def _recently_silent(self) -> bool:
        """If a check of this catalog URL (in this process or another) got no answer within
        the back-off window (`load.unreachable`): serve the fallback now, without asking, and
        set the next try for when the window ends."""
        if not self._shares_failures():
            return False
        record = unreachable.read(self._disk_cache(self.url))
        now = time.time()
        if record is None or not record.active(now):
            return False
        why = (
            f"not asked: the check {max(0, round(now - record.failed_at))}s ago got no answer "
            f"({record.error})"
        )
        self._install(self._last_resort(CatalogDownloadError(why)), degraded=True)
        self.last_error = why
        self._failures = record.failures
        self.retry_at = self._clock() + (record.retry_at - now)
        return True

    def _remember_silence(self, e: Exception) -> None:
        if not self._shares_failures():
            return
        # The next process reads this: "goes on in the background" is only true here.
        reason = re.sub(r";[^;]*in the background$", "", str(e))
        record = unreachable.note(self._disk_cache(self.url), reason, self.reload_interval)
        # Just written: its window runs from now, on this catalog's clock.
        self.retry_at = max(self.retry_at, self._clock() + (record.retry_at - record.failed_at))

    def _forget_silence(self) -> None:
        if self._shares_failures():
            unreachable.clear(self._disk_cache(self.url))

    def _adopt(self, job: Download) -> None:
        """A download every load gave up waiting for: install what it got for the next query."""
        try:
            with self._lock:
                if self.download.current is not job:  # a newer download started: it decides
                    return
                if isinstance(job.error, sources.Unchanged):
                    self._unchanged()
                elif job.raw is not None:
                    self._succeeded(job.raw)
                elif job.error is not None:
                    self.last_error = str(job.error)
        except Exception:  # a background thread must not die loudly; status keeps the error
            logger.exception("Installing the catalog downloaded in the background failed")

    def _fetch(
        self,
        version: str | None,
        deadline: float | None = None,
        on_answer: Callable[[], None] | None = None,
    ) -> sources.RawCatalog:
        if self._settings.catalog_dir:
            return sources.from_directory(self._settings.catalog_dir, registry.OFFLINE_PROVIDERS)
        # Imported here: it imports requests, which a load from the disk cache never uses.
        from gpuhunt._internal.load import fetch

        loaded = self.loaded
        fetchers: list[fetch.Fetcher] = []
        try:
            return fetch.fetch(
                self.url,
                registry.OFFLINE_PROVIDERS,
                version=version,
                cache=self._disk_cache(self.url),
                timeout=self._timeout,
                retries=self._retries,
                on_fetcher=fetchers.append,
                current=loaded.version
                if loaded is not None and not loaded.degraded and version is None
                else None,
                allow_http=self._settings.allow_http,
                deadline=deadline,
                max_bytes=self._settings.max_download_bytes,
                on_answer=on_answer,
                context=self._context,
            )
        finally:
            self.downloads += sum(f.downloads for f in fetchers)

    def _from_fresh_cache(self, max_age: float) -> bool:
        """Serve the latest catalog from the disk cache if the network named it less than
        `max_age` ago; the next reload is due when that check is `reload_interval` old."""
        if self._settings.catalog_dir or sources.local_path(self.url) is not None:
            return False
        cache = self._disk_cache(self.url)
        fresh = sources.fresh_in_cache(cache, max_age)
        if fresh is None:
            return False
        key, age = fresh
        loaded_at = self._clock() - age
        loaded = self.loaded
        if loaded is not None and not loaded.degraded and loaded.cache_key == key:
            self.loaded = dataclasses.replace(loaded, loaded_at=loaded_at, unchecked=True)
            return True
        found = warm.latest(cache, key, self.url, loaded_at)
        if found is not None:  # what an earlier load derived from these very archives
            self.loaded = found
            return True
        raw = sources.from_cache(self.url, cache)
        if raw is None or sources.cache_key(raw) != key:
            return False
        self._install(raw, loaded_at=loaded_at)
        if self.loaded is not None:
            self.loaded = dataclasses.replace(self.loaded, unchecked=True)
        return True

    def _disk_cache(self, url: str) -> DiskCache:
        return DiskCache(url, self._settings.cache_dir)

    def _last_resort(self, error: Exception) -> sources.RawCatalog:
        return disk.last_resort(self.url, self._disk_cache(self.url), error)

    def _note_failure(self, e: Exception) -> None:
        self._failures += 1
        self.last_error = str(e)
        self.retry_at = backoff.retry_at(self._failures, self._clock, RETRY_AFTER_FAILURE)

    def _install(
        self, raw: sources.RawCatalog, degraded: bool = False, loaded_at: float | None = None
    ) -> None:
        parts: list[streamed.Shaped] = []
        previous = self.loaded.table if self.loaded is not None else None
        # Tables parsed from CSVs are kept on disk, so the next process reading the same CSV
        # (a restart, every CLI run) loads them as column files instead of parsing again.
        cache = self._disk_cache(raw.url) if raw.source in ("network", "disk-cache") else None
        found = warm.read_for(cache, raw) if cache is not None and not degraded else None
        if found is not None:  # what an earlier load derived from these very archives
            self._serve(found.table, raw, degraded, loaded_at)
            return
        cached: set[str] = set()
        side = tables.SideWork(self._context.threads)
        try:
            # The bundled snapshot also holds online providers' offers, which stand in for a
            # live provider that does not answer (`Catalog.query`); a published catalog has none.
            stand_ins = [p for p in registry.ONLINE_PROVIDERS if p in raw.csvs]
            for provider in registry.OFFLINE_PROVIDERS + stand_ins:
                if provider in raw.csvs:
                    try:
                        parts.append(tables.read_shaped(raw, provider, cache, cached, side))
                        continue
                    except Exception as e:  # noqa: BLE001 - a refused object, never an escape
                        logger.warning("Refusing the %s catalog: %s", provider, e)
                        raw.problems.append(f"{provider}: {e}")
                        self.last_error = "; ".join(raw.problems)
                    finally:  # built or refused, its bytes are not needed any more
                        tables.release(raw, provider)
                if (provider in raw.csvs or provider in raw.failed) and previous is not None:
                    # Its new object is broken: keep serving what we had rather than lose it.
                    kept = previous.part(provider)
                    if kept is not None:
                        parts.append(streamed.shaped(kept))
            if cache is not None:
                cache.prune(tables.PARSED, cached)
            # Built off to the side, then one assignment: queries see the old catalog or the new
            # one, never a mix, and never wait for the build.
            table = tables.combine_shaped(parts)
            del parts
            # So that the first query after a load builds offers as fast as later ones:
            answers.prepare(table)
            if cache is not None and not degraded and not raw.problems and not raw.failed:
                warm.keep(cache, raw, table, side)
        finally:
            side.finish()  # the cache writes are done when the load returns
        self._serve(table, raw, degraded, loaded_at)

    def _serve(
        self, table: Table, raw: sources.RawCatalog, degraded: bool, loaded_at: float | None
    ) -> None:
        self.loaded = Loaded(
            table=table,
            version=raw.version,
            source=raw.source,
            url=raw.url,
            loaded_at=self._clock() if loaded_at is None else loaded_at,
            loaded_wall=dt.datetime.now(dt.timezone.utc),
            manifest=raw.manifest,
            degraded=degraded,
            cache_key=None if degraded else sources.cache_key(raw),
        )

    def current(self) -> Loaded | None:
        loaded = self.loaded
        if not self.auto_reload:
            return loaded
        now = self._clock()
        if loaded is None:
            if now < self.retry_at:  # failed moments ago; the caller gets the last resort's data
                return self.loaded
            with self._lock:
                if self.loaded is None and self._clock() >= self.retry_at:
                    self._load(None, may_fall_back=True)
            return self.loaded
        stale = loaded.degraded or now - loaded.loaded_at > self.reload_interval
        if stale and now >= self.retry_at and not self.reloading:
            self._start_background_reload()
        return loaded

    def _start_background_reload(self) -> None:
        # Its own small lock: a query must not wait on `_lock`, which a load holds throughout.
        with self._reload_lock:
            if self.reloading:
                return
            self.reloading = True

        def run() -> None:
            try:
                with self._lock:
                    loaded = self.loaded
                    if (
                        loaded is None
                        or loaded.degraded
                        or self._clock() - loaded.loaded_at > self.reload_interval
                    ):
                        self._load(None, may_fall_back=True)
            except Exception:  # never let a reload thread die loudly; the status keeps the error
                logger.exception("Catalog reload failed")
            finally:
                self.reloading = False

        try:
            self._context.threads.start(run, "gpuhunt-reload")
        except BaseException:
            self.reloading = False
            raise
