"""`query.top`: the first rows of an answer chosen on the columns are the rows the whole
answer gives once built, sorted (`order.sort_offers`) and collapsed (`collapse_regions`),
over random catalogs, every sort, both views and limits below, at and above the match count."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuhunt._internal.collapse import collapse_regions
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.formats.csv_table import build_table
from gpuhunt._internal.models import QueryFilter
from gpuhunt._internal.query import answers, order, top
from gpuhunt._internal.query.table import combine
from tests.helpers import item

PROVIDER_ORDER = ["aws", "gcp", "runpod"]


@st.composite
def offers(draw):
    """An offer whose price, place and shape fields collide often (ties are the hard part)."""
    count = draw(st.sampled_from([0, 1, 2, 8]))
    gpu, memory = draw(
        st.sampled_from([("A100", 80.0), ("H100", 80.0), ("T4", None), ("NewGPU", 12.0)])
    )
    return item(
        provider=draw(st.sampled_from(PROVIDER_ORDER)),
        instance_name=draw(st.sampled_from(["a", "b", "c"])),
        location=draw(st.sampled_from(["r1", "r2", "r3", "europe-west4"])),
        price=draw(st.sampled_from([0.0, 0.5, 1.0, 1.0, 2.5, 10.0])),
        gpu_count=count,
        gpu_name=gpu if count else None,
        gpu_memory=memory if count else None,
        spot=draw(st.booleans()),
    )


def _table(items):
    return combine(
        [
            build_table(csv_bytes([i for i in items if i.provider == p]).decode(), provider=p)
            for p in PROVIDER_ORDER
        ]
    )


def _expected(table, rows, sort, limit, all_regions):
    built = answers.items(table, rows)
    order.sort_offers(built, sort)
    if all_regions:
        return built[:limit], None, len(built)
    collapsed = collapse_regions(built)
    chosen = collapsed[:limit]
    return [c.offer for c in chosen], [c.locations for c in chosen], len(collapsed)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.lists(offers(), max_size=60),
    st.sampled_from(top.SORTS),
    st.booleans(),
    st.sampled_from([1, 2, 3, 5, 100]),
    st.booleans(),
)
def test_top_is_the_built_answer_sorted_collapsed_and_cut(items, sort, all_regions, limit, half):
    table = _table(items)
    answers.prepare(table)
    rows = table.select(QueryFilter(), None)
    if half:  # a filtered answer: every other matching row
        rows = rows[::2]
    found = top.top(table, rows, sort, limit, all_regions)
    want_offers, want_locations, total = _expected(table, rows, sort, limit, all_regions)
    assert found.total == total
    built = [answers.items(table, np.array([r]))[0] for r in found.rows.tolist()]
    assert built == want_offers
    assert found.locations == want_locations


def test_ties_at_the_cut_keep_the_answer_order():
    items = [item(instance_name=f"i{n}", price=1.0, gpu_count=1) for n in range(10)]
    table = _table(items)
    rows = table.select(QueryFilter(), None)
    found = top.top(table, rows, "price-per-gpu", 3, True)
    assert [i.instance_name for i in answers.items(table, found.rows)] == ["i0", "i1", "i2"]


def test_an_unknown_sort_or_limit_is_refused():
    table = _table([item()])
    rows = table.select(QueryFilter(), None)
    with pytest.raises(ValueError, match="unknown sort"):
        top.top(table, rows, "cheapest", 1, True)
    with pytest.raises(ValueError, match="limit"):
        top.top(table, rows, "price", 0, True)


def test_json_chunks_are_dumps_of_the_whole_answer():
    def dumps(x):
        return json.dumps(x, separators=(",", ":")).encode()

    rows = [{"a": n, "b": "x" * n} for n in range(50)]
    whole = dumps({"offers": rows, "total": 70, "catalog": {"version": "v"}})
    batches = [rows[:1], [], rows[1:7], *([r] for r in rows[7:])]
    pieces = list(top.json_chunks(batches, 70, {"version": "v"}, dumps, chunk_bytes=100))
    assert len(pieces) > 5 and b"".join(pieces) == whole
    assert b"".join(top.json_chunks([[], []], 0, None, dumps)) == dumps(
        {"offers": [], "total": 0, "catalog": None}
    )


@pytest.mark.parametrize("kw", [{"separators": (",", ":")}, {"indent": 2}])
def test_array_chunks_are_dumps_of_the_list_compact_or_indented(kw):
    def dumps(x):
        return json.dumps(x, **kw).encode()

    rows = [{"a": n, "b": ["x"] * (n % 3), "c": {"d": None}} for n in range(40)]
    batches = [[], rows[:1], rows[1:9], [], *([r] for r in rows[9:])]
    pieces = list(top.array_chunks(batches, dumps, chunk_bytes=150))
    assert len(pieces) > 5 and b"".join(pieces) == dumps(rows)
    assert b"".join(top.array_chunks([[], []], dumps)) == dumps([]) == b"[]"
    assert b"".join(top.array_chunks([rows[:1]], dumps)) == dumps(rows[:1])
