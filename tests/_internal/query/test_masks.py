"""The masks of the filters read from provider_data answer what `matches` answers."""

import datetime as dt

import pytest

from gpuhunt import QueryFilter, matches
from gpuhunt._internal.query import masks
from gpuhunt._internal.query.parsed import parsed
from tests._internal.fastpath import select, table_of
from tests.helpers import item

OBSERVED = "2026-12-02T08:00:00Z"
OFFERS = [
    item(instance_name="a", price=1.0, available=True, observed_at=OBSERVED),
    item(instance_name="b", price=2.0, available=False),
    item(instance_name="c", price=3.0, resold_from="lambdalabs"),
    item(instance_name="d", price=4.0),
]


@pytest.mark.parametrize(
    "q",
    [
        QueryFilter(available=True),
        QueryFilter(available=False),
        QueryFilter(resale=True),
        QueryFilter(resale=False, available=True),
        QueryFilter(max_age=dt.timedelta(days=36500)),
        QueryFilter(max_age=dt.timedelta(0)),
    ],
)
def test_state_masks_equal_matches(q):
    assert select(table_of(OFFERS, ["aws"]), q) == [o for o in OFFERS if matches(o, q)]


def test_max_age_is_measured_from_now_with_the_boundary_kept():
    table = table_of(OFFERS, ["aws"])
    states = table.offer_states()
    assert states.available.tolist() == [1, 0, -1, -1]
    assert states.resale.tolist() == [False, False, True, False]
    p = parsed(QueryFilter(max_age=dt.timedelta(hours=1)))
    at = dt.datetime(2026, 12, 2, 9, tzinfo=dt.timezone.utc)
    assert masks.state_mask(states, p, now=at).tolist() == [True, False, False, False]
    later = at + dt.timedelta(microseconds=1)
    assert masks.state_mask(states, p, now=later).tolist() == [False] * 4
