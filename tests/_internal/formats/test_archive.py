"""Catalog archives: manifest checks and a safe reader."""

import io
import os
import struct
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


def _count_inflates(monkeypatch) -> list[str]:
    """The names of the members inflated from here on, in order."""
    from gpuhunt._internal.formats import archive

    seen: list[str] = []
    real = archive._inflate

    def counting(z, info, source):
        seen.append(info.filename)
        return real(z, info, source)

    monkeypatch.setattr(archive, "_inflate", counting)
    return seen


def _overlapping(data: bytes, name: str, copies: int) -> bytes:
    """`data` (a zip) with `copies` more central-directory entries that all point at member
    `name`'s bytes under names of the same length: an overlapping-entry zip, whose entries
    would each expand to the whole member."""
    eocd = data.rindex(b"PK\x05\x06")
    count, cd_size, cd_offset = struct.unpack("<HII", data[eocd + 10 : eocd + 20])
    central = data[cd_offset : cd_offset + cd_size]
    pos, record = 0, b""
    while pos < len(central):
        n, m, k = struct.unpack("<HHH", central[pos + 28 : pos + 34])
        end = pos + 46 + n + m + k
        if central[pos + 46 : pos + 46 + n] == name.encode():
            record = central[pos:end]
        pos = end
    stem = name[: -len(".csv")]
    extra = b"".join(
        record[:46] + f"{stem[:-3]}{i:03d}.csv".encode() + record[46 + len(name) :]
        for i in range(copies)
    )
    tail = struct.pack(
        "<4sHHHHIIH", b"PK\x05\x06", 0, 0, count + copies, count + copies,
        cd_size + len(extra), cd_offset, 0,
    )  # fmt: skip
    return data[: cd_offset + cd_size] + extra + tail


def test_a_member_nobody_uses_is_never_inflated(monkeypatch):
    """Issue 40: members of no listed provider are judged from the central directory alone,
    however large (or overlapping) they are; only what the catalog uses is inflated."""
    seen = _count_inflates(monkeypatch)
    aws = csv_bytes([item(price=1.0)])
    big = os.urandom(8 * 1024 * 1024)  # incompressible: within the ratio cap, large to inflate
    data = write_archive(
        {"aws": aws, "junk": big}, {"version": "v1", "providers": {"aws": {"sha256": sha256(aws)}}}
    )
    got = read_archive(data)
    assert got.ignored == ["junk.csv"] and list(got.csvs) == ["aws"]
    assert "junk.csv" not in seen and sorted(seen) == ["aws.csv", "manifest.json"]

    seen.clear()
    packed = write_archive(
        {"aws": aws, "zzzjunk": os.urandom(100_000).hex().encode()},
        {"version": "v1", "providers": {"aws": {"sha256": sha256(aws)}}},
    )
    bomb = _overlapping(packed, "zzzjunk.csv", 300)
    assert len(zipfile.ZipFile(io.BytesIO(bomb)).infolist()) == 303
    got = read_archive(bomb)
    assert list(got.csvs) == ["aws"] and len(got.ignored) == 301
    assert sorted(seen) == ["aws.csv", "manifest.json"]


def test_without_a_manifest_a_csv_is_inflated_when_read(monkeypatch):
    seen = _count_inflates(monkeypatch)
    aws = csv_bytes([item(price=1.0)])
    got = read_archive(write_archive({"aws": aws, "vastai": aws}, {}))
    assert "aws" in got.csvs and len(got.csvs) == 3 - 1 and seen == ["manifest.json"]
    assert got.csvs["aws"] == aws and seen == ["manifest.json", "aws.csv"]
    assert got.csvs["aws"] == aws and seen.count("aws.csv") == 1  # once, then kept


def _with_columns(csv: bytes, member: bytes | None = None) -> bytes:
    """An archive whose manifest vouches for `csv` and its column file, holding `member` (by
    default `csv` itself) as the CSV."""
    from gpuhunt._internal.publish.build import column_file

    packed = column_file("aws", csv)
    entry = {"sha256": sha256(csv), "columns_sha256": sha256(packed)}
    return write_archive(
        {"aws": csv if member is None else member}, {"providers": {"aws": entry}}, {"aws": packed}
    )


def test_a_csv_beside_a_matching_column_file_is_not_inflated_until_read(monkeypatch):
    seen = _count_inflates(monkeypatch)
    csv = csv_bytes([item(price=1.0), item(price=2.0)])
    got = read_archive(_with_columns(csv))
    assert "aws.csv" not in seen and "aws" in got.csvs and "aws" in got.columns
    assert got.sha256 == {"aws": sha256(csv)}  # the manifest's, for the column file's check
    assert got.csvs["aws"] == csv and "aws.csv" in seen


def test_a_csv_not_matching_its_manifest_is_refused_when_read(monkeypatch):
    csv = csv_bytes([item(price=1.0)])
    got = read_archive(_with_columns(csv, member=csv + b"x"), source="v1/catalog.zip")
    with pytest.raises(CatalogIntegrityError, match="v1/catalog.zip: aws.csv does not match"):
        got.csvs["aws"]
    with pytest.raises(CatalogIntegrityError):
        dict(got.csvs)  # every way of reading it is refused, not only `[]`


def test_column_files_are_checked_when_the_archive_is_read_and_held_only_once_read(monkeypatch):
    """Issue 40: a catalog's column files are about its whole loaded size; held from the
    archive's reading on, they were all in memory together. Each is checked against the
    manifest then (streamed), and inflated again, to be held, only when read."""
    from gpuhunt._internal.publish.build import column_file

    seen = _count_inflates(monkeypatch)
    csv = csv_bytes([item(price=1.0), item(price=2.0)])
    got = read_archive(_with_columns(csv))
    assert "aws" in got.columns and "aws.columns" not in seen
    assert not got.columns.inflated("aws")
    assert got.columns["aws"] == column_file("aws", csv) and seen.count("aws.columns") == 1
    # A column file the manifest does not vouch for is still left out when the archive is read:
    packed = column_file("aws", csv)
    entry = {"sha256": sha256(csv), "columns_sha256": sha256(packed + b"x")}
    other = read_archive(
        write_archive({"aws": csv}, {"providers": {"aws": entry}}, {"aws": packed})
    )
    assert "aws" not in other.columns and other.csvs["aws"] == csv


def test_a_member_is_inflated_into_one_buffer_of_its_size():
    """Issue 40: reading a member whole joined the pieces inflated, two to three copies of a
    CSV at a load's peak. Inflated into one buffer, what is held beside it is a piece of the
    compressed member (here a third of the CSV: random text compresses little)."""
    import os
    import tracemalloc

    csv = csv_bytes([item(price=1.0)]) + os.urandom(3 << 20).hex().encode()
    got = read_archive(write_archive({"aws": csv}, {"providers": {"aws": {}}}))
    tracemalloc.start()
    try:
        data = got.csvs["aws"]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert data == csv and peak < len(csv) * 2  # (whole: 3.8 times)
