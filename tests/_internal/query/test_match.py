"""`matches` on the filters read from what offers say about themselves, and on bare strings."""

import datetime as dt

import pytest

from gpuhunt import QueryFilter, matches
from gpuhunt._internal.query.match import gpu_name_wanted, location_matches
from tests.helpers import item

NOW = dt.datetime.now(dt.timezone.utc)


def _at(days_ago: float) -> str:
    return (NOW - dt.timedelta(days=days_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


FRESH = item(available=True, observed_at=_at(1))
OLD_SOLD_OUT = item(available=False, observed_at=_at(400))
UNDATED = item()
RESALE = item(provider="shadeform", resold_from="lambdalabs")


@pytest.mark.parametrize(
    "q, expected",
    [
        (QueryFilter(available=True), [FRESH]),
        (QueryFilter(available=False), [OLD_SOLD_OUT]),
        (QueryFilter(max_age=dt.timedelta(days=30)), [FRESH]),
        (QueryFilter(max_age=dt.timedelta(days=3650)), [FRESH, OLD_SOLD_OUT]),
        (QueryFilter(resale=False), [FRESH, OLD_SOLD_OUT, UNDATED]),
        (QueryFilter(resale=True), [RESALE]),
    ],
)
def test_offer_state_filters(q, expected):
    assert [o for o in (FRESH, OLD_SOLD_OUT, UNDATED, RESALE) if matches(o, q)] == expected


def test_bad_values_of_the_new_fields_are_refused_where_they_enter():
    with pytest.raises(TypeError, match="available must be True, False or None"):
        QueryFilter(available="yes")
    with pytest.raises(TypeError, match="max_age must be a datetime.timedelta"):
        QueryFilter(max_age=30)
    with pytest.raises(ValueError, match="max_age must be at least 0"):
        QueryFilter(max_age=dt.timedelta(days=-1))


def test_helpers_take_a_bare_string_as_one_name():
    assert gpu_name_wanted("RTX4090", 24.0, "RTX 4090")
    assert gpu_name_wanted("A100", 80.0, ["A100 80GB"]) and not gpu_name_wanted(
        "A100", 40.0, ["A100 80GB"]
    )
    assert location_matches("us-east-1", "US-*") and not location_matches("u", "us-east-1")
