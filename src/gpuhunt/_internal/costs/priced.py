"""What an answer's offers cost for a usage, a term or a job (issue 49), beside the offers:
one `OfferCosts` record per row, never a field of the offer nor a key of its `provider_data`.

The arithmetic is `usage.cheapest` and `transfer.job_costs` over the answer's arrays at once.
Each offer is one way to pay already: an on-demand offer is paid on demand or through one of
its machine's commitment terms, a spot offer on spot (a term commits to an on-demand
machine). So `pay` is "on-demand", "spot" or a term ("1y none upfront"), and the answer is
ordered by what the user would pay: the job's TOTAL when a job is given, else the monthly
cost, unknown last (an unknown part is never ranked as free).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpuhunt._internal.costs import bands as band_rows
from gpuhunt._internal.costs import transfer, usage
from gpuhunt._internal.costs.terms import TERM_MONTHS, Term
from gpuhunt._internal.models import CatalogItem

PAYMENTS_SHOWN = {"none": "no upfront", "partial": "partial upfront", "all": "all upfront"}


@dataclass(frozen=True)
class TermCost:
    """One commitment term of an offer's machine, priced for the usage asked."""

    term: str  # "1y" | "3y"
    payment: str  # "none" | "partial" | "all" (upfront)
    offering_class: str
    hourly: float
    upfront: float
    monthly_cost: float  # over the usage's months: a term is paid whole
    break_even_hours: float | None  # hours a month above which it beats on demand
    payback_month: float | None  # when the upfront fee is paid back (inf: never)
    source: str

    @property
    def label(self) -> str:
        return f"{self.term} {PAYMENTS_SHOWN[self.payment]}"


@dataclass(frozen=True)
class OfferCosts:
    """The costs of one offer of an answer; None where unknown or not asked for."""

    pay: str | None  # "on-demand", "spot", a term's label; None: no known price
    effective_hourly: float | None
    monthly_cost: float | None
    terms: tuple[TermCost, ...]
    # Whether the catalog carries its provider's terms (None: no usage or term asked): an
    # offer without terms of a provider that publishes none says nothing about its machine.
    terms_published: bool | None
    interruption: str | None  # the spot band's label ("5-10%"), AWS spot offers
    interruption_max_pct: float | None
    compute: float | None
    egress: float | None
    storage: float | None
    total: float | None


@dataclass(frozen=True)
class Usage:
    hours_per_month: float | None = None
    months: int | None = None  # None: 1, or the term's length when a term alone is asked
    term: str | None = None
    job_hours: float | None = None
    egress_gb: float | None = None
    storage_gb: float | None = None

    @property
    def usage_months(self) -> int:
        """The months priced: as given, else a term's own length (`term` alone: the term over
        its whole length, not a 3-year price spread over one month), else 1."""
        if self.months is not None:
            return self.months
        return TERM_MONTHS.get(self.term or "", 1)

    def check(self) -> None:
        months = self.months
        if months is not None and (
            isinstance(months, bool) or not isinstance(months, int) or months < 1
        ):
            raise ValueError(f"months must be a whole number, at least 1, got {months!r}")
        if self.hours_per_month is not None:
            usage.check_usage(self.hours_per_month, self.usage_months)
        if self.term is not None and self.term not in TERM_MONTHS:
            raise ValueError(f"term must be one of {sorted(TERM_MONTHS)}, got {self.term!r}")
        if self.job_hours is None and (self.egress_gb or self.storage_gb):
            raise ValueError("egress_gb and storage_gb price a job: give job_hours too")


def _f(x: float) -> float | None:
    return None if np.isnan(x) else float(x)


