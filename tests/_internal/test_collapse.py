"""`gpuhunt.collapse_regions`: one row per (provider, instance type, spot), at its cheapest
location; and the table layout that fits a terminal (`cli.render.fit`, `table`, `wrap`)."""

from __future__ import annotations

import pytest

import gpuhunt
from gpuhunt._internal.cli import layout
from gpuhunt._internal.cli.layout import Column, fit, table
from tests.helpers import item


def test_collapse_keeps_each_offer_once_at_its_cheapest_location():
    answer = [
        item(instance_name="a", location="us-east-1", price=1.0),
        item(instance_name="a", location="us-west-2", price=1.0, spot=True),
        item(instance_name="b", location="eu-west-1", price=1.5),
        item(instance_name="a", location="eu-west-1", price=2.0),
        item("gcp", instance_name="a", location="us-central1-a", price=2.0),
        item(instance_name="a", location="ap-south-1", price=2.5),
        item(instance_name="a", location="us-east-1", price=3.0),  # a dearer copy there
    ]
    got = gpuhunt.collapse_regions(answer)
    assert [c.key for c in got] == [
        ("aws", "a", False),
        ("aws", "a", True),
        ("aws", "b", False),
        ("gcp", "a", False),
    ]
    first = got[0]
    assert first.offer is answer[0]  # the answer's own offer, not a copy
    assert first.locations == ["us-east-1", "eu-west-1", "ap-south-1"]
    assert first.other_locations == 2 and first.max_price == 3.0
    assert [c.other_locations for c in got[1:]] == [0, 0, 0]
    assert len(answer) == 7  # the answer is untouched


def test_collapse_picks_the_cheapest_whatever_the_order():
    answer = [
        item(instance_name="a", location="x", price=5.0, gpu_memory=80.0),
        item(instance_name="a", location="y", price=4.0),
        item(instance_name="a", location="z", price=4.0),
    ]
    [c] = gpuhunt.collapse_regions(iter(answer))
    assert c.offer is answer[1] and c.locations == ["y", "z", "x"] and c.max_price == 5.0
    assert gpuhunt.collapse_regions([]) == []


def test_fit_drops_and_shortens_the_least_important_first():
    # (width, priority, min_width, required)
    cols = [(10, 1, 6, True), (20, 4, 10, True), (9, 3, None, False), (6, 9, None, False)]
    full = 10 + 20 + 9 + 6 + 2 * 3
    assert fit(cols, None) == [(0, 10), (1, 20), (2, 9), (3, 6)]
    assert fit(cols, full) == [(0, 10), (1, 20), (2, 9), (3, 6)]
    assert fit(cols, full - 1) == [(0, 10), (1, 20), (2, 9)]  # priority 9 goes whole
    assert fit(cols, full - 8) == [(0, 10), (1, 20 - 8 + 8), (2, 9)]  # dropping it was enough
    assert fit(cols, full - 9) == [(0, 10), (1, 19), (2, 9)]  # then priority 4 shortens
    # priority 4 down to 10, then priority 3 goes, then the required 1 shortens to 6
    assert fit(cols, 10 + 10 + 9 + 2 * 2) == [(0, 10), (1, 10), (2, 9)]
    assert fit(cols, 10 + 10 + 2) == [(0, 10), (1, 10)]
    assert fit(cols, 3) == [(0, 6), (1, 10)]  # cannot fit: required columns at least width


def test_table_cuts_cells_with_an_ellipsis_and_keeps_the_region_count():
    columns = [
        Column("NAME", lambda r: r[0], 1, min_width=6, required=True),
        Column("WHERE", lambda r: r[1], 2, min_width=10, required=True),
        Column("N", lambda r: r[2], 3, right=True),
    ]
    rows = [("short", "asia-northeast-1 +16", "1"), ("a-much-longer-name", "us-east-1", "22")]
    assert table(columns, rows).splitlines() == [
        "NAME                WHERE                  N",
        "short               asia-northeast-1 +16   1",
        "a-much-longer-name  us-east-1             22",
    ]
    out = table(columns, rows, width=26).splitlines()
    assert out == [
        "NAME            WHERE",
        "short           asia-… +16",
        "a-much-longer…  us-east-1",
    ]
    assert max(map(len, out)) <= 26


def test_wrap_only_with_a_width():
    text = "word " * 40
    assert layout.wrap(text, None) == text
    assert max(map(len, layout.wrap(text, 30).splitlines())) <= 30


@pytest.mark.parametrize("columns, tty, expected", [("72", False, 72), ("", False, None)])
def test_terminal_width(monkeypatch, columns, tty, expected):
    class Stream:
        def isatty(self):
            return tty

    monkeypatch.setenv("COLUMNS", columns)
    assert layout.terminal_width(Stream()) == expected


def test_terminal_width_of_a_terminal(monkeypatch):
    class Tty:
        def isatty(self):
            return True

    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(
        layout.shutil, "get_terminal_size", lambda: type("S", (), {"columns": 93})()
    )
    assert layout.terminal_width(Tty()) == 93
