"""Prime Intellect over two pages of `/api/v1/availability/gpus`, built from the documented
examples and SkyPilot's published catalog (tests/providers/data/primeintellect/README.md)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import responses
from responses import matchers

from gpuhunt._internal.errors import MissingCredsError, ProviderError
from gpuhunt._internal.models import AcceleratorVendor
from gpuhunt.providers.primeintellect import AVAILABILITY_URL, PrimeIntellectProvider

DATA = Path(__file__).parent / "data" / "primeintellect"


def load(page: int) -> Any:
    return json.loads((DATA / f"availability_gpus_page{page}.json").read_text())


def page_matcher(page: int) -> Any:
    return matchers.query_param_matcher({"page": str(page), "page_size": "100"})


@responses.activate
def test_pages_and_offers() -> None:
    responses.get(AVAILABILITY_URL, json=load(1), match=[page_matcher(1)])
    responses.get(AVAILABILITY_URL, json=load(2), match=[page_matcher(2)])
    provider = PrimeIntellectProvider(api_key="pi-secret")

    offers = provider.get()

    assert len(responses.calls) == 2
    assert {c.request.headers["Authorization"] for c in responses.calls} == {"Bearer pi-secret"}
    got = [
        (o.instance_name, o.location, o.price, o.gpu_count, o.gpu_name, o.gpu_memory, o.spot)
        for o in offers
    ]
    assert got == [
        ("datacrunch:1A100.22V_SPOT", "FIN-01", 0.53, 1, "A100", 80.0, True),
        ("hyperstack:n3-L40x1", "CANADA-1", 1.0, 1, "L40", 48.0, False),
        ("hyperstack:n3-H100x1", "CANADA-1", 1.9, 1, "H100", 80.0, False),
        ("runpod:NVIDIA H100 PCIe", "US-KS-2", 2.69, 1, "H100", 80.0, False),
        ("lambdalabs:gpu_8x_a100_80gb_sxm4", "us-midwest-1", 14.32, 8, "A100", 80.0, False),
        ("hyperstack:n3-H100x8", "CANADA-1", 15.2, 8, "H100", 80.0, False),
        ("nebius:gpu-h200-sxm_8gpu-128vcpu-1600gb", "eu-west1", 21.344, 8, "H200", 141.0, False),
        (
            "dc_wildebeest:gpu-b200-sxm_8gpu-160vcpu-1792gb",
            "us-central1",
            35.2,
            8,
            "B200",
            180.0,
            False,
        ),
    ]
    by_name = {o.instance_name: o for o in offers}
    runpod = by_name["runpod:NVIDIA H100 PCIe"]
    assert (runpod.cpu, runpod.memory, runpod.disk_size) == (16, 251.0, 80.0)
    assert runpod.provider_data == {
        "provider": "runpod",
        "cloud_id": "NVIDIA H100 PCIe",
        "security": "secure_cloud",
        "socket": "PCIe",
    }
    assert (runpod.resold_from, runpod.available) == ("runpod", True)  # "Low": in stock
    # "Unavailable" is a reading: the L40 is listed, marked, and counted.
    assert by_name["hyperstack:n3-L40x1"].available is False
    assert sum(not o.available for o in offers) == 1
    # Upstream names become gpuhunt provider names where gpuhunt has the provider.
    assert by_name["datacrunch:1A100.22V_SPOT"].resold_from == "verda"
    assert by_name["hyperstack:n3-H100x1"].resold_from == "hyperstack"
    h100x8 = by_name["hyperstack:n3-H100x8"]
    assert (h100x8.cpu, h100x8.memory) == (252, 1440.0)
    assert {o.gpu_vendor for o in offers} == {AcceleratorVendor.NVIDIA}
    assert provider.last_report.counts == {"unavailable": 1}


@responses.activate
def test_malformed_items_are_skipped_and_counted() -> None:
    good = load(1)["items"][2]
    no_price = copy.deepcopy(good)
    no_price["cloudId"] = "no-price"
    no_price["prices"] = {"onDemand": None, "communityPrice": None, "currency": "USD"}
    euro = copy.deepcopy(good)
    euro["cloudId"] = "euro"
    euro["prices"]["currency"] = "EUR"
    nowhere = copy.deepcopy(good)
    nowhere["cloudId"] = "nowhere"
    nowhere["dataCenter"] = nowhere["country"] = None
    half = copy.deepcopy(good)
    half["cloudId"] = "half"
    half["gpuCount"] = 0.5
    unknown = copy.deepcopy(good)
    unknown["cloudId"] = "x9"
    unknown.update(gpuType="X9_96GB", gpuCount=2, gpuMemory=192)
    community = copy.deepcopy(good)
    community["cloudId"] = "community"
    community["prices"] = {"onDemand": None, "communityPrice": 9.5, "currency": "USD"}
    items = [no_price, euro, nowhere, half, "junk", unknown, community]
    responses.get(AVAILABILITY_URL, json={"items": items, "totalCount": 7})
    provider = PrimeIntellectProvider(api_key="k")

    offers = provider.get()

    assert [(o.instance_name, o.price, o.gpu_name, o.gpu_memory) for o in offers] == [
        ("hyperstack:community", 9.5, "H100", 80.0),
        ("hyperstack:x9", 15.2, "X9_96GB", 96.0),
    ]
    report = provider.last_report
    assert report.counts["malformed"] == 5
    assert report.unknown_gpus == {"X9_96GB": 1}
    assert [s.split(":")[0] for s in report.skipped] == [
        "offer hyperstack",
        "offer hyperstack",
        "offer hyperstack",
        "offer hyperstack",
        "offer #4",
    ]
    assert "'EUR'" in report.skipped[1]


@responses.activate
def test_refused_key_names_the_variable() -> None:
    responses.get(AVAILABILITY_URL, status=401, json={"detail": "Not authenticated"})

    with pytest.raises(ProviderError, match="PRIME_API_KEY") as e:
        PrimeIntellectProvider(api_key="pi-secret").get()
    assert "pi-secret" not in str(e.value)


@pytest.mark.parametrize("status", [429, 500, 504])
@responses.activate
def test_overload_is_retried_then_an_error(status: int) -> None:
    responses.get(AVAILABILITY_URL, status=status)

    with pytest.raises(ProviderError, match=f"HTTP {status}"):
        PrimeIntellectProvider(api_key="k").get()
    assert len(responses.calls) == 4


@responses.activate
def test_a_429_on_the_second_page_is_retried() -> None:
    responses.get(AVAILABILITY_URL, json=load(1), match=[page_matcher(1)])
    responses.get(AVAILABILITY_URL, status=429, match=[page_matcher(2)])
    responses.get(AVAILABILITY_URL, json=load(2), match=[page_matcher(2)])

    assert len(PrimeIntellectProvider(api_key="k").get()) == 8  # one unavailable
    assert len(responses.calls) == 3


@responses.activate
def test_invalid_json_and_wrong_shape() -> None:
    responses.get(AVAILABILITY_URL, body="{")
    with pytest.raises(ProviderError, match="invalid JSON"):
        PrimeIntellectProvider(api_key="k").get()
    responses.replace(responses.GET, AVAILABILITY_URL, json={"H100_80GB": []})
    with pytest.raises(ProviderError, match="'items'"):
        PrimeIntellectProvider(api_key="k2").get()


def test_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PRIME_API_KEY", raising=False)
    with pytest.raises(MissingCredsError, match="PRIME_API_KEY"):
        PrimeIntellectProvider.from_env()
    monkeypatch.setenv("PRIME_API_KEY", "pi-secret")
    provider = PrimeIntellectProvider.from_env()
    assert provider.api_key == "pi-secret"
    assert "pi-secret" not in repr(provider)


@responses.activate
def test_an_unknown_stock_status_gives_no_reading() -> None:
    page = load(1)
    page["items"] = page["items"][:1]
    page["items"][0]["stockStatus"] = "Plenty"
    page["totalCount"] = 1
    responses.get(AVAILABILITY_URL, json=page, match=[page_matcher(1)])
    provider = PrimeIntellectProvider(api_key="k")

    [offer] = provider.get()

    assert offer.available is None
    assert provider.last_report.counts["stock_status_unknown"] == 1
