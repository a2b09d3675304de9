"""The fast query path must answer exactly what `matches` answers."""

import dataclasses
import datetime

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gpuhunt import AcceleratorVendor, CPUArchitecture, QueryFilter, matches
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.formats.csv_table import build_table
from gpuhunt._internal.query import answers
from gpuhunt._internal.query.table import COLUMNS, combine
from tests.helpers import item

GPUS = [
    ("A100", AcceleratorVendor.NVIDIA, 40.0),
    ("A100", AcceleratorVendor.NVIDIA, 80.0),
    ("H100", AcceleratorVendor.NVIDIA, 80.0),
    ("MI300X", AcceleratorVendor.AMD, 192.0),
    ("v5litepod", AcceleratorVendor.GOOGLE, None),
    ("NewGPU", AcceleratorVendor.NVIDIA, 12.0),
    ("T4", AcceleratorVendor.NVIDIA, None),
    ("A100", AcceleratorVendor.NVIDIA, 75.0),  # 80 GB within the 7% tolerance
    ("A100", AcceleratorVendor.NVIDIA, 74.0),  # just outside it
]

RECENT = (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=1)).strftime(
    "%Y-%m-%dT%H:%M:%SZ"
)
PROVIDER_DATA = [
    {},
    {"cuda_version": "12.8"},
    {"cuda_version": 12.4},
    {"cuda_version": "13.0"},
    {"cuda_version": "bad"},
    {"pod_counts": [2, 4]},
    {"available": True, "observed_at": "2020-01-01T00:00:00Z"},
    {"available": False, "observed_at": RECENT, "resold_from": "lambdalabs"},
    {"observed_at": RECENT},
]


@st.composite
def offers(draw):
    gpu_count = draw(st.sampled_from([0, 0, 1, 2, 8]))
    name, vendor, mem = draw(st.sampled_from(GPUS))
    return item(
        provider=draw(st.sampled_from(["aws", "aws", "gcp", "runpod"])),
        instance_name=draw(st.sampled_from(["a", "b", "c"])),
        location=draw(st.sampled_from(["r1", "r2", "R1", "europe-west4", "us-central1-a"])),
        price=draw(st.sampled_from([0.5, 1.0, 1.0, 2.5, 10.0])),
        cpu=draw(st.sampled_from([2, 8, 96])),
        memory=draw(st.sampled_from([4.0, 32.0, 1152.0])),
        gpu_count=gpu_count,
        gpu_name=name if gpu_count else None,
        gpu_vendor=vendor if gpu_count else None,
        gpu_memory=mem if gpu_count else None,
        spot=draw(st.booleans()),
        disk_size=draw(st.sampled_from([None, 50.0, 200.0])),
        flags=draw(st.sampled_from([[], ["oci-spot"], ["a", "b"]])),
        cpu_arch=draw(st.sampled_from(list(CPUArchitecture))),
        provider_data=draw(st.sampled_from(PROVIDER_DATA)),
    )


# Values tried for each QueryFilter field (fields not chosen stay None): one entry per field, so
# a new field is one more line here.
FILTER_VALUES: dict[str, list] = {
    "cpu_arch": list(CPUArchitecture),
    "min_cpu": [2, 8],
    "max_cpu": [8, 96],
    "min_memory": [32.0],
    "max_memory": [32.0, 100.0],
    "min_gpu_count": [0, 1, 2],
    "max_gpu_count": [0, 1, 8],
    "gpu_vendor": list(AcceleratorVendor),
    "gpu_name": [
        ["a100"],
        ["H100", "MI300X"],
        ["newgpu"],
        [],
        ["A100 80GB"],
        ["a100-40g-pcie", "H100"],
        ["A100 80GB", "t4"],
    ],
    "min_gpu_memory": [0, 40, 80],
    "max_gpu_memory": [0, 80],
    "min_total_gpu_memory": [0, 80, 320],
    "max_total_gpu_memory": [80, 640],
    "min_disk_size": [100],
    "max_disk_size": [100],
    "min_price": [1.0],
    "max_price": [1.0, 2.5],
    "min_compute_capability": [(8, 0), (9, 0)],
    "max_compute_capability": [(8, 0), (8, 9)],
    "spot": [True, False],
    "allowed_flags": [[], ["oci-spot"], ["a", "b", "oci-spot"]],
    "location": [["r1"], ["r*"], ["R?", "x"], ["europe-*", "us-central1-?"], []],
    "min_cuda": [(12, 0), (12, 8), (13, 0)],
    # places by provider: gcp europe-west4 is NL, us-central1-a US; "r1" is nowhere
    "country": [["NL"], ["us", "NL"], ["DE"], []],
    "area": [["europe"], ["north-america", "EUROPE"], ["africa"], []],
    "available": [True, False],
    "resale": [True, False],
    "max_age": [datetime.timedelta(days=30), datetime.timedelta(days=36500)],
    "min_memory_per_gpu": [0, 8.0, 16, 1000],
    # A table built from offers carries no bands: spot rows are left out, as `matches` does.
    "max_interruption": [5, 10, 100],
    "include": [[], ["restricted", "enumerated"], "fractional,stale-listings", "all"],
}


