"""`load/fetch.py` on its own: downloading a published catalog in both layouts, from a folder
and over HTTP (a real server on 127.0.0.1), bounded in size and time, checked, cached. (The
same faults seen through a `Catalog`, which falls back and keeps serving: tests/faults.)"""

from __future__ import annotations

import time

import pytest

from gpuhunt._internal.errors import (
    CatalogDownloadError,
    CatalogIntegrityError,
    NotFound,
    Unchanged,
)
from gpuhunt._internal.formats.archive import sha256, write_archive
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.load import fetch
from gpuhunt._internal.load.cache import DiskCache
from tests.faults.server import FaultServer, Reply
from tests.helpers import item, publish_archive, publish_per_provider

AWS = csv_bytes([item(price=1.0, instance_name="a"), item(price=2.0, instance_name="b")])
LAMBDA = csv_bytes([item("lambdalabs", price=1.5, instance_name="gpu_1x_h100")])


def get(base: str, **kw):
    """`fetch.fetch` as the loader calls it, with the test's defaults."""
    kw.setdefault("version", None)
    kw.setdefault("cache", None)
    kw.setdefault("timeout", (2.0, 2.0))
    kw.setdefault("retries", 0)
    return fetch.fetch(base, ["aws", "lambdalabs"], **kw)


def fetcher(base: str, **kw) -> fetch.Fetcher:
    return fetch.Fetcher(base, (2.0, 2.0), 0, **kw)


def test_version_key_orders_numbers_as_numbers():
    versions = ["v10", "v9", "20261201-2", "20261201-10", "20261130-1"]
    assert sorted(versions, key=fetch.version_key) == [
        "20261130-1",
        "20261201-2",
        "20261201-10",
        "v9",
        "v10",
    ]


def test_archive_layout_from_a_folder(tmp_path):
    publish_archive(tmp_path, "20261201-1", {"aws": AWS, "lambdalabs": LAMBDA})
    raw = get(str(tmp_path))
    assert (raw.version, raw.source, sorted(raw.csvs)) == (
        "20261201-1",
        "directory",
        ["aws", "lambdalabs"],
    )
    assert raw.csvs["aws"] == AWS
    with pytest.raises(Unchanged):
        get(str(tmp_path), current="20261201-1")


def test_per_provider_layout_when_there_is_no_version_object(tmp_path):
    publish_per_provider(tmp_path, "20261130-1", {"aws": AWS})
    publish_per_provider(tmp_path, "20261201-1", {"lambdalabs": LAMBDA})
    raw = get(str(tmp_path))
    assert raw.versions == {"aws": "20261130-1", "lambdalabs": "20261201-1"}
    assert raw.version == "20261201-1" and raw.csvs == {"aws": AWS, "lambdalabs": LAMBDA}


def test_nothing_published_is_not_found(tmp_path):
    with pytest.raises(NotFound, match="No catalog published under"):
        get(str(tmp_path))


def test_over_http_the_archive_is_checked_and_cached(tmp_path):
    archive = write_archive(
        {"aws": AWS}, {"version": "v2", "providers": {"aws": {"sha256": sha256(AWS)}}}
    )
    cache = DiskCache("http://catalog.test", tmp_path / "cache")
    with FaultServer() as srv:
        srv.serve("/version", default=Reply(body=b"v2\n"))
        srv.serve("/v2/catalog.zip", default=Reply(body=archive))
        raw = get(srv.url, cache=cache, allow_http=True)
        assert (raw.version, raw.source, raw.csvs) == ("v2", "network", {"aws": AWS})
        assert cache.get("archive", "v2", "catalog.zip") == archive
        again = get(srv.url, cache=cache, allow_http=True)  # the pointer asked, the zip not
        assert again.source == "disk-cache" and again.csvs == {"aws": AWS}
    assert srv.hits == {"/version": 2, "/v2/catalog.zip": 1}


def test_an_archive_naming_another_version_is_refused(tmp_path):
    archive = write_archive({"aws": AWS}, {"version": "v3", "providers": {}})
    with FaultServer() as srv:
        srv.serve("/version", default=Reply(body=b"v2"))
        srv.serve("/v2/catalog.zip", default=Reply(body=archive))
        with pytest.raises(CatalogIntegrityError, match="manifest names version 'v3', not 'v2'"):
            get(srv.url, allow_http=True)


def test_a_pointer_that_is_not_a_version_is_refused():
    with FaultServer() as srv:
        srv.serve("/version", default=Reply(body=b"<html>oops</html>"))
        with pytest.raises(CatalogIntegrityError, match="not a catalog version: '<html>oops"):
            get(srv.url, allow_http=True)


def test_plain_http_only_to_loopback_unless_allowed():
    from gpuhunt._internal.errors import CatalogError

    with pytest.raises(CatalogError):
        fetcher("http://catalog.example.com/v3")
    fetcher("http://catalog.example.com/v3", allow_http=True)
    fetcher("https://catalog.example.com/v3")


def test_get_maps_statuses_to_errors():
    with FaultServer() as srv:
        srv.serve("/missing", default=Reply(404))
        srv.serve("/forbidden", default=Reply(403))  # S3 without list rights
        srv.serve("/broken", default=Reply(500))
        srv.serve("/short", default=Reply(body=b"abc", declared_length=10))
        f = fetcher(srv.url)
        with pytest.raises(NotFound, match=r"/missing: HTTP 404$"):
            f.get("missing")
        with pytest.raises(NotFound, match=r"/forbidden: HTTP 403$"):
            f.get("forbidden")
        with pytest.raises(CatalogDownloadError, match=r"/broken: HTTP 500$"):
            f.get("broken")
        with pytest.raises(CatalogIntegrityError, match=r"/short: truncated download"):
            f.get("short")
        assert f.downloads == 4


def test_get_is_capped_by_length_and_as_the_body_arrives(tmp_path):
    body = b"\0" * 5000
    with FaultServer() as srv:
        srv.serve("/declared", default=Reply(body=body))
        srv.serve("/undeclared", default=Reply(body=body, declared_length=-1))
        f = fetcher(srv.url, max_bytes=4096)
        with pytest.raises(CatalogIntegrityError, match="5000 bytes announced, over the 4096"):
            f.get("declared")
        with pytest.raises(CatalogIntegrityError, match="larger than the 4096-byte cap"):
            f.get("undeclared")
        assert fetcher(srv.url).get("declared") == body
    (tmp_path / "big").write_bytes(body)
    with pytest.raises(CatalogIntegrityError, match="larger than 4096 bytes"):
        fetcher(str(tmp_path), max_bytes=4096).get("big")


def test_get_after_the_deadline_asks_nothing():
    with FaultServer() as srv:
        srv.serve("/version", default=Reply(body=b"v1"))
        f = fetcher(srv.url, deadline=time.monotonic() - 1)
        with pytest.raises(CatalogDownloadError, match="the load's time limit passed"):
            f.get("version")
    assert srv.hits == {}
