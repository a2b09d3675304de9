"""The cheapest way to pay for a usage (pure numpy over offers x terms, no per-offer loop).

Given a usage of H hours a month for M months, each offer can be paid on demand (H hours a
month at its hourly price), on spot (the same, at the spot price of the same machine where
the caller has one), or through one of its commitment terms. A term is billed for every hour
of its whole length whether the machine runs or not, and its upfront fee is paid at the start:

- a term's own monthly cost is `hourly * 730 + upfront / term_months` (a month is 730 hours,
  8760 / 12, the month the price lists use);
- over M months a term is bought `ceil(M / term_months)` times: a 3-year term for a 12-month
  usage costs the whole 3 years;
- break-even hours: the hours a month above which the term is cheaper than on demand,
  `term's monthly cost / on-demand hourly price`;
- payback month: the month in which the savings over on demand (on demand's monthly cost minus
  the term's hourly part) have paid the upfront fee back; NaN where there is no fee, +inf
  where the term never saves anything at this usage.

Arrays carry NaN where a price is unknown; an unknown price is never chosen and never 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpuhunt._internal.costs.terms import Term

HOURS_PER_MONTH = 730.0  # 8760 / 12
MAX_HOURS_PER_MONTH = 744.0  # 31 days
ON_DEMAND, SPOT, NO_PRICE = -1, -2, -3  # `choice` values; a term is its column index (>= 0)

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class UsageCosts:
    """Per offer (n,) or per offer and term (n, k)."""

    choice: Ints  # (n,): ON_DEMAND, SPOT, a term's column, or NO_PRICE
    monthly_cost: Floats  # (n,): what the cheapest way costs a month over the M months
    effective_hourly: Floats  # (n,): monthly_cost / H
    term_monthly_cost: Floats  # (n, k): each term's monthly cost over the M months
    break_even_hours: Floats  # (n, k)
    payback_month: Floats  # (n, k)


def check_usage(hours_per_month: float, months: int) -> None:
    if not 0 < hours_per_month <= MAX_HOURS_PER_MONTH:
        raise ValueError(
            f"hours_per_month must be more than 0 and at most {MAX_HOURS_PER_MONTH:g} "
            f"(24 h x 31 days), got {hours_per_month!r}"
        )
    if isinstance(months, bool) or not isinstance(months, int) or months < 1:
        raise ValueError(f"months must be a whole number of months, at least 1, got {months!r}")


def cheapest(
    on_demand: npt.ArrayLike,
    spot: npt.ArrayLike,
    term_hourly: npt.ArrayLike,
    term_upfront: npt.ArrayLike,
    term_months: npt.ArrayLike,
    *,
    hours_per_month: float,
    months: int = 1,
) -> UsageCosts:
    """The cheapest way to pay for each offer. `on_demand`, `spot`: (n,); `term_*`: (n, k),
    NaN where an offer has fewer terms (the k columns need not be the same term per offer).
    On a tie, on demand wins over spot and spot over a term: the least binding way to pay."""
    check_usage(hours_per_month, months)
    od = np.asarray(on_demand, dtype=np.float64)
    sp = np.asarray(spot, dtype=np.float64)
    hourly = np.asarray(term_hourly, dtype=np.float64)
    upfront = np.asarray(term_upfront, dtype=np.float64)
    length = np.asarray(term_months, dtype=np.float64)
    n = od.shape[0]
    if od.ndim != 1 or sp.shape != od.shape:
        raise ValueError(f"on_demand and spot must be two arrays of one length, got {sp.shape}")
    if hourly.ndim != 2 or hourly.shape[0] != n or upfront.shape != hourly.shape:
        raise ValueError(f"term arrays must be ({n}, k) alike, got {hourly.shape}")
    if length.shape != hourly.shape:
        raise ValueError(f"term_months must be {hourly.shape}, got {length.shape}")
    h = float(hours_per_month)

    own_monthly = hourly * HOURS_PER_MONTH + upfront / length  # the term over its own length
    with np.errstate(invalid="ignore", divide="ignore"):
        bought = np.ceil(months / length)
        over_usage = own_monthly * (bought * length) / months
        break_even = own_monthly / od[:, None]
        saving = od[:, None] * h - hourly * HOURS_PER_MONTH
        payback = np.where(
            upfront > 0,
            np.where(saving > 0, np.ceil(upfront / saving), np.inf),
            np.nan,
        )
    payback = np.where(np.isnan(upfront) | np.isnan(saving), np.nan, payback)

    # Columns: on demand, spot, then the terms; unknown prices can never be the minimum.
    options = np.column_stack([od * h, sp * h, over_usage]) if n else np.empty((0, 2))
    filled = np.where(np.isnan(options), np.inf, options)
    best = np.argmin(filled, axis=1) if n else np.empty(0, dtype=np.int64)
    cost = filled[np.arange(n), best] if n else np.empty(0)
    known = np.isfinite(cost)
    choice = np.where(best == 0, ON_DEMAND, np.where(best == 1, SPOT, best - 2))
    choice = np.where(known, choice, NO_PRICE).astype(np.int64)
    cost = np.where(known, cost, np.nan)
    return UsageCosts(
        choice=choice,
        monthly_cost=cost,
        effective_hourly=cost / h,
        term_monthly_cost=over_usage,
        break_even_hours=break_even,
        payback_month=payback,
    )


def offer_keys(
    providers: npt.ArrayLike, instance_names: npt.ArrayLike, locations: npt.ArrayLike
) -> npt.NDArray[np.str_]:
    """One string per offer naming its machine: (provider, instance name, location)."""
    sep = "\x1f"
    out = np.char.add(np.asarray(providers, dtype=str), sep)
    out = np.char.add(np.char.add(out, np.asarray(instance_names, dtype=str)), sep)
    return np.char.add(out, np.asarray(locations, dtype=str))


def align_terms(
    keys: npt.NDArray[np.str_], terms: Sequence[Term], *, term: str | None = None
) -> tuple[Floats, Floats, Floats]:
    """(hourly, upfront, months), each (n, k), the terms of each offer's machine (`offer_keys`)
    side by side, NaN-padded; `term` ("1y"/"3y") keeps that length only. The terms are grouped
    once and placed per distinct machine, not per offer."""
    by_key: dict[str, list[Term]] = {}
    for t in terms:
        if term is None or t.term == term:
            key = f"{t.provider}\x1f{t.instance_name}\x1f{t.location}"
            by_key.setdefault(key, []).append(t)
    unique, inverse = np.unique(keys, return_inverse=True)
    k = max((len(by_key.get(str(u), ())) for u in unique), default=0) or 1
    table = np.full((len(unique), 3, k), np.nan)
    for i, u in enumerate(unique):  # distinct machines
        for j, t in enumerate(by_key.get(str(u), ())):
            table[i, :, j] = (t.hourly, t.upfront, t.months)
    rows = table[inverse.reshape(-1)] if len(keys) else np.empty((0, 3, k))
    return rows[:, 0, :], rows[:, 1, :], rows[:, 2, :]


def spot_counterparts(
    keys: npt.NDArray[np.str_], spot: npt.ArrayLike, price: npt.ArrayLike
) -> Floats:
    """For each offer, the cheapest spot price of the same machine (NaN where there is none)."""
    is_spot = np.asarray(spot, dtype=bool)
    prices = np.asarray(price, dtype=np.float64)
    unique, inverse = np.unique(keys, return_inverse=True)
    cheapest_spot = np.full(len(unique), np.inf)
    np.minimum.at(cheapest_spot, inverse[is_spot], prices[is_spot])
    out = cheapest_spot[inverse]
    return np.where(np.isfinite(out), out, np.nan)
