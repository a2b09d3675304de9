"""Filters as people write them (issue 15): GPU names that give the memory, unknown names,
versions, locations and a minimum CUDA version, in `matches`, the fast path and `Catalog.query`.
(Online providers backed off after failures: test_online.py.)"""

from __future__ import annotations

import datetime as dt
import logging

import pytest

from gpuhunt import Catalog, QueryFilter, matches
from gpuhunt._internal.constraints import location_matches, offer_cuda_version, parse_version
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.gpu_names import closest_gpu_names, gpu_name_with_memory
from gpuhunt._internal.query.filters import make_filter
from tests.helpers import item, publish_archive

OFFERS = [
    item(instance_name="a100-40", gpu_name="A100", gpu_memory=40.0, price=1.0),
    item(instance_name="a100-80", gpu_name="A100", gpu_memory=80.0, price=2.0),
    item(instance_name="a100-79", gpu_name="A100", gpu_memory=79.6, price=2.1),
    item(instance_name="h100", gpu_name="H100", gpu_memory=80.0, price=3.0, location="eu-west-1"),
    item(instance_name="h100nvl", gpu_name="H100NVL", gpu_memory=94.0, price=3.5),
    item(instance_name="pro6000", gpu_name="RTXPRO6000", gpu_memory=96.0, price=1.5),
    item(instance_name="cpu", gpu_count=0, price=0.1, location="europe-west4"),
]


@pytest.fixture
def catalog(tmp_path, monkeypatch):
    publish_archive(tmp_path / "b", "v1", {"aws": csv_bytes(OFFERS)})
    c = Catalog(catalog_url=str(tmp_path / "b"))
    yield c
    c.close()


def names(offers):
    return sorted(i.instance_name for i in offers)


# ------------------------------------------------------------------ GPU names with memory


@pytest.mark.parametrize(
    "spelling, expected",
    [
        ("A100 80GB", ("A100", 80.0)),
        ("A100-80GB", ("A100", 80.0)),
        ("a100-80g-pcie", ("A100", 80.0)),
        ("A100 SXM4 80GB", ("A100", 80.0)),
        ("H100 NVL 94GB", ("H100NVL", 94.0)),
        ("RTX PRO 6000 96GB", ("RTXPRO6000", 96.0)),
        ("A100", None),  # no memory given
        ("NoSuchGPU 80GB", None),  # unknown: compared as written
        ("B300 1g.34gb", None),  # a MIG slice's name, not a memory size
    ],
)
def test_gpu_name_with_memory(spelling, expected):
    assert gpu_name_with_memory(spelling) == expected


@pytest.mark.parametrize(
    "gpu, expected",
    [
        ("A100 80GB", ["a100-79", "a100-80"]),  # 79.6 GiB is within the 7% tolerance
        ("A100-80GB", ["a100-79", "a100-80"]),
        ("a100-80g-pcie", ["a100-79", "a100-80"]),
        ("A100-40GB", ["a100-40"]),
        ("A100", ["a100-40", "a100-79", "a100-80"]),
        ("H100 NVL 94GB", ["h100nvl"]),
        ("H100 94GB", []),  # H100 offers are 80 GB; the NVL is another model
        ("RTX PRO 6000 96GB", ["pro6000"]),
        ("RTX PRO 6000 48GB", []),
    ],
)
def test_gpu_names_with_memory_constrain_memory(catalog, gpu, expected):
    assert names(catalog.query(gpu_name=gpu)) == expected
    q = make_filter(gpu_name=gpu)
    assert names(i for i in OFFERS if matches(i, q)) == expected


def test_gpu_names_with_and_without_memory_mix(catalog):
    assert names(catalog.query(gpu_name=["A100 40GB", "H100"])) == ["a100-40", "h100"]


def test_offer_of_unknown_memory_does_not_match_a_memory_name():
    assert not matches(item(gpu_name="A100", gpu_memory=None), make_filter(gpu_name="A100 80GB"))
    assert matches(item(gpu_name="A100", gpu_memory=None), make_filter(gpu_name="A100"))


# ------------------------------------------------------------------ unknown GPU names


def test_unknown_gpu_name_warns_once_per_catalog_with_closest_names(catalog, caplog):
    with caplog.at_level(logging.WARNING, logger="gpuhunt._internal.catalog"):
        assert list(catalog.query(gpu_name="H1000")) == []
        assert list(catalog.query(gpu_name=["H1000", "A100"])) != []
    warnings = [r.getMessage() for r in caplog.records if "H1000" in r.getMessage()]
    assert len(warnings) == 1 and "did you mean H100" in warnings[0]
    assert catalog.gpu_name_problems(["H1000", "A100", "a100 80gb"]) == [
        "Unknown GPU name 'H1000', no offer has it; did you mean H100, V100, P100?"
    ]