@st.composite
def filters(draw):
    """A filter setting up to four fields: with every field set at once almost nothing would
    match, and the comparison would prove little."""
    chosen = draw(st.lists(st.sampled_from(sorted(FILTER_VALUES)), max_size=4, unique=True))
    given = {name: draw(st.sampled_from(FILTER_VALUES[name])) for name in chosen}
    try:
        return QueryFilter(**given)
    except ValueError:  # a minimum above its maximum is refused (tested in test_arguments.py)
        assume(False)


def test_every_filter_field_is_tried():
    assert set(FILTER_VALUES) == {f.name for f in dataclasses.fields(QueryFilter)} - {"provider"}


PROVIDER_ORDER = ["aws", "gcp", "runpod"]


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.lists(offers(), max_size=40),
    filters(),
    st.one_of(st.none(), st.sets(st.sampled_from(PROVIDER_ORDER))),
)
def test_select_equals_matches(items, q, providers):
    """Per-provider tables combined into one answer what `matches` answers, in price order
    with ties in provider order, then file order."""
    tables = [
        build_table(csv_bytes([i for i in items if i.provider == p]).decode(), provider=p)
        for p in PROVIDER_ORDER
    ]
    table = combine(tables)
    got = answers.items(table, table.select(q, providers))
    expected = sorted(
        (i for i in items if matches(i, q) and (providers is None or i.provider in providers)),
        key=lambda i: (i.price, PROVIDER_ORDER.index(i.provider)),
    )  # stable: file order within a provider
    assert got == expected
    # Compacted (shape fields once per shape, as a load leaves it): the same answer.
    answers.prepare(table)
    assert (table._by_shape is not None) == (len(table) > 0)
    assert answers.items(table, table.select(q, providers)) == expected


def test_a_compacted_table_keeps_per_row_only_price_location_and_shape():
    rows = [
        item(price=1.0, location="us-east-1"),
        item(price=2.0, location="eu-west-1", spot=True),
        item(instance_name="p5.48xlarge", gpu_name="H100", gpu_count=8, price=9.0),
    ]
    table = combine([build_table(csv_bytes(rows).decode(), provider="aws")])
    before = {k: getattr(table, k).copy() for k in COLUMNS}
    answers.prepare(table)  # groups the rows into shapes, then compacts
    assert table._by_shape is not None and len(table._by_shape) == 3  # spot is a shape field
    held = {k for k, v in vars(table).items() if isinstance(v, np.ndarray) and len(v) == 3}
    assert held == {"price", "location", "_shape_of_row"}
    assert table.location.dtype == np.uint16 and table._shape_of_row.dtype == np.uint16
    for k, v in before.items():  # every column still reads as it did, row by row
        assert np.array_equal(getattr(table, k), v, equal_nan=v.dtype.kind == "f"), k
    assert answers.items(table, table.select(QueryFilter(gpu_name=["H100"]))) == [rows[2]]
    assert answers.items(table, table.select(QueryFilter(spot=True))) == [rows[1]]
    with pytest.raises(AttributeError, match="no_such_column"):
        table.no_such_column  # noqa: B018


def test_combined_tables_order_by_price_then_provider():
    a = build_table(csv_bytes([item(price=1.0), item(price=3.0)]).decode(), provider="aws")
    g = build_table(
        csv_bytes([item("gcp", price=1.0), item("gcp", price=2.0)]).decode(), provider="gcp"
    )
    both = combine([a, g])
    result = answers.items(both, both.select(QueryFilter()))
    assert [(i.provider, i.price) for i in result] == [
        ("aws", 1.0),
        ("gcp", 1.0),
        ("gcp", 2.0),
        ("aws", 3.0),
    ]
    assert [i.provider for i in answers.items(both, both.select(QueryFilter(), ["gcp"]))] == [
        "gcp",
        "gcp",
    ]
    assert both.counts() == {"aws": 2, "gcp": 2}
    part = both.part("gcp")
    assert part is not None and answers.items(part, part.select(QueryFilter())) == [
        item("gcp", price=1.0),
        item("gcp", price=2.0),
    ]
