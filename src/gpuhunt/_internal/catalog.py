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
import time
from collections.abc import Callable, Container
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from gpuhunt._internal import catalog_costs, catalog_query, catalog_status, forks, validate
from gpuhunt._internal.catalog_status import CatalogStatus
from gpuhunt._internal.load import livecache, threads, unreachable
from gpuhunt._internal.load.context import Context
from gpuhunt._internal.load.loaded import Loaded
from gpuhunt._internal.load.loader import Loader
from gpuhunt._internal.load.settings import Settings
from gpuhunt._internal.models import (
    AcceleratorVendor,
    CatalogItem,
    CPUArchitecture,
    LiveProvider,
    QueryFilter,
)
from gpuhunt._internal.online_pool import OnlinePool
from gpuhunt._internal.query import online, spec
from gpuhunt._internal.query.filters import make_filter, with_enumerated
from gpuhunt._internal.query.names import gpu_name_problems

if TYPE_CHECKING:
    from requests.adapters import BaseAdapter

    # Imported when used: a query never explains itself or reads the price history.
    from gpuhunt._internal.explain import Explanation
    from gpuhunt._internal.history.daily import PriceHistory

logger = logging.getLogger(__name__)


def _is_adapter(transport: object) -> bool:
    # requests only for a catalog given a transport: `import gpuhunt` does not import it.
    from requests.adapters import BaseAdapter

    return isinstance(transport, BaseAdapter)


ONLINE_WORKERS = 16  # threads querying online providers, per catalog
CLOSE_TIMEOUT = 5.0  # seconds close() waits for the catalog's threads, in all


