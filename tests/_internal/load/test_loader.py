"""`load/loader.py` on its own: the loading order and its fallbacks, what a failure leaves
behind (the error, the backoff), a pinned version without a fallback, an unchanged catalog kept.
A `Loader` is made here as `Catalog` makes one (`loader()`), over a folder or a real server on
127.0.0.1. (Reloads racing queries, through a `Catalog`: tests/faults.)"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from gpuhunt._internal.errors import CatalogError
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.load.loader import Loader
from gpuhunt._internal.load.settings import Settings
from tests.faults.common import publish
from tests.faults.server import FaultServer, Reply
from tests.helpers import item, publish_archive

AWS = csv_bytes([item(price=2.0, instance_name="b"), item(price=1.0, instance_name="a")])


def loader(url: str, cache: Path, **kw) -> Loader:
    """A Loader with the arguments `Catalog` passes by default (one place to change)."""
    kw.setdefault("reload_interval", 3600.0)
    kw.setdefault("auto_reload", True)
    kw.setdefault("timeout", (1.0, 1.0))
    kw.setdefault("retries", 0)
    kw.setdefault("load_timeout", 10.0)
    # `load()` asks the network, as these tests expect (test_checked_within.py: the window).
    return Loader(url, Settings(cache_dir=cache, allow_http=True, load_checked_within=0), **kw)


def refused_url() -> str:
    """A port on 127.0.0.1 where nothing listens any more."""
    with FaultServer() as srv:
        url = srv.url
    return url


def test_a_folder_is_loaded_on_first_use_and_served_since(tmp_path):
    publish_archive(tmp_path / "b", "20261201-1", {"aws": AWS})
    lo = loader(str(tmp_path / "b"), tmp_path / "cache")
    assert lo.loaded is None
    first = lo.current()
    assert first is not None and (first.version, first.source) == ("20261201-1", "directory")
    assert first.table.counts() == {"aws": 2} and not first.degraded
    assert lo.current() is first and lo.last_error is None


def test_without_auto_reload_nothing_is_loaded_until_load(tmp_path):
    publish_archive(tmp_path / "b", "v1", {"aws": AWS})
    lo = loader(str(tmp_path / "b"), tmp_path / "cache", auto_reload=False)
    assert lo.current() is None
    lo.load()
    loaded = lo.current()
    assert loaded is not None and loaded.version == "v1"


def test_a_failed_first_load_serves_the_bundled_snapshot_and_backs_off(tmp_path):
    lo = loader(refused_url(), tmp_path / "cache")
    loaded = lo.current()
    assert loaded is not None and loaded.source == "bundled" and loaded.degraded
    assert lo.last_error and lo.last_attempt is not None
    assert lo.retry_at > time.monotonic()  # backing off (the windows: the next test)
    assert lo.current() is loaded  # within the window: no new attempt


def test_the_backoff_doubles_to_its_cap_and_a_success_clears_it(tmp_path):
    lo = loader(refused_url(), tmp_path / "cache")
    windows = []
    for _ in range(7):
        lo._note_failure(CatalogError("down"))
        windows.append(round(lo.retry_at - time.monotonic()))
    assert windows == [30, 60, 120, 240, 480, 900, 900]
    lo._unchanged()
    assert (lo.retry_at, lo.last_error) == (0.0, None)


def test_a_failed_load_falls_back_to_the_disk_cache_of_an_earlier_download(tmp_path):
    with FaultServer() as srv:
        publish(srv)
        url = srv.url
        loader(url, tmp_path / "cache").load()
    lo = loader(url, tmp_path / "cache")
    lo.load()  # the server is gone
    loaded = lo.current()
    assert loaded is not None and (loaded.source, loaded.version) == ("disk-cache", "v1")
    assert loaded.degraded and lo.last_error


def test_a_pinned_version_that_cannot_be_had_is_an_error_not_a_fallback(tmp_path):
    publish_archive(tmp_path / "b", "v1", {"aws": AWS})
    lo = loader(str(tmp_path / "b"), tmp_path / "cache")
    with pytest.raises(CatalogError, match="v9"):
        lo.load(version="v9")
    assert lo.loaded is None


def test_an_unchanged_catalog_is_kept_and_not_downloaded_again(tmp_path):
    with FaultServer() as srv:
        publish(srv)
        lo = loader(srv.url, tmp_path / "cache")
        lo.load()
        first = lo.loaded
        assert first is not None and first.version == "v1"
        lo.load()
        again = lo.loaded
        assert again is not None and again.table is first.table
        assert again.loaded_at >= first.loaded_at
        assert srv.hits == {"/version": 2, "/v1/catalog.zip": 1}


def test_a_failed_reload_keeps_serving_the_loaded_version(tmp_path):
    with FaultServer() as srv:
        publish(srv)
        lo = loader(srv.url, tmp_path / "cache")
        lo.load()
        srv.serve("/version", default=Reply(body=b"v2"))
        srv.serve("/v2/catalog.zip", default=Reply(body=b"PK\x03\x04 not a zip"))
        lo.load()
        loaded = lo.loaded
        assert loaded is not None and loaded.version == "v1" and not loaded.degraded
        assert "v2/catalog.zip" in (lo.last_error or "")
