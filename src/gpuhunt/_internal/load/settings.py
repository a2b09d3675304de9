"""Settings from the environment, read into one `Settings` object when a `Catalog` is made (or
when a provider's shared HTTP session is first used), never at import time.

    GPUHUNT_CATALOG_URL       where the catalog is published (base URL or folder)
    GPUHUNT_CATALOG_DIR       a folder of plain `{provider}.csv` files instead
    GPUHUNT_CACHE_DIR         the disk cache (default: the user cache dir)
    GPUHUNT_RELOAD_INTERVAL   seconds between catalog reloads (default 4 hours)
    GPUHUNT_LOAD_CHECKED_WITHIN  seconds within which `Catalog.load()` trusts the disk cache's
                              record of the latest catalog instead of asking (default 60; 0:
                              it always asks)
    GPUHUNT_ONLINE_TIMEOUT    seconds a query that names online providers (`provider=`) waits
                              for them, in all, from the query's start (default 30)
    GPUHUNT_ONLINE_DEADLINE   seconds a query that does not name them waits for the online
                              providers it asks on its own, in all, from its start (default 4)
    GPUHUNT_ALLOW_HTTP=1      allow plain-http catalog URLs beyond loopback
    GPUHUNT_CONNECT_TIMEOUT   providers' HTTP connect timeout (default 5)
    GPUHUNT_READ_TIMEOUT      providers' HTTP read timeout (default 30)
    GPUHUNT_LIVE_CACHE_TTL    seconds online providers' answers are kept (default 60)
    GPUHUNT_LOAD_TIMEOUT      seconds one catalog load may take before it falls back to the disk
                              cache or the bundled snapshot (default 10; 0: no whole-load limit)
    GPUHUNT_MAX_DOWNLOAD_MB   largest catalog object downloaded, in MiB (default 256)

Every variable is read and checked here, and nowhere else. A value that cannot be read (`abc`),
is not finite (`nan`, `inf`) or is out of its range (`RANGES`, the one list: docs/settings.md's
table states it, and tests/_internal/load/test_settings.py checks the two agree) is
warned about once per process (naming the variable, the value and the default used) and
replaced by the default: a bad setting never stops a query.
"""

from __future__ import annotations

import logging
import math
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

DEFAULT_CATALOG_URL = "https://dstack-gpu-pricing.s3.eu-west-1.amazonaws.com/v3"


@dataclass(frozen=True)
class Range:
    """Valid values of a numeric setting: `low` to `high`, `low` itself allowed unless
    `above_low`; `unit` as docs/settings.md says it."""

    low: float
    high: float
    above_low: bool = False
    unit: str = "seconds"

    def __contains__(self, value: float) -> bool:
        if not math.isfinite(value) or value > self.high:
            return False
        return value > self.low if self.above_low else value >= self.low

    def __str__(self) -> str:
        low = f"above {_num(self.low)}" if self.above_low else _num(self.low)
        return f"{low} to {_num(self.high)} {self.unit}"


def _num(x: float) -> str:
    return str(int(x)) if x == int(x) else f"{x:g}"


DAY = 24 * 3600.0
RANGES: dict[str, Range] = {
    # 0: check for a new version on every query; a year: in effect never.
    "GPUHUNT_RELOAD_INTERVAL": Range(0, 365 * DAY),
    # 0: `Catalog.load()` always asks the network (as before this setting); a day at most, as
    # it is meant for loads moments apart (a script run right after another, a CLI run).
    "GPUHUNT_LOAD_CHECKED_WITHIN": Range(0, DAY),
    "GPUHUNT_ONLINE_TIMEOUT": Range(0, 3600, above_low=True),
    "GPUHUNT_ONLINE_DEADLINE": Range(0, 3600, above_low=True),
    "GPUHUNT_CONNECT_TIMEOUT": Range(0, 600, above_low=True),
    "GPUHUNT_READ_TIMEOUT": Range(0, 3600, above_low=True),
    "GPUHUNT_LIVE_CACHE_TTL": Range(0, DAY),  # 0: answers are not reused
    "GPUHUNT_LOAD_TIMEOUT": Range(0, 3600),  # 0: no whole-load limit
    "GPUHUNT_MAX_DOWNLOAD_MB": Range(0, 1024 * 1024, above_low=True, unit="MiB"),
}
FLAGS = ("GPUHUNT_ALLOW_HTTP",)  # "1" on, "0" or unset off

