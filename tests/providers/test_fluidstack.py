"""Fluidstack over a `list_available_configurations` answer built from SkyPilot's field list and
its published catalog's prices (tests/providers/data/fluidstack/README.md says how)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import responses

from gpuhunt._internal.errors import MissingCredsError, ProviderError
from gpuhunt._internal.models import AcceleratorVendor, QueryFilter
from gpuhunt.providers.fluidstack import CONFIGURATIONS_URL, FluidstackProvider

DATA = Path(__file__).parent / "data" / "fluidstack"


def load() -> Any:
    return json.loads((DATA / "list_available_configurations.json").read_text())


@responses.activate
def test_request_and_offers() -> None:
    responses.get(CONFIGURATIONS_URL, json=load())
    provider = FluidstackProvider(api_key="fs-secret")

    offers = provider.get()

    [call] = responses.calls
    assert call.request.headers["api-key"] == "fs-secret"
    assert call.request.headers["Accept"] == "application/json"
    assert "Authorization" not in call.request.headers
    # 3 counts x 2 regions + 4 x 1 + 4 x 3 + 1 x 1
    assert len(offers) == 23
    h100 = sorted(
        (o.location, o.gpu_count, o.price, o.cpu, o.memory)
        for o in offers
        if o.instance_name.startswith("H100_PCIE_80GB")
    )
    assert h100 == [
        ("CANADA", 1, 2.89, 28, 180.0),
        ("CANADA", 2, 5.78, 60, 360.0),
        ("CANADA", 4, 11.56, 124, 720.0),
        ("UTAH_USA", 1, 2.89, 28, 180.0),
        ("UTAH_USA", 2, 5.78, 60, 360.0),
        ("UTAH_USA", 4, 11.56, 124, 720.0),
    ]
    [nvlink] = [o for o in offers if o.instance_name == "H100_NVLINK_80GB::8"]
    assert (nvlink.location, nvlink.price, nvlink.cpu, nvlink.memory) == (
        "FINLAND",
        23.92,
        252,
        1440.0,
    )
    assert (nvlink.gpu_name, nvlink.gpu_memory, nvlink.gpu_vendor) == (
        "H100",
        80.0,
        AcceleratorVendor.NVIDIA,
    )
    a100 = {o.location for o in offers if o.instance_name == "A100_PCIE_80GB::8"}
    assert a100 == {"CANADA", "NORTH_DAKOTA_USA", "ARIZONA_USA"}
    assert {(o.gpu_name, o.gpu_memory) for o in offers if o.instance_name.startswith("A100")} == {
        ("A100", 80.0)
    }
    assert {(o.gpu_name, o.gpu_memory) for o in offers if o.instance_name.startswith("L40")} == {
        ("L40", 48.0)
    }
    assert not any(o.spot for o in offers)
    assert [o.price for o in offers] == sorted(o.price for o in offers)
    assert provider.last_report.skipped == [] and not provider.last_report.counts


@responses.activate
def test_malformed_records_are_skipped_and_counted() -> None:
    good = load()[1]
    records = [
        {**good, "price_per_gpu_hr": "n/a"},
        {**good, "gpu_counts": [1, 2.5]},
        {**good, "regions": "CANADA"},
        "not a record",
        {
            "gpu_type": "RTX_A4000_16GB",
            "gpu_counts": [1, 3],
            "price_per_gpu_hr": "0.5",
            "regions": ["NORWAY"],
        },
        good,
    ]
    responses.get(CONFIGURATIONS_URL, json=records)
    provider = FluidstackProvider(api_key="k")

    offers = provider.get()

    # the string price is read; 3 A4000s have no known shape and are left out
    assert sorted((o.instance_name, o.price, o.cpu) for o in offers if o.location == "NORWAY") == [
        ("RTX_A4000_16GB::1", 0.5, 6)
    ]
    assert [o.gpu_name for o in offers if o.location == "NORWAY"] == ["A4000"]
    assert len([o for o in offers if o.location == "CANADA"]) == 4
    report = provider.last_report
    assert report.counts["malformed"] == 4
    assert report.counts["no_shape"] == 1
    assert len(report.skipped) == 4
    assert "price_per_gpu_hr" in report.skipped[0]


@responses.activate
def test_unknown_gpu_is_kept_and_counted() -> None:
    responses.get(
        CONFIGURATIONS_URL,
        json=[
            {
                "gpu_type": "X9_PRO_96GB",
                "gpu_counts": [1],
                "price_per_gpu_hr": 3,
                "regions": ["CANADA"],
            }
        ],
    )
    provider = FluidstackProvider(api_key="k")

    # a type the table of shapes does not know either: counted, not offered
    assert provider.get() == []
    assert provider.last_report.unknown_gpus == {"X9_PRO_96GB": 1}
    assert provider.last_report.counts["no_shape"] == 1


@responses.activate
def test_refused_key_names_the_variable() -> None:
    responses.get(CONFIGURATIONS_URL, status=401, json={"error": "unauthorized"})

    with pytest.raises(ProviderError, match="FLUIDSTACK_API_KEY") as e:
        FluidstackProvider(api_key="fs-secret").get()
    assert "fs-secret" not in str(e.value)


@pytest.mark.parametrize("status", [429, 500, 503])
@responses.activate
def test_overload_is_retried_then_an_error(status: int) -> None:
    responses.get(CONFIGURATIONS_URL, status=status)

    with pytest.raises(ProviderError, match=f"HTTP {status}"):
        FluidstackProvider(api_key="k").get()
    assert len(responses.calls) == 4


@responses.activate
def test_a_429_then_success_is_answered() -> None:
    responses.get(CONFIGURATIONS_URL, status=429, headers={"Retry-After": "0"})
    responses.get(CONFIGURATIONS_URL, json=load())

    assert len(FluidstackProvider(api_key="k").get()) == 23
    assert len(responses.calls) == 2


@responses.activate
def test_invalid_json_and_wrong_shape() -> None:
    responses.get(CONFIGURATIONS_URL, body="[{")
    with pytest.raises(ProviderError, match="invalid JSON"):
        FluidstackProvider(api_key="k").get()
    responses.replace(responses.GET, CONFIGURATIONS_URL, json={"configurations": []})
    with pytest.raises(ProviderError, match="expected a list"):
        FluidstackProvider(api_key="k2").get()


@responses.activate
def test_spot_queries_make_no_call() -> None:
    assert FluidstackProvider(api_key="k").get(QueryFilter(spot=True)) == []
    assert len(responses.calls) == 0


def test_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FLUIDSTACK_API_KEY", raising=False)
    with pytest.raises(MissingCredsError, match="FLUIDSTACK_API_KEY"):
        FluidstackProvider.from_env()
    monkeypatch.setenv("FLUIDSTACK_API_KEY", "fs-secret")
    provider = FluidstackProvider.from_env()
    assert provider.api_key == "fs-secret"
    assert "fs-secret" not in repr(provider)


@responses.activate
def test_a_redirect_is_not_followed_with_the_key() -> None:
    # `_keyed.keyed_json`: the key must not travel on to another address.
    elsewhere = "https://collector.example/steal"
    responses.get(CONFIGURATIONS_URL, status=302, headers={"Location": elsewhere})
    responses.get(elsewhere, json=load())

    with pytest.raises(ProviderError, match="redirect"):
        FluidstackProvider(api_key="fs-secret").get()

    assert [c.request.url for c in responses.calls] == [CONFIGURATIONS_URL]
