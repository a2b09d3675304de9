"""Usage arithmetic, against numbers computed by hand.

The Azure figures are real: Standard_D8_v4 in westeurope, on demand $0.46/h, a 1-year
reservation $2,377 and a 3-year one $4,594 for the whole term (the recorded Retail Prices page
in data/azure_retail_prices_reservation_mix.json)."""

from __future__ import annotations

import numpy as np
import pytest

from gpuhunt._internal.costs import usage
from gpuhunt._internal.costs.terms import Term
from gpuhunt._internal.costs.usage import NO_PRICE, ON_DEMAND, SPOT

NAN = float("nan")
OD = [0.46]
TERMS = dict(term_hourly=[[0.0, 0.0]], term_upfront=[[2377.0, 4594.0]], term_months=[[12, 36]])


def _azure(hours: float, months: int = 12, spot: float = NAN) -> usage.UsageCosts:
    return usage.cheapest(OD, [spot], **TERMS, hours_per_month=hours, months=months)


def test_break_even_is_the_terms_monthly_cost_over_the_hourly_price():
    costs = _azure(400)
    # 2377 / 12 = 198.0833 a month; / 0.46 = 430.62 hours. 4594 / 36 = 127.61; / 0.46 = 277.41.
    assert costs.break_even_hours[0] == pytest.approx([430.6159, 277.4155], abs=1e-4)


def test_switches_from_on_demand_to_the_term_past_the_break_even():
    below, above = _azure(430), _azure(431)
    assert below.choice[0] == ON_DEMAND
    assert below.monthly_cost[0] == pytest.approx(0.46 * 430)  # 197.80 < 198.08
    assert above.choice[0] == 0  # the 1-year term
    assert above.monthly_cost[0] == pytest.approx(2377 / 12)  # 198.08 < 198.26
    assert above.effective_hourly[0] == pytest.approx(2377 / 12 / 431)


def test_a_longer_term_than_the_usage_is_paid_whole():
    # 12 months of a 3-year term: the whole $4,594 over 12 months = 382.83 a month.
    assert _azure(500).term_monthly_cost[0, 1] == pytest.approx(4594 / 12)
    assert _azure(500).choice[0] == 0
    # Over 36 months the 3-year term is 127.61 a month and wins.
    costs = _azure(500, months=36)
    assert costs.choice[0] == 1
    assert costs.monthly_cost[0] == pytest.approx(4594 / 36)
    # 13 months of a 1-year term buy two of them: 2 x 2377 / 13.
    assert _azure(500, months=13).term_monthly_cost[0, 0] == pytest.approx(2 * 2377 / 13)


def test_payback_month():
    # 500 h on demand cost 230 a month; the fee of 2377 is paid back in month ceil(10.33) = 11.
    assert _azure(500).payback_month[0] == pytest.approx([11, 20])  # 4594 / 230 = 19.97
    # A term with an hourly part (0.76984/h + 20231: AWS m6id.2xlarge 3yr Partial Upfront)
    # against an arithmetic-only on-demand price of 2.0/h at 700 h: saving 1400 - 561.98 a month.
    costs = usage.cheapest(
        [2.0], [NAN], [[0.76984]], [[20231.0]], [[36]], hours_per_month=700, months=36
    )
    assert costs.payback_month[0, 0] == np.ceil(20231 / (1400 - 0.76984 * 730))


def test_no_fee_has_no_payback_and_a_term_that_never_saves_never_pays_back():
    costs = usage.cheapest(
        [1.0], [NAN], [[0.9, 0.0]], [[0.0, 100.0]], [[12, 12]], hours_per_month=10
    )
    assert np.isnan(costs.payback_month[0, 0])
    assert costs.payback_month[0, 1] == 10  # saving 1.0 x 10 h a month pays 100 back in 10
    never = usage.cheapest([1.0], [NAN], [[2.0]], [[100.0]], [[12]], hours_per_month=1)
    assert never.payback_month[0, 0] == np.inf