def test_a_name_only_the_catalog_uses_is_not_unknown(tmp_path, monkeypatch):
    publish_archive(tmp_path / "b", "v1", {"aws": csv_bytes([item(gpu_name="NewGPU")])})
    c = Catalog(catalog_url=str(tmp_path / "b"))
    assert c.gpu_name_problems(["newgpu"]) == []
    assert len(c.query(gpu_name="newgpu")) == 1


def test_closest_gpu_names():
    assert closest_gpu_names("H1000")[0] == "H100"
    assert closest_gpu_names("RTX4O90")[0] == "RTX4090"
    assert closest_gpu_names("zzzzzz") == []


# ------------------------------------------------------------------ versions


@pytest.mark.parametrize("value", [9, "9", 9.0, "9.0", (9, 0), [9, 0], " 9.0 "])
def test_compute_capability_as_people_write_it(catalog, value):
    assert parse_version(value) == (9, 0)
    assert make_filter(min_compute_capability=value).min_compute_capability == (9, 0)
    assert names(catalog.query(min_compute_capability=value)) == ["h100", "h100nvl", "pro6000"]


@pytest.mark.parametrize(
    "value", ["abc", "9.0.1", "", "-1", True, (9,), (9, 0, 1), ("9", "x"), -1, 9.5e9, {}]
)
def test_bad_versions_are_value_errors_naming_the_keyword(catalog, value):
    with pytest.raises(ValueError, match="min_compute_capability"):
        catalog.query(min_compute_capability=value)
    with pytest.raises(ValueError, match="min_cuda"):
        catalog.query(min_cuda=value)


# ------------------------------------------------------------------ location


@pytest.mark.parametrize(
    "location, expected",
    [
        ("us-east-1", ["a100-40", "a100-79", "a100-80", "h100nvl", "pro6000"]),
        ("US-EAST-1", ["a100-40", "a100-79", "a100-80", "h100nvl", "pro6000"]),
        (["europe-*", "eu-west-?"], ["cpu", "h100"]),
        ("eu-*", ["h100"]),
        ("nowhere", []),
        ([], []),
    ],
)
def test_location_names_and_patterns(catalog, location, expected):
    assert names(catalog.query(location=location)) == expected
    q = make_filter(location=location)
    assert names(i for i in OFFERS if matches(i, q)) == expected


def test_location_given_straight_to_query_filter_as_a_string():
    assert matches(item(location="us-east-1"), QueryFilter(location="us-*"))  # type: ignore[arg-type]
    assert location_matches("us-central1-a", ["us-central1-?"])
    assert not location_matches("us-central1-ab", ["us-central1-?"])


def test_query_filter_new_fields_default_to_none():
    import dataclasses

    q = QueryFilter()
    assert q.location is None and q.min_cuda is None
    assert QueryFilter(**dataclasses.asdict(q)) == q


# ------------------------------------------------------------------ min_cuda

CUDA_OFFERS = [
    item("runpod", instance_name="says-12.8", cuda_version="12.8"),
    item("runpod", instance_name="says-12.4", cuda_version="12.4"),
    item("runpod", instance_name="says-13.0", cuda_version="13.0"),
    item("runpod", instance_name="silent", cuda_version=None),
    item("runpod", instance_name="garbled", cuda_version="new"),
]


@pytest.mark.parametrize(
    "min_cuda, expected",
    [
        ("12.8", ["garbled", "says-12.8", "says-13.0", "silent"]),
        (12.8, ["garbled", "says-12.8", "says-13.0", "silent"]),
        ((12, 10), ["garbled", "says-13.0", "silent"]),  # 12.10 is after 12.8, not 12.1
        (13, ["garbled", "says-13.0", "silent"]),
        ("12", ["garbled", "says-12.4", "says-12.8", "says-13.0", "silent"]),
    ],
)
def test_min_cuda_keeps_offers_whose_provider_does_not_say(tmp_path, min_cuda, expected):
    publish_archive(tmp_path / "b", "v1", {"runpod": csv_bytes(CUDA_OFFERS)})
    c = Catalog(catalog_url=str(tmp_path / "b"))
    assert names(c.query(min_cuda=min_cuda)) == expected
    q = make_filter(min_cuda=min_cuda)
    assert names(i for i in CUDA_OFFERS if matches(i, q)) == expected


def test_offer_cuda_version():
    assert offer_cuda_version({"cuda_version": "12.8"}) == (12, 8)
    assert offer_cuda_version({"cuda_version": 12.4}) == (12, 4)
    assert offer_cuda_version({"cuda_version": None}) is None
    assert offer_cuda_version({}) is None


