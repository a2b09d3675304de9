"""Bands over an answer's rows and the `max_interruption` mask (stored advisor copy)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from gpuhunt._internal.costs import bands, interruption

DATA = Path(__file__).parent / "data"


class _Source:
    def __init__(self) -> None:
        doc = json.loads((DATA / "spot_advisor_trimmed.json").read_text())
        self.table = interruption.BandTable(interruption.parse_spot_advisor(doc, observed_at=None))

    def bands(self, provider: str) -> interruption.BandTable | None:
        return self.table if provider == "aws" else None


def test_only_spot_rows_of_a_provider_with_bands_get_one():
    doc = json.loads((DATA / "spot_advisor_trimmed.json").read_text())
    r = doc["spot_advisor"]["us-east-1"]["Linux"]["g5.xlarge"]["r"]
    index, upper, labels = bands.row_bands(
        _Source(),
        np.array(["aws", "aws", "runpod", "aws"]),
        np.array(["g5.xlarge", "g5.xlarge", "g5.xlarge", "g5.xlarge"]),
        np.array(["us-east-1", "us-east-1", "us-east-1", "mars-1"]),
        np.array([True, False, True, True]),
    )
    assert index.tolist() == [r, -1, -1, -1]
    assert labels[r] == doc["ranges"][r]["label"]
    assert np.isnan(upper[1:]).all() and not np.isnan(upper[0])


def test_no_source_no_band():
    index, upper, labels = bands.row_bands(
        None, np.array(["aws"]), np.array(["g5.xlarge"]), np.array(["us-east-1"]), np.array([True])
    )
    assert index.tolist() == [-1] and np.isnan(upper).all() and labels == []


def test_mask_keeps_on_demand_and_known_low_bands_only():
    spot = np.array([False, True, True, True])
    upper = np.array([np.nan, 5.0, 15.0, np.nan])
    assert bands.spot_band_mask(spot, upper, 10).tolist() == [True, True, False, False]
    assert bands.spot_band_mask(spot, upper, 15).tolist() == [True, True, True, False]
