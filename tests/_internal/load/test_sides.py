"""Side files read lazily from a zip (held to the manifest) or a folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuhunt._internal.costs.terms import Term
from gpuhunt._internal.errors import CatalogIntegrityError
from gpuhunt._internal.formats.archive import read_archive, sha256, write_archive
from gpuhunt._internal.formats.terms import write_terms
from gpuhunt._internal.load import sides

TERM = Term("aws", "x1", "us-east-1", "1y", "none", "standard", 0.5, 0.0, "s", None)


def test_zip_members_are_read_on_first_ask_only_and_checked():
    data = write_terms([TERM])
    manifest = {"sides": {"aws.terms": {"sha256": sha256(data)}}}
    zipped = write_archive({"aws": b"x"}, manifest, sides={"aws.terms": data})
    reads: list[str] = []
    reader = sides.zip_reader(zipped, manifest)

    def counting(name: str) -> bytes | None:
        reads.append(name)
        return reader(name)

    s = sides.Sides(counting)
    assert reads == []
    assert s.terms("aws") == [TERM] and s.terms("aws") == [TERM]
    assert s.terms("gcp") is None and s.bands("aws") is None
    assert reads == ["aws.terms", "gcp.terms", "aws.interruption"]
    bad = sides.zip_reader(zipped, {"sides": {"aws.terms": {"sha256": "0" * 64}}})
    with pytest.raises(CatalogIntegrityError, match="aws.terms"):
        bad("aws.terms")


def test_the_archive_reader_leaves_side_files_alone():
    zipped = write_archive({"aws": b"x"}, {}, sides={"aws.terms": write_terms([TERM])})
    assert list(read_archive(zipped).csvs) == ["aws"]


def test_a_side_file_name_that_would_be_read_as_a_catalog_is_refused():
    with pytest.raises(ValueError, match="aws.terms.csv"):
        write_archive({"aws": b"x"}, {}, sides={"aws.terms.csv": b""})


def test_folder(tmp_path: Path):
    (tmp_path / "aws.terms").write_bytes(write_terms([TERM]))
    s = sides.Sides(sides.folder_reader(tmp_path))
    assert s.terms("aws") == [TERM] and s.terms("azure") is None


def test_bundled_snapshot_carries_the_stored_spot_bands():
    table = sides.Sides(sides.bundled_reader()).bands("aws")
    assert table is not None
    advice = table.lookup("us-east-1", "p5.48xlarge")
    assert advice is not None and advice.observed_at is not None
    assert advice.observed_at.date().isoformat() == "2025-06-28"


def test_a_downloaded_catalog_reads_the_disk_cache_copy(tmp_path: Path):
    import datetime as dt

    from gpuhunt._internal.load.cache import DiskCache
    from gpuhunt._internal.load.loaded import Loaded

    data = write_terms([TERM])
    manifest = {"sides": {"aws.terms": {"sha256": sha256(data)}}}
    DiskCache("https://x/v3", tmp_path).put(
        write_archive({"aws": b"x"}, manifest, sides={"aws.terms": data}),
        "archive",
        "v1",
        "catalog.zip",
    )

    def loaded(source: str, version: str) -> Loaded:
        return Loaded(
            None, version, source, "https://x/v3", 0.0, dt.datetime.now(), manifest, False
        )  # type: ignore[arg-type]

    assert sides.Sides(sides.reader_of(loaded("network", "v1"), tmp_path)).terms("aws") == [TERM]
    assert sides.Sides(sides.reader_of(loaded("disk-cache", "v2"), tmp_path)).terms("aws") is None
