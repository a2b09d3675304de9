"""A `DIFFERS` column for table rows that would look alike but for the price (issue 37): what
tells each from its look-alikes that the columns kept at the terminal's width do not show."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from gpuhunt._internal import distinct
from gpuhunt._internal.cli.layout import Column, fit
from gpuhunt._internal.collapse import CollapsedOffer
from gpuhunt._internal.models import CatalogItem


def _offer(row: CatalogItem | CollapsedOffer) -> CatalogItem:
    return row.offer if isinstance(row, CollapsedOffer) else row


# The columns showing each of `distinct.MAIN_FIELDS`.
_FIELD_HEADERS = {"spot": "SPOT", "cpu": "CPU", "memory": "MEMORY", "disk_size": "DISK"}


def show_what_differs(
    columns: list[Column[Any]],
    offers: Sequence[CatalogItem | CollapsedOffer],
    width: int | None,
) -> list[Column[Any]]:
    """`columns`, with a `DIFFERS` column for rows that the table at `width` would show alike
    but for the price: for each, what tells it from its look-alikes (`distinct.differences`)
    that the columns kept at that width do not show - a dropped CPU or MEMORY column, an
    instance name cut short, a flag or a `provider_data` value. Where spot and on-demand
    offers are look-alikes the SPOT column is kept (required), since every row's price reads
    differently by it."""
    found = distinct.differences([_offer(i) for i in offers])
    if not found:
        return columns
    if any("spot" in fields for fields in found.values()):
        columns = [
            dataclasses.replace(c, required=True) if c.header == "SPOT" else c for c in columns
        ]
    extra: list[Column[Any]] = []
    texts: dict[int, str] = {}  # id(row) -> its DIFFERS cell, refilled each round
    column: Column[Any] = Column(
        "DIFFERS", lambda r: texts.get(id(r), ""), 2, min_width=8, required=True
    )
    longest = max(len(_offer(offers[n]).instance_name) for n in found)
    # Each column's full width, measured once (the DIFFERS column's per round, from its texts).
    full = [max([len(c.header), *(len(c.cell(r)) for r in offers)]) for c in columns]
    for _ in range(3):  # the column changes what fits; settle in a few rounds
        widths = full + [max([len("DIFFERS"), *map(len, texts.values())])] * len(extra)
        shown = _shown_widths([*columns, *extra], widths, width)
        hidden = {f for f, h in _FIELD_HEADERS.items() if h not in shown}
        if shown.get("INSTANCE", 0) < longest:
            hidden.add("instance_name")
        texts.clear()
        for n, fields in found.items():
            told = [f for f in fields if f in hidden or "." in f or f == "flags"]
            texts[id(offers[n])] = distinct.describe(_offer(offers[n]), told)
        want = [column] if any(texts.values()) else []
        if len(want) == len(extra):
            break
        extra = want
    return columns + extra


def _shown_widths(
    columns: Sequence[Column[Any]], widths: Sequence[int], width: int | None
) -> dict[str, int]:
    """Header -> width of the columns (of full `widths`) that `table` keeps at `width`."""
    kept = fit([(w, c.priority, c.min_width, c.required) for w, c in zip(widths, columns)], width)
    return {columns[k].header: w for k, w in kept}
