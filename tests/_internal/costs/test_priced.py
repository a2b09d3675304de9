"""`costs.priced.price` over offers given directly (the catalog's path: test_catalog_costs)."""

from __future__ import annotations

import numpy as np
import pytest

from gpuhunt._internal.costs import priced
from gpuhunt._internal.costs.terms import Term
from tests.helpers import item

TERM = Term("aws", "x1", "us-east-1", "1y", "all", "standard", 0.0, 5000.0, "s", None)


def _terms(provider: str) -> list[Term] | None:
    return [TERM] if provider == "aws" else None


def test_term_break_even_and_choice():
    offers = [item(price=1.0), item(price=0.4, spot=True)]
    records, order = priced.price(
        offers, priced.Usage(hours_per_month=700, months=12), _terms, None
    )
    od, sp = records
    (t,) = od.terms
    assert t.break_even_hours == pytest.approx(5000 / 12 / 1.0)
    assert od.pay == "1y all upfront" and od.monthly_cost == pytest.approx(5000 / 12)
    assert sp.pay == "spot" and sp.terms == () and sp.monthly_cost == pytest.approx(0.4 * 700)
    assert order.tolist() == [1, 0]


def test_below_break_even_on_demand_wins():
    records, _ = priced.price([item(price=1.0)], priced.Usage(hours_per_month=100, months=12),
                              _terms, None)  # fmt: skip
    assert records[0].pay == "on-demand" and records[0].monthly_cost == pytest.approx(100.0)


def test_term_alone_keeps_offers_with_that_term():
    offers = [item(price=1.0), item(provider="lambdalabs", price=0.1)]
    records, order = priced.price(offers, priced.Usage(term="1y"), _terms, None)
    assert order.tolist() == [0] and records[0].pay == "1y all upfront"
    _, none = priced.price(offers, priced.Usage(term="3y"), _terms, None)
    assert none.tolist() == []


def test_no_usage_keeps_the_order_and_asks_nothing():
    asked: list[str] = []

    def terms_of(provider: str) -> None:
        asked.append(provider)

    offers = [item(price=2.0), item(price=1.0)]
    records, order = priced.price(offers, priced.Usage(), terms_of, None)
    assert order.tolist() == [0, 1] and asked == []
    assert records[0].monthly_cost is None and records[0].total is None


@pytest.mark.parametrize(
    "u", [priced.Usage(hours_per_month=10), priced.Usage(job_hours=3, storage_gb=1)]
)
def test_empty_answer(u):
    records, order = priced.price([], u, _terms, None)
    assert records == [] and order.dtype == np.int64 and len(order) == 0


def test_a_term_alone_is_priced_over_its_own_length():
    records, _ = priced.price([item(price=1.0)], priced.Usage(term="1y"), _terms, None)
    assert records[0].monthly_cost == pytest.approx(5000 / 12)
    over_one, _ = priced.price([item(price=1.0)], priced.Usage(term="1y", months=1), _terms, None)
    assert over_one[0].monthly_cost == pytest.approx(5000.0)  # a term is paid whole


def test_a_gcp_zone_is_priced_by_its_region():
    from gpuhunt._internal.costs import transfer

    offer = item("gcp", location="us-central1-a", price=2.0)
    (c,), _ = priced.price([offer], priced.Usage(job_hours=730, storage_gb=100), _terms, None)
    assert c.storage == pytest.approx(100 * 0.10 / transfer.GIB)
    assert c.total == pytest.approx(2.0 * 730 + c.storage)
