"""Catalog archives: manifest checks and a safe reader."""

import io
import zipfile

import pytest

from gpuhunt import CatalogIntegrityError
from gpuhunt._internal.formats.archive import read_archive, sha256, write_archive
from gpuhunt._internal.formats.csv import csv_bytes
from tests.helpers import item


def test_archive_round_trip_and_sha_check():
    csv = csv_bytes([item()])
    manifest = {"providers": {"aws": {"sha256": sha256(csv)}}}
    data = write_archive({"aws": csv}, manifest)
    assert read_archive(data).csvs == {"aws": csv}
    bad = write_archive({"aws": csv + b"x"}, manifest)
    with pytest.raises(CatalogIntegrityError, match="aws.csv does not match"):
        read_archive(bad, source="v1/catalog.zip")


@pytest.mark.parametrize("name", ["../evil.csv", "/abs.csv", "dir/aws.csv", "aws", "AWS.CSV"])
def test_archive_refuses_unexpected_members(name):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(name, "x")
    with pytest.raises(CatalogIntegrityError, match="unexpected member"):
        read_archive(buf.getvalue())


def test_archive_skips_member_kinds_it_does_not_read():
    """Room for later versions to add kinds of member: a plain name is left unread."""
    csv = csv_bytes([item()])
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("aws.csv", csv)
        z.writestr("aws.future", b"\x00" * 10)
    archive = read_archive(buf.getvalue())
    assert archive.csvs == {"aws": csv} and archive.columns == {}


def test_archive_drops_a_column_file_that_does_not_match_its_manifest(caplog):
    csv = csv_bytes([item()])
    manifest = {"providers": {"aws": {"sha256": sha256(csv), "columns_sha256": "0" * 64}}}
    archive = read_archive(write_archive({"aws": csv}, manifest, {"aws": b"x"}))
    assert archive.csvs == {"aws": csv} and archive.columns == {}
    assert "parsing the CSV instead" in caplog.text
    manifest["providers"]["aws"]["columns_sha256"] = sha256(b"x")
    archive = read_archive(write_archive({"aws": csv}, manifest, {"aws": b"x"}))
    assert archive.columns == {"aws": b"x"} and archive.sha256 == {"aws": sha256(csv)}


def test_archive_refuses_bombs_and_truncation():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("aws.csv", b"0" * 50_000_000)
    with pytest.raises(CatalogIntegrityError, match="compressed"):
        read_archive(buf.getvalue())
    good = write_archive({"aws": csv_bytes([item()])}, {})
    with pytest.raises(CatalogIntegrityError):
        read_archive(good[: len(good) // 2])


def test_a_member_the_manifest_does_not_list_is_ignored_and_reported(caplog):
    aws = csv_bytes([item(price=1.0)])
    extra = csv_bytes([item("vastai", price=0.01)])
    data = write_archive(
        {"aws": aws, "vastai": extra},
        {"version": "v1", "providers": {"aws": {"sha256": sha256(aws)}}},
    )
    got = read_archive(data, source="catalog.zip")
    assert list(got.csvs) == ["aws"] and got.ignored == ["vastai.csv"]
    assert "ignoring vastai.csv, which its manifest does not list" in caplog.text
