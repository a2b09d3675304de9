"""Shadeform over `/instances/types` answers: the documented example and one built in the
OpenAPI schema from SkyPilot's published catalog (tests/providers/data/shadeform/README.md)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import responses

from gpuhunt._internal.errors import MissingCredsError, ProviderError
from gpuhunt._internal.models import AcceleratorVendor, QueryFilter
from gpuhunt.providers.shadeform import TYPES_URL, ShadeformProvider

DATA = Path(__file__).parent / "data" / "shadeform"


def load(name: str = "instances_types.json") -> Any:
    return json.loads((DATA / name).read_text())


@responses.activate
def test_request_and_offers() -> None:
    responses.get(TYPES_URL, json=load())
    provider = ShadeformProvider(api_key="sf-secret")

    offers = provider.get()

    [call] = responses.calls
    assert call.request.headers["X-API-KEY"] == "sf-secret"
    assert parse_qs(urlsplit(call.request.url).query) == {"available": ["true"]}
    got = [
        (o.instance_name, o.location, o.price, o.cpu, o.memory, o.gpu_count, o.gpu_name)
        for o in offers
    ]
    assert got == [
        ("imwt_A6000", "kansascity-usa-2", 0.49, 6, 48.0, 1, "A6000"),
        ("scaleway_L4", "amsterdam-netherlands-1", 0.9, 8, 48.0, 1, "L4"),
        ("scaleway_L4", "paris-france-1", 0.9, 8, 48.0, 1, "L4"),
        ("scaleway_L4", "paris-france-5", 0.9, 8, 48.0, 1, "L4"),
        ("scaleway_L4", "warsaw-poland-1", 0.9, 8, 48.0, 1, "L4"),
        ("imwt_A6000x8", "kansascity-usa-2", 3.92, 62, 384.0, 8, "A6000"),
        ("paperspace_A100_sxm4_80GBx8", "newyork-usa-1", 25.76, 96, 720.0, 8, "A100"),
        ("nebius_H200_sxm5x8_NVLINK", "helsinki-finland-3", 28.44, 128, 1600.0, 8, "H200"),
        ("nebius_H200_sxm5x8_NVLINK", "kansascity-usa-3", 28.44, 128, 1600.0, 8, "H200"),
        ("nebius_H200_sxm5x8_NVLINK", "paris-france-2", 28.44, 128, 1600.0, 8, "H200"),
    ]
    memory = {o.gpu_name: o.gpu_memory for o in offers}
    assert memory == {"A6000": 48.0, "L4": 24.0, "A100": 80.0, "H200": 141.0}
    [a100] = [o for o in offers if o.gpu_name == "A100"]
    assert a100.disk_size == 2000.0
    assert a100.provider_data == {
        "cloud": "paperspace",
        "cloud_instance_type": "A100-80Gx8",
    }
    assert (a100.resold_from, a100.available) == ("paperspace", True)
    assert {o.gpu_vendor for o in offers} == {AcceleratorVendor.NVIDIA}
    assert not any(o.spot for o in offers)
    assert provider.last_report.skipped == []


@responses.activate
def test_the_documented_example() -> None:
    responses.get(TYPES_URL, json=load("instances_types_docs_example.json"))

    offer, sold_out = ShadeformProvider(api_key="k").get()

    # us-central-2 is listed unavailable: offered, marked so; 48 GB is no A100 size the tables
    # list: kept as given
    assert (offer.instance_name, offer.location, offer.price) == (
        "hyperstack_A6000",
        "us-central-1",
        2.1,
    )
    assert (sold_out.instance_name, sold_out.location) == ("hyperstack_A6000", "us-central-2")
    assert (offer.available, sold_out.available) == (True, False)
    # Hyperstack has no gpuhunt provider: Shadeform's spelling is kept.
    assert offer.resold_from == "hyperstack"
    assert (offer.cpu, offer.memory, offer.disk_size) == (6, 12.0, 256.0)
    assert (offer.gpu_name, offer.gpu_count, offer.gpu_memory) == ("A100", 1, 48.0)


@responses.activate
def test_malformed_records_are_skipped_and_counted() -> None:
    good = load()["instance_types"][0]
    no_price = copy.deepcopy(good)
    del no_price["hourly_price"]
    bad_cpu = copy.deepcopy(good)
    bad_cpu["configuration"]["vcpus"] = "six"
    bad_region = copy.deepcopy(good)
    bad_region["availability"] = [{"available": True}]
    unknown = copy.deepcopy(good)
    unknown["shade_instance_type"] = "X9"
    unknown["configuration"].update(gpu_type="X9", gpu_manufacturer="amd", vram_per_gpu_in_gb=96)
    nameless = copy.deepcopy(good)
    nameless["configuration"].update(gpu_type="Z1", gpu_manufacturer="acme")
    records = [no_price, bad_cpu, bad_region, 7, unknown, nameless, good]
    responses.get(TYPES_URL, json={"instance_types": records})
    provider = ShadeformProvider(api_key="k")

    offers = provider.get()

    assert [(o.instance_name, o.gpu_name, o.gpu_vendor, o.gpu_memory) for o in offers] == [
        ("imwt_A6000", "A6000", AcceleratorVendor.NVIDIA, 48.0),
        ("imwt_X9", "X9", AcceleratorVendor.AMD, 96.0),
    ]
    report = provider.last_report
    assert report.counts["malformed"] == 5
    assert any("hourly_price" in s for s in report.skipped)
    assert any("vcpus" in s for s in report.skipped)
    assert any("'region'" in s for s in report.skipped)
    assert any("no vendor" in s for s in report.skipped)
    assert report.unknown_gpus == {"X9": 1}


@responses.activate
def test_refused_key_names_the_variable() -> None:
    responses.get(TYPES_URL, status=401, json={"error": "invalid api key"})

    with pytest.raises(ProviderError, match="SHADEFORM_API_KEY") as e:
        ShadeformProvider(api_key="sf-secret").get()
    assert "sf-secret" not in str(e.value)


@pytest.mark.parametrize("status", [429, 500, 502])
@responses.activate
def test_overload_is_retried_then_an_error(status: int) -> None:
    responses.get(TYPES_URL, status=status)

    with pytest.raises(ProviderError, match=f"HTTP {status}"):
        ShadeformProvider(api_key="k").get()
    assert len(responses.calls) == 4


@responses.activate
def test_a_429_then_success_is_answered() -> None:
    responses.get(TYPES_URL, status=429)
    responses.get(TYPES_URL, json=load())

    assert len(ShadeformProvider(api_key="k").get()) == 10  # one region sold out
    assert len(responses.calls) == 2


@responses.activate
def test_invalid_json_and_wrong_shape() -> None:
    responses.get(TYPES_URL, body="{")
    with pytest.raises(ProviderError, match="invalid JSON"):
        ShadeformProvider(api_key="k").get()
    responses.replace(responses.GET, TYPES_URL, json=[])
    with pytest.raises(ProviderError, match="'instance_types'"):
        ShadeformProvider(api_key="k2").get()


@responses.activate
def test_spot_queries_make_no_call() -> None:
    assert ShadeformProvider(api_key="k").get(QueryFilter(spot=True)) == []
    assert len(responses.calls) == 0


def test_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SHADEFORM_API_KEY", raising=False)
    with pytest.raises(MissingCredsError, match="SHADEFORM_API_KEY"):
        ShadeformProvider.from_env()
    monkeypatch.setenv("SHADEFORM_API_KEY", "sf-secret")
    provider = ShadeformProvider.from_env()
    assert provider.api_key == "sf-secret"
    assert "sf-secret" not in repr(provider)


@responses.activate
def test_available_and_sold_out_regions_of_one_type() -> None:
    responses.get(TYPES_URL, json=load())

    l4 = {o.location: o for o in ShadeformProvider(api_key="k").get() if o.gpu_name == "L4"}

    assert {loc: o.available for loc, o in l4.items()} == {
        "paris-france-5": True,
        "paris-france-1": True,
        "warsaw-poland-1": True,
        "amsterdam-netherlands-1": False,
    }
    assert {o.resold_from for o in l4.values()} == {"scaleway"}
