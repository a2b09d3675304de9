"""`Catalog`: loads the published catalog once, answers queries from memory, reloads behind
the queries' backs, and never lets a network problem turn into an exception or a hang for
callers that already have data.

Loading order for the latest catalog: the network (`GPUHUNT_CATALOG_URL`, default the public
bucket), then the newest catalog in the disk cache, then the snapshot bundled in the package
(with a warning giving its age). `GPUHUNT_CATALOG_DIR` (plain CSVs) skips all of that.
A pinned `load(version=...)` is fetched exactly or raises; it never falls back.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import heapq
import logging
import os
import threading
import time
from collections.abc import Container
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuhunt._internal import columns, index, registry, sources, storage
from gpuhunt._internal.accelerators import canonical_gpu_name
from gpuhunt._internal.cache import DiskCache
from gpuhunt._internal.constraints import matches, parse_compute_capability
from gpuhunt._internal.errors import CatalogError, GPUHuntError
from gpuhunt._internal.history import PriceHistory
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem, CPUArchitecture, QueryFilter
from gpuhunt.providers.base import AbstractProvider

logger = logging.getLogger(__name__)

RELOAD_INTERVAL = float(os.getenv("GPUHUNT_RELOAD_INTERVAL", 4 * 3600))
RETRY_AFTER_FAILURE = (30.0, 15 * 60.0)  # backoff between failed reloads: first, cap
ONLINE_TIMEOUT = float(os.getenv("GPUHUNT_ONLINE_TIMEOUT", "30"))
_online_pool = ThreadPoolExecutor(max_workers=16, thread_name_prefix="gpuhunt-online")


@dataclass(frozen=True)
class _Loaded:
    table: index.Table  # every offline provider's offers, by price
    version: str
    source: str
    url: str
    loaded_at: float  # monotonic
    loaded_wall: dt.datetime
    manifest: dict[str, Any] | None
    fallback: bool  # served from the disk cache or the bundled snapshot after a failure


@dataclass
class CatalogStatus:
    """What a catalog is serving and how its last load went."""

    version: str | None
    source: str | None  # network, disk-cache, bundled, directory, or None before any load
    url: str | None
    loaded_at: dt.datetime | None
    age_seconds: float | None
    offers: dict[str, int] = field(default_factory=dict)
    skipped_rows: dict[str, int] = field(default_factory=dict)
    last_error: str | None = None
    last_attempt: dt.datetime | None = None
    next_retry_in: float | None = None
    online_errors: dict[str, str] = field(default_factory=dict)
    downloads: int = 0
    data_age_days: int | None = None  # age of the oldest collection, when the manifest says


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
        """
        self.balance_resources = balance_resources
        self.auto_reload = auto_reload
        self.reload_interval = RELOAD_INTERVAL if reload_interval is None else reload_interval
        self.providers: list[AbstractProvider] = []
        self._url = catalog_url
        self._timeout = timeout
        self._retries = retries
        self._online_timeout = ONLINE_TIMEOUT if online_timeout is None else online_timeout
        self._loaded: _Loaded | None = None
        self._lock = threading.Lock()  # one load at a time
        self._reloading = False
        self._last_error: str | None = None
        self._last_attempt: dt.datetime | None = None
        self._failures = 0
        self._retry_at = 0.0
        self._online_errors: dict[str, str] = {}
        self._downloads = 0

    # ----------------------------------------------------------------- loading

    @property
    def catalog_url(self) -> str:
        return (
            self._url or os.getenv("GPUHUNT_CATALOG_URL") or sources.DEFAULT_CATALOG_URL
        ).rstrip("/")

    def load(self, version: str | None = None) -> None:
        """Load the catalog now: the latest one, or exactly `version` (which raises
        `CatalogError` if it cannot be fetched; it never substitutes another version).
        Without `version`, failures fall back to the disk cache and the bundled snapshot."""
        with self._lock:
            self._load(version, fallback=version is None)

    def _load(self, version: str | None, fallback: bool) -> None:
        self._last_attempt = dt.datetime.now(dt.timezone.utc)
        try:
            raw = self._fetch(version)
        except sources.Unchanged:
            loaded = self._loaded
            if loaded is not None:  # keep it, fresh again
                self._loaded = dataclasses.replace(loaded, loaded_at=time.monotonic())
            self._failures, self._retry_at, self._last_error = 0, 0.0, None
            return
        except (GPUHuntError, OSError, ValueError) as e:
            self._note_failure(e)
            if not fallback:
                if isinstance(e, GPUHuntError):
                    raise
                raise CatalogError(f"Could not load catalog version {version}: {e}") from e
            if self._loaded is not None:
                logger.warning(
                    "Catalog reload failed, serving version %s still: %s", self._loaded.version, e
                )
                return
            raw = self._fallback(e)
            self._install(raw, fallback=True)
            return
        else:
            self._failures = 0
            self._retry_at = 0.0
            self._last_error = None if not raw.problems else "; ".join(raw.problems)
        self._install(raw)

    def _fetch(self, version: str | None) -> sources.RawCatalog:
        local_dir = os.getenv("GPUHUNT_CATALOG_DIR")
        if local_dir:
            return sources.from_directory(local_dir, registry.OFFLINE_PROVIDERS)
        url = self.catalog_url
        self._fetchers: list[sources.Fetcher] = []
        try:
            return self._fetch_from(url, version)
        finally:
            self._downloads += sum(f.downloads for f in self._fetchers)

    def _fetch_from(self, url: str, version: str | None) -> sources.RawCatalog:
        return sources.fetch(
            url,
            registry.OFFLINE_PROVIDERS,
            version=version,
            cache=DiskCache(url),
            timeout=self._timeout,
            retries=self._retries,
            on_fetcher=self._count_downloads,
            current=self._loaded.version
            if self._loaded is not None and not self._loaded.fallback and version is None
            else None,
        )

    def _count_downloads(self, fetcher: sources.Fetcher) -> None:
        self._fetchers.append(fetcher)

    def _fallback(self, error: Exception) -> sources.RawCatalog:
        url = self.catalog_url
        if sources._local_path(url) is None:
            cached = sources.from_cache(url, DiskCache(url))
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
            f", recorded {age} days ago" if age is not None else "",
        )
        return snapshot

    def _note_failure(self, e: Exception) -> None:
        self._failures += 1
        self._last_error = str(e)
        first, cap = RETRY_AFTER_FAILURE
        self._retry_at = time.monotonic() + min(cap, first * 2 ** (self._failures - 1))

    def _install(self, raw: sources.RawCatalog, fallback: bool = False) -> None:
        tables = []
        previous = self._loaded.table if self._loaded is not None else None
        # Tables parsed from CSVs are kept on disk, so the next process reading the same CSV
        # (a restart, every CLI run) loads them as column files instead of parsing again.
        cache = DiskCache(raw.url) if raw.source in ("network", "disk-cache") else None
        cached: set[str] = set()
        for provider in registry.OFFLINE_PROVIDERS:
            if provider in raw.csvs:
                tables.append(_provider_table(raw, provider, cache, cached))
            elif provider in raw.failed and previous is not None:
                # Its new object is broken: keep serving what we had rather than lose it.
                kept = previous.part(provider)
                if kept is not None:
                    tables.append(kept)
        if cache is not None:
            cache.prune(_PARSED, cached)
        # Built off to the side, then one assignment: queries see the old catalog or the new
        # one, never a mix, and never wait for the build.
        self._loaded = _Loaded(
            table=index.combine(tables),
            version=raw.version,
            source=raw.source,
            url=raw.url,
            loaded_at=time.monotonic(),
            loaded_wall=dt.datetime.now(dt.timezone.utc),
            manifest=raw.manifest,
            fallback=fallback,
        )

    def _current(self) -> _Loaded | None:
        loaded = self._loaded
        if not self.auto_reload:
            return loaded
        now = time.monotonic()
        if loaded is None:
            if now < self._retry_at:  # failed moments ago; the caller gets the fallback's data
                return self._loaded
            with self._lock:
                if self._loaded is None and time.monotonic() >= self._retry_at:
                    self._load(None, fallback=True)
            return self._loaded
        stale = loaded.fallback or now - loaded.loaded_at > self.reload_interval
        if stale and now >= self._retry_at and not self._reloading:
            self._start_background_reload()
        return loaded

    def _start_background_reload(self) -> None:
        with self._lock:
            if self._reloading:
                return
            self._reloading = True

        def run() -> None:
            try:
                with self._lock:
                    loaded = self._loaded
                    if (
                        loaded is None
                        or loaded.fallback
                        or time.monotonic() - loaded.loaded_at > self.reload_interval
                    ):
                        self._load(None, fallback=True)
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
            url=loaded.url if loaded else self.catalog_url,
            loaded_at=loaded.loaded_wall if loaded else None,
            age_seconds=(time.monotonic() - loaded.loaded_at) if loaded else None,
            offers=loaded.table.counts() if loaded else {},
            skipped_rows=dict(loaded.table.skipped) if loaded else {},
            last_error=self._last_error,
            last_attempt=self._last_attempt,
            next_retry_in=wait if wait > 0 else None,
            online_errors=dict(self._online_errors),
            downloads=self._downloads,
            data_age_days=sources.snapshot_age_days(loaded.manifest) if loaded else None,
        )

    # ----------------------------------------------------------------- querying

    def add_provider(self, provider: AbstractProvider) -> None:
        """Add a provider queried live at query time (usually an `OnlineProvider`)."""
        self.providers.append(provider)

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
        min_compute_capability: str | tuple[int, int] | None = None,
        max_compute_capability: str | tuple[int, int] | None = None,
        spot: bool | None = None,
        allowed_flags: Container[str] | None = None,
    ) -> index.Offers:
        """Offers matching every filter given, cheapest first (see `QueryFilter` for the meaning
        of each). GPU names may be spelled as clouds and people do ("RTX 4090", "H100 NVL").

        Returns a read-only sequence of `CatalogItem`s. Online providers that fail or time out
        are left out and reported in `status().online_errors`.
        """
        q = QueryFilter(
            provider=_as_list(provider),
            cpu_arch=CPUArchitecture.cast(cpu_arch) if cpu_arch else None,
            min_cpu=min_cpu,
            max_cpu=max_cpu,
            min_memory=min_memory,
            max_memory=max_memory,
            min_gpu_count=min_gpu_count,
            max_gpu_count=max_gpu_count,
            gpu_vendor=AcceleratorVendor.cast(gpu_vendor) if gpu_vendor else None,
            gpu_name=_with_canonical_names(_as_list(gpu_name)),
            min_gpu_memory=min_gpu_memory,
            max_gpu_memory=max_gpu_memory,
            min_total_gpu_memory=min_total_gpu_memory,
            max_total_gpu_memory=max_total_gpu_memory,
            min_disk_size=min_disk_size,
            max_disk_size=max_disk_size,
            min_price=min_price,
            max_price=max_price,
            min_compute_capability=parse_compute_capability(min_compute_capability),
            max_compute_capability=parse_compute_capability(max_compute_capability),
            spot=spot,
            allowed_flags=allowed_flags,
        )
        wanted = None
        if q.provider is not None:
            wanted = {registry.spec(p).name for p in q.provider}  # raises on unknown names
        online = [p for p in self.providers if wanted is None or p.NAME.lower() in wanted]
        if wanted is not None:
            added = {p.NAME.lower() for p in self.providers}
            for name in sorted(wanted - added - set(registry.OFFLINE_PROVIDERS)):
                # gpuhunt 0.1.x raised here; an answer without it (and the reason) is kinder.
                self._online_errors[name] = "not added to this catalog (add_provider)"
                logger.warning("Online provider %s was asked for but not added", name)
        futures = [
            (
                p,
                _online_pool.submit(
                    p.get, query_filter=q, balance_resources=self.balance_resources
                ),
            )
            for p in online
        ]
        offline = [p for p in registry.OFFLINE_PROVIDERS if wanted is None or p in wanted]
        offers = self._query_offline(offline, q) if offline else index.Offers.from_items([])
        if not futures:
            return offers
        deadline = time.monotonic() + self._online_timeout
        online_lists = []
        for p, fut in futures:
            try:
                items = fut.result(timeout=max(0.0, deadline - time.monotonic()))
            except FutureTimeout:
                self._online_errors[p.NAME] = f"timed out after {self._online_timeout:g}s"
                logger.warning("Online provider %s timed out; its offers are left out", p.NAME)
                continue
            except Exception as e:
                self._online_errors[p.NAME] = f"{type(e).__name__}: {e}"
                logger.warning("Online provider %s failed; its offers are left out: %s", p.NAME, e)
                continue
            self._online_errors.pop(p.NAME, None)
            online_lists.append([i for i in items if matches(i, q)])
        return _merge_online(offers, online_lists)

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
        from gpuhunt._internal import tracking

        return tracking.catalog_history(
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

    def _query_offline(self, providers: list[str], q: QueryFilter) -> index.Offers:
        loaded = self._current()
        if loaded is None:
            if not self.auto_reload:
                logger.warning("Catalog not loaded (auto_reload=False and no load() yet)")
            return index.Offers.from_items([])
        table = loaded.table
        everyone = set(table.providers) <= set(providers)
        return index.Offers(table, table.select(q, None if everyone else providers))


_PARSED = "parsed"  # disk cache folder of tables parsed from CSVs


def _provider_table(
    raw: sources.RawCatalog, provider: str, cache: DiskCache | None, cached: set[str]
) -> index.Table:
    """A provider's offers from its published column file when it has a usable one, else from
    a column file cached by an earlier parse of the same CSV, else by parsing the CSV."""
    csv = raw.csvs[provider]
    packed = raw.columns.get(provider)
    if packed is None and cache is None:
        return index.build_table(csv.decode("utf-8", "replace"), provider=provider)
    csv_sha256 = raw.sha256.get(provider) or storage.sha256(csv)
    if packed is not None:
        try:
            return columns.loads(packed, provider=provider, csv_sha256=csv_sha256)
        except ValueError as e:
            logger.warning("Not using the %s column file (%s); parsing its CSV", provider, e)
    name = f"{provider}-{csv_sha256[:32]}.columns"
    if cache is not None:
        cached.add(name)
        earlier = cache.get(_PARSED, name)
        if earlier is not None:
            try:
                return columns.loads(earlier, provider=provider, csv_sha256=csv_sha256)
            except ValueError as e:
                logger.debug("Ignoring the cached %s table: %s", provider, e)
    table = index.build_table(csv.decode("utf-8", "replace"), provider=provider)
    if cache is not None:
        cache.put(columns.dumps(table, csv_sha256), _PARSED, name)
    return table


def _as_list(value: str | list[str] | None) -> list[str] | None:
    if value is None:
        return None
    return [value] if isinstance(value, str) else list(value)


def _with_canonical_names(names: list[str] | None) -> list[str] | None:
    """The names as given plus their canonical spelling, so "RTX 4090" finds "RTX4090" offers
    while a name only a provider uses still matches itself."""
    if names is None:
        return None
    out = list(names)
    for n in names:
        c = canonical_gpu_name(n)
        if c is not None and c.lower() not in {x.lower() for x in out}:
            out.append(c)
    return out


def _merge_online(offline: index.Offers, online_lists: list[list[CatalogItem]]) -> index.Offers:
    """Merge by price like `heapq.merge`: each list keeps its own order (Vast.ai's score order,
    say), and on equal prices offline offers come first, then online in provider order."""
    if not any(online_lists):
        return offline
    table = offline._table
    offline_prices = table.price[offline._rows] if table is not None else np.empty(0)
    streams: list[Any] = [((price, pos) for pos, price in enumerate(offline_prices.tolist()))]
    streams += [((item.price, item) for item in items) for items in online_lists]
    order: list[CatalogItem | int] = [
        entry for _, entry in heapq.merge(*streams, key=lambda x: x[0])
    ]
    return index.Offers(table, offline._rows, order)