def test_module_level_query_takes_location_and_min_cuda(tmp_path, monkeypatch):
    import gpuhunt
    from gpuhunt._internal import default

    publish_archive(tmp_path / "b", "v1", {"aws": csv_bytes(OFFERS)})
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", str(tmp_path / "b"))
    monkeypatch.setattr(default, "_catalog", None)
    monkeypatch.setattr(default.registry, "PROVIDERS", ())  # no online providers: no network
    try:
        assert names(gpuhunt.query(location=["eu-*"], min_cuda="12.8")) == ["h100"]
    finally:
        default._catalog = None


def test_asdict_round_trip_through_query(catalog):
    import dataclasses

    q = make_filter(gpu_name="A100 80GB", location="us-*", min_cuda=(12, 8))
    assert names(catalog.query(**dataclasses.asdict(q))) == ["a100-79", "a100-80"]


# Issue 48: what a person cannot simply rent, left out when `include` says so (never by default).
OLD = "2020-01-01T00:00:00Z"
KINDS = [
    item(instance_name="listed-h100", gpu_name="H100", price=3.0, location_source="listed"),
    item(instance_name="enum-h100", gpu_name="H100", price=2.0, location_source="enumerated"),
    item(instance_name="enum-mi300x", gpu_name="MI300X", price=2.4, location_source="enumerated"),
    item(instance_name="share-a10", gpu_name="A10", price=0.5, gpu_fraction=1 / 6),
    item(instance_name="korea", gpu_name="T4", price=0.1, flags=["azure-restricted-region"]),
    item(instance_name="t4", gpu_name="T4", price=0.2),
]
LIUM = [
    item("lium", instance_name="node-old", gpu_name="RTX4090", momentary=True, observed_at=OLD),
    item("lium", instance_name="node-undated", gpu_name="RTX4090", momentary=True),
]


@pytest.fixture
def kinds(tmp_path):
    csvs = {"aws": csv_bytes(KINDS), "lium": csv_bytes(LIUM)}
    publish_archive(tmp_path / "k", "v1", csvs)
    c = Catalog(catalog_url=str(tmp_path / "k"))
    yield c
    c.close()


def test_without_include_nothing_is_left_out_as_0_1_x_answers(kinds):
    assert len(kinds.query()) == len(KINDS) + len(LIUM)
    assert len(kinds.query(allowed_flags=[])) == len(KINDS) + len(LIUM) - 1  # the flag only


def test_include_leaves_out_each_kind_not_named_on_both_paths(kinds):
    rentable_only = names(kinds.query(include=[]))
    assert rentable_only == ["listed-h100", "t4"]
    assert names(kinds.query(include="all")) == names(kinds.query())
    with_shares = names(kinds.query(include=["fractional"]))
    assert with_shares == ["listed-h100", "share-a10", "t4"]
    assert "korea" in names(kinds.query(include="restricted,stale-listings"))
    assert {"node-old", "node-undated"} <= set(names(kinds.query(include="stale-listings")))
    # One offer at a time, as the table's masks answer.
    everyone = kinds.query()
    for given in ([], ["enumerated"], "fractional,restricted", ["stale-listings"]):
        q = make_filter(include=given)
        one_by_one = names(i for i in everyone if matches(i, q))
        assert one_by_one == names(kinds.query(include=given)), given


def test_a_fresh_listing_is_answered(kinds, tmp_path):
    fresh = item("lium", instance_name="node-now", gpu_name="RTX4090", momentary=True)
    fresh.observed_at = dt.datetime.now(dt.timezone.utc)
    assert matches(fresh, make_filter(include=[]))
    assert not matches(LIUM[0], make_filter(include=[]))


def test_enumerated_locations_answer_only_where_nothing_listed_matches(kinds):
    # An H100 is listed: the cheaper enumerated one is left out.
    assert names(kinds.query(gpu_name="H100", include=[])) == ["listed-h100"]
    # No MI300X is listed: the enumerated one is the answer, saying so.
    (mi300x,) = kinds.query(gpu_name="MI300X", include=[])
    assert mi300x.location_source == "enumerated"
    assert not matches(mi300x, make_filter(gpu_name="MI300X", include=[]))
    # Asked for, enumerated ones are answered beside the listed ones.
    assert names(kinds.query(gpu_name="H100", include="enumerated")) == [
        "enum-h100",
        "listed-h100",
    ]


def test_explain_counts_what_each_kind_left_out(kinds):
    e = kinds.explain(include=[])
    assert e.left_out == {"restricted": 1, "fractional": 1, "stale-listings": 2, "enumerated": 2}
    assert any("stale-listings 2" in line for line in e.lines())
    assert kinds.explain().left_out == {}


def test_a_bad_include_is_a_value_error_naming_it(kinds):
    with pytest.raises(ValueError, match="include: unknown kind 'cheap'"):
        kinds.query(include=["cheap"])
    with pytest.raises(TypeError, match="include"):
        kinds.query(include=[3])
