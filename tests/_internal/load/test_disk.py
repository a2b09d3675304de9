"""`load.disk`: the catalog served when the network fails (the newest cached one, else the
bundled snapshot, each said in a warning) and the cache kept bounded after a load."""

from __future__ import annotations

import logging
import os

from gpuhunt._internal.errors import CatalogDownloadError
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.load import disk, sources
from gpuhunt._internal.load.cache import DiskCache
from tests.helpers import item, publish_archive, serve_directory


def test_the_last_resort_is_the_cached_catalog_else_the_bundled_one(tmp_path, caplog):
    url = "https://catalog.example/v3"
    cache = DiskCache(url, tmp_path / "c")
    caplog.set_level(logging.WARNING)
    raw = disk.last_resort(url, cache, CatalogDownloadError("no route"))
    assert raw.source == "bundled" and "no route" in caplog.text and "bundled" in caplog.text
    assert disk.last_resort(url, None, CatalogDownloadError("x")).source == "bundled"

    publish_archive(tmp_path / "pub", "20261129-1", {"aws": csv_bytes([item("aws")])})
    with serve_directory(tmp_path / "pub") as (served, _):
        from gpuhunt._internal.catalog import Catalog

        c = Catalog(catalog_url=served)
        assert len(c.query()) == 1
        c.close()
    cache = DiskCache(served, tmp_path / "cache")  # GPUHUNT_CACHE_DIR of the test
    caplog.clear()
    raw = disk.last_resort(served, cache, CatalogDownloadError("down"))
    assert (
        raw.source == "disk-cache" and raw.version == "20261129-1" and "disk cache" in caplog.text
    )


def test_tidy_keeps_the_loaded_and_the_latest_versions(tmp_path):
    cache = DiskCache("https://x", tmp_path)
    for v in ("20261126-1", "20261127-1", "20261128-1", "20261129-1"):
        cache.put(b"zip", "archive", v, "catalog.zip")
    for f in (cache.dir / "archive" / "20261126-1").rglob("*"):
        os.utime(f, (1, 1))  # written long ago: not the recent other one kept either
    os.utime(cache.dir / "archive" / "20261126-1", (1, 1))
    cache.put_json({"layout": "archive", "version": "20261129-1"}, "latest.json")
    raw = sources.RawCatalog({}, "20261128-1", "network", "https://x")
    disk.tidy(cache, raw)
    assert not cache.exists("archive", "20261126-1", "catalog.zip")
    assert cache.exists("archive", "20261127-1", "catalog.zip")
    assert cache.exists("archive", "20261128-1", "catalog.zip")
    assert cache.exists("archive", "20261129-1", "catalog.zip")
