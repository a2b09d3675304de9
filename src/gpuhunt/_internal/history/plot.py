"""`gpuhunt history --plot FILE`: one line per GPU model or instance, with matplotlib (the
optional extra `plot`). Uses `matplotlib.figure.Figure` directly, not pyplot, so it needs no
display and leaves no global state behind."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from gpuhunt._internal.errors import GPUHuntError, InputError
from gpuhunt._internal.history.daily import PriceHistory

FORMATS = ("png", "svg")


def figure(h: PriceHistory) -> Any:
    """The chart as a matplotlib `Figure`: its one `Axes` holds one line per series."""
    try:
        from matplotlib.dates import AutoDateLocator, ConciseDateFormatter, DateFormatter
        from matplotlib.figure import Figure
    except ImportError:
        raise InputError(
            "Plotting needs matplotlib, which is not installed: pip install 'gpuhunt[plot]'"
        ) from None
    if not h.series:
        raise GPUHuntError("Nothing to plot: no offers match in the price history")
    fig = Figure(figsize=(10, 5), layout="constrained")
    ax = fig.add_subplot()
    few = len(h.days) <= 60
    for s in h.series:
        ax.plot(
            h.days,  # type: ignore[arg-type]  # matplotlib's date converter takes dates
            [math.nan if p is None else p for p in s.prices],
            drawstyle="steps-post",
            marker="o" if few else None,
            markersize=3,
            label=s.name,
        )
    ax.set_ylabel("USD per GPU per hour" if h.by == "gpu" else "USD per hour")
    title = "Cheapest price per day" + (f" (catalog {h.version})" if h.version else "")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if len(h.days) <= 15:  # a tick per day, never hours
        ax.set_xticks(h.days)  # type: ignore[arg-type]
        ax.xaxis.set_major_formatter(DateFormatter("%Y-%m-%d"))  # type: ignore[no-untyped-call]
    else:
        locator = AutoDateLocator(minticks=3, maxticks=12)  # type: ignore[no-untyped-call]
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))  # type: ignore[no-untyped-call]
    ax.legend(loc="best", fontsize="small")
    fig.autofmt_xdate()
    return fig


def save(h: PriceHistory, path: str | Path) -> Any:
    """Draw `h` to a .png or .svg file; returns the figure (its lines are the series)."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        raise InputError(f"--plot writes .png or .svg files, not {str(path)[:80]!r}")
    fig = figure(h)
    try:
        fig.savefig(path, format=suffix)
    except OSError as e:
        raise GPUHuntError(f"Could not write {path}: {e.strerror or e}") from None
    return fig
