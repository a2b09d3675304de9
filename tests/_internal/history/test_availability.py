"""Availability history end to end: Lambda's recorded offers (what its collector makes of
`scripts/replay/replay_lambdalabs`) with availability readings set by the test as Lambda reports
them (`regions_with_capacity_available`: some types have capacity in some regions), built and
published hourly by `gpuhunt catalog build`, then read back by `gpuhunt history
--availability` through DuckDB over the observations dataset.

Published to a local folder here; the moto S3 test reads the same dataset through s3fs."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from pathlib import Path

import pytest

from gpuhunt import Catalog
from gpuhunt._internal.errors import HistoryUnavailable
from gpuhunt._internal.formats import archive
from gpuhunt._internal.formats.csv import write_csv_file
from gpuhunt._internal.history import availability
from gpuhunt._internal.models import CatalogItem
from gpuhunt._internal.publish import report
from tests._internal.pipeline import Bucket, build, gpuhunt, publish

V1, V2, V3 = "20261202-05", "20261202-06", "20261202-07"
HOURS = {V1: "2026-12-02T05:00:00+00:00", V2: "2026-12-02T06:00:00+00:00"}
HOURS[V3] = "2026-12-02T07:00:00+00:00"
SOLD_OUT = "gpu_1x_h100_sxm5"  # the type that sells out in the second hour


def _had_capacity(i: CatalogItem) -> bool:
    # Made up for the test, in the shape of Lambda's answer: every 1-GPU type has capacity in
    # its us- regions, nothing else has any.
    return i.instance_name.startswith("gpu_1x") and i.location.startswith("us-")


def _hour(items: list[CatalogItem], version: str) -> list[CatalogItem]:
    out = []
    for i in items:
        available: bool | None = None  # V3: the collector stopped reading it
        if version != V3:
            available = _had_capacity(i)
            if version == V2 and i.instance_name == SOLD_OUT:
                available = False
        out.append(i.__class__(**{**i.__dict__, "available": available}))
    return out


def _collect(folder: Path, items: list[CatalogItem], version: str) -> Path:
    folder.mkdir(parents=True)
    path = folder / "lambdalabs.csv"
    write_csv_file(_hour(items, version), str(path))
    at = dt.datetime.fromisoformat(HOURS[version]).timestamp()
    os.utime(path, (at, at))
    return folder


def _publish_local(out: Path, base: Path) -> None:
    """What `catalog publish` does, into a folder: the version's objects, then the pointers."""
    shutil.copytree(out, base, dirs_exist_ok=True)


@pytest.fixture
def hourly(tmp_path, replayed) -> Path:
    """V1 and V2 published an hour apart into one base folder."""
    base = tmp_path / "base"
    base.mkdir()
    lam = replayed["lambdalabs"]
    for v in (V1, V2):
        previous = str(base) if v != V1 else None
        build(_collect(tmp_path / f"in-{v}", lam, v), v, tmp_path / v, previous=previous)
        _publish_local(tmp_path / v, base)
    return base


def _rows(capsys, *argv: object) -> list[dict[str, object]]:
    capsys.readouterr()
    assert gpuhunt("history", "--availability", "--json", *argv) == 0
    return json.loads(capsys.readouterr().out)["rows"]


def test_a_type_that_sold_out_in_the_second_hour_was_available_half_the_time(
    hourly, replayed, capsys
):
    lam = replayed["lambdalabs"]
    rows = _rows(capsys, "--catalog-url", hourly)
    keys = {(i.instance_name, i.location, i.spot) for i in lam}
    assert len(rows) == len(keys)  # every offer, kept whether available or not
    by_key = {(r["instance_name"], r["location"], r["spot"]): r for r in rows}
    assert {r["observations"] for r in rows} == {2} and {r["reported"] for r in rows} == {2}
    for i in lam:
        r = by_key[(i.instance_name, i.location, i.spot)]
        if i.instance_name == SOLD_OUT and _had_capacity(i):
            expected = 0.5
        elif _had_capacity(i):
            expected = 1.0
        else:
            expected = 0.0
        assert r["available_share"] == expected, r
        assert r["last_available"] is (_had_capacity(i) and i.instance_name != SOLD_OUT)
        assert (r["first_observed"], r["last_observed"]) == (
            "2026-12-02T05:00:00Z",
            "2026-12-02T06:00:00Z",
        )
    half = [r for r in rows if r["available_share"] == 0.5]
    assert half and {r["instance_name"] for r in half} == {SOLD_OUT}

    # Filters: a GPU by any alias, a provider, a day.
    h100 = _rows(capsys, "--catalog-url", hourly, "--gpu", "H100")
    assert h100 and {r["gpu_name"] for r in h100} == {"H100"}
    assert _rows(capsys, "--catalog-url", hourly, "--provider", "lambdalabs") == rows
    assert _rows(capsys, "--catalog-url", hourly, "--since", "2026-12-03") == []

    # The table.
    assert gpuhunt("history", "--availability", "--catalog-url", hourly, "--gpu", "H100") == 0
    out = capsys.readouterr().out
    assert "AVAILABLE" in out and "50%" in out and "2 observation files" in out