def price(
    offers: Sequence[CatalogItem],
    u: Usage,
    terms_of: Callable[[str], list[Term] | None],
    bands: band_rows.BandSource | None,
) -> tuple[list[OfferCosts], npt.NDArray[np.int64]]:
    """(one record per offer, the order to show them in: row numbers)."""
    u.check()
    n = len(offers)
    if n == 0:  # numpy's string functions refuse empty arrays
        return [], np.empty(0, dtype=np.int64)
    providers = np.array([o.provider for o in offers], dtype=str)
    names = np.array([o.instance_name for o in offers], dtype=str)
    locations = np.array([o.location for o in offers], dtype=str)
    spot = np.array([o.spot for o in offers], dtype=bool)
    prices = np.array([o.price for o in offers], dtype=np.float64)
    band, upper, labels = band_rows.row_bands(bands, providers, names, locations, spot)

    wanted_terms = u.hours_per_month is not None or u.term is not None
    terms: list[Term] = []
    published: dict[str, bool] = {}
    if wanted_terms:
        for p in sorted(set(providers.tolist())):
            found = terms_of(p)
            published[p] = found is not None
            terms.extend(found or ())
    keys = usage.offer_keys(providers, names, locations)
    hourly, upfront, length = usage.align_terms(keys, terms if wanted_terms else (), term=u.term)
    hourly[spot], upfront[spot], length[spot] = np.nan, np.nan, np.nan
    od = np.where(spot, np.nan, prices)
    sp = np.where(spot, prices, np.nan)
    h = u.hours_per_month if u.hours_per_month is not None else usage.HOURS_PER_MONTH
    if u.term is not None:  # terms alone: on demand and spot are no way to pay here
        options_od, options_sp = np.full(n, np.nan), np.full(n, np.nan)
    else:
        options_od, options_sp = od, sp
    paid = usage.cheapest(
        options_od, options_sp, hourly, upfront, length, hours_per_month=h, months=u.usage_months
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        break_even = np.where(np.isnan(od)[:, None], np.nan, paid.break_even_hours)
    job = None
    if u.job_hours is not None:
        # GCP offers are located by zone ("us-central1-a"); its prices are per region.
        zones = (providers == "gcp") & (np.char.rfind(locations, "-") > 0)
        regions = np.where(zones, np.char.rpartition(locations, "-")[:, 0], locations)
        job = transfer.job_costs(
            providers,
            regions,
            prices,
            job_hours=u.job_hours,
            egress_gb=u.egress_gb or 0.0,
            storage_gb=u.storage_gb or 0.0,
        )
    by_machine: dict[str, list[Term]] = {}
    for t in terms:
        if u.term is None or t.term == u.term:
            by_machine.setdefault(f"{t.provider}\x1f{t.instance_name}\x1f{t.location}", []).append(
                t
            )

    records = []
    for i in range(n):  # the answer's rows: building records, the arithmetic is above
        own = () if spot[i] else by_machine.get(str(keys[i]), ())
        term_costs = tuple(
            TermCost(t.term, t.payment, t.offering_class, t.hourly, t.upfront,
                     float(paid.term_monthly_cost[i, j]), _f(break_even[i, j]),
                     _f(paid.payback_month[i, j]), t.source)
            for j, t in enumerate(own)
        )  # fmt: skip
        choice = int(paid.choice[i])
        pay = (
            None
            if choice == usage.NO_PRICE
            else "on-demand"
            if choice == usage.ON_DEMAND
            else "spot"
            if choice == usage.SPOT
            else term_costs[choice].label
        )
        asked = wanted_terms
        records.append(
            OfferCosts(
                pay=pay,
                effective_hourly=_f(paid.effective_hourly[i]) if asked else None,
                monthly_cost=_f(paid.monthly_cost[i]) if asked else None,
                terms=term_costs,
                terms_published=published.get(str(providers[i])) if wanted_terms else None,
                interruption=labels[band[i]] if band[i] >= 0 else None,
                interruption_max_pct=_f(upper[i]),
                compute=None if job is None else _f(job.compute[i]),
                egress=None if job is None else _f(job.egress[i]),
                storage=None if job is None else _f(job.storage[i]),
                total=None if job is None else _f(job.total[i]),
            )
        )
    if job is not None:
        rank = job.total
    elif wanted_terms:
        rank = paid.monthly_cost
    else:
        rank = np.zeros(n)
    keep = np.ones(n, dtype=bool) if u.term is None else ~np.isnan(paid.monthly_cost)
    rows = np.flatnonzero(keep)
    order = rows[np.argsort(np.where(np.isnan(rank[rows]), np.inf, rank[rows]), kind="stable")]
    return records, order.astype(np.int64)
