"""The price history table: how a build extends it, what it keeps.
(The daily query over it: test_daily.py.)
Offers here are made up for the tests (instance names as Lambda and AWS spell theirs)."""

from __future__ import annotations

import datetime as dt

import pytest

from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.history import table as history
from gpuhunt._internal.history.table import Span
from tests._internal.history.offers import D1, D2, D3, D4, offers
from tests.helpers import item


def test_unchanged_prices_extend_a_row_and_changes_open_one():
    h = history.observe([], None, offers(("a", "r1", 2.0), ("b", "r1", 3.0)), "v1", D1)
    h = history.observe(h, "v1", offers(("a", "r1", 2.0), ("b", "r1", 2.5)), "v2", D2)
    h = history.observe(h, "v2", offers(("a", "r1", 2.0), ("b", "r1", 2.5)), "v3", D3)
    rows = sorted((s.instance_name, s.price, s.from_version, s.to_version) for s in h)
    assert rows == [("a", 2.0, "v1", "v3"), ("b", 2.5, "v2", "v3"), ("b", 3.0, "v1", "v1")]
    # Size grows with changes, not with versions.
    for n in range(4, 40):
        h = history.observe(h, f"v{n - 1}", offers(("a", "r1", 2.0), ("b", "r1", 2.5)), f"v{n}", D4)
    assert len(h) == 3


def test_removed_offer_keeps_its_last_row_and_a_return_starts_a_new_one():
    h = history.observe([], None, offers(("a", "r1", 2.0), ("a", "r2", 2.0)), "v1", D1)
    h = history.observe(h, "v1", offers(("a", "r1", 2.0)), "v2", D2)
    gone = [s for s in h if s.location == "r2"]
    assert [(s.to_version, s.to_date) for s in gone] == [("v1", D1)]
    h = history.observe(h, "v2", offers(("a", "r1", 2.0), ("a", "r2", 2.0)), "v3", D3)
    back = sorted((s.from_version, s.to_version) for s in h if s.location == "r2")
    assert back == [("v1", "v1"), ("v3", "v3")]  # same price, but not continuous


def test_table_round_trips_and_is_deterministic():
    h = history.observe([], None, offers(("b", "r1", 3.1), ("a", "r1", 0.1 + 0.2)), "v1", D1)
    data = history.dumps(h)
    assert data == history.dumps(list(reversed(h)))
    assert data.splitlines()[0].decode() == ",".join(history.HEADER)
    assert history.loads(data) == sorted(h, key=lambda s: s.instance_name)
    assert history.loads(data)[0].price == 0.1 + 0.2  # exact, so equal prices compare equal
    assert history.rows_of(data) == 2


@pytest.mark.parametrize(
    "line, message",
    [
        ("a,r1,True,H100,1,2.0,v1,2026-11-30,v1,2026-11-29", "to_date 2026-11-29 is before"),
        ("a,r1,yes,H100,1,2.0,v1,2026-11-29,v1,2026-11-29", "spot is not True/False"),
        ("a,r1,True,H100,1,nan,v1,2026-11-29,v1,2026-11-29", "out of range"),
        ("a,r1,True,H100,1,2.0,../x,2026-11-29,v1,2026-11-29", "not a catalog version"),
        ("a,r1,True,H100,1,2.0,v1,2026-13-01,v1,2026-11-29", "from_date is not a date"),
        ("a,r1,True,H100,1,2.0", "6 fields, expected 10"),
    ],
)
def test_malformed_table_is_refused_naming_the_line(line, message):
    data = (",".join(history.HEADER) + "\n" + line + "\n").encode()
    with pytest.raises(ValueError, match=f"line 2: .*{message}"):
        history.loads(data)
    with pytest.raises(ValueError, match="header is not the history format"):
        history.loads(b"instance_name,price\n")


def span(location: str, to_version: str, to_date: dt.date) -> Span:
    return Span("a", location, False, "H100", 1, 2.0, "v0", to_date, to_version, to_date)


def test_retention_drops_old_closed_rows_never_current_ones():
    today = dt.date(2027, 6, 1)
    old = today - dt.timedelta(days=history.RETENTION_DAYS + 1)
    rows = [span("gone", "v0", old), span("kept", "v1", today - dt.timedelta(days=3))]
    rows.append(Span("a", "current", False, "H100", 1, 2.0, "v0", old, "v9", today))
    kept = history.retain(rows, "v9", today)
    assert sorted(s.location for s in kept) == ["current", "kept"]
    # Over the row cap the oldest closed rows go first; current ones always stay.
    rows = [span(f"r{n}", "v0", today - dt.timedelta(days=n)) for n in range(10)]
    rows += [span(f"c{n}", "v9", today) for n in range(3)]
    kept = history.retain(rows, "v9", today, max_rows=5)
    assert sorted(s.location for s in kept) == ["c0", "c1", "c2", "r0", "r1"]
    assert len(history.retain(rows, "v9", today, max_rows=2)) == 3


def test_offers_of_takes_each_keys_cheapest_row():
    csv = csv_bytes(
        [
            item("aws", instance_name="p5.48xlarge", location="us-east-1", price=98.3, gpu_count=8),
            item("aws", instance_name="p5.48xlarge", location="us-east-1", price=90.1, gpu_count=8),
            item("aws", instance_name="p5.48xlarge", location="us-east-1", price=30.0, spot=True),
        ]
    )
    got = history.offers_of(csv, "aws")
    assert {k: o.price for k, o in got.items()} == {
        ("p5.48xlarge", "us-east-1", False): 90.1,
        ("p5.48xlarge", "us-east-1", True): 30.0,
    }


def test_check_finds_rows_that_do_not_match_the_catalog():
    o = offers(("a", "r1", 2.0), ("b", "r1", 3.0))
    h = history.observe([], None, o, "v1", D1)
    assert history.check(h, o, "v1") is None
    assert "no row ends at v1 for offer c/r1" in (
        history.check(h, {**o, **offers(("c", "r1", 1.0))}, "v1") or ""
    )
    assert "is $2.5 in the catalog but $2 in its history" in (
        history.check(h, offers(("a", "r1", 2.5), ("b", "r1", 3.0)), "v1") or ""
    )
    assert "which is not offered" in (history.check(h, offers(("a", "r1", 2.0)), "v1") or "")
