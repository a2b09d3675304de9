"""A short-lived cache for online providers' answers, shared by all threads.

Marketplace offers change by the minute, so answers are kept briefly (60 s by default,
`GPUHUNT_LIVE_CACHE_TTL`, as read by the first `Catalog` made in the process: the cache is
shared by the whole process, so its TTL is fixed when it is first used). Concurrent identical requests share one call ("single flight"):
the first caller fetches, the others wait for its result instead of stampeding the API.
Errors are not cached, so the next query tries again.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, TypeVar

from gpuhunt._internal import forks
from gpuhunt._internal.load.settings import Settings

if TYPE_CHECKING:
    from cachetools import TTLCache

T = TypeVar("T")


class _Flight:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None


class SingleFlightCache:
    """`ttl=None`: the TTL `offer_ttl` gave before the cache was first used, else the default
    settings' `live_cache_ttl`. Nothing here reads the environment."""

    def __init__(self, ttl: float | None, maxsize: int = 512) -> None:
        self._ttl = ttl
        self._offered: float | None = None
        self._maxsize = maxsize
        self._entries: TTLCache[Hashable, Any] | None = None
        self._lock = threading.Lock()
        self._flights: dict[Hashable, _Flight] = {}
        self.calls = 0  # how many times `fn` actually ran; for tests and stats

    def get(self, key: Hashable, fn: Callable[[], T]) -> T:
        with self._lock:
            cache = self._cache()
            if key in cache:
                found: T = cache[key]  # what `fn` gave for this key (the cache holds Any)
                return found
            flight = self._flights.get(key)
            leader = flight is None
            if leader:
                flight = self._flights[key] = _Flight()
                self.calls += 1
        assert flight is not None
        if not leader:
            flight.done.wait()
            if flight.error is not None:
                raise flight.error
            followed: T = flight.value
            return followed
        try:
            flight.value = fn()
        except BaseException as e:
            flight.error = e
            raise
        finally:
            with self._lock:
                if flight.error is None:
                    self._cache()[key] = flight.value
                del self._flights[key]
            flight.done.set()
        led: T = flight.value
        return led

    def after_fork(self) -> None:
        """In a forked child: the parent's requests in flight will never finish here (their
        threads stayed behind), so nobody may wait for them; kept answers stay."""
        self._lock = threading.Lock()
        self._flights = {}

    def _cache(self) -> TTLCache[Hashable, Any]:
        # Called with the lock held. Made on first use, not at import: the TTL is a setting.
        if self._entries is None:
            # Here: a query answered from the catalog alone asks no online provider, and
            # cachetools (with the `random` it imports) is not worth importing for it.
            from cachetools import TTLCache

            ttl = self._ttl if self._ttl is not None else self._offered
            ttl = ttl if ttl is not None else Settings().live_cache_ttl
            self._entries = TTLCache(maxsize=self._maxsize, ttl=ttl)
        return self._entries

    def offer_ttl(self, ttl: float) -> None:
        """The TTL to use if the cache has not been used yet and none was set (a `Catalog`
        offers its settings' on creation; the first offer wins)."""
        with self._lock:
            if self._offered is None:
                self._offered = ttl

    def clear(self) -> None:
        with self._lock:
            if self._entries is not None:
                self._entries.clear()


# Shared by every online provider in the process, so that concurrent catalogs and threads
# asking the same API share one call (see docs/design.md, module-level state).
LIVE_CACHE = SingleFlightCache(ttl=None)
forks.on_fork(LIVE_CACHE.after_fork)


def request_key(provider: str, *parts: Any, secret: str | None = None) -> tuple[str, str]:
    """A cache key for a provider request. Account-specific answers must pass the credential as
    `secret`: only its hash enters the key, never the value."""
    blob = json.dumps(parts, sort_keys=True, default=str)
    if secret:
        blob += hashlib.sha256(secret.encode()).hexdigest()
    return provider, hashlib.sha256(blob.encode()).hexdigest()


def request_json(
    method: str,
    url: str,
    *,
    provider: str,
    secret: str | None = None,
    credential: str | None = None,
    **kwargs: Any,
) -> Any:
    """`transport.request_json` through `LIVE_CACHE`: an identical request within the TTL, or
    one already in flight, makes no new call. Requests differ by method, URL, `params` and
    `json`; an account's credential goes in `secret` (see `request_key`)."""
    from gpuhunt._internal.load import transport  # requests: imported when a request is made

    key = request_key(
        provider, method, url, kwargs.get("params"), kwargs.get("json"), secret=secret
    )
    return LIVE_CACHE.get(
        key,
        lambda: transport.request_json(
            method, url, provider=provider, credential=credential, **kwargs
        ),
    )
