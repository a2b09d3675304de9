"""Days and 1-GPU H100 offers the history tests share (made up, with instance names as Lambda
spells them)."""

from __future__ import annotations

import datetime as dt

from gpuhunt._internal.history import table as history
from gpuhunt._internal.history.table import Offer

D1, D2, D3, D4 = (dt.date(2026, 11, 29) + dt.timedelta(days=n) for n in range(4))


def offers(*rows: tuple[str, str, float]) -> dict[history.Key, Offer]:
    """(instance, location, price) of 1-GPU H100 on-demand offers."""
    out = {}
    for instance, location, price in rows:
        o = Offer(instance, location, False, "H100", 1, price)
        out[o.key] = o
    return out
