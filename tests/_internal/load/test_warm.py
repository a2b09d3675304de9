"""`load.warm`: a new process reads back what an earlier load derived from the same cached
archives (the combined, compacted table), answers exactly as a full load would, and never
serves a snapshot made from other archives or damaged on disk."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from gpuhunt._internal import geography
from gpuhunt._internal.catalog import Catalog
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.load import warm
from gpuhunt._internal.load.cache import DiskCache
from gpuhunt._internal.query import answers
from tests.helpers import item, publish_archive, publish_per_provider, serve_directory


def _offers() -> dict[str, bytes]:
    aws = [
        item(
            "aws",
            instance_name=f"p{k}",
            location=loc,
            price=1.0 + k + d,
            gpu_name=g,
            gpu_count=c,
            gpu_memory=m,
            spot=spot,
        )
        for k, (g, c, m) in enumerate([("H100", 8, 80.0), ("A100", 1, 40.0), ("L4", 2, 24.0)])
        for d, loc in ((0.0, "us-east-1"), (0.25, "eu-west-1"))
        for spot in (False, True)
    ]
    gcp = [
        item(
            "gcp",
            instance_name="n1",
            location="us-central1-a",
            price=0.5,
            gpu_count=0,
            gpu_name=None,
            gpu_vendor=None,
            gpu_memory=None,
            provider_data={"k": [1, 2]},
        ),
        item(
            "gcp",
            instance_name="a3",
            location="europe-west4-b",
            price=9.0,
            gpu_name="H100",
            gpu_count=8,
            gpu_memory=80.0,
            flags=["gcp-a4"],
        ),
    ]
    return {"aws": csv_bytes(aws), "gcp": csv_bytes(gcp)}


def _fields(offers):
    return [dataclasses.astuple(o) for o in offers]


def _catalog(url, tmp_path) -> Catalog:
    return Catalog(catalog_url=url)  # its disk cache: GPUHUNT_CACHE_DIR, tmp_path / "cache"


@pytest.mark.parametrize("layout", ["archive", "per-provider"])
def test_a_new_process_reads_the_snapshot_and_answers_as_a_full_load(tmp_path, layout):
    root = tmp_path / "pub"
    if layout == "archive":
        publish_archive(root, "20261129-1", _offers())
    else:
        publish_per_provider(root, "20261129-1", _offers())
    queries = [{}, {"gpu_name": "H100"}, {"provider": ["gcp"]}, {"spot": True, "max_price": 3}]
    with serve_directory(root) as (url, requested):
        first = _catalog(url, tmp_path)
        expected = [_fields(first.query(**q)) for q in queries]
        first.close()
        fetched = len(requested)
        second = _catalog(url, tmp_path)  # a new process: nothing loaded in memory
        got = [_fields(second.query(**q)) for q in queries]
        status = second.status()
        second.close()
    assert len(requested) == fetched  # answered from the disk cache, without a request
    assert got == expected and len(got[0]) == 14
    loaded = second._loader.loaded
    assert loaded is not None and loaded.source == "disk-cache" and status.version == "20261129-1"
    parts = answers.prepare(loaded.table)
    assert parts.unmade is not None  # read back, not rebuilt: shapes made as answers need them
    assert (layout == "archive") == (loaded.manifest is not None)


def _warmed(tmp_path) -> tuple[str, DiskCache, str]:
    root = tmp_path / "pub"
    publish_archive(root, "20261129-1", _offers())
    with serve_directory(root) as (url, _):
        _catalog(url, tmp_path).query()
    cache = DiskCache(url, tmp_path / "cache")
    parts = warm.archive_parts(cache.get_json("latest.json"))
    assert parts == [("archive", "20261129-1", "catalog.zip")]
    name = warm.key(cache, "archive 20261129-1", parts)
    assert name is not None and cache.exists(warm.FOLDER, f"{name}.table")
    return url, cache, name


def test_the_key_follows_the_cached_archive_bytes_and_the_catalog_version(tmp_path):
    url, cache, name = _warmed(tmp_path)
    parts = [("archive", "20261129-1", "catalog.zip")]
    assert warm.key(cache, "archive 20261129-2", parts) != name
    data = cache.get(*parts[0])
    assert data is not None
    cache.put(data + b" ", *parts[0])  # another archive under the same name: another key
    assert warm.key(cache, "archive 20261129-1", parts) not in (name, None)
    cache.delete(*parts[0])
    assert warm.key(cache, "archive 20261129-1", parts) is None


@pytest.mark.parametrize(
    "latest",
    [
        None,
        {"layout": "archive", "version": "../x"},
        {"layout": "per-provider", "versions": {"aws": ".."}},
        {"layout": "per-provider", "versions": {}},
        {"layout": "other"},
    ],
)
def test_a_latest_record_naming_no_plain_cache_file_gives_no_snapshot(latest):
    assert warm.archive_parts(latest) is None


def test_a_damaged_snapshot_is_not_served_and_the_load_rebuilds_it(tmp_path):
    url, cache, name = _warmed(tmp_path)
    data = cache.get(warm.FOLDER, f"{name}.table")
    assert data is not None
    snapshot = warm.decode(data, name)
    # Codes out of range, sealed correctly (the seal only catches a torn or altered file):
    bad = bytearray(data)
    rows = len(snapshot.table)
    start = data.index(snapshot.table.price.tobytes()) + rows * 8  # the location codes follow
    bad[start : start + 2] = b"\xff\xff"
    with pytest.raises(ValueError, match="location"):
        warm.decode(bytes(bad), name)
    cache.put(bytes(bad), warm.FOLDER, f"{name}.table")
    assert warm.read(cache, name) is None
    assert not cache.exists(warm.FOLDER, f"{name}.table")  # removed, so the next load rewrites it
    with pytest.raises(ValueError, match="another catalog"):
        warm.decode(data, "0" * 40)
    with pytest.raises(ValueError, match="not a snapshot"):
        warm.decode(b"GPUHUNT-COLUMNS\n" + data[16:], name)
    catalog = _catalog(url, tmp_path)
    assert len(catalog.query()) == 14  # from the cached archive, parsed again
    catalog.close()
    assert cache.exists(warm.FOLDER, f"{name}.table")


def test_a_snapshot_round_trips_every_column(tmp_path):
    _, cache, name = _warmed(tmp_path)
    data = cache.get(warm.FOLDER, f"{name}.table")
    assert data is not None
    snapshot = warm.decode(data, name)
    again = warm.encode(snapshot, name)
    assert again == data
    table = snapshot.table
    assert not table.price.flags.writeable
    assert table.counts() == {"aws": 12, "gcp": 2}
    assert np.all(np.diff(table.price) >= 0)


def test_only_the_latest_snapshot_is_kept(tmp_path):
    _, cache, name = _warmed(tmp_path)
    snapshot = warm.read(cache, name)
    assert snapshot is not None
    assert warm.write(cache, snapshot, "f" * 40)
    assert not cache.exists(warm.FOLDER, f"{name}.table")
    assert warm.read(cache, "f" * 40) is not None


def test_an_empty_table_is_not_kept(tmp_path):
    from gpuhunt._internal.query.table import combine

    table = combine([])
    assert warm.encode(warm.Snapshot(table, "v", None), "x") is None


def test_an_explicit_load_of_the_cached_catalog_reads_the_snapshot_too(tmp_path, monkeypatch):
    publish_archive(tmp_path / "pub", "20261129-1", _offers())
    calls = []
    real = warm.read
    monkeypatch.setattr(warm, "read", lambda c, n: calls.append(n) or real(c, n))
    with serve_directory(tmp_path / "pub") as (served, _):
        first = _catalog(served, tmp_path)
        first.load()  # downloads, derives, keeps the snapshot
        first.close()
        again = _catalog(served, tmp_path)
        again.load()  # `load()` asks the network; the archive it names is cached, and derived
        got = again.query(gpu_name="H100")
        again.close()
    assert len(calls) == 2 and calls[0] == calls[1]
    loaded = again._loader.loaded
    assert loaded is not None and answers.prepare(loaded.table).unmade is not None
    assert {o.gpu_name for o in got} == {"H100"} and len(got) == 5


def test_the_unknown_location_counts_are_read_back_not_worked_out(tmp_path, monkeypatch):
    offers = [
        item("aws", instance_name="a", location="nowhere-9", price=1.0),
        item("aws", instance_name="b", location="us-east-1", price=2.0),
        item("aws", instance_name="c", location="nowhere-9", price=3.0, spot=True),
    ]
    publish_archive(tmp_path / "pub", "20261129-1", {"aws": csv_bytes(offers)})
    with serve_directory(tmp_path / "pub") as (url, _):
        first = _catalog(url, tmp_path)
        assert len(first.query()) == 3  # downloads, derives, keeps the snapshot
        expected = first.status().unknown_locations
        first.close()
        assert expected == {"aws": 2}

        def no_lookup(*a):
            raise AssertionError("a warm start looked a place up")

        monkeypatch.setattr(geography, "locate", no_lookup)
        second = _catalog(url, tmp_path)
        assert len(second.query()) == 3
        got = second.status().unknown_locations
        second.close()
    assert got == expected
    loaded = second._loader.loaded
    assert loaded is not None and loaded.source == "disk-cache"


def test_a_snapshot_with_bad_unknown_location_counts_is_refused(tmp_path):
    _, cache, name = _warmed(tmp_path)
    data = cache.get(warm.FOLDER, f"{name}.table")
    assert data is not None
    snapshot = warm.decode(data, name)
    for bad in ({"nobody": 1}, {"aws": -1}, {"aws": "1"}):
        snapshot.table._unknown = bad
        again = warm.encode(snapshot, name)
        assert again is not None
        with pytest.raises(ValueError, match="unknown-location"):
            warm.decode(again, name)
