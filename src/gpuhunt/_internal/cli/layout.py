"""Tables fitted to the terminal (pure): columns with priorities, shortened or dropped on a narrow
terminal, cells cut with an ellipsis; how a price and a number are written. Every view of
`render` and `groups` is laid out by this module."""

from __future__ import annotations

import os
import re
import shutil
import sys
import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar


def price(x: float | None) -> str:
    """`$1.70`, `$64.00`, `$0.7345`: two decimals, up to four when they matter."""
    if x is None:
        return "-"
    text = f"{x:.4f}".rstrip("0")
    whole, _, decimals = text.partition(".")
    return f"${whole}.{decimals.ljust(2, '0')}"


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:g}"


def terminal_width(stream: Any = None) -> int | None:
    """The width output to `stream` (default stdout) must fit: `COLUMNS` when set to a
    number, else the terminal's width when `stream` is a terminal, else None - a pipe or a file
    gets every column in full, so what scripts read does not depend on who ran them."""
    text = os.environ.get("COLUMNS", "").strip()
    if text.isdigit() and int(text) > 0:
        return int(text)
    stream = sys.stdout if stream is None else stream
    try:
        if not stream.isatty():
            return None
    except (AttributeError, ValueError):  # closed or not a real stream
        return None
    return shutil.get_terminal_size().columns


T = TypeVar("T")


ELLIPSIS = "…"


@dataclass(frozen=True)
class Column(Generic[T]):
    """One column of a table: its header, how a row's cell is written, and what may be done
    to it when the table is wider than the terminal. Columns of higher `priority` (less
    important) go first: shortened (down to `min_width`, cells cut with an ellipsis) when that
    is enough, else dropped - or, if `required`, shortened as far as `min_width` allows."""

    header: str
    cell: Callable[[T], str]
    priority: int
    right: bool = False
    min_width: int | None = None
    required: bool = False


def table(columns: Sequence[Column[T]], rows: Iterable[T], width: int | None = None) -> str:
    """`rows` under `columns`, two spaces apart, fitted to `width` (None: no limit)."""
    cells = [[c.cell(r) for c in columns] for r in rows]
    specs = [(c.priority, c.min_width, c.required) for c in columns]
    right = {k for k, c in enumerate(columns) if c.right}
    return fitted([c.header for c in columns], cells, right, specs, width)


def fitted(
    header: list[str],
    rows: list[list[str]],
    right: set[int],
    specs: Sequence[tuple[int, int | None, bool]],
    width: int | None,
) -> str:
    """`render` of the columns that fit `width`; `specs` gives each column's (priority,
    min_width, required), as `Column` does."""
    widths = [max([len(h), *(len(row[k]) for row in rows)]) for k, h in enumerate(header)]
    keep = fit([(w, *spec) for w, spec in zip(widths, specs)], width)
    return render(
        [header[k] for k, _ in keep],
        [[row[k] for k, _ in keep] for row in rows],
        {n for n, (k, _) in enumerate(keep) if k in right},
        [w for _, w in keep],
    )


def fit(
    columns: Sequence[tuple[int, int, int | None, bool]], width: int | None
) -> list[tuple[int, int]]:
    """Which columns (width, priority, min_width, required) to keep and how wide, as (index,
    width): the least important first are shortened when that suffices, else dropped (or,
    when required, shortened as far as they go), until the line fits `width`. A table that
    cannot fit keeps its required columns at their least widths."""
    widths = {k: w for k, (w, _, _, _) in enumerate(columns)}

    def total() -> int:
        return sum(widths.values()) + 2 * (len(widths) - 1)

    if width is None:
        return list(widths.items())
    # Columns of one priority are shortened together, each by its share of what they can give.
    for priority in sorted({c[1] for c in columns}, reverse=True):
        over = total() - width
        if over <= 0:
            break
        group = [k for k, c in enumerate(columns) if c[1] == priority and k in widths]
        slack = {k: max(widths[k] - (columns[k][2] or widths[k]), 0) for k in group}
        if slack and sum(slack.values()) >= over:
            _share(widths, slack, over)
            break
        for k in group:
            if columns[k][3]:  # required: as short as it may be
                widths[k] -= slack[k]
            else:
                del widths[k]
    return sorted(widths.items())


def _share(widths: dict[int, int], slack: dict[int, int], over: int) -> None:
    """Take `over` characters from the columns in `slack`, in proportion to what each can give
    (the remainder from the largest)."""
    total = sum(slack.values())
    cuts = {k: over * s // total for k, s in slack.items()}
    for k in sorted(slack, key=lambda k: -slack[k]):
        if sum(cuts.values()) >= over:
            break
        if cuts[k] < slack[k]:
            cuts[k] += 1
    for k, cut in cuts.items():
        widths[k] -= cut


_MORE = re.compile(r" \+\d+$")


def _cut(text: str, width: int) -> str:
    """`text` in `width` characters, cut with an ellipsis; a trailing count (" +8", other
    regions) is kept whole."""
    if len(text) <= width:
        return text
    more = _MORE.search(text)
    tail = more.group(0) if more and len(more.group(0)) < width - 1 else ""
    head = text[: len(text) - len(tail)]
    return head[: max(width - len(tail) - 1, 0)] + ELLIPSIS + tail


def render(
    header: list[str], rows: list[list[str]], right: set[int], widths: list[int] | None = None
) -> str:
    if widths is None:
        widths = [max(len(r[k]) for r in [header, *rows]) for k in range(len(header))]
    lines = [
        "  ".join(
            _cut(c, w).rjust(w) if k in right else _cut(c, w).ljust(w)
            for k, (c, w) in enumerate(zip(r, widths))
        ).rstrip()
        for r in [header, *rows]
    ]
    return "\n".join(lines)


def wrap(text: str, width: int | None) -> str:
    """A paragraph (the footer) wrapped to `width`; one line when there is no limit."""
    return text if width is None else textwrap.fill(text, width, break_on_hyphens=False)