def test_spot_wins_when_cheapest_and_unknown_prices_are_never_chosen():
    costs = usage.cheapest(
        [0.46, NAN, NAN],
        [0.10, 0.20, NAN],
        [[0.0], [NAN], [NAN]],
        [[2377.0], [NAN], [NAN]],
        [[12], [12], [12]],
        hours_per_month=730,
    )
    assert list(costs.choice) == [SPOT, SPOT, NO_PRICE]
    assert costs.monthly_cost[:2] == pytest.approx([73.0, 146.0])
    assert np.isnan(costs.monthly_cost[2])
    assert np.isnan(costs.break_even_hours[1, 0])


def test_many_offers_at_once_equal_one_at_a_time():
    rng = np.random.default_rng(7)
    n = 50
    od = rng.uniform(0.5, 40, n)
    sp = np.where(rng.random(n) < 0.5, od * 0.4, NAN)
    hourly = od[:, None] * rng.uniform(0.3, 0.7, (n, 3))
    upfront = np.where(rng.random((n, 3)) < 0.5, 0.0, od[:, None] * 2000)
    months = np.tile([12, 36, 12], (n, 1))
    together = usage.cheapest(od, sp, hourly, upfront, months, hours_per_month=300, months=24)
    for i in range(n):
        alone = usage.cheapest(
            od[i : i + 1],
            sp[i : i + 1],
            hourly[i : i + 1],
            upfront[i : i + 1],
            months[i : i + 1],
            hours_per_month=300,
            months=24,
        )
        assert alone.choice[0] == together.choice[i]
        assert alone.monthly_cost[0] == pytest.approx(together.monthly_cost[i])


@pytest.mark.parametrize(
    ("hours", "months", "message"),
    [(0, 1, "hours_per_month"), (745, 1, "at most 744"), (10, 0, "months"), (10, 1.5, "months")],
)
def test_bad_usage_is_named(hours, months, message):
    with pytest.raises(ValueError, match=message):
        usage.cheapest([1.0], [NAN], [[NAN]], [[NAN]], [[12]], hours_per_month=hours, months=months)


def test_mismatched_shapes_are_named():
    with pytest.raises(ValueError, match="term arrays"):
        usage.cheapest([1.0, 2.0], [NAN, NAN], [[1.0]], [[1.0]], [[12]], hours_per_month=1)


def test_no_offers():
    costs = usage.cheapest(
        [], [], np.empty((0, 1)), np.empty((0, 1)), np.empty((0, 1)), hours_per_month=1
    )
    assert costs.choice.shape == (0,)


def _term(name: str, location: str, term: str, hourly: float, upfront: float) -> Term:
    return Term("azure", name, location, term, "all", "", hourly, upfront, "s", None)


def test_align_terms_and_spot_counterparts_feed_cheapest():
    d8 = "Standard_D8_v4"
    keys = usage.offer_keys(["azure"] * 3, [d8, d8, "Standard_X"], ["westeurope"] * 3)
    terms = [
        _term(d8, "westeurope", "1y", 0.0, 2377.0),
        _term(d8, "westeurope", "3y", 0.0, 4594.0),
        _term(d8, "eastus", "1y", 0.0, 1.0),  # another location: not this offer's
    ]
    hourly, upfront, months = usage.align_terms(keys, terms)
    assert upfront.shape == (3, 2)
    assert list(upfront[0]) == [2377.0, 4594.0] and list(upfront[1]) == [2377.0, 4594.0]
    assert np.isnan(upfront[2]).all()
    assert list(months[0]) == [12, 36]
    _, only_3y, _ = usage.align_terms(keys, terms, term="3y")
    assert only_3y.shape == (3, 1) and only_3y[0, 0] == 4594.0
    # Rows 0 and 1 are one machine's on-demand and spot offers.
    spot = usage.spot_counterparts(keys, [False, True, False], [0.46, 0.10, 1.0])
    assert spot[0] == 0.10 and spot[1] == 0.10 and np.isnan(spot[2])
    costs = usage.cheapest([0.46, 0.10, 1.0], spot, hourly, upfront, months, hours_per_month=500)
    # Row 1's own price equals its spot price: a tie goes to on demand (never interrupted).
    assert list(costs.choice) == [SPOT, ON_DEMAND, ON_DEMAND]


def test_align_terms_without_any():
    keys = usage.offer_keys(["aws"], ["p5.48xlarge"], ["us-east-1"])
    hourly, _, _ = usage.align_terms(keys, [])
    assert hourly.shape == (1, 1) and np.isnan(hourly[0, 0])