def test_the_gate_takes_an_availability_flip_for_no_change(hourly):
    # V2 flipped a type to sold out (and the bytes of the CSV changed): published fresh.
    manifest = archive.read_archive((hourly / V2 / "catalog.zip").read_bytes()).manifest
    assert manifest is not None
    entry = manifest["providers"]["lambdalabs"]
    assert entry["status"] == "fresh" and "accepted_despite" not in entry
    info = entry["availability"]
    assert info["observations"] == info["reported"] > info["available"] > 0
    assert (hourly / info["path"]).is_file()
    assert info["path"] == f"observations/date=2026-12-02/provider=lambdalabs/part-{V2}.parquet"


def test_a_provider_that_stops_reporting_availability_is_named_in_the_report(
    hourly, replayed, tmp_path
):
    lam = replayed["lambdalabs"]
    build(_collect(tmp_path / "in-v3", lam, V3), V3, tmp_path / V3, previous=str(hourly))
    manifest = archive.read_archive((tmp_path / V3 / V3 / "catalog.zip").read_bytes()).manifest
    assert manifest is not None
    entry = manifest["providers"]["lambdalabs"]
    assert entry["status"] == "fresh" and entry["availability"]["reported"] == 0
    assert "lambdalabs stopped reporting availability" in entry["availability_lost"]
    got = report.build_report(manifest, dt.datetime.fromisoformat(HOURS[V3]))
    assert any("stopped reporting availability" in p for p in got.problems)
    assert "stopped reporting availability" in report.markdown(got)


def test_price_history_carries_the_availability_in_python(hourly):
    catalog = Catalog(catalog_url=str(hourly), auto_reload=False)
    got = catalog.history(gpu_name="H100", availability=True)
    assert got.availability is not None
    shares = {r.available_share for r in got.availability.rows}
    assert 0.5 in shares
    assert got.to_dict()["availability"]["rows"]
    assert catalog.history(gpu_name="H100").availability is None


def test_a_catalog_without_observations_says_so(tmp_path):
    (tmp_path / "observations").mkdir()
    with pytest.raises(HistoryUnavailable, match="No observations are published"):
        availability.query(str(tmp_path))


@pytest.mark.parametrize(
    ("url", "endpoint", "root"),
    [
        (
            "https://dstack-gpu-pricing.s3.eu-west-1.amazonaws.com/v3",
            None,
            "dstack-gpu-pricing/v3/observations",
        ),
        ("https://s3.amazonaws.com/b/v3", None, "b/v3/observations"),
        ("s3://b/v3/", None, "b/v3/observations"),
        ("http://127.0.0.1:9000/b/v3", "http://127.0.0.1:9000", "b/v3/observations"),
    ],
)
def test_where_the_dataset_is_read(url, endpoint, root):
    where = availability.locate(url, s3_endpoint=endpoint)
    assert where.s3 and where.root == root and where.endpoint == endpoint


def test_an_address_that_is_no_bucket_is_refused():
    with pytest.raises(HistoryUnavailable, match="cannot be read"):
        availability.locate("https://example.com/catalog")


@pytest.mark.moto
def test_duckdb_reads_the_dataset_in_an_s3_bucket_through_s3fs(
    tmp_path, replayed, bucket: Bucket, capsys
):
    lam = replayed["lambdalabs"]
    for v in (V1, V2):
        previous = bucket.base if v != V1 else None
        build(_collect(tmp_path / f"in-{v}", lam, v), v, tmp_path / v, previous=previous)
        publish(tmp_path / v, bucket)
    keys = bucket.object_keys()
    for v in (V1, V2):
        assert f"v3/observations/date=2026-12-02/provider=lambdalabs/part-{v}.parquet" in keys
    # The bucket's path-style address under GPUHUNT_S3_ENDPOINT_URL (set by the fixture).
    rows = _rows(capsys, "--catalog-url", bucket.base, "--gpu", "H100")
    assert rows and {r["observations"] for r in rows} == {2}
    assert {r["instance_name"] for r in rows if r["available_share"] == 0.5} == {SOLD_OUT}
    # And an s3:// URL, as Athena, Trino or Spark users name it.
    assert _rows(capsys, "--catalog-url", f"s3://{bucket.name}/v3", "--gpu", "H100") == rows
    # `catalog verify` checks this version's observations against the manifest.
    assert gpuhunt("catalog", "verify", bucket.base) == 0
    bucket.put(f"observations/date=2026-12-02/provider=lambdalabs/part-{V2}.parquet", b"x")
    assert gpuhunt("catalog", "verify", bucket.base) != 0
    assert "does not match its sha256" in capsys.readouterr().err


def test_a_window_reads_only_its_own_partitions():
    files = [
        f"gpuhunt-s3://b/v3/observations/date=2026-12-0{d}/provider={p}/part-2026120{d}-05.parquet"
        for d in (1, 2, 3)
        for p in ("aws", "lambdalabs")
    ]
    got = availability.in_window(files, dt.date(2026, 12, 2), ["LambdaLabs"])
    assert got == [files[3], files[5]]
    assert availability.in_window(files, None, None) == files
    assert availability.in_window(["observations/stray.parquet"], None, None) == []


def test_the_page_goes_on_without_an_availability_history(tmp_path, monkeypatch):
    assert availability.recent(str(tmp_path)) is None  # no dataset at all

    def broken(*a, **kw):
        raise RuntimeError("a bucket client's own error")

    monkeypatch.setattr(availability, "query", broken)
    assert availability.recent("s3://b/v3") is None
