"""Settings from the environment, read into one `Settings` object when a `Catalog` is made (or
when a provider's shared HTTP session is first used), never at import time.

    GPUHUNT_CATALOG_URL       where the catalog is published (base URL or folder)
    GPUHUNT_CATALOG_DIR       a folder of plain `{provider}.csv` files instead
    GPUHUNT_CACHE_DIR         the disk cache (default: the user cache dir)
    GPUHUNT_RELOAD_INTERVAL   seconds between catalog reloads (default 4 hours)
    GPUHUNT_ONLINE_TIMEOUT    seconds a query waits for online providers (default 30)
    GPUHUNT_ALLOW_HTTP=1      allow plain-http catalog URLs beyond loopback
    GPUHUNT_CONNECT_TIMEOUT   providers' HTTP connect timeout (default 5)
    GPUHUNT_READ_TIMEOUT      providers' HTTP read timeout (default 30)
    GPUHUNT_LIVE_CACHE_TTL    seconds online providers' answers are kept (default 60)
    GPUHUNT_LOAD_TIMEOUT      seconds one catalog load may take before it falls back to the disk
                              cache or the bundled snapshot (default 10; 0: no whole-load limit)
    GPUHUNT_MAX_DOWNLOAD_MB   largest catalog object downloaded, in MiB (default 256)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from gpuhunt._internal.errors import GPUHuntError

DEFAULT_CATALOG_URL = "https://dstack-gpu-pricing.s3.eu-west-1.amazonaws.com/v3"


@dataclass(frozen=True)
class Settings:
    catalog_url: str = DEFAULT_CATALOG_URL
    catalog_dir: str | None = None
    cache_dir: Path | None = None  # None: the user cache dir (platformdirs)
    reload_interval: float = 4 * 3600
    online_timeout: float = 30.0
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
        """The settings the environment gives (`os.environ` unless `env`); an unset or empty
        variable keeps the default, a malformed number is a `GPUHuntError` naming it."""
        env = os.environ if env is None else env

        def number(name: str, default: float) -> float:
            text = env.get(name) or ""
            if not text:
                return default
            try:
                return float(text)
            except ValueError:
                raise GPUHuntError(f"{name} is not a number: {text[:40]!r}") from None

        cache_dir = env.get("GPUHUNT_CACHE_DIR")
        return cls(
            catalog_url=env.get("GPUHUNT_CATALOG_URL") or DEFAULT_CATALOG_URL,
            catalog_dir=env.get("GPUHUNT_CATALOG_DIR") or None,
            cache_dir=Path(cache_dir) if cache_dir else None,
            reload_interval=number("GPUHUNT_RELOAD_INTERVAL", cls.reload_interval),
            online_timeout=number("GPUHUNT_ONLINE_TIMEOUT", cls.online_timeout),
            allow_http=env.get("GPUHUNT_ALLOW_HTTP") == "1",
            connect_timeout=number("GPUHUNT_CONNECT_TIMEOUT", cls.connect_timeout),
            read_timeout=number("GPUHUNT_READ_TIMEOUT", cls.read_timeout),
            live_cache_ttl=number("GPUHUNT_LIVE_CACHE_TTL", cls.live_cache_ttl),
            load_timeout=number("GPUHUNT_LOAD_TIMEOUT", cls.load_timeout),
            max_download_bytes=int(
                number("GPUHUNT_MAX_DOWNLOAD_MB", cls.max_download_bytes / 2**20) * 2**20
            ),
        )
