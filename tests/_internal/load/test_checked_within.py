"""`Catalog.load()` and `GPUHUNT_LOAD_CHECKED_WITHIN`: within the window after the network named
the latest catalog (in any process sharing the disk cache), an explicit load reads the disk
cache and asks nothing; an expired window, `refresh=True`, `version=`, a window of 0 and a reload
interval shorter than the window all ask. Over a real server on 127.0.0.1."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from gpuhunt._internal.catalog import Catalog
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.load import warm
from gpuhunt._internal.load.cache import DiskCache
from tests.helpers import item, publish_archive, serve_directory

VERSION = "20261129-1"


@pytest.fixture
def published(tmp_path: Path) -> Path:
    offers = [
        item("aws", instance_name=f"p{k}", gpu_name="H100", gpu_count=1, price=1.0 + k)
        for k in range(3)
    ]
    publish_archive(tmp_path / "pub", VERSION, {"aws": csv_bytes(offers)})
    return tmp_path / "pub"


def _load(url: str, **kw: object) -> Catalog:
    catalog = Catalog(catalog_url=url, auto_reload=False)
    catalog.load(**kw)  # type: ignore[arg-type]
    catalog.close()
    return catalog


def _asked(requested: list[str]) -> int:
    return len([p for p in requested if not p.endswith(".zip")])


def _age_the_check(url: str, cache_dir: Path, seconds: float) -> None:
    cache = DiskCache(url, cache_dir)
    latest = cache.get_json("latest.json")
    assert isinstance(latest, dict) and "checked_at" in latest
    cache.put_json({**latest, "checked_at": time.time() - seconds}, "latest.json")


def test_a_load_within_the_window_asks_nothing_and_serves_the_cached_catalog(
    published, monkeypatch
):
    monkeypatch.setenv("GPUHUNT_LOAD_CHECKED_WITHIN", "60")
    with serve_directory(published) as (url, requested):
        first = _load(url)
        asked = len(requested)
        again = _load(url)
        assert len(requested) == asked  # not even the version pointer
    loaded = again._loader.loaded
    assert loaded is not None and loaded.version == VERSION and loaded.source == "disk-cache"
    assert loaded.unchecked and not loaded.degraded
    assert [o.instance_name for o in again.query()] == [o.instance_name for o in first.query()]


def test_refresh_asks_whatever_the_window(published, monkeypatch):
    monkeypatch.setenv("GPUHUNT_LOAD_CHECKED_WITHIN", "60")
    with serve_directory(published) as (url, requested):
        _load(url)
        asked = _asked(requested)
        again = _load(url, refresh=True)
        assert _asked(requested) == asked + 1
    loaded = again._loader.loaded
    assert loaded is not None and loaded.version == VERSION and not loaded.unchecked


def test_an_exact_version_is_loaded_as_before_whatever_the_window(published, monkeypatch):
    # A version's archive never changes: the cached one serves it (no pointer asked), but the
    # window's path (the latest catalog, unchecked) is not taken.
    monkeypatch.setenv("GPUHUNT_LOAD_CHECKED_WITHIN", "60")
    calls: list[object] = []
    monkeypatch.setattr(warm, "latest", lambda *a: calls.append(a))
    with serve_directory(published) as (url, _):
        _load(url)
        again = _load(url, version=VERSION)
    loaded = again._loader.loaded
    assert loaded is not None and loaded.version == VERSION and not loaded.unchecked
    assert calls == []


def test_an_expired_window_asks(published, monkeypatch, tmp_path):
    monkeypatch.setenv("GPUHUNT_LOAD_CHECKED_WITHIN", "60")
    with serve_directory(published) as (url, requested):
        _load(url)
        _age_the_check(url, tmp_path / "cache", 61)
        asked = _asked(requested)
        again = _load(url)
        assert _asked(requested) > asked
        _load(url)  # that load's check starts a new window
        assert _asked(requested) == asked + 1
    loaded = again._loader.loaded
    assert loaded is not None and not loaded.unchecked


@pytest.mark.parametrize(
    "env",
    [{"GPUHUNT_LOAD_CHECKED_WITHIN": "0"}, {"GPUHUNT_RELOAD_INTERVAL": "5"}],
    ids=["window-0", "reload-interval-shorter"],
)
def test_no_window_or_a_shorter_reload_interval_asks(published, monkeypatch, tmp_path, env):
    monkeypatch.setenv("GPUHUNT_LOAD_CHECKED_WITHIN", "60")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with serve_directory(published) as (url, requested):
        _load(url)
        _age_the_check(url, tmp_path / "cache", 10)  # within 60 s, beyond the 5 s interval
        asked = _asked(requested)
        _load(url)
        assert _asked(requested) > asked


def test_a_bad_setting_is_warned_about_and_the_default_window_used(
    published, monkeypatch, caplog, tmp_path
):
    monkeypatch.setenv("GPUHUNT_LOAD_CHECKED_WITHIN", "-5")
    with serve_directory(published) as (url, requested):
        with caplog.at_level(logging.WARNING, logger="gpuhunt._internal.load.settings"):
            _load(url)
        assert any("GPUHUNT_LOAD_CHECKED_WITHIN='-5'" in r.getMessage() for r in caplog.records)
        _age_the_check(url, tmp_path / "cache", 30)  # within the default 60 s
        asked = len(requested)
        _load(url)
        assert len(requested) == asked
        _age_the_check(url, tmp_path / "cache", 90)  # beyond it
        _load(url)
        assert _asked(requested) > 0 and len(requested) > asked


def test_a_snapshot_of_other_archive_bytes_is_not_served(published, monkeypatch, tmp_path):
    monkeypatch.setenv("GPUHUNT_LOAD_CHECKED_WITHIN", "60")
    with serve_directory(published) as (url, _):
        _load(url)
    cache = DiskCache(url, tmp_path / "cache")
    key = f"archive {VERSION}"
    assert warm.latest(cache, key, url, 0.0) is not None  # what the window path serves
    archive = cache.get("archive", VERSION, "catalog.zip")
    assert archive is not None
    cache.put(archive + b" ", "archive", VERSION, "catalog.zip")  # other bytes, same name
    assert warm.latest(cache, key, url, 0.0) is None
    assert warm.latest(cache, f"archive {VERSION}x", url, 0.0) is None