_warned: set[tuple[str, str]] = set()
_warned_lock = threading.Lock()


def _warn_once(name: str, text: str, why: str, default: str) -> None:
    with _warned_lock:
        if (name, text) in _warned:
            return
        _warned.add((name, text))
    logger.warning("%s=%r %s; using the default %s", name, text[:40], why, default)


@dataclass(frozen=True)
class Settings:
    catalog_url: str = DEFAULT_CATALOG_URL
    catalog_dir: str | None = None
    cache_dir: Path | None = None  # None: the user cache dir (platformdirs)
    reload_interval: float = 4 * 3600
    # An explicit `Catalog.load()` answers from the disk cache when the network named the latest
    # catalog this recently (in any process sharing the cache); see `Loader.load`.
    load_checked_within: float = 60.0
    online_timeout: float = 30.0
    # The default path (`gpuhunt.query()` asks every online provider with credentials): short,
    # so a proxy or firewall that swallows requests costs a script seconds, not minutes.
    online_deadline: float = 4.0
    allow_http: bool = False
    connect_timeout: float = 5.0
    read_timeout: float = 30.0
    live_cache_ttl: float = 60.0
    load_timeout: float = 10.0
    max_download_bytes: int = 256 * 1024 * 1024

    @property
    def http_timeout(self) -> tuple[float, float]:
        return self.connect_timeout, self.read_timeout

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """The settings the environment gives (`os.environ` unless `env`). An unset or empty
        variable keeps the default; an unreadable, non-finite or out-of-range one is warned
        about once and keeps the default too."""
        env = os.environ if env is None else env

        def number(name: str, default: float) -> float:
            text = (env.get(name) or "").strip()
            if not text:
                return default
            valid = RANGES[name]
            shown = f"{_num(default)} (valid: {valid})"
            try:
                value = float(text)
            except ValueError:
                _warn_once(name, text, "is not a number", shown)
                return default
            if value not in valid:
                why = "is out of range" if math.isfinite(value) else "is not a finite number"
                _warn_once(name, text, why, shown)
                return default
            return value

        def flag(name: str) -> bool:
            text = (env.get(name) or "").strip()
            if text not in ("", "0", "1"):
                _warn_once(name, text, "is neither 1 nor 0", "0 (off)")
            return text == "1"

        cache_dir = env.get("GPUHUNT_CACHE_DIR")
        default_mb = cls.max_download_bytes / 2**20
        return cls(
            catalog_url=env.get("GPUHUNT_CATALOG_URL") or DEFAULT_CATALOG_URL,
            catalog_dir=env.get("GPUHUNT_CATALOG_DIR") or None,
            cache_dir=Path(cache_dir) if cache_dir else None,
            reload_interval=number("GPUHUNT_RELOAD_INTERVAL", cls.reload_interval),
            load_checked_within=number("GPUHUNT_LOAD_CHECKED_WITHIN", cls.load_checked_within),
            online_timeout=number("GPUHUNT_ONLINE_TIMEOUT", cls.online_timeout),
            online_deadline=number("GPUHUNT_ONLINE_DEADLINE", cls.online_deadline),
            allow_http=flag("GPUHUNT_ALLOW_HTTP"),
            connect_timeout=number("GPUHUNT_CONNECT_TIMEOUT", cls.connect_timeout),
            read_timeout=number("GPUHUNT_READ_TIMEOUT", cls.read_timeout),
            live_cache_ttl=number("GPUHUNT_LIVE_CACHE_TTL", cls.live_cache_ttl),
            load_timeout=number("GPUHUNT_LOAD_TIMEOUT", cls.load_timeout),
            max_download_bytes=int(number("GPUHUNT_MAX_DOWNLOAD_MB", default_mb) * 2**20),
        )
