"""`cli/footer.py`: the footer fits three lines and names the catalog once; the columns a
query filters on stay when the table is narrowed."""

from __future__ import annotations

import argparse

import pytest

from gpuhunt._internal import cli
from gpuhunt._internal.cli import footer, render
from tests.helpers import item

FULL = [
    "50 of 50 offers, each at its cheapest region (397 with every region: --all-regions).",
    "The snapshot bundled with gpuhunt (snapshot-20251130), because the catalog could not be "
    "loaded (not asked: the check 380s ago got no answer (https://dstack-gpu-pricing.s3.eu-west"
    "-1.amazonaws.com/v3/version: ConnectionError)) and no copy was cached; next check in 8min "
    "40s (--refresh checks now).",
    "Data age: aws 372d (vantage.sh), azure 201d (anycloud), daytona unknown (SkyPilot), gcp "
    "201d (Cyclenerd). daytona: a copy of its offers (data age above), not asked live; --online "
    "asks it.",
]
SHORT = [
    FULL[0],
    "Bundled snapshot snapshot-20251130 (catalog not loaded: ConnectionError; next check in "
    "8min 40s).",
    "Data age: aws 372d, azure 201d, gcp 201d; 1 unknown. Copies, not asked live: daytona "
    "(--online asks it).",
]


def test_the_full_wording_when_it_fits_three_lines():
    assert footer.footer(FULL, SHORT, 1000).splitlines() == FULL


@pytest.mark.parametrize("width", [None, 100, 80, 60, 30])
def test_at_most_three_lines_none_wider_than_the_width(width):
    text = footer.footer(FULL, SHORT, width)
    lines = text.splitlines()
    limit = footer.PIPED_WIDTH if width is None else width
    assert 1 <= len(lines) <= footer.FOOTER_LINES
    assert all(len(line) <= limit for line in lines)
    assert text.startswith("50 of 50 offers")
    # The catalog URL, said at length in the full wording, is not repeated in the short one.
    assert text.count("amazonaws") <= 1 and text.count("snapshot-20251130") <= 1
    if width is None or width >= 60:
        assert "snapshot-20251130" in text


def test_short_wording_when_the_full_one_does_not_fit():
    assert footer.footer(FULL, SHORT, 120).splitlines() == SHORT


def args(**given):
    base = {"min_memory": None, "max_memory": None, "min_cpu": None, "max_cpu": None}
    return argparse.Namespace(**{**base, "sort": "price", **given})


def test_filtered_columns():
    assert footer.filtered_columns(args()) == frozenset()
    assert footer.filtered_columns(args(min_memory=200.0)) == {"MEMORY"}
    assert footer.filtered_columns(args(max_cpu=8, sort="tflops-per-dollar")) == {
        "CPU",
        "TFLOPS/$",
    }


def test_a_narrowed_table_keeps_the_column_the_query_filters_on():
    offers = [
        item("aws", instance_name=f"p5.{n}xlarge-with-a-long-name", price=1.0 + n, memory=64.0 * n)
        for n in range(1, 4)
    ]
    plain = render.offers_table(offers, width=80)
    assert "MEMORY" not in plain.splitlines()[0]  # dropped first on a narrow terminal...
    kept = render.offers_table(offers, width=80, keep={"MEMORY"})
    assert "MEMORY" in kept.splitlines()[0]  # ...unless the query filters on it
    assert all(len(line) <= 80 for line in plain.splitlines() + kept.splitlines())


def test_the_cli_keeps_memory_when_min_memory_is_given(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "90")
    assert cli.main(["query", "--gpu", "H100"]) == 0
    assert "MEMORY" not in capsys.readouterr().out.splitlines()[0]
    assert cli.main(["query", "--gpu", "H100", "--min-memory", "200"]) == 0
    out = capsys.readouterr().out
    assert "MEMORY" in out.splitlines()[0]
    assert len(out.rpartition("\n\n")[2].splitlines()) <= 3


def test_a_recording_time_in_the_future_is_an_unknown_age_not_a_fresh_one():
    import datetime as dt

    from gpuhunt._internal.catalog_status import CatalogStatus

    now = dt.datetime.now(dt.timezone.utc)
    status = CatalogStatus(
        version="v",
        source="bundled",
        url=None,
        loaded_at=None,
        age_seconds=None,
        recorded_at={"aws": now + dt.timedelta(days=30), "gcp": now - dt.timedelta(days=3)},
    )
    assert footer.data_ages(status) == {"aws": "unknown (recorded in the future)", "gcp": "3d"}


def test_enumerated_locations_and_momentary_listings_are_named_in_the_notes():
    shown = [
        item("runpod", location_source="enumerated"),
        item("lium", momentary=True),
        item("aws", location_source="listed"),
    ]
    notes = " ".join(render.answer_notes(shown, "price", False))
    assert "Locations of runpod: a third-party catalog's enumeration" in notes
    assert "Momentary marketplace listings of a host: 1 of these rows" in notes
    assert render.answer_notes([item("aws")], "price", False) == []
