"""The page's numpy helpers (`site.arrays`): JSON text written from a column's digits is the
text `json` writes for the same values, byte for byte, and the offers' order is the reference
order."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from gpuhunt._internal.site import arrays, build


def _dumps(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":"), allow_nan=False).encode()


def _prices(seed: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    scale = 10.0 ** rng.integers(-4, 9, n)  # 1e-4 .. 1e8 dollars an hour
    return arrays.rounded(rng.random(n) * scale)


@pytest.mark.parametrize("seed", range(4))
def test_prices_are_written_as_json_writes_them(seed):
    prices = _prices(seed, 20000)
    special = [0.0, 1e-4, 0.1, 0.3, 2.0, 10.0, 100.000001, 999999999.999999, 0.000105, 5.5]
    prices = np.concatenate([prices, arrays.rounded(np.array(special))])
    assert arrays.json_bytes(prices) == _dumps(prices.tolist())
    assert arrays.json_bytes(prices[:1]) == _dumps(prices[:1].tolist())


@pytest.mark.parametrize(
    "values",
    [
        [0.00009, 1.5],  # `repr` writes 9e-05 here
        [-0.0, 1.0],
        [-2.5],
        [1e9, 1.0],
        [1e20],
        [0.1 + 0.2],  # not a six-place decimal: its `repr` has seventeen digits
        [1 / 3],
    ],
)
def test_floats_outside_the_digit_path_are_written_as_json_writes_them(values):
    a = np.array(values, dtype=np.float64)
    assert arrays.json_bytes(a) == _dumps(values)


def test_non_finite_floats_are_refused_as_json_refuses_them():
    with pytest.raises(ValueError, match="JSON compliant"):
        arrays.json_bytes({"price": np.array([1.0, float("nan")])})


@pytest.mark.parametrize(
    "values, dtype",
    [
        ([0, 1, 9, 10, 99, 100, 271, 65535], np.uint16),
        ([0, 7, 10**12, 123456789012345678], np.int64),
        ([5, -1, 3], np.int64),
        ([], np.int64),
        ([], np.float64),
    ],
)
def test_integers_are_written_as_json_writes_them(values, dtype):
    assert arrays.json_bytes(np.array(values, dtype=dtype)) == _dumps(values)


def test_a_document_holding_columns_is_the_document_json_writes():
    loc = np.array([3, 0, 12], dtype=np.int64)
    price = arrays.rounded(np.array([0.5, 1.25, 3.0]))
    doc = {
        "format": 1,
        "name": 'quote " backslash \\ é',
        "offers": {"loc": loc, "price": price, "note": None},
        "nested": {"deeper": {"x": np.array([1, 2])}, "list": [1.5, "a"]},
        "history": None,
    }
    plain = {
        **doc,
        "offers": {"loc": [3, 0, 12], "price": [0.5, 1.25, 3.0], "note": None},
        "nested": {"deeper": {"x": [1, 2]}, "list": [1.5, "a"]},
    }
    assert arrays.json_bytes(doc) == _dumps(plain)
    with pytest.raises(TypeError, match="one-dimensional"):
        arrays.json_bytes({"a": np.zeros((2, 2))})
    with pytest.raises(TypeError, match="not a string"):
        arrays.json_bytes({1: np.zeros(2)})


def test_the_string_literal_of_the_data_is_what_json_writes():
    texts = ['a "quoted" \\ path', "tab\there\nline", "é ü 日本", "\x7f\x00", "</script>"]
    body = _dumps({"texts": texts, "n": [1, 2.5]})
    assert build._string_literal(body) == json.dumps(body.decode()).encode()


def test_offer_order_is_page_then_price_then_name():
    rng = random.Random(5)
    n = 4000
    page = np.array([rng.randrange(30) for _ in range(n)], dtype=np.int64)
    price = np.sort(np.array([rng.choice([1.0, 2.0, 2.5, 7.0]) for _ in range(n)]))
    name_rank = np.array([rng.randrange(12) for _ in range(n)], dtype=np.int64)
    for _ in range(2):  # rows in price order, as a table's are; then shuffled
        key = list(zip(page.tolist(), price.tolist(), name_rank.tolist()))
        expected = sorted(range(n), key=lambda i: key[i])
        got = arrays.offer_order(page, arrays.price_ranks(price), name_rank)
        assert [key[i] for i in got] == [key[i] for i in expected]
        perm = np.array(rng.sample(range(n), n))
        page, price, name_rank = page[perm], price[perm], name_rank[perm]


def test_price_ranks_in_order_and_not():
    assert arrays.price_ranks(np.array([1.0, 1.0, 2.5, 3.0, 3.0])).tolist() == [0, 0, 1, 2, 2]
    assert arrays.price_ranks(np.array([3.0, 1.0, 3.0, 2.5])).tolist() == [2, 0, 2, 1]
    assert arrays.price_ranks(np.zeros(0)).tolist() == []


def test_first_met_is_the_joined_tables_order():
    # Two tables' rows, each in price order, as `combine` joins them: by price, then table
    # (equal prices), then row.
    codes_a, price_a = np.array([2, 0, 2, 1]), np.array([1.0, 2.0, 2.0, 5.0])
    codes_b, price_b = np.array([1, 0, 3]), np.array([0.5, 2.0, 9.0])
    got = arrays.first_met([(codes_a, 4, price_a), (codes_b, 4, price_b)])
    assert got == [(1, 1), (0, 2), (0, 0), (1, 0), (0, 1), (1, 3)]
    # One table: its own rows' order.
    assert arrays.first_met([(codes_a, 4, price_a[::-1].copy())]) == [(0, 2), (0, 0), (0, 1)]


def test_first_index_and_ranks():
    codes = np.array([4, 1, 4, 0, 1, 0], dtype=np.uint16)
    assert arrays.first_index(codes, 6).tolist() == [3, 1, 6, 6, 0, 6]
    assert arrays.ranks(["b", "a", "c", "a"]).tolist() == [2, 0, 3, 1]
