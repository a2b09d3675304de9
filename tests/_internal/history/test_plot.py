"""The --plot chart, from a made-up history."""

from __future__ import annotations

import datetime as dt

import pytest

pytest.importorskip("matplotlib")

from gpuhunt._internal.errors import GPUHuntError  # noqa: E402
from gpuhunt._internal.history import plot  # noqa: E402
from gpuhunt._internal.history.daily import PriceHistory, Series  # noqa: E402


def test_one_line_per_series_over_many_days(tmp_path):
    days = [dt.date(2026, 1, 1) + dt.timedelta(days=n) for n in range(90)]
    prices: list[float | None] = [2.0 - n / 100 for n in range(90)]
    prices[40:45] = [None] * 5  # nothing on offer those days: a gap, not a zero
    h = PriceHistory(
        "gpu",
        days,
        [Series("H100", prices, [None] * 90), Series("A100", [1.1] * 90, [None] * 90)],
    )
    fig = plot.save(h, tmp_path / "h.png")
    lines = fig.axes[0].get_lines()
    assert [ln.get_label() for ln in lines] == ["H100", "A100"]
    assert (tmp_path / "h.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(GPUHuntError, match="Nothing to plot"):
        plot.figure(PriceHistory("gpu", [], []))
