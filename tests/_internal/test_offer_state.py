"""What an offer says about itself in provider_data, and the `CatalogItem` properties reading it."""

import datetime as dt

import pytest

from gpuhunt._internal.offer_state import (
    offer_available,
    offer_cuda_version,
    offer_observed_at,
    offer_resold_from,
    parse_observed_at,
)
from tests.helpers import item

UTC = dt.timezone.utc


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2026-12-02T08:00:00Z", dt.datetime(2026, 12, 2, 8, tzinfo=UTC)),
        ("2026-12-02T09:00:00+01:00", dt.datetime(2026, 12, 2, 8, tzinfo=UTC)),
        ("2026-12-02T08:00:00", dt.datetime(2026, 12, 2, 8, tzinfo=UTC)),  # no zone: UTC
        ("2026-12-02", dt.datetime(2026, 12, 2, tzinfo=UTC)),
        ("yesterday", None),
        ("", None),
        (1764662400, None),  # a number is not the documented form
    ],
)
def test_observed_at_is_read_as_utc(text, expected):
    assert parse_observed_at(text) == expected


def test_each_key_read_and_anything_else_is_unknown():
    data = {"available": True, "observed_at": "2026-12-02T08:00:00Z", "resold_from": "lambdalabs"}
    assert offer_available(data) is True
    assert offer_resold_from(data) == "lambdalabs"
    assert offer_observed_at(data) == dt.datetime(2026, 12, 2, 8, tzinfo=UTC)
    for bad in ({}, {"available": "yes", "resold_from": ""}, None, [1]):
        assert offer_available(bad) is None
        assert offer_resold_from(bad) is None
        assert offer_observed_at(bad) is None
    assert offer_cuda_version({"cuda_version": "12.8"}) == (12, 8)
    assert offer_cuda_version({"cuda_version": "new"}) is None


def test_catalog_item_properties_read_provider_data():
    offer = item(
        provider="shadeform",
        provider_data={
            "available": False,
            "observed_at": "2026-12-02T08:00:00Z",
            "resold_from": "lambdalabs",
        },
    )
    assert offer.available is False
    assert offer.resold_from == "lambdalabs"
    assert offer.observed_at == dt.datetime(2026, 12, 2, 8, tzinfo=UTC)
    plain = item()
    assert (plain.available, plain.resold_from, plain.observed_at) == (None, None, None)
