"""`Catalog`: loads the published catalog once, answers queries from memory, reloads behind
the queries' backs, and never lets a network problem turn into an exception or a hang for
callers that already have data.

Loading order for the latest catalog: the network (`GPUHUNT_CATALOG_URL`, default the public
bucket), then the newest catalog in the disk cache, then the snapshot bundled in the package
(with a warning giving its age). `GPUHUNT_CATALOG_DIR` (plain CSVs) skips all of that.
A pinned `load(version=...)` is fetched exactly or raises; it never falls back.

The environment is read once, into `Settings`, when the catalog is made. Online providers are
queried on the catalog's own thread pool, made on first use and shut down by `close()`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import threading
import time
from collections.abc import Container
from dataclasses import dataclass, field
from typing import Any

from gpuhunt._internal import freshness, registry
from gpuhunt._internal.accelerators import canonical_gpu_name, closest_gpu_names
from gpuhunt._internal.errors import CatalogError, GPUHuntError
from gpuhunt._internal.history.daily import PriceHistory
from gpuhunt._internal.load import sources, threads, transport
from gpuhunt._internal.load.cache import DiskCache
from gpuhunt._internal.load.download import BACKGROUND_FACTOR, Download, Downloads
from gpuhunt._internal.load.settings import Settings
from gpuhunt._internal.load.tables import PARSED, provider_table
from gpuhunt._internal.models import (
    AcceleratorVendor,
    CatalogItem,
    CPUArchitecture,
    LiveProvider,
    QueryFilter,
)
from gpuhunt._internal.query import online
from gpuhunt._internal.query.filters import make_filter
from gpuhunt._internal.query.offers import merge_online
from gpuhunt._internal.query.table import Table, combine

logger = logging.getLogger(__name__)

RETRY_AFTER_FAILURE = (30.0, 15 * 60.0)  # backoff between failed reloads: first, cap
ONLINE_WORKERS = 16  # threads querying online providers, per catalog


@dataclass(frozen=True)
class _Loaded:
    table: Table  # every offline provider's offers, by price
    version: str
    source: str
    url: str
    loaded_at: float  # monotonic
    loaded_wall: dt.datetime
    manifest: dict[str, Any] | None
    degraded: bool  # the disk cache or the bundled snapshot, served because a download failed
    cache_key: str | None = None  # which published catalog this is (`sources.cache_key`)
    # Taken from the disk cache without a request, because the network named it as the latest
    # less than the reload interval ago (in this process or another).
    unchecked: bool = False


@dataclass
class CatalogStatus:
    """What a catalog is serving and how its last load went."""

    version: str | None
    source: str | None  # network, disk-cache, bundled, directory, or None before any load
    url: str | None  # shown without user info or query string
    loaded_at: dt.datetime | None
    age_seconds: float | None
    offers: dict[str, int] = field(default_factory=dict)
    skipped_rows: dict[str, int] = field(default_factory=dict)
    last_error: str | None = None
    last_attempt: dt.datetime | None = None
    next_retry_in: float | None = None
    online_errors: dict[str, str] = field(default_factory=dict)
    online_retry_in: dict[str, float] = field(default_factory=dict)  # failed, not asked until then
    downloads: int = 0
    # Served from the disk cache without a request: the network named this version as the
    # latest `age_seconds` ago, within the reload interval.
    unchecked: bool = False
    data_age_days: int | None = None  # age of the oldest collection, when the manifest says
    # Served from the disk cache or the bundled snapshot because loading failed (`last_error`
    # says why); False when the network answered, even if the archive came from the disk cache
    # because the latest version was already there.
    fallback: bool = False
    # Per provider in the manifest: when its data was recorded (None: not known).
    recorded_at: dict[str, dt.datetime | None] = field(default_factory=dict)
    online_skipped: dict[str, int] = field(default_factory=dict)  # invalid offers, last answer


class Catalog:
    def __init__(
        self,
        balance_resources: bool = True,
        auto_reload: bool = True,
        *,
        reload_interval: float | None = None,
        catalog_url: str | None = None,
        timeout: tuple[float, float] = (5.0, 15.0),
        retries: int = 1,
        online_timeout: float | None = None,
        settings: Settings | None = None,
        load_timeout: float | None = None,
    ) -> None:
        """
        Args:
            balance_resources: ask online providers to size CPU/RAM/disk sensibly for the GPU.
            auto_reload: load on first query and reload every `reload_interval` seconds
                (default 4 hours, `GPUHUNT_RELOAD_INTERVAL`).
            catalog_url: where the catalog is published; default `GPUHUNT_CATALOG_URL` or the
                public bucket. A folder or `file://` URL works too.
            timeout: (connect, read) seconds for each catalog download.
            retries: retries of a failed catalog download (with backoff).
            online_timeout: how long a query waits for online providers (seconds).
            settings: what the environment would give otherwise (`Settings.from_env()`).
            load_timeout: seconds one load of the latest catalog may take in all (every
                request and body read) before it falls back to the disk cache or the bundled
                snapshot; the download may finish in the background for the next query.
                A pinned `load(version=...)`, which has no fallback, gets six times as long.
                Default `GPUHUNT_LOAD_TIMEOUT` or 10; 0 means no whole-load limit.
        """
        self._settings = settings if settings is not None else Settings.from_env()
        self.balance_resources = balance_resources
        self.auto_reload = auto_reload
        self.reload_interval = (
            self._settings.reload_interval if reload_interval is None else reload_interval
        )
        self.online_providers: list[LiveProvider] = []
        self._url = (catalog_url or self._settings.catalog_url).rstrip("/")
        self._timeout = timeout
        self._retries = retries
        self._online_timeout = (
            self._settings.online_timeout if online_timeout is None else online_timeout
        )
        self._load_timeout = self._settings.load_timeout if load_timeout is None else load_timeout
        self._executor: threads.DaemonPool | None = None
        self._executor_lock = threading.Lock()
        self._loaded: _Loaded | None = None
        self._lock = threading.Lock()  # one load at a time; queries never take it
        # The latest catalog's download, which a bounded load waits for only so long.
        self._download = Downloads(lambda deadline: self._fetch(None, deadline), self._adopt)
        self._reload_lock = threading.Lock()  # guards `_reloading` only
        self._reloading = False
        self._last_error: str | None = None
        self._last_attempt: dt.datetime | None = None
        self._failures = 0
        self._retry_at = 0.0
        self._online = online.Health(self._now)
        self._warned_gpu_names: set[str] = set()
        self._online_skipped: dict[str, int] = {}
        self._downloads = 0

    def _now(self) -> float:
        # Online providers' backoff reads this clock; tests replace `_clock` to move time.
        return self._clock()

    _clock = staticmethod(time.monotonic)

    # ----------------------------------------------------------------- loading

    @property
    def providers(self) -> list[LiveProvider]:
        """The online providers added with `add_provider` (the name gpuhunt 0.1.x used; the
        offline providers are not in it)."""
        return self.online_providers

    @property
    def catalog_url(self) -> str:
        return self._url

    def close(self) -> None:
        """Shut down the threads that query online providers. A later query starts new ones."""
        with self._executor_lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _online_executor(self) -> threads.DaemonPool:
        # Daemon threads: a provider still retrying when the answer is out never keeps the
        # process alive.
        with self._executor_lock:
            if self._executor is None:
                self._executor = threads.DaemonPool(ONLINE_WORKERS, "gpuhunt-online")
            return self._executor

    def load(self, version: str | None = None) -> None:
        """Load the catalog now: ask the network for the latest one, or for exactly `version`
        (which raises `CatalogError` if it cannot be fetched; it never substitutes another
        version). Without `version`, failures fall back to the disk cache and the bundled
        snapshot.

        The loads a query starts (the first, and the reloads every `reload_interval`) ask
        nothing when this or another process learnt from the network less than
        `reload_interval` ago which catalog is the latest, and the disk cache holds it: a CLI
        run seconds after another answers from the disk cache."""
        with self._lock:
            self._load(version, may_fall_back=version is None, refresh=True)

    def _load(self, version: str | None, may_fall_back: bool, refresh: bool = False) -> None:
        self._last_attempt = dt.datetime.now(dt.timezone.utc)
        if version is None and not refresh and self._from_fresh_cache():
            self._failures, self._retry_at, self._last_error = 0, 0.0, None
            return
        try:
            if may_fall_back and self._bounded():
                raw = self._download.wait(self._load_timeout)
            elif self._bounded():
                # No fallback to go to: the download gets the longer, background budget.
                limit = self._load_timeout * BACKGROUND_FACTOR
                raw = self._fetch(version, time.monotonic() + limit)
            else:
                raw = self._fetch(version)
        except sources.Unchanged:
            self._unchanged()
            return
        except Exception as e:  # noqa: BLE001 - anything from untrusted bytes is a refusal
            self._note_failure(e)
            if not may_fall_back:
                if isinstance(e, GPUHuntError):
                    raise
                raise CatalogError(f"Could not load catalog version {version}: {e}") from e
            if self._loaded is not None:
                logger.warning(
                    "Catalog reload failed, serving version %s still: %s", self._loaded.version, e
                )
                return
            self._install(self._last_resort(e), degraded=True)
            return
        self._succeeded(raw)

    def _unchanged(self) -> None:
        loaded = self._loaded
        if loaded is not None:  # keep it, fresh again
            self._loaded = dataclasses.replace(loaded, loaded_at=time.monotonic())
        self._failures, self._retry_at, self._last_error = 0, 0.0, None

    def _succeeded(self, raw: sources.RawCatalog) -> None:
        self._failures = 0
        self._retry_at = 0.0
        self._last_error = None if not raw.problems else "; ".join(raw.problems)
        self._install(raw)

    def _bounded(self) -> bool:
        return self._load_timeout > 0 and not self._settings.catalog_dir

    def _adopt(self, job: Download) -> None:
        """A download every load gave up waiting for: install what it got for the next query."""
        try:
            with self._lock:
                if self._download.current is not job:  # a newer download started: it decides
                    return
                if isinstance(job.error, sources.Unchanged):
                    self._unchanged()
                elif job.raw is not None:
                    self._succeeded(job.raw)
                elif job.error is not None:
                    self._last_error = str(job.error)
        except Exception:  # a background thread must not die loudly; status keeps the error
            logger.exception("Installing the catalog downloaded in the background failed")

    def _fetch(self, version: str | None, deadline: float | None = None) -> sources.RawCatalog:
        if self._settings.catalog_dir:
            return sources.from_directory(self._settings.catalog_dir, registry.OFFLINE_PROVIDERS)
        loaded = self._loaded
        fetchers: list[sources.Fetcher] = []
        try:
            return sources.fetch(
                self._url,
                registry.OFFLINE_PROVIDERS,
                version=version,
                cache=self._disk_cache(self._url),
                timeout=self._timeout,
                retries=self._retries,
                on_fetcher=fetchers.append,
                current=loaded.version
                if loaded is not None and not loaded.degraded and version is None
                else None,
                allow_http=self._settings.allow_http,
                deadline=deadline,
                max_bytes=self._settings.max_download_bytes,
            )
        finally:
            self._downloads += sum(f.downloads for f in fetchers)

    def _from_fresh_cache(self) -> bool:
        """Serve the latest catalog from the disk cache if the network named it less than
        `reload_interval` ago; the next reload is due when that check is that old."""
        if self._settings.catalog_dir or sources.local_path(self._url) is not None:
            return False
        cache = self._disk_cache(self._url)
        fresh = sources.fresh_in_cache(cache, self.reload_interval)
        if fresh is None:
            return False
        key, age = fresh
        loaded_at = time.monotonic() - age
        loaded = self._loaded
        if loaded is not None and not loaded.degraded and loaded.cache_key == key:
            self._loaded = dataclasses.replace(loaded, loaded_at=loaded_at, unchecked=True)
            return True
        raw = sources.from_cache(self._url, cache)
        if raw is None or sources.cache_key(raw) != key:
            return False
        self._install(raw, loaded_at=loaded_at)
        if self._loaded is not None:
            self._loaded = dataclasses.replace(self._loaded, unchecked=True)
        return True

    def _disk_cache(self, url: str) -> DiskCache:
        return DiskCache(url, self._settings.cache_dir)

    def _last_resort(self, error: Exception) -> sources.RawCatalog:
        """The newest catalog in the disk cache, else the snapshot bundled in the package."""
        url = self._url
        if sources.local_path(url) is None:
            cached = sources.from_cache(url, self._disk_cache(url))
            if cached is not None:
                logger.warning(
                    "Could not download the catalog (%s); using version %s from the disk cache",
                    error,
                    cached.version,
                )
                return cached
        snapshot = sources.bundled()
        age = sources.snapshot_age_days(snapshot.manifest)
        logger.warning(
            "Could not load the catalog (%s); using the snapshot bundled with gpuhunt%s. "
            "Prices and availability may be out of date.",
            error,
            f", its oldest data recorded {age} days ago" if age is not None else "",
        )
        return snapshot

    def _note_failure(self, e: Exception) -> None:
        self._failures += 1
        self._last_error = str(e)
        first, cap = RETRY_AFTER_FAILURE
        self._retry_at = time.monotonic() + min(cap, first * 2 ** (self._failures - 1))

    def _install(
        self, raw: sources.RawCatalog, degraded: bool = False, loaded_at: float | None = None
    ) -> None:
        tables = []
        previous = self._loaded.table if self._loaded is not None else None
        # Tables parsed from CSVs are kept on disk, so the next process reading the same CSV
        # (a restart, every CLI run) loads them as column files instead of parsing again.
        cache = self._disk_cache(raw.url) if raw.source in ("network", "disk-cache") else None
        cached: set[str] = set()
        for provider in registry.OFFLINE_PROVIDERS:
            if provider in raw.csvs:
                try:
                    tables.append(provider_table(raw, provider, cache, cached))
                    continue
                except Exception as e:  # noqa: BLE001 - a refused object, never an escape
                    logger.warning("Refusing the %s catalog: %s", provider, e)
                    raw.problems.append(f"{provider}: {e}")
                    self._last_error = "; ".join(raw.problems)
            if (provider in raw.csvs or provider in raw.failed) and previous is not None:
                # Its new object is broken: keep serving what we had rather than lose it.
                kept = previous.part(provider)
                if kept is not None:
                    tables.append(kept)
        if cache is not None:
            cache.prune(PARSED, cached)
        # Built off to the side, then one assignment: queries see the old catalog or the new
        # one, never a mix, and never wait for the build.
        table = combine(tables)
        table.prepare()  # so that the first query after a load builds offers as fast as later ones
        self._loaded = _Loaded(
            table=table,
            version=raw.version,
            source=raw.source,
            url=raw.url,
            loaded_at=time.monotonic() if loaded_at is None else loaded_at,
            loaded_wall=dt.datetime.now(dt.timezone.utc),
            manifest=raw.manifest,
            degraded=degraded,
            cache_key=None if degraded else sources.cache_key(raw),
        )

    def _current(self) -> _Loaded | None:
        loaded = self._loaded
        if not self.auto_reload:
            return loaded
        now = time.monotonic()
        if loaded is None:
            if now < self._retry_at:  # failed moments ago; the caller gets the last resort's data
                return self._loaded
            with self._lock:
                if self._loaded is None and time.monotonic() >= self._retry_at:
                    self._load(None, may_fall_back=True)
            return self._loaded
        stale = loaded.degraded or now - loaded.loaded_at > self.reload_interval
        if stale and now >= self._retry_at and not self._reloading:
            self._start_background_reload()
        return loaded

    def _start_background_reload(self) -> None:
        # Its own small lock: a query must not wait on `_lock`, which a load holds throughout.
        with self._reload_lock:
            if self._reloading:
                return
            self._reloading = True

        def run() -> None:
            try:
                with self._lock:
                    loaded = self._loaded
                    if (
                        loaded is None
                        or loaded.degraded
                        or time.monotonic() - loaded.loaded_at > self.reload_interval
                    ):
                        self._load(None, may_fall_back=True)
            except Exception:  # never let a reload thread die loudly; the status keeps the error
                logger.exception("Catalog reload failed")
            finally:
                self._reloading = False

        threading.Thread(target=run, name="gpuhunt-reload", daemon=True).start()

    def status(self) -> CatalogStatus:
        loaded = self._loaded
        wait = self._retry_at - time.monotonic()
        return CatalogStatus(
            version=loaded.version if loaded else None,
            source=loaded.source if loaded else None,
            # Never the user info or query string a URL may carry (a password, a signature).
            url=transport.safe_url(loaded.url if loaded else self.catalog_url),
            loaded_at=loaded.loaded_wall if loaded else None,
            age_seconds=(time.monotonic() - loaded.loaded_at) if loaded else None,
            unchecked=loaded.unchecked if loaded else False,
            offers=loaded.table.counts() if loaded else {},
            skipped_rows=dict(loaded.table.skipped) if loaded else {},
            last_error=self._last_error,
            last_attempt=self._last_attempt,
            next_retry_in=wait if wait > 0 else None,
            online_errors=dict(self._online.errors),
            online_retry_in=self._online.backoffs(),
            downloads=self._downloads,
            data_age_days=sources.snapshot_age_days(loaded.manifest) if loaded else None,
            fallback=loaded.degraded if loaded else False,
            recorded_at={
                p: freshness.recorded_at(entry)
                for p, entry in freshness.entries(loaded.manifest if loaded else None).items()
            },
            online_skipped=dict(self._online_skipped),
        )

    # ----------------------------------------------------------------- querying

    def add_provider(self, provider: LiveProvider) -> None:
        """Add a provider queried live at query time (usually an `OnlineProvider`)."""
        self.online_providers.append(provider)

    def query(
        self,
        *,
        provider: str | list[str] | None = None,
        cpu_arch: CPUArchitecture | str | None = None,
        min_cpu: int | None = None,
        max_cpu: int | None = None,
        min_memory: float | None = None,
        max_memory: float | None = None,
        min_gpu_count: int | None = None,
        max_gpu_count: int | None = None,
        gpu_vendor: AcceleratorVendor | str | None = None,
        gpu_name: str | list[str] | None = None,
        min_gpu_memory: float | None = None,
        max_gpu_memory: float | None = None,
        min_total_gpu_memory: float | None = None,
        max_total_gpu_memory: float | None = None,
        min_disk_size: int | None = None,
        max_disk_size: int | None = None,
        min_price: float | None = None,
        max_price: float | None = None,
        min_compute_capability: str | float | tuple[int, int] | None = None,
        max_compute_capability: str | float | tuple[int, int] | None = None,
        spot: bool | None = None,
        allowed_flags: Container[str] | None = None,
        location: str | list[str] | None = None,
        min_cuda: str | float | tuple[int, int] | None = None,
    ) -> list[CatalogItem]:
        """Offers matching every filter given, cheapest first (see `QueryFilter` for the meaning
        of each). GPU names may be spelled as clouds and people do ("RTX 4090", "H100 NVL"), and
        may give the memory ("A100 80GB"); a name no offer has is logged once with the closest
        known names. `location` takes names and shell-style patterns (`"us-east-1"`,
        `["europe-*", "us-central1-?"]`); versions (`min_cuda`, compute capability) are written
        `"12.8"`, `9`, `9.0` or `(9, 0)`. Memory is in GB, GPU memory in GiB, prices in USD/hour.

        Returns a new `list` of new `CatalogItem`s on every call, so a caller may sort, extend
        or change its answer without affecting anyone else's. Offers from the catalog share
        their `flags` and `provider_data` with the other offers of their instance type, so
        those are read-only (`FrozenList`, `FrozenDict`; copy them to change them). Online
        providers that fail or time out are left out and reported in
        `status().online_errors`, and not asked again until their
        backoff (30 s, doubling to 15 min; `status().online_retry_in`) has passed.
        Raises ValueError for a value that cannot be read (a compute capability of "abc").
        """
        # Every keyword is a QueryFilter field (tests/test_api.py checks they stay in step).
        q = make_filter(**{k: v for k, v in locals().items() if k != "self"})
        wanted = None
        if q.provider is not None:
            wanted = {registry.spec(p).name for p in q.provider}  # raises on unknown names
        live = [p for p in self.online_providers if wanted is None or p.NAME.lower() in wanted]
        if wanted is not None:
            added = {p.NAME.lower() for p in self.online_providers}
            for name in sorted(wanted - added - set(registry.OFFLINE_PROVIDERS)):
                # gpuhunt 0.1.x raised here; an answer without it (and the reason) is kinder.
                why = "not added to this catalog (add_provider)"
                if self._online.errors.get(name) != why:
                    logger.warning("Online provider %s was asked for but not added", name)
                self._online.errors[name] = why
        executor = self._online_executor() if live else None
        asked = (
            online.ask(executor, live, q, self.balance_resources, self._online)
            if executor is not None
            else []
        )
        offline = [p for p in registry.OFFLINE_PROVIDERS if wanted is None or p in wanted]
        offers = self._query_offline(offline, q) if offline else []
        if gpu_name is not None:
            for problem in self._gpu_name_problems(
                [gpu_name] if isinstance(gpu_name, str) else gpu_name, warned=self._warned_gpu_names
            ):
                logger.warning("%s", problem)
        if not asked:
            return offers
        return merge_online(
            offers,
            online.answers(asked, q, self._online_timeout, self._online, self._online_skipped),
        )

    def gpu_name_problems(self, names: list[str]) -> list[str]:
        """Why each of `names` can match no offer (no known GPU and no offer in the catalog is
        so named), with the closest known names; loads the catalog as a query would."""
        self._current()
        return self._gpu_name_problems(names)

    def _gpu_name_problems(self, names: list[str], warned: set[str] | None = None) -> list[str]:
        problems: list[str] = []
        unknown = [n for n in names if canonical_gpu_name(n) is None]
        if not unknown:  # the usual case: no need to look at the catalog's names
            return problems
        loaded = self._loaded
        in_catalog = loaded.table.gpu_names if loaded is not None else []
        in_catalog_lower = {n.lower() for n in in_catalog}
        for name in unknown:
            if name.lower() in in_catalog_lower:
                continue
            if warned is not None:
                if name.lower() in warned:
                    continue
                warned.add(name.lower())
            close = closest_gpu_names(name, in_catalog)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            problems.append(f"Unknown GPU name {name!r}, no offer has it{hint}")
        return problems

    def history(
        self,
        *,
        gpu_name: str | list[str] | None = None,
        provider: str | list[str] | None = None,
        location: str | list[str] | None = None,
        spot: bool | None = None,
        since: str | dt.date | None = None,
        by: str = "gpu",
        version: str | None = None,
    ) -> PriceHistory:
        """The cheapest price on each day of the offers matching the filters, per GPU model
        (price per GPU per hour) or, with `by="instance"`, per provider/instance (per hour),
        from the price history published with the catalog (the latest version, or `version`).

        Downloads through the disk cache; without network, uses the history of the newest
        catalog in the cache. Raises `CatalogError` (`HistoryUnavailable` when the catalog has
        no history) with a message saying why.
        """
        from gpuhunt._internal.history import remote

        return remote.catalog_history(
            self.catalog_url,
            gpu_name=gpu_name,
            provider=provider,
            location=location,
            spot=spot,
            since=since,
            by=by,
            version=version,
            timeout=self._timeout,
            retries=self._retries,
        )

    def _query_offline(self, providers: list[str], q: QueryFilter) -> list[CatalogItem]:
        loaded = self._current()
        if loaded is None:
            if not self.auto_reload:
                logger.warning("Catalog not loaded (auto_reload=False and no load() yet)")
            return []
        table = loaded.table
        everyone = set(table.providers) <= set(providers)
        return table.items(table.select(q, None if everyone else providers))
