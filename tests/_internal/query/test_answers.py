"""`Catalog.query` answers with a real `list` of `CatalogItem`s that behave as the contract
says (dataclass, asdict/replace/pickle/equality/matches), and one caller's changes never reach
another caller's answer. Offers here are built in the test (no provider data)."""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle

import numpy as np
import pytest

from gpuhunt import CatalogItem, QueryFilter, matches
from gpuhunt._internal.catalog import Catalog
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.formats.csv_table import build_table
from gpuhunt._internal.frozen import FrozenDict, FrozenList
from gpuhunt._internal.query import answers
from gpuhunt._internal.query.answers import merge_online
from tests.helpers import item

OFFERS = [
    item(price=3.0, instance_name="p5", provider_data={"fabrics": ["f-1", "f-2"]}),
    item(price=1.0, instance_name="p4", location="eu-west-1", flags=["oci-spot"]),
    item(price=2.0, instance_name="p4", spot=True, flags=["oci-spot"]),
    item(price=0.5, instance_name="c5", gpu_count=0, disk_size=100.0),
]


@pytest.fixture
def catalog(tmp_path, monkeypatch) -> Catalog:
    (tmp_path / "aws.csv").write_bytes(csv_bytes(OFFERS))
    monkeypatch.setenv("GPUHUNT_CATALOG_DIR", str(tmp_path))
    c = Catalog(auto_reload=False)
    c.load()
    return c


def by_price(items: list[CatalogItem]) -> list[CatalogItem]:
    return sorted(items, key=lambda i: i.price)


def test_query_returns_a_list_of_catalog_items(catalog):
    answer = catalog.query()
    assert type(answer) is list
    assert all(type(i) is CatalogItem for i in answer)
    assert answer == by_price(OFFERS)
    answer.sort(key=lambda i: -i.price)  # a list: sort, append, extend work
    answer.append(OFFERS[0])
    assert len(answer) == 5 and answer[0].price == 3.0
    assert catalog.query(min_gpu_count=1, max_price=2.0) == [OFFERS[1], OFFERS[2]]
    assert catalog.query(provider="gcp") == []


def test_items_behave_as_documented(catalog):
    for got, expected in zip(catalog.query(), by_price(OFFERS)):
        assert dataclasses.is_dataclass(got)
        assert got == expected
        d = dataclasses.asdict(got)
        assert d == dataclasses.asdict(expected)
        assert type(d["flags"]) is list and type(d["provider_data"]) is dict
        d["provider_data"]["new"] = 1  # asdict gives plain, mutable copies
        assert "new" not in got.provider_data
        json.loads(json.dumps({**d, "gpu_vendor": d["gpu_vendor"] and d["gpu_vendor"].value}))
        assert json.dumps(got.provider_data) == json.dumps(expected.provider_data)
        assert dataclasses.replace(got, price=9.0) == dataclasses.replace(expected, price=9.0)
        assert dataclasses.astuple(got) == dataclasses.astuple(expected)
        for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
            assert pickle.loads(pickle.dumps(got, protocol)) == expected
        assert copy.copy(got) == expected and copy.deepcopy(got) == expected
        assert vars(got) == vars(expected) == dataclasses.asdict(expected)
        for q in (QueryFilter(), QueryFilter(min_gpu_count=1), QueryFilter(allowed_flags=[])):
            assert matches(got, q) == matches(expected, q)
            assert matches(got, q=q) == matches(expected, q=q)
        assert got.price_per_gpu == expected.price_per_gpu
        assert got.total_gpu_memory == expected.total_gpu_memory


def test_one_callers_changes_do_not_reach_another_answer(catalog):
    first = catalog.query()
    offer = first[-1]  # the p5 with provider_data
    offer.price = 100.0
    offer.gpu_count = 2  # a shared field: only this offer changes
    offer.location = "moon"
    assert (offer.price, offer.gpu_count, offer.location) == (100.0, 2, "moon")
    second = catalog.query()
    assert second == by_price(OFFERS)
    assert second[-1] is not offer
    # Shared containers are read-only, with a message saying what to do.
    with pytest.raises(TypeError, match="read-only"):
        offer.provider_data["x"] = 1
    with pytest.raises(TypeError, match="read-only"):
        offer.provider_data["fabrics"].append("f-3")
    with pytest.raises(TypeError, match="read-only"):
        second[1].flags.append("x")
    assert isinstance(offer.provider_data, dict) and isinstance(second[1].flags, list)
    # Replacing a container is fine, and stays with this offer.
    offer.provider_data = {**offer.provider_data, "x": 1}
    second[1].flags = [*second[1].flags, "x"]
    assert catalog.query() == by_price(OFFERS)


def test_items_made_by_callers_keep_their_own_values():
    flags: list[str] = []
    data: dict = {}
    i = item(flags=flags, provider_data=data)
    i.flags.append("x")
    i.provider_data["k"] = 1
    assert i.flags is flags and flags == ["x"] and data == {"k": 1}
    assert item().flags == [] and item().flags is not item().flags  # a new default each time
    with pytest.raises(ValueError):
        item(gpu_count=1, gpu_vendor=None)


def test_frozen_containers():
    frozen = FrozenDict  # calling the type gives a plain, mutable copy (what asdict does)
    assert type(frozen({"a": 1})) is dict and type(FrozenList([1])) is list
    t = build_table(csv_bytes(OFFERS).decode(), provider="aws")
    offers = answers.items(t, t.select(QueryFilter()))
    p5 = offers[-1]
    assert type(p5.provider_data) is FrozenDict
    assert type(p5.provider_data["fabrics"]) is FrozenList
    assert pickle.loads(pickle.dumps(p5.provider_data)) == {"fabrics": ["f-1", "f-2"]}
    assert p5.provider_data | {"b": 2} == {"fabrics": ["f-1", "f-2"], "b": 2}
    # Offers of one instance type share one set of values; each answer has new offers.
    p4s = [o for o in offers if o.instance_name == "p4"]
    assert p4s[0].flags is p4s[1].flags
    assert answers.items(t, t.select(QueryFilter()))[0] is not offers[0]