class Catalog:
    """Offers of every provider behind one `query()`: the published catalog of the offline
    providers (loaded on the first query, reloaded in the background), plus the online providers
    added with `add_provider()`, asked at query time. Safe to query from many threads; `close()`
    (or `with Catalog() as c:`) ends its threads."""

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

        Each argument is checked here: a wrong type is a TypeError, an impossible value (a
        negative or NaN timeout or reload interval) a ValueError, naming the argument.

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
        if transport is not None and not _is_adapter(transport):
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
        self._pool = OnlinePool(ONLINE_WORKERS, self._context.threads)
        self._online = online.Health(self._now, unreachable.Providers(self._settings.cache_dir))
        self._warned_gpu_names: set[str] = set()
        self._online_skipped: dict[str, int] = {}
        forks.register(self)

    def _after_fork(self) -> None:
        """In a child of `os.fork()`: fresh pool and locks (see `gpuhunt._internal.forks`)."""
        self._pool.after_fork()
        self._context.after_fork()
        self._online.after_fork()
        self._loader.after_fork()

    def _now(self) -> float:
        # Online providers' backoff reads this clock; tests replace `_clock` to move time.
        return self._clock()

    def now(self) -> float:
        """This catalog's clock (monotonic seconds, the `clock` it was made with): what
        `current().loaded_at` and the ages in `status()` are measured on."""
        return self._now()

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

    def current(self, *, load: bool = True) -> Loaded | None:
        """The loaded catalog queries answer from now (its `version`, `source`, `table`, ...),
        None if none is. As a query does, loads it first if none is loaded and starts a
        background reload when it is stale; `load=False` only looks. A server reads it around
        an answer to name the version the answer came from."""
        return self._loader.current() if load else self._loader.loaded

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
        self._pool.shut_down()
        left = self._context.threads.close(CLOSE_TIMEOUT)
        if left:
            logger.debug("Catalog.close(): still running: %s", ", ".join(t.name for t in left))

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        """`fn` on the online pool (`online_pool.OnlinePool.submit`)."""
        return self._pool.submit(fn, *args, **kwargs)

    @property
    def _executor(self) -> threads.DaemonPool | None:
        return self._pool.executor

    def load(self, version: str | None = None, *, refresh: bool = False) -> None:
        """Load the catalog now: the latest one, or exactly `version` (which raises
        `CatalogError` if it cannot be fetched; it never substitutes another version).
        Without `version`, failures fall back to the disk cache and the bundled snapshot.

        Without `version`, the network is not asked when this or another process sharing the
        disk cache learnt from it less than `GPUHUNT_LOAD_CHECKED_WITHIN` seconds ago (60 by
        default, never more than `reload_interval`) which catalog is the latest, and the disk
        cache holds it: a script run right after another loads from the disk cache.
        `refresh=True` asks the network whatever the disk cache says (`gpuhunt query
        --refresh`), as does a `GPUHUNT_LOAD_CHECKED_WITHIN` of 0.

        The loads a query starts (the first, and the reloads every `reload_interval`) ask
        nothing when the network named the latest catalog less than `reload_interval` ago.
        Nor does a process's first such load within the back-off window after a check that
        got no answer (in this process or another; `status().next_retry_in` says when it
        ends): it answers at once from the disk cache or the bundled snapshot. This method
        does not wait for that window."""
        self._loader.load(version, refresh=refresh)

    def status(self) -> CatalogStatus:
        return catalog_status.status_of(
            self._loader, self._online, self._online_skipped, self._now()
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
        available: bool | None = None,
        max_age: dt.timedelta | None = None,
        resale: bool | None = None,
        min_memory_per_gpu: float | None = None,
        max_interruption: float | None = None,
        include: str | list[str] | None = None,
    ) -> list[CatalogItem]:
        """Offers matching every filter given, cheapest first (see `QueryFilter` for the meaning
        of each). GPU names may be spelled as clouds and people do ("RTX 4090", "H100 NVL"), and
        may give the memory ("A100 80GB"), the form factor ("H100 SXM": offers of unknown form
        factor are kept) and a count ("A100:8": exactly 8); a name no offer has is logged once
        with the closest known names. `min_cuda` asks for an NVIDIA GPU. `location` takes
        names and shell-style patterns (`"us-east-1"`, `["europe-*", "us-central1-?"]`); versions (`min_cuda`, compute capability) are written
        `"12.8"`, `9`, `9.0` or `(9, 0)`. `country` takes ISO 3166 alpha-2 codes (`"DE"`,
        `["us", "ca"]`), `area` areas (`"europe"`; see `QueryFilter`), both case-insensitive;
        offers whose location the geography table does not know are left out when either is
        given (`status().unknown_locations` counts them). Memory is in GB, GPU memory in GiB,
        prices in USD/hour. `available`, `max_age` and `resale` read what each offer says about
        itself (`CatalogItem.available`, `.observed_at`, `.resold_from`; see `QueryFilter`).
        `min_memory_per_gpu` keeps offers with GPUs only; `max_interruption`: docs/costs.md;
        `include` (None: all, as 0.1.x; `[]`: as `gpuhunt query`): see `QueryFilter`.

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
        # Every keyword is a filter of the query spec, in its order (tests/test_api.py).
        given = locals()
        q = make_filter(**{name: given[name] for name in spec.NAMES})
        found = self._query(q, gpu_name)
        wider = None if found else with_enumerated(q)
        return found if wider is None else self._query(wider, gpu_name)

    def _query(self, q: QueryFilter, gpu_name: str | list[str] | None) -> list[CatalogItem]:
        if q.max_interruption is not None:  # the bands its mask reads (docs/costs.md)
            self._sides()
        return catalog_query.answer(self._asking(), q, gpu_name)

    def query_costs(self, /, **arguments: Any) -> list[catalog_costs.PricedOffer]:
        """`query`'s answer priced for a usage, a term or a job: docs/costs.md."""
        return catalog_costs.query_costs(self.query, self._sides, arguments)

    def _sides(self) -> Any:
        return catalog_costs.sides(self._loader.current(), self._settings.cache_dir)

    def _asking(self) -> catalog_query.Asking:
        """What `catalog_query` needs of this catalog to answer one query."""
        # In `Asking`'s field order; made per query, so it reads what is set now.
        return catalog_query.Asking(
            self.online_providers, self._online, self._submit, self._loader.current,
            self._gpu_name_problems, self._warned_gpu_names, self._online_timeout,
            self._online_deadline, self._online_skipped, self.balance_resources,
            self.auto_reload,
        )  # fmt: skip

    def explain(self, /, **filters: Any) -> Explanation:
        """Why `query(**filters)` answers as it does, over the loaded catalog (online
        providers are not asked): how many offers are left after each filter, in the order
        given; which filter removed the last ones; the cheapest offers that fail exactly one
        filter (and which); for a GPU name no offer has, which providers list it and whether
        their offers are in this catalog or online only. `explanation.lines()` is it as text.
        Takes the keywords of `query`; raises as `query` does for a value it cannot read."""
        loaded = self._loader.current()
        catalog_costs.sides(loaded, self._settings.cache_dir)  # max_interruption's bands
        from gpuhunt._internal import explain

        return explain.explain(loaded.table if loaded is not None else None, filters)

    def gpu_name_problems(self, names: list[str]) -> list[str]:
        """Why each of `names` can match no offer (no known GPU and no offer in the catalog is
        so named), with the closest known names; loads the catalog as a query would."""
        self._loader.current()
        return self._gpu_name_problems(names)

    def _gpu_name_problems(self, names: list[str], warned: set[str] | None = None) -> list[str]:
        loaded = self._loaded
        in_catalog = loaded.table.gpu_names if loaded is not None else []
        return gpu_name_problems(names, in_catalog, warned)

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
        availability: bool = False,
    ) -> PriceHistory:
        """The cheapest price on each day of the offers matching the filters, per GPU model
        (price per GPU per hour) or, with `by="instance"`, per provider/instance (per hour),
        from the price history published with the catalog (the latest version, or `version`).

        Downloads through the disk cache; without network, uses the history of the newest
        catalog in the cache. Raises `CatalogError` (`HistoryUnavailable` when the catalog has
        no history) with a message saying why. `availability=True` also reads, per offer and
        location, the share of observations it was available (`PriceHistory.availability`;
        from the observations dataset, with DuckDB: the `dataset` extra).
        """
        # Imported here: history downloads (requests), which a query from the cache never needs.
        from gpuhunt._internal.history import api

        given = locals()
        return api.catalog_history(
            self.catalog_url,
            {o.name: given[o.name] for o in spec.HISTORY[: spec.HISTORY_LEAD]},
            context=self._context,
            load_timeout=self._loader.load_timeout,
            version=version,
            timeout=self._timeout,
            retries=self._retries,
            availability=availability,
        )
