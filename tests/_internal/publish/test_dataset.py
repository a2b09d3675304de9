"""The build's observations step (`publish.dataset`): each provider published fresh gets its
Parquet file and an `availability` summary in the manifest; a carried-over one keeps the
summary of the collection it carries; `catalog publish` uploads the files after checking them."""

from __future__ import annotations

import io

import pyarrow.parquet as pq
import pytest

from gpuhunt._internal.errors import PipelineError
from gpuhunt._internal.formats.archive import sha256
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.history import observations
from gpuhunt._internal.load.sources import RawCatalog
from gpuhunt._internal.publish import dataset
from gpuhunt._internal.publish.build import Collected, build_catalog
from gpuhunt._internal.publish.files import write_build
from gpuhunt._internal.publish.verify import read_build
from tests.helpers import item

V1, V2 = "20261202-05", "20261202-06"
PATH1 = f"observations/date=2026-12-02/provider=lambdalabs/part-{V1}.parquet"


def _lambda(*readings: bool | None) -> bytes:
    return csv_bytes(
        [
            item(
                "lambdalabs",
                location=f"us-east-{n}",
                available=a,
            )
            for n, a in enumerate(readings, start=1)
        ]
    )


def _first():
    collected = {
        "lambdalabs": Collected(_lambda(True, False, None), "2026-12-02T05:00:00+00:00"),
        "aws": Collected(csv_bytes([item("aws")]), "2026-12-02T05:00:00+00:00"),
    }
    return build_catalog(V1, collected, None, providers=["aws", "lambdalabs"])


def test_each_fresh_provider_gets_its_observations_file_and_summary():
    b = _first()
    entry = b.manifest["providers"]["lambdalabs"]
    assert entry["availability"] == {
        "observations": 3,
        "reported": 2,
        "available": 1,
        "path": PATH1,
        "sha256": sha256(b.objects[PATH1]),
    }
    table = pq.read_table(io.BytesIO(b.objects[PATH1]))
    assert table.column("available").to_pylist() == [True, False, None]
    assert b.manifest["providers"]["aws"]["availability"]["reported"] == 0
    assert dataset.files_of(b.manifest) == {
        e["availability"]["path"]: e["availability"]["sha256"]
        for e in b.manifest["providers"].values()
    }


def test_a_carried_over_provider_is_not_observed_again_and_keeps_its_summary():
    first = _first()
    previous = RawCatalog(
        csvs={"aws": csv_bytes([item("aws")]), "lambdalabs": _lambda(True, False, None)},
        version=V1,
        source="directory",
        url="test://",
        manifest=first.manifest,
    )
    # Only aws collected this hour: lambdalabs is carried over.
    collected = {"aws": Collected(csv_bytes([item("aws")]), "2026-12-02T06:00:00+00:00")}
    second = build_catalog(V2, collected, previous, providers=["aws", "lambdalabs"])
    lam = second.manifest["providers"]["lambdalabs"]
    assert lam["status"] == "carried_over"
    assert lam["availability"] == first.manifest["providers"]["lambdalabs"]["availability"]
    assert "availability_lost" not in lam
    written = [k for k in second.objects if k.startswith(observations.ROOT)]
    assert written == [f"observations/date=2026-12-02/provider=aws/part-{V2}.parquet"]
    assert list(dataset.files_of(second.manifest)) == written  # not the carried one's file


def test_without_pyarrow_the_catalog_is_built_and_says_why_there_are_no_observations(
    monkeypatch,
):
    monkeypatch.setattr(observations, "have_writer", lambda: "pyarrow is not installed")
    b = _first()
    info = b.manifest["providers"]["lambdalabs"]["availability"]
    assert info["not_written"] == "pyarrow is not installed" and "path" not in info
    assert not [k for k in b.objects if k.startswith(observations.ROOT)]
    assert f"{V1}/catalog.zip" in b.objects


def test_publish_uploads_the_files_and_refuses_a_damaged_one(tmp_path):
    b = _first()
    write_build(b, tmp_path / "out")
    got = read_build(tmp_path / "out")
    assert got.objects[PATH1] == b.objects[PATH1]
    (tmp_path / "out" / PATH1).write_bytes(b"not the file that was built")
    with pytest.raises(PipelineError, match="does not match its sha256"):
        read_build(tmp_path / "out")
