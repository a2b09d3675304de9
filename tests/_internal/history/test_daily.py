"""The daily view of a price history: cheapest price per day per GPU or instance, filters, and
the sparkline. Offers here are made up for the tests (instance names as Lambda spells them)."""

from __future__ import annotations

import pytest

from gpuhunt._internal.history import daily
from gpuhunt._internal.history import table as history
from gpuhunt._internal.history.table import Offer, Span
from tests._internal.history.offers import D1, D2, D3, D4, offers


def _spans() -> dict[str, list[Span]]:
    h = history.observe(
        [],
        None,
        {
            **offers(("gpu_1x_h100", "us-east-1", 3.0)),
            ("gpu_8x_h100", "us-east-1", False): Offer(
                "gpu_8x_h100", "us-east-1", False, "H100", 8, 20.0
            ),
            ("cpu_only", "us-east-1", False): Offer("cpu_only", "us-east-1", False, None, 0, 0.1),
        },
        "v1",
        D1,
    )
    h = history.observe(h, "v1", offers(("gpu_1x_h100", "us-east-1", 2.0)), "v2", D2)
    h = history.observe(h, "v2", offers(("gpu_1x_h100", "eu-1", 2.2)), "v3", D4)
    return {"lambdalabs": h}


def test_query_cheapest_per_gpu_per_day():
    got = daily.query(_spans())
    assert got.days == [D1, D2, D3, D4]
    assert [(s.name, s.prices) for s in got.series] == [("H100", [2.5, 2.0, None, 2.2])]
    # Per GPU: on day one the 8-GPU instance ($20/h, $2.5/GPU/h) beat the 1-GPU one ($3/h).
    assert got.series[0].where[:2] == [
        "lambdalabs/gpu_8x_h100/us-east-1",
        "lambdalabs/gpu_1x_h100/us-east-1",
    ]
    assert got.to_dict()["unit"] == "USD per GPU per hour"
    assert got.rows()[0] == ["H100", "2026-11-29", 2.5, "lambdalabs/gpu_8x_h100/us-east-1"]


def test_query_by_instance_and_filters():
    by_instance = daily.query(_spans(), by="instance")
    assert {s.name: s.prices for s in by_instance.series} == {
        "lambdalabs/cpu_only": [0.1, None, None, None],
        "lambdalabs/gpu_1x_h100": [3.0, 2.0, None, 2.2],
        "lambdalabs/gpu_8x_h100": [20.0, None, None, None],
    }
    eu = daily.query(_spans(), location=["EU-1"], by="instance")
    assert [(s.name, s.prices) for s in eu.series] == [("lambdalabs/gpu_1x_h100", [2.2])]
    assert eu.days == [D4]
    late = daily.query(_spans(), since=D2, gpu_name=["h100"])
    assert late.days == [D2, D3, D4] and late.series[0].prices == [2.0, None, 2.2]
    assert daily.query(_spans(), provider=["aws"]).series == []
    assert daily.query(_spans(), spot=True).series == []
    with pytest.raises(ValueError, match="by must be"):
        daily.query(_spans(), by="region")


def test_sparkline():
    assert daily.sparkline([1.0, 2.0, None, 3.0]) == "▁▅ █"
    assert daily.sparkline([2.0, 2.0]) == "▄▄"
    assert daily.sparkline([None]) == " "
    long = daily.sparkline([float(n) for n in range(100)], width=10)
    assert len(long) == 10 and long[0] == "▁" and long[-1] == "█"
