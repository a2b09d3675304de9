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

import datetime as dt
import logging
import threading
import time
from collections.abc import Callable, Container
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from requests.adapters import BaseAdapter

from gpuhunt._internal import forks, freshness, registry, validate
from gpuhunt._internal.errors import OnlineProvidersFailedError, redact
from gpuhunt._internal.gpu_names import closest_gpu_names, filter_gpu_name
from gpuhunt._internal.history.daily import PriceHistory
from gpuhunt._internal.load import livecache, sources, threads, transport, unreachable
from gpuhunt._internal.load.context import Context
from gpuhunt._internal.load.loader import Loaded, Loader
from gpuhunt._internal.load.settings import Settings
from gpuhunt._internal.models import (
    AcceleratorVendor,
    CatalogItem,
    CPUArchitecture,
    LiveProvider,
    QueryFilter,
)
from gpuhunt._internal.query import answers, online
from gpuhunt._internal.query.answers import merge_online
from gpuhunt._internal.query.filters import make_filter

if TYPE_CHECKING:
    from gpuhunt._internal.explain import Explanation

logger = logging.getLogger(__name__)

ONLINE_WORKERS = 16  # threads querying online providers, per catalog
CLOSE_TIMEOUT = 5.0  # seconds close() waits for the catalog's threads, in all
NOT_ADDED = "not added to this catalog (add_provider)"


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
    # Per provider in the manifest: where its data came from (the manifest's `source`: `name`,
    # `label`, `date_basis`, ...), for the providers whose manifest entry says.
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Offers per offline provider whose location the geography table does not know: kept by
    # queries without `country`/`area`, left out by queries with them.
    unknown_locations: dict[str, int] = field(default_factory=dict)
    # The latest version pointer named an older version than before (loaded, and said once).
    version_went_back: str | None = None


