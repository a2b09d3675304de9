"""`Offers`: the lazy answer reads like a list."""

from gpuhunt import QueryFilter
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.formats.csv_table import build_table
from gpuhunt._internal.query.offers import Offers
from tests.helpers import item


def test_offers_sequence_behaves_like_a_list():
    items = [item(price=p, instance_name=f"i{p}") for p in (3.0, 1.0, 2.0)]
    t = build_table(csv_bytes(items).decode(), provider="aws")
    offers = Offers(t, t.select(QueryFilter()))
    as_list = sorted(items, key=lambda i: i.price)
    assert len(offers) == 3 and list(offers) == as_list and offers == as_list
    assert offers[0].price == 1.0 and offers[-1].price == 3.0 and offers[1:] == as_list[1:]
    assert offers + [items[0]] == as_list + [items[0]]
    assert offers[0] is offers[0]  # built once
    for cut in (slice(None, None, -1), slice(-2, None), slice(2, 0, -1), slice(5, 9)):
        assert offers[cut] == as_list[cut]
        assert Offers.from_items(as_list)[cut] == as_list[cut]
