"""The shared number readers of `gpuhunt.providers._records`, with each variant the providers
that use them rely on (RunPod, Verda, CloudRift, Lium, Azure)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import gpuhunt.providers as package
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem
from gpuhunt.providers import _report
from gpuhunt.providers._records import (
    _PROVIDER_NAMES,
    BadRecord,
    Gpu,
    json_number,
    named,
    need_number,
    offer,
    positive,
    read_each,
    resold_from,
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (3, 3.0),
        (2.5, 2.5),
        (0, 0.0),
        (-1, -1.0),
        (None, None),
        ("", None),
        ("2.89", None),  # a string is not a JSON number here
        ("80 GB", None),
        (True, None),  # bool is an int to Python, not a number to an API
        (False, None),
        ([1], None),
        ({"n": 1}, None),
    ],
)
def test_json_number(value, expected):
    got = json_number(value)
    assert got == expected
    assert got is None or type(got) is float


def test_json_number_lets_nan_and_infinity_through():
    assert math.isnan(json_number(float("nan")) or 0.0)
    assert json_number(float("inf")) == math.inf


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "cpu_count has type NoneType"),
        ("", "cpu_count has type str"),
        ("4", "cpu_count has type str"),
        (True, "cpu_count has type bool"),
        ([4], "cpu_count has type list"),
    ],
)
def test_need_number_default_names_the_type(value, message):
    # Verda and CloudRift: a plain ValueError naming the type found.
    with pytest.raises(ValueError) as e:
        need_number(value, "cpu_count")
    assert type(e.value) is ValueError
    assert str(e.value) == message


def test_need_number_default_keeps_nan():
    assert need_number(4, "x") == 4.0
    assert type(need_number(4, "x")) is float
    assert math.isnan(need_number(float("nan"), "x"))


class _Skip(_report.SkipRecord):
    pass


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "field 'price' is missing or not a number"),
        ("1.5", "field 'price' is missing or not a number"),
        (False, "field 'price' is missing or not a number"),
        (float("nan"), "field 'price' is not finite"),
        (float("inf"), "field 'price' is not finite"),
        (-math.inf, "field 'price' is not finite"),
    ],
)
def test_need_number_lium_variant(value, message):
    with pytest.raises(_Skip) as e:
        need_number(
            value,
            "field 'price'",
            error=_Skip,
            refusal="is missing or not a number",
            finite=True,
        )
    assert str(e.value) == message


def test_need_number_finite_accepts_finite():
    assert need_number(-2, "x", finite=True) == -2.0


@pytest.mark.parametrize(
    ("value", "expected"),
    [("4", 4.0), (" 1.5 ", 1.5), ("1e3", 1000.0), (8, 8.0), ("inf", math.inf)],
)
def test_need_number_parses_text(value, expected):
    # Azure sends every capability as text.
    assert need_number(value, "capability 'vCPUs'", parse_text=True) == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "capability 'vCPUs' is missing"),
        ("", "capability 'vCPUs' is not a number: ''"),
        ("4 cores", "capability 'vCPUs' is not a number: '4 cores'"),
        ("True", "capability 'vCPUs' is not a number: 'True'"),
        (True, "capability 'vCPUs' is missing"),
    ],
)
def test_need_number_text_refusals(value, message):
    with pytest.raises(ValueError) as e:
        need_number(value, "capability 'vCPUs'", refusal="is missing", parse_text=True)
    assert str(e.value) == message


@pytest.mark.parametrize(
    ("cloud", "provider"),
    [
        ("lambdalabs", "lambdalabs"),
        ("lambda", "lambdalabs"),
        ("datacrunch", "verda"),
        ("Nebius", "nebius"),
        ("massedcompute", "massedcompute"),
    ],
)
def test_resold_from_names_the_gpuhunt_provider(cloud: str, provider: str) -> None:
    assert resold_from(cloud) == provider


def test_resold_from_knows_every_provider_module() -> None:
    modules = {
        p.stem for p in Path(package.__file__).parent.glob("*.py") if not p.stem.startswith("_")
    }
    assert modules - {"base", "shadeform"} == _PROVIDER_NAMES


def test_offer_fills_what_every_provider_wrote_out() -> None:
    data = {"k": 1}
    h100 = Gpu(8, "H100", AcceleratorVendor.NVIDIA, 80.0)
    first = offer(
        "p", "h100x8", "r1", 20.0, 128, 1024.0, h100, 2000.0, provider_data=data, available=True
    )
    second = offer("p", "cpu", "r1", 0.1, 2, 4.0)

    assert first == CatalogItem(
        provider="p",
        instance_name="h100x8",
        location="r1",
        price=20.0,
        cpu=128,
        memory=1024.0,
        gpu_count=8,
        gpu_name="H100",
        gpu_memory=80.0,
        spot=False,
        disk_size=2000.0,
        gpu_vendor=AcceleratorVendor.NVIDIA,
        provider_data={"k": 1},
        available=True,
        location_source="listed",  # the provider's own answer sells it there
    )
    assert (second.gpu_count, second.gpu_vendor, second.disk_size, second.flags) == (
        0,
        None,
        None,
        [],
    )
    # What kind of fact: a marketplace of hosts' offers are momentary, a share says its share.
    node = offer("lium", "node", "us", 0.3, 8, 32.0, h100)
    assert (node.momentary, node.location_source, node.gpu_fraction) == (True, "listed", None)
    share = offer("azure", "Standard_NV6ads_A10_v5", "eastus", 0.45, 6, 55.0)
    assert share.gpu_fraction == 1 / 6 and share.momentary is None
    # Each offer has its own provider_data, even when built from one dict.
    assert first.provider_data is not data and second.provider_data == {}


def test_read_each_skips_and_counts_a_bad_record_and_keeps_the_others() -> None:
    def parse(record: object, report: _report.ParseReport, what: str) -> list[str]:
        if record == "refused":
            raise BadRecord("field 'x' is missing")
        if record == "broken":
            raise KeyError("y")
        return [f"{what}:{record}"]

    report = _report.ParseReport(provider="p")
    got = read_each(["a", "refused", "broken", "b"], report, lambda r, i: f"#{i}", parse)

    assert got == ["#0:a", "#3:b"]
    assert report.counts["malformed"] == 2
    assert report.skipped == ["#1: field 'x' is missing"]


def test_named_gives_the_record_and_its_name() -> None:
    record = {"instance_type": "1V100.6V", "price_per_hour": "0.5"}
    assert named(record, "instance_type") == (record, "1V100.6V")


@pytest.mark.parametrize(
    ("record", "error", "message"),
    [
        (["a list"], ValueError, "expected an object, got list"),
        ({"name": ""}, ValueError, "name is empty"),
        ({"name": 7}, ValueError, "name is empty"),
        ({"other": "x"}, KeyError, "name"),
    ],
)
def test_named_refusals(record: object, error: type[Exception], message: str) -> None:
    # CloudRift's and Verda's record guards report these messages as the skip reason.
    with pytest.raises(error, match=message):
        named(record, "name")


def test_positive_refuses_zero_and_below() -> None:
    assert positive(0.25, "cost_per_hour") == 0.25
    with pytest.raises(ValueError, match="^cost_per_hour is 0$"):
        positive(0, "cost_per_hour")
    with pytest.raises(ValueError, match=r"^price_per_hour is -1\.5$"):
        positive(-1.5, "price_per_hour")
