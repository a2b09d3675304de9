"""The page's filter controls come from the query spec (`site.controls`)."""

from __future__ import annotations

import datetime as dt

from gpuhunt._internal.site import controls, data
from gpuhunt._internal.site.facts import library_facts
from tests.helpers import item

NOW = dt.datetime(2026, 12, 1, 12, tzinfo=dt.timezone.utc)


def test_the_filter_controls_are_the_query_specs_by_their_wire_names():
    from gpuhunt._internal.query import spec

    got = {f["name"]: f for f in controls.page_filters()}
    wire = {o.wire for o in spec.FILTERS}
    assert set(got) <= wire and {"gpu", "max_price", "spot", "min_memory_per_gpu"} <= set(got)
    # A range filter with a quantity is read from a shape column of its own, no page code.
    per_gpu = got["min_memory_per_gpu"]
    assert (per_gpu["reads"], per_gpu["bound"]) == ("q_min_memory_per_gpu", "min")
    assert got["spot"]["values"] == [["true", "spot"], ["false", "on-demand"]]
    items = [
        item(instance_name="a", gpu_count=4, memory=512.0, gpu_name="H100"),
        item(instance_name="b", gpu_count=0, memory=64.0, gpu_name=None),
    ]
    doc = data.build(items, library_facts(), version="v", now=NOW)
    assert doc["filters"] == controls.page_filters()
    by_name = dict(zip(doc["shapes"]["instance"], doc["shapes"]["q_min_memory_per_gpu"]))
    assert by_name == {"a": 128, "b": None}
