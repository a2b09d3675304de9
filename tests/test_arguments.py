"""Arguments are checked where they enter (issue #23): `query()`, `Catalog.query()`,
`QueryFilter(...)` (and assignments to its fields), `matches()` and `Catalog(...)`. A wrong type
is a TypeError, an impossible value a ValueError; the message names the argument and the value.
One test (or more) per row of the issue's table; the settings rows are in
tests/_internal/load/test_settings.py.

Decision: numbers given as strings (`min_gpu_count="8"`) are refused with a TypeError, never
converted: Python callers pass numbers, and the CLI parses its own arguments.
"""

from __future__ import annotations

import dataclasses
import math

import pytest

import gpuhunt
from gpuhunt import Catalog, QueryFilter, matches
from gpuhunt._internal import default
from gpuhunt._internal.formats.csv import csv_bytes
from tests.helpers import item, publish_archive

OFFERS = [
    item(instance_name="a100", price=1.0),
    item(instance_name="a100-spot", price=0.5, spot=True),
    item(instance_name="cpu", gpu_count=0, price=0.1),
]


@pytest.fixture
def catalog(tmp_path, monkeypatch):
    publish_archive(tmp_path / "b", "v1", {"aws": csv_bytes(OFFERS)})
    c = Catalog(catalog_url=str(tmp_path / "b"))
    monkeypatch.setattr(default, "_catalog", c)
    yield c
    c.close()


def _entries(catalog):
    """Each way a filter enters: the module-level query, Catalog.query, QueryFilter."""
    return [
        ("gpuhunt.query", gpuhunt.query),
        ("Catalog.query", catalog.query),
        ("QueryFilter", QueryFilter),
    ]


BAD = [
    # row 1: numbers as strings; a word for a price
    ("min_gpu_count", "8", TypeError),
    ("max_price", "cheap", TypeError),
    # row 2: a number for a name
    ("gpu_name", 4090, TypeError),
    ("location", 5, TypeError),
    # row 3: a string for spot ("false" is a true value)
    ("spot", "false", TypeError),
    ("spot", 0, TypeError),
    # row 4: impossible values
    ("min_gpu_count", -1, ValueError),
    ("min_price", math.nan, ValueError),
    ("max_memory", math.nan, ValueError),
    ("min_cpu", 2.5, ValueError),
    ("min_cpu", math.inf, ValueError),
    ("max_disk_size", -1.0, ValueError),
    ("min_gpu_count", True, TypeError),
    ("provider", 3, TypeError),
    ("gpu_name", ["H100", 4090], TypeError),
    ("allowed_flags", "oci-spot", TypeError),
    ("cpu_arch", "sparc", ValueError),
    ("gpu_vendor", 1, TypeError),
    ("min_compute_capability", "abc", ValueError),
    ("min_cuda", math.nan, ValueError),
]


@pytest.mark.parametrize(("name", "value", "error"), BAD, ids=[f"{n}={v!r}" for n, v, _ in BAD])
def test_bad_argument_is_refused_naming_it(catalog, name, value, error):
    for where, enter in _entries(catalog):
        with pytest.raises(error) as raised:
            enter(**{name: value})
        message = str(raised.value)
        assert name in message, where
        shown = "NaN" if isinstance(value, float) and math.isnan(value) else repr(value)
        assert shown in message or repr(value) in message, (where, message)


def test_row1_no_numpy_error_and_no_load(tmp_path, monkeypatch):
    # Refused before anything is loaded or asked: the catalog is never touched.
    c = Catalog(catalog_url=str(tmp_path / "nothing-here"))
    with pytest.raises(TypeError, match=r"min_gpu_count must be a whole number, got '8' \(str\)"):
        c.query(min_gpu_count="8")
    with pytest.raises(TypeError, match=r"max_price must be a number, got 'cheap' \(str\)"):
        c.query(max_price="cheap")
    assert c.status().last_attempt is None


def test_row3_spot_false_is_not_read_as_true(catalog):
    with pytest.raises(TypeError, match="spot must be True, False or None, got 'false'"):
        catalog.query(spot="false")
    assert [o.instance_name for o in catalog.query(spot=False)] == ["cpu", "a100"]


@pytest.mark.parametrize(
    ("low", "high"),
    [
        ("min_cpu", "max_cpu"),
        ("min_memory", "max_memory"),
        ("min_gpu_count", "max_gpu_count"),
        ("min_gpu_memory", "max_gpu_memory"),
        ("min_total_gpu_memory", "max_total_gpu_memory"),
        ("min_disk_size", "max_disk_size"),
        ("min_price", "max_price"),
    ],
)
def test_minimum_above_maximum(catalog, low, high):
    for where, enter in _entries(catalog):
        with pytest.raises(ValueError, match=f"{low} \\(8\\) is above {high} \\(4\\)"):
            enter(**{low: 8, high: 4})
        assert enter(**{low: 4, high: 4}) is not None, where  # equal bounds are fine


def test_compute_capability_range_compared_as_versions(catalog):
    with pytest.raises(ValueError, match="min_compute_capability"):
        catalog.query(min_compute_capability="9.0", max_compute_capability=8)
    # 8.10 is above 8.9 as a version, below as a decimal: no error.
    catalog.query(min_compute_capability="8.9", max_compute_capability="8.10")


