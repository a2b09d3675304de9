"""Spot Advisor bands from a stored copy of the real document (trimmed; see data/README.md)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from gpuhunt._internal.costs import interruption
from gpuhunt._internal.costs.interruption import BandTable

DATA = Path(__file__).parent / "data"
STORED = datetime(2025, 6, 28, 10, 10, 57, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def advice() -> list[interruption.Advice]:
    doc = json.loads((DATA / "spot_advisor_trimmed.json").read_text())
    return interruption.parse_spot_advisor(doc, observed_at=STORED)


def test_bands_and_savings_are_the_documents(advice):
    table = BandTable(advice)
    p5 = table.lookup("us-east-1", "p5.48xlarge")
    assert p5 is not None
    assert (p5.band.index, p5.band.label, p5.band.upper_pct, p5.savings_pct) == (4, ">20%", 100, 52)
    p4d = table.lookup("us-east-1", "p4d.24xlarge")
    assert p4d is not None and (p4d.band.label, p4d.band.upper_pct) == ("10-15%", 15.0)
    assert table.lookup("eu-west-1", "p5.48xlarge") is None  # not rated there
    assert table.lookup("us-east-1", "g6.xlarge").observed_at == STORED  # type: ignore[union-attr]
    assert {a.region for a in advice} == {"us-east-1", "eu-west-1"}  # Linux only, both regions


@pytest.mark.parametrize(
    ("label", "upper"), [("<5%", 5.0), ("5-10%", 10.0), ("10-15%", 15.0), (">20%", 100.0)]
)
def test_upper_bound_from_the_label(label, upper):
    assert interruption.band_from_label(0, label).upper_pct == upper


def test_an_unreadable_label_is_named():
    with pytest.raises(ValueError, match="label 'often'"):
        interruption.band_from_label(3, "often")


def test_arrays_and_the_max_interruption_filter(advice):
    table = BandTable(advice)
    regions = ["us-east-1", "us-east-1", "us-east-1", "eu-west-1", "ap-south-1"]
    types = ["p4de.24xlarge", "g6e.xlarge", "p4d.24xlarge", "g4dn.xlarge", "g5.xlarge"]
    band, upper = table.bands(regions, types)
    assert list(band) == [0, 1, 2, 1, -1]
    assert list(upper[:4]) == [5.0, 10.0, 15.0, 10.0] and np.isnan(upper[4])
    # 10 keeps <5% and 5-10%; the unknown band is not kept.
    assert list(table.within(regions, types, 10)) == [True, True, False, True, False]
    with pytest.raises(ValueError, match="max_interruption"):
        table.within(regions, types, 0)


def test_empty_table():
    band, upper = BandTable([]).bands(["us-east-1"], ["p5.48xlarge"])
    assert list(band) == [-1] and np.isnan(upper[0])


def test_file_round_trip(advice):
    data = interruption.write_bands(advice)
    assert interruption.read_bands(data) == advice
    with pytest.raises(ValueError, match=r"aws.interruption, line \d+: invalid literal"):
        interruption.read_bands(data.replace(b",52,", b",lots,"), source="aws.interruption")


def test_a_document_without_ranges_is_named():
    with pytest.raises(ValueError, match="ranges"):
        interruption.parse_spot_advisor({"spot_advisor": {}}, observed_at=None)