class Catalog:
    def __init__(
        self,
        balance_resources: bool = True,
        auto_reload: bool = True,
        *,
        reload_interval: float | None = None,
        catalog_url: str | None = None,
        timeout: float | tuple[float, float] = (5.0, 15.0),
        retries: int = 1,
        online_timeout: float | None = None,
        settings: Settings | None = None,
        load_timeout: float | None = None,
        transport: BaseAdapter | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        """
        Args:
            balance_resources: ask online providers to size CPU/RAM/disk sensibly for the GPU.
            auto_reload: load on first query and reload every `reload_interval` seconds
                (default 4 hours, `GPUHUNT_RELOAD_INTERVAL`).
            catalog_url: where the catalog is published; default `GPUHUNT_CATALOG_URL` or the
                public bucket. A folder or `file://` URL works too.
            timeout: (connect, read) seconds for each catalog download, or one number for both.
            retries: retries of a failed catalog download (with backoff).

        Each argument is checked here: a wrong type is a TypeError, an impossible value (a
        negative or NaN timeout or reload interval) a ValueError, naming the argument.
            online_timeout: how long a query waits for online providers (seconds).
            settings: what the environment would give otherwise (`Settings.from_env()`).
            load_timeout: seconds one load of the latest catalog may take in all (every
                request and body read) before it falls back to the disk cache or the bundled
                snapshot; the download may finish in the background for the next query.
                A pinned `load(version=...)`, which has no fallback, gets six times as long.
                Default `GPUHUNT_LOAD_TIMEOUT` or 10; 0 means no whole-load limit.
            transport: a `requests` transport adapter that sends every HTTP request this
                catalog makes (catalog and history downloads, and online providers added
                without a session of their own) instead of the network, as httpx's
                `Client(transport=...)` does: `gpuhunt._internal.load.transport.MockTransport`
                in tests, or a caller's own adapter. Default: the network, with retries.
            clock: monotonic seconds (default `time.monotonic`) for backoff, reload intervals
                and ages in `status()`: a test moves time by passing a fake clock.

        The environment is read here (unless `settings` is given) and nowhere below: history,
        downloads and online providers all get this catalog's settings, transport, clock and
        threads (`load.context`).
        """
        timeout = validate.check_catalog_arguments(
            balance_resources=balance_resources,
            auto_reload=auto_reload,
            reload_interval=reload_interval,
            catalog_url=catalog_url,
            timeout=timeout,
            retries=retries,
            online_timeout=online_timeout,
            load_timeout=load_timeout,
        )
        if settings is not None and not isinstance(settings, Settings):
            raise TypeError(f"settings must be a Settings, got {type(settings).__name__}")
        if transport is not None and not isinstance(transport, BaseAdapter):
            raise TypeError(
                f"transport must be a requests.adapters.BaseAdapter, got {type(transport).__name__}"
            )
        if clock is not None and not callable(clock):
            raise TypeError(f"clock must be callable, got {type(clock).__name__}")
        if clock is not None:
            self._clock = clock
        self._settings = settings if settings is not None else Settings.from_env()
        # What everything below the catalog is handed instead of reading the environment, the
        # process's clock or a process-wide session. Its clock is `_now`, so that a test that
        # sets `_clock` moves the loader's time too.
        self._context = Context(settings=self._settings, transport=transport, clock=self._now)
        # The live cache is the process's: the first catalog's setting fixes its TTL.
        livecache.LIVE_CACHE.offer_ttl(self._settings.live_cache_ttl)
        self.balance_resources = balance_resources
        self.online_providers: list[LiveProvider] = []
        self._timeout = timeout
        self._retries = retries
        self._online_timeout = (
            self._settings.online_timeout if online_timeout is None else online_timeout
        )
        # A query that does not name online providers waits for them this long (issue 37).
        self._online_deadline = (
            self._settings.online_deadline if online_timeout is None else online_timeout
        )
        self._loader = Loader(
            (catalog_url or self._settings.catalog_url).rstrip("/"),
            self._settings,
            reload_interval=(
                self._settings.reload_interval if reload_interval is None else reload_interval
            ),
            auto_reload=auto_reload,
            timeout=timeout,
            retries=retries,
            load_timeout=self._settings.load_timeout if load_timeout is None else load_timeout,
            context=self._context,
        )
        self._executor: threads.DaemonPool | None = None
        self._executor_lock = threading.Lock()
        self._online = online.Health(self._now, unreachable.Providers(self._settings.cache_dir))
        self._warned_gpu_names: set[str] = set()
        self._online_skipped: dict[str, int] = {}
        forks.register(self)

    def _after_fork(self) -> None:
        """In a child of `os.fork()`: fresh pool and locks (see `gpuhunt._internal.forks`)."""
        self._executor = None  # its threads stayed in the parent
        self._executor_lock = threading.Lock()
        self._context.after_fork()
        self._online.after_fork()
        self._loader.after_fork()

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
        return self._loader.url

    # The loader keeps these; they stay settable here, as they always were.
    @property
    def reload_interval(self) -> float:
        return self._loader.reload_interval

    @reload_interval.setter
    def reload_interval(self, seconds: float) -> None:
        validate.check_number("reload_interval", seconds, infinite=True)
        self._loader.reload_interval = seconds

    @property
    def auto_reload(self) -> bool:
        return self._loader.auto_reload

    @auto_reload.setter
    def auto_reload(self, on: bool) -> None:
        self._loader.auto_reload = on

    @property
    def _loaded(self) -> Loaded | None:
        return self._loader.loaded

    def close(self) -> None:
        """End every thread this catalog started - the online pool's, a background reload, a
        catalog download - and wait for them, at most `CLOSE_TIMEOUT` seconds in all (a
        download stops between reads; a provider's request in flight is not interrupted, and
        a thread still in one after the wait is a daemon that ends with its request's
        timeout). The catalog stays usable: a later query reloads and starts new threads as
        needed, so `close()` is a "release what you hold", not an end of life.

        Safe while other threads query: a query racing `close()` still answers in full. Its
        online requests that `close()` cancelled before they started are sent again on a new
        pool (within the query's online budget), and one that could not be submitted to the
        closed pool goes to the new one; a cancellation is never a provider failure (no
        backoff, nothing in `status().online_errors`)."""
        with self._executor_lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)
        left = self._context.threads.close(CLOSE_TIMEOUT)
        if left:
            logger.debug("Catalog.close(): still running: %s", ", ".join(t.name for t in left))

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        """`fn` on the online pool; a pool `close()` shut down meanwhile is replaced."""
        for _ in range(3):
            executor = self._online_executor()
            try:
                return executor.submit(fn, *args, **kwargs)
            except RuntimeError:  # closed between the two lines above
                with self._executor_lock:
                    if self._executor is executor:
                        self._executor = None
        # close() called in a tight loop: a thread of its own rather than no answer.
        return threads.run(lambda: fn(*args, **kwargs), "gpuhunt-online", self._context.threads)

    def _online_executor(self) -> threads.DaemonPool:
        # Daemon threads: a provider still retrying when the answer is out never keeps the
        # process alive.
        with self._executor_lock:
            if self._executor is None:
                self._executor = threads.DaemonPool(
                    ONLINE_WORKERS, "gpuhunt-online", self._context.threads
                )
            return self._executor

    def load(self, version: str | None = None) -> None:
        """Load the catalog now: ask the network for the latest one, or for exactly `version`
        (which raises `CatalogError` if it cannot be fetched; it never substitutes another
        version). Without `version`, failures fall back to the disk cache and the bundled
        snapshot.

        The loads a query starts (the first, and the reloads every `reload_interval`) ask
        nothing when this or another process learnt from the network less than
        `reload_interval` ago which catalog is the latest, and the disk cache holds it: a CLI
        run seconds after another answers from the disk cache. Nor does a process's first
        load within the back-off window after a check that got no answer (in this process or
        another; `status().next_retry_in` says when it ends): it answers at once from the disk
        cache or the bundled snapshot. This method asks the network whatever that says."""
        self._loader.load(version)

    def status(self) -> CatalogStatus:
        loader = self._loader
        loaded = loader.loaded
        now = self._now()
        wait = loader.retry_at - now
        return CatalogStatus(
            version=loaded.version if loaded else None,
            source=loaded.source if loaded else None,
            # Never the user info or query string a URL may carry (a password, a signature).
            url=transport.safe_url(loaded.url if loaded else self.catalog_url),
            loaded_at=loaded.loaded_wall if loaded else None,
            age_seconds=(now - loaded.loaded_at) if loaded else None,
            unchecked=loaded.unchecked if loaded else False,
            offers=loaded.table.counts() if loaded else {},
            skipped_rows=dict(loaded.table.skipped) if loaded else {},
            # Never a URL's credentials (`errors.redact`), wherever the message came from.
            last_error=redact(loader.last_error) if loader.last_error else None,
            last_attempt=loader.last_attempt,
            next_retry_in=wait if wait > 0 else None,
            online_errors={k: redact(v) for k, v in self._online.errors.items()},
            online_retry_in=self._online.backoffs(),
            downloads=loader.downloads,
            data_age_days=sources.snapshot_age_days(loaded.manifest) if loaded else None,
            fallback=loaded.degraded if loaded else False,
            recorded_at={
                p: freshness.recorded_at(entry)
                for p, entry in freshness.entries(loaded.manifest if loaded else None).items()
            },
            online_skipped=dict(self._online_skipped),
            sources={
                p: dict(entry["source"])
                for p, entry in freshness.entries(loaded.manifest if loaded else None).items()
                if isinstance(entry, dict) and isinstance(entry.get("source"), dict)
            },
            unknown_locations=loaded.table.unknown_locations() if loaded else {},
            version_went_back=loader.went_back,
        )

    # ----------------------------------------------------------------- querying

    def add_provider(self, provider: LiveProvider) -> None:
        """Add a provider queried live at query time (usually an `OnlineProvider`).

        A provider whose `session` is None (made without one) sends its requests on this
        catalog's session from then on: this catalog's transport and timeouts. One made with
        its own session keeps it."""
        if getattr(provider, "session", False) is None:
            provider.session = self._context.session()  # type: ignore[attr-defined]
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
        country: str | list[str] | None = None,
        area: str | list[str] | None = None,
    ) -> list[CatalogItem]:
        """Offers matching every filter given, cheapest first (see `QueryFilter` for the meaning
        of each). GPU names may be spelled as clouds and people do ("RTX 4090", "H100 NVL"), and
        may give the memory ("A100 80GB"), the form factor ("H100 SXM": offers of unknown form
        factor are kept) and a count ("A100:8": exactly 8); a name no offer has is logged once
        with the closest known names. `min_cuda` asks for an NVIDIA GPU. `location` takes names and shell-style patterns (`"us-east-1"`,
        `["europe-*", "us-central1-?"]`); versions (`min_cuda`, compute capability) are written
        `"12.8"`, `9`, `9.0` or `(9, 0)`. `country` takes ISO 3166 alpha-2 codes (`"DE"`,
        `["us", "ca"]`), `area` areas (`"europe"`; see `QueryFilter`), both case-insensitive;
        offers whose location the geography table does not know are left out when either is
        given (`status().unknown_locations` counts them). Memory is in GB, GPU memory in GiB,
        prices in USD/hour.

        Returns a new `list` of new `CatalogItem`s on every call, so a caller may sort, extend
        or change its answer without affecting anyone else's. Offers from the catalog share
        their `flags` and `provider_data` with the other offers of their instance type, so
        those are read-only (`FrozenList`, `FrozenDict`; copy them to change them). Online
        providers that fail or time out are left out and reported in
        `status().online_errors`, and not asked again until their
        backoff (30 s, doubling to 15 min; `status().online_retry_in`) has passed. But when
        `provider` names online providers only and none of them answered (each failed, timed
        out or is in its backoff), the query raises `OnlineProvidersFailedError`, naming each
        and why, rather than answering `[]` ("no offers") as if they had answered.
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
            # gpuhunt 0.1.x raised here; an answer without it (and the reason) is kinder.
            not_added = sorted(wanted - added - set(registry.OFFLINE_PROVIDERS))
            newly = [n for n in not_added if self._online.errors.get(n) != NOT_ADDED]
            for name in not_added:
                self._online.errors[name] = NOT_ADDED
        asked = online.ask(self._submit, live, q, self.balance_resources, self._online)
        # One query reads one catalog: the first read of the loaded table is the one every
        # part of the answer uses, though a reload may swap in another meanwhile.
        read: list[Loaded | None] = []

        def loaded() -> Loaded | None:
            if not read:
                read.append(self._loader.current())
            return read[0]

        offline = [p for p in registry.OFFLINE_PROVIDERS if wanted is None or p in wanted]
        offers = self._query_offline(offline, q, loaded) if offline else []
        if gpu_name is not None:
            for problem in self._gpu_name_problems(
                [gpu_name] if isinstance(gpu_name, str) else gpu_name, warned=self._warned_gpu_names
            ):
                logger.warning("%s", problem)
        # Only online providers named, and none answered: raise, as gpuhunt 0.1.x did, rather
        # than an empty answer a caller would take (and cache) for "no offers" (issue #23).
        named_online_only = wanted is not None and not offline
        answered: set[str] = set()
        found = (
            online.answers(
                asked,
                q,
                self._online_timeout if wanted is not None else self._online_deadline,
                self._online,
                self._online_skipped,
                answered,
                resubmit=lambda p: online.submit_get(self._submit, p, q, self.balance_resources),
            )
            if asked
            else []
        )
        # Online providers whose offers the loaded catalog holds (only the bundled snapshot
        # has any) answer for one that is not added or did not answer this time.
        standing_in = self._stand_ins(
            [
                p
                for p in registry.ONLINE_PROVIDERS
                if (wanted is None or p in wanted) and p not in answered
            ],
            loaded,
        )
        for name in standing_in:  # answered after all, from the catalog
            if self._online.errors.get(name) == NOT_ADDED:
                del self._online.errors[name]
        if wanted is not None:
            for name in newly:
                if name not in standing_in:
                    logger.warning("Online provider %s was asked for but not added", name)
        if named_online_only and live and not answered and not standing_in:
            assert wanted is not None
            raise OnlineProvidersFailedError(
                {name: self._why_no_answer(name) for name in sorted(wanted)}
            )
        if standing_in:
            offers = merge_online(offers, [self._query_offline(standing_in, q, loaded)])
        if not asked:
            return offers
        return merge_online(offers, found)

    def _stand_ins(
        self, missing: list[str], current: Callable[[], Loaded | None] | None = None
    ) -> list[str]:
        """Those of `missing` whose offers the catalog holds; loads it if a query naming only
        online providers has not (so a query that every live provider answered loads nothing).
        `current`: the query's one read of the catalog."""
        if not missing:
            return []
        loaded = (current or self._loader.current)()
        held = set(loaded.table.providers) if loaded is not None else set()
        return [p for p in missing if p in held]

    def _why_no_answer(self, name: str) -> str:
        why = self._online.errors.get(name, "did not answer")
        wait = self._online.retry_in(name)
        if wait is not None:
            why = f"{why}; next try in {wait:.0f}s"
        return why

    def explain(self, /, **filters: Any) -> Explanation:
        """Why `query(**filters)` answers as it does, over the loaded catalog (online
        providers are not asked): how many offers are left after each filter, in the order
        given; which filter removed the last ones; the cheapest offers that fail exactly one
        filter (and which); for a GPU name no offer has, which providers list it and whether
        their offers are in this catalog or online only. `explanation.lines()` is it as text.
        Takes the keywords of `query`; raises as `query` does for a value it cannot read."""
        from gpuhunt._internal import explain

        loaded = self._loader.current()
        return explain.explain(loaded.table if loaded is not None else None, filters)

    def gpu_name_problems(self, names: list[str]) -> list[str]:
        """Why each of `names` can match no offer (no known GPU and no offer in the catalog is
        so named), with the closest known names; loads the catalog as a query would."""
        self._loader.current()
        return self._gpu_name_problems(names)

    def _gpu_name_problems(self, names: list[str], warned: set[str] | None = None) -> list[str]:
        problems: list[str] = []
        # As written without a count ("A100:8" asks for "A100"), for those the tables do not know.
        unknown = [base for base, known in map(filter_gpu_name, names) if known is None]
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
        from gpuhunt._internal.history import api

        return api.catalog_history(
            self.catalog_url,
            context=self._context,
            load_timeout=self._loader.load_timeout,
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

    def _query_offline(
        self,
        providers: list[str],
        q: QueryFilter,
        current: Callable[[], Loaded | None] | None = None,
    ) -> list[CatalogItem]:
        loaded = (current or self._loader.current)()
        if loaded is None:
            if not self.auto_reload:
                logger.warning("Catalog not loaded (auto_reload=False and no load() yet)")
            return []
        table = loaded.table
        everyone = set(table.providers) <= set(providers)
        return answers.items(table, table.select(q, None if everyone else providers))