def test_a_filter_changed_after_it_was_made(catalog):
    # dstack's way: QueryFilter(allowed_flags=...), then fields set one by one.
    q = QueryFilter(allowed_flags=["oci-spot"])
    with pytest.raises(TypeError, match="max_price must be a number, got 'cheap'"):
        q.max_price = "cheap"
    assert q.max_price is None  # the bad value was not kept
    q.min_cpu = 8
    q.max_cpu = 4  # each field is fine alone; together no offer can match
    with pytest.raises(ValueError, match=r"min_cpu \(8\) is above max_cpu \(4\)"):
        matches(OFFERS[0], q)
    q.max_cpu = 16
    assert matches(OFFERS[0], q) is True


def test_what_dstack_passes_is_accepted():
    # offers.py requirements_to_query_filter, 0.21.2: every field set as dstack sets it.
    q = QueryFilter(allowed_flags=["oci-spot", "lambda-arm"])
    q.max_price = 2.5
    q.spot = None
    q.cpu_arch = gpuhunt.CPUArchitecture.X86
    q.min_cpu, q.max_cpu = 2, None
    q.min_memory, q.max_memory = 8.0, None
    q.min_gpu_count, q.max_gpu_count = 1, 8
    q.gpu_vendor = gpuhunt.AcceleratorVendor.NVIDIA
    q.gpu_name = ["H100", "A100"]
    q.min_gpu_memory, q.max_gpu_memory = 40.0, None
    q.min_total_gpu_memory = 40.0
    q.min_disk_size = 100.0
    q.min_compute_capability = (8, 0)
    assert matches(OFFERS[0], q=q) is True


def test_asdict_round_trip_and_keywords_unchanged(catalog):
    q = QueryFilter(min_gpu_count=1, spot=False, gpu_name=["A100"], max_price=5.0)
    assert [o.instance_name for o in catalog.query(**dataclasses.asdict(q))] == ["a100"]
    assert dataclasses.replace(q, spot=True).spot is True
    assert q == QueryFilter(**dataclasses.asdict(q))
    # The 0.1.x keywords, and those added since (at the end, defaulting to None).
    names = [f.name for f in dataclasses.fields(QueryFilter)]
    assert names == [
        "provider",
        "cpu_arch",
        "min_cpu",
        "max_cpu",
        "min_memory",
        "max_memory",
        "min_gpu_count",
        "max_gpu_count",
        "gpu_vendor",
        "gpu_name",
        "min_gpu_memory",
        "max_gpu_memory",
        "min_total_gpu_memory",
        "max_total_gpu_memory",
        "min_disk_size",
        "max_disk_size",
        "min_price",
        "max_price",
        "min_compute_capability",
        "max_compute_capability",
        "spot",
        "allowed_flags",
        "location",
        "min_cuda",
        "country",
        "area",
        "available",
        "max_age",
        "resale",
        "min_memory_per_gpu",
        "max_interruption",
        "include",
    ]
    assert "_gpuhunt_checked" not in repr(q)


def test_accepted_spellings(catalog):
    import numpy as np

    catalog.query(min_gpu_count=8.0, max_price=np.float64(2.0), min_cpu=np.int64(2))
    catalog.query(max_price=math.inf, gpu_name=("A100",), location={"us-east-1"})
    catalog.query(cpu_arch="X86", gpu_vendor="NVIDIA", allowed_flags=set())


# ------------------------------------------------------------------------------ Catalog(...)


@pytest.mark.parametrize(
    ("kwargs", "error", "text"),
    [
        # row 5
        (dict(timeout=-5), ValueError, "timeout must be above 0, got -5"),
        (dict(timeout=(5, math.nan)), ValueError, "timeout must be a number, got NaN"),
        (dict(timeout="5"), TypeError, "timeout must be seconds or a (connect, read) pair"),
        (dict(timeout=(1, 2, 3)), TypeError, "timeout must be seconds or a (connect, read) pair"),
        # row 6
        (dict(reload_interval="abc"), TypeError, "reload_interval must be a number, got 'abc'"),
        (dict(reload_interval=-1), ValueError, "reload_interval must be at least 0, got -1"),
        (dict(reload_interval=math.nan), ValueError, "reload_interval must be a number, got NaN"),
        (dict(retries=-1), ValueError, "retries must be at least 0, got -1"),
        (dict(retries=1.5), ValueError, "retries must be a whole number, got 1.5"),
        (dict(online_timeout=0), ValueError, "online_timeout must be above 0, got 0"),
        (dict(load_timeout=math.inf), ValueError, "load_timeout must be finite, got inf"),
        (dict(load_timeout=-5), ValueError, "load_timeout must be at least 0, got -5"),
        (dict(balance_resources="yes"), TypeError, "balance_resources must be True or False"),
        (dict(auto_reload=None), TypeError, "auto_reload must be True or False"),
        (dict(catalog_url=5), TypeError, "catalog_url must be a URL or a folder, got 5"),
        (dict(settings={"x": 1}), TypeError, "settings must be a Settings, got dict"),
    ],
)
def test_catalog_arguments(tmp_path, monkeypatch, kwargs, error, text):
    with pytest.raises(error) as raised:
        Catalog(**kwargs)
    assert text in str(raised.value)


def test_catalog_timeout_as_one_number_loads(catalog, tmp_path):
    c = Catalog(catalog_url=str(tmp_path / "b"), timeout=3)
    assert c._timeout == (3.0, 3.0)
    assert [o.instance_name for o in c.query()] == ["cpu", "a100-spot", "a100"]


def test_reload_interval_setter_checked(catalog):
    with pytest.raises(TypeError, match="reload_interval must be a number, got 'abc'"):
        catalog.reload_interval = "abc"
    catalog.reload_interval = 0  # check for a new version on every query
    assert catalog.reload_interval == 0
