"""The terms file: what is written reads back the same, 0.1.x-style readers never see it."""

from __future__ import annotations

import io
import zipfile
from datetime import datetime, timezone

import pytest

from gpuhunt._internal.costs.terms import Term
from gpuhunt._internal.formats import terms as terms_file
from gpuhunt._internal.formats.archive import read_archive, write_archive
from gpuhunt._internal.formats.csv import csv_bytes
from tests.helpers import item

TERM = Term(
    provider="azure",
    instance_name="Standard_D8_v4",
    location="westeurope",
    term="1y",
    payment="all",
    offering_class="",
    hourly=0.0,
    upfront=2377.0,
    source="https://prices.azure.com/api/retail/prices",
    observed_at=datetime(2026, 12, 7, tzinfo=timezone.utc),
)


def test_round_trip():
    other = Term(**{**TERM.__dict__, "term": "3y", "upfront": 4594.0, "observed_at": None})
    data = terms_file.write_terms([TERM, other])
    assert terms_file.read_terms(data) == [TERM, other]


def test_names():
    assert terms_file.terms_file_name("aws") == "aws.terms"
    assert terms_file.terms_path_beside("/out/aws.csv") == "/out/aws.terms"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"a,b\n", "not a terms file"),
        (terms_file.write_terms([TERM]).replace(b"2377.0", b"lots"), "line 2: could not convert"),
        (terms_file.write_terms([TERM]).replace(b",1y,", b",2y,"), "line 2: term '2y'"),
    ],
)
def test_a_bad_file_names_the_line(data, message):
    with pytest.raises(ValueError, match=message):
        terms_file.read_terms(data, source="aws.terms")


def test_a_zip_with_a_terms_member_reads_as_the_catalog_alone():
    offers = [item(provider="azure")]
    buf = io.BytesIO(write_archive({"azure": csv_bytes(offers)}, {}))
    with zipfile.ZipFile(buf, "a") as z:
        z.writestr("azure.terms", terms_file.write_terms([TERM]))
    catalog = buf.getvalue()
    archive = read_archive(catalog)
    assert list(archive.csvs) == ["azure"]
    # gpuhunt 0.1.34's loader opens `{provider}.csv` by name and nothing else.
    with zipfile.ZipFile(io.BytesIO(catalog)) as z:
        assert z.read("azure.csv") == csv_bytes(offers)
        assert terms_file.read_terms(z.read("azure.terms")) == [TERM]
