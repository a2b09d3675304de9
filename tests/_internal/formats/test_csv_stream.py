"""A CSV parsed as it is inflated reads as the whole bytes read (issue 50's streaming load)."""

from __future__ import annotations

import pytest

from gpuhunt._internal.errors import CatalogIntegrityError
from gpuhunt._internal.formats.archive import read_archive, sha256, write_archive
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.formats.csv_stream import build_table_streamed
from tests.helpers import item


def test_a_member_is_inflated_a_piece_at_a_time_and_held_to_its_manifest():
    """`Members.stream` never holds the member whole, and a CSV that does not match its manifest
    raises when its last piece is read (the table built from it is dropped)."""
    good = csv_bytes([item(price=float(p), instance_name=f"i{p}") for p in range(1, 400)])
    # A CSV without a sha256 in its manifest is not read when the archive is: deferred.
    archive = read_archive(write_archive({"aws": good}, {"providers": {"aws": {}}}), source="t")
    size, pieces = archive.csvs.stream("aws")
    assert size == len(good) and b"".join(pieces) == good
    assert not archive.csvs.inflated("aws")  # nothing kept
    deferred = read_archive(
        write_archive(
            {"aws": good},
            {"providers": {"aws": {"sha256": sha256(good + b"!"), "columns_sha256": sha256(b"c")}}},
            {"aws": b"c"},
        ),
        source="t",
    )
    size, pieces = deferred.csvs.stream("aws")
    with pytest.raises(CatalogIntegrityError, match="does not match the sha256"):
        build_table_streamed(pieces, provider="aws", size=size, whole=lambda: good)
    archive.csvs["aws"]  # inflated now: no stream of bytes already in memory
    assert archive.csvs.stream("aws") is None