def test_online_offers_merge_by_price_into_the_list():
    offline = [item(price=1.0), item(price=3.0)]
    online = [item("vastai", price=2.0), item("vastai", price=1.0)]  # its own order is kept
    merged = merge_online(offline, [online])
    assert type(merged) is list
    assert [(i.provider, i.price) for i in merged] == [
        ("aws", 1.0),
        ("vastai", 2.0),
        ("vastai", 1.0),
        ("aws", 3.0),
    ]


# Offers of one instance type that differ in fields other than location and price: each
# needs a shape of its own (fractions matter: 64.0 and 64.5 GB are different shapes).
DIFFERING = [
    item(price=1.0, instance_name="n1", provider_data={"fabrics": ["a"]}),
    item(price=2.0, instance_name="n1", provider_data={"fabrics": ["b"]}),
    item(price=3.0, instance_name="n1", disk_size=50.0, memory=64.0),
    item(price=3.5, instance_name="n1", disk_size=50.5, memory=64.5),
    item(price=4.0, instance_name="n1", spot=True),
    item(price=5.0, instance_name="n1", gpu_memory=80.5),
]


def _differing_answers() -> tuple[list[CatalogItem], list[CatalogItem], list[CatalogItem]]:
    t = build_table(csv_bytes(DIFFERING).decode(), provider="nebius")
    expected = [dataclasses.replace(o, provider="nebius") for o in DIFFERING]
    every = answers.items(t, t.select(QueryFilter()))
    some = answers.items(t, t.select(QueryFilter(min_price=2.5)))  # gathered, not listed
    return expected, every, some


def test_offers_of_one_type_that_differ_keep_their_own_values():
    """Offers are grouped by provider, instance type and spot; offers of one type that differ
    in any other field (provider_data, disk, memory, GPU memory) still come back exactly."""
    expected, every, some = _differing_answers()
    assert every == expected
    assert some == expected[2:]


def test_grouping_rows_is_exact_even_when_every_hash_collides(monkeypatch):
    """Shapes are grouped by a 64-bit hash of the rows and checked; when the check finds rows
    of one hash that differ, the exact grouping takes over."""
    monkeypatch.setattr(answers, "_row_hashes", lambda bits: np.zeros(len(bits[0]), np.uint64))
    expected, every, some = _differing_answers()
    assert every == expected
    assert some == expected[2:]


def test_offers_of_two_providers_with_one_instance_name_keep_their_provider_and_spot():
    """Across providers an instance name is one string code: grouping must still tell aws's
    spot "x" from azure's on-demand "x" (and each from the other's counterpart)."""
    from gpuhunt._internal.query.table import combine

    aws = [item(price=1.0, instance_name="x", spot=True), item(price=3.0, instance_name="x")]
    azure = [item(price=2.0, instance_name="x"), item(price=4.0, instance_name="x", spot=True)]
    t = combine(
        [
            build_table(csv_bytes(aws).decode(), provider="aws"),
            build_table(csv_bytes(azure).decode(), provider="azure"),
        ]
    )
    got = answers.items(t, t.select(QueryFilter()))
    assert [(o.provider, o.spot, o.price) for o in got] == [
        ("aws", True, 1.0),
        ("azure", False, 2.0),
        ("aws", False, 3.0),
        ("azure", True, 4.0),
    ]


def test_an_empty_table_gives_empty_answers():
    t = build_table(csv_bytes([]).decode(), provider="aws")
    parts = answers.prepare(t)
    assert len(parts.shapes) == len(parts.shape_of_row) == 0
    assert answers.items(t, t.select(QueryFilter())) == []


def test_shapes_share_one_provider_data_and_flags_per_distinct_text():
    """Each distinct provider_data or flags text is read once and shared, read-only, by every
    shape that has it (what keeps a catalog's memory per offer small)."""
    offers = [
        item(price=1.0, instance_name="a", provider_data={"k": [1]}, flags=["f"]),
        item(price=2.0, instance_name="b", provider_data={"k": [1]}, flags=["f"]),
        item(price=3.0, instance_name="a", location="eu-west-1", provider_data={"k": [1]}),
    ]
    t = build_table(csv_bytes(offers).decode(), provider="aws")
    a1, b, a2 = answers.items(t, t.select(QueryFilter()))
    assert a1.provider_data is b.provider_data and a1.flags is b.flags
    assert isinstance(a1.provider_data, FrozenDict) and isinstance(a1.flags, FrozenList)
    assert a2.provider_data is a1.provider_data and a2.flags == []


@pytest.mark.parametrize("size", [1, 2, 3, 100])
def test_answers_built_a_slice_at_a_time_are_whole_and_in_order(monkeypatch, size):
    """Large answers are built `_SLICE` rows at a time: every slice size gives the same
    offers, for every offer and for a selection."""
    offers = [
        # Prices from 1: a zero price is not an offer (`schema.value_problem`).
        item(price=float(k + 1), instance_name=f"t{k % 3}", location=f"r{k % 4}")
        for k in range(10)
    ]
    t = build_table(csv_bytes(offers).decode(), provider="aws")
    monkeypatch.setattr(answers, "_SLICE", size)
    assert answers.items(t, t.select(QueryFilter())) == offers
    assert answers.items(t, t.select(QueryFilter(min_price=4.0, max_price=9.0))) == offers[3:9]
    odd = np.array([1, 4, 5, 9])
    assert answers.items(t, odd) == [offers[k] for k in odd]
