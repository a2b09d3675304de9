"""`Settings`: what each environment variable sets, and a clear error for a malformed one."""

from pathlib import Path

import pytest

from gpuhunt import GPUHuntError
from gpuhunt._internal.load.settings import DEFAULT_CATALOG_URL, Settings


def test_defaults_when_nothing_is_set():
    s = Settings.from_env({})
    assert s == Settings() and s.catalog_url == DEFAULT_CATALOG_URL
    assert s.http_timeout == (5.0, 30.0) and s.reload_interval == 4 * 3600


def test_each_variable():
    s = Settings.from_env(
        {
            "GPUHUNT_CATALOG_URL": "https://example.com/v3",
            "GPUHUNT_CATALOG_DIR": "/csvs",
            "GPUHUNT_CACHE_DIR": "/cache",
            "GPUHUNT_RELOAD_INTERVAL": "60",
            "GPUHUNT_ONLINE_TIMEOUT": "2.5",
            "GPUHUNT_ALLOW_HTTP": "1",
            "GPUHUNT_CONNECT_TIMEOUT": "1",
            "GPUHUNT_READ_TIMEOUT": "2",
            "GPUHUNT_LIVE_CACHE_TTL": "0",
        }
    )
    assert s == Settings(
        catalog_url="https://example.com/v3",
        catalog_dir="/csvs",
        cache_dir=Path("/cache"),
        reload_interval=60.0,
        online_timeout=2.5,
        allow_http=True,
        connect_timeout=1.0,
        read_timeout=2.0,
        live_cache_ttl=0.0,
    )


def test_a_malformed_number_names_its_variable():
    with pytest.raises(GPUHuntError, match="GPUHUNT_ONLINE_TIMEOUT is not a number: 'soon'"):
        Settings.from_env({"GPUHUNT_ONLINE_TIMEOUT": "soon"})
