"""JarvisLabs over a recorded `GET /misc/server_meta` answer (tests/providers/data/jarvislabs, from
../shared/fixtures): container and VM rows, JarvisLabs' GPU spellings, a legacy row with a null
`workload_type`, and rows and CPU regions outside the known provisioning hosts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import responses

from gpuhunt._internal.errors import MissingCredsError, ProviderError
from gpuhunt._internal.models import AcceleratorVendor, QueryFilter
from gpuhunt.providers import jarvislabs
from gpuhunt.providers.jarvislabs import JarvisLabsProvider

DATA = Path(__file__).parent / "data" / "jarvislabs"
URL = "https://backendn.jarvislabs.net/misc/server_meta"


def load() -> Any:
    return json.loads((DATA / "misc_server_meta.json").read_text())


def test_module_constants() -> None:
    assert jarvislabs.API_URL == "https://backendn.jarvislabs.net"
    assert set(jarvislabs.JARVISLABS_REGION_URLS) == {
        "india-01",
        "india-chennai-01",
        "india-noida-01",
        "europe-01",
    }


@responses.activate
def test_request_and_offers() -> None:
    responses.get(URL, json=load())
    provider = JarvisLabsProvider(api_key="jl-secret")

    offers = provider.get()

    [call] = responses.calls
    assert call.request.headers["Authorization"] == "Bearer jl-secret"
    summary = [
        (
            o.instance_name,
            o.location,
            o.price,
            o.cpu,
            o.memory,
            o.gpu_count,
            o.gpu_name,
            o.gpu_memory,
        )
        for o in offers
    ]
    assert summary == [
        ("cpu-4x16", "india-noida-01", 0.0992, 4, 16.0, 0, None, None),
        ("L4-1x", "india-noida-01", 0.44, 28, 124.0, 1, "L4", 24.0),
        ("L4-2x", "india-noida-01", 0.88, 56, 248.0, 2, "L4", 24.0),
        ("L4-3x", "india-noida-01", 1.32, 84, 372.0, 3, "L4", 24.0),
        ("A100-1x", "india-noida-01", 1.49, 28, 112.0, 1, "A100", 80.0),
        ("RTXPRO6000-1x", "india-chennai-01", 1.89, 28, 160.0, 1, "RTXPRO6000", 96.0),
        ("RTXPRO6000-1x", "india-noida-01", 1.89, 28, 160.0, 1, "RTXPRO6000", 96.0),
        ("H100-1x", "europe-01", 2.99, 16, 200.0, 1, "H100", 80.0),
        ("RTXPRO6000-2x", "india-chennai-01", 3.78, 56, 320.0, 2, "RTXPRO6000", 96.0),
    ]
    by_key = {(o.instance_name, o.location): o for o in offers}
    # JarvisLabs' own token, needed to create the VM
    assert by_key["A100-1x", "india-noida-01"].provider_data == {"gpu_type": "A100-80GB"}
    assert by_key["RTXPRO6000-2x", "india-chennai-01"].provider_data == {"gpu_type": "RTX-PRO6000"}
    assert by_key["RTXPRO6000-1x", "india-noida-01"].provider_data == {"gpu_type": "RTX PRO 6000"}
    assert by_key["L4-1x", "india-noida-01"].provider_data == {"gpu_type": "L4"}
    assert all(o.available is True for o in offers)
    assert all(o.gpu_vendor == AcceleratorVendor.NVIDIA for o in offers if o.gpu_count)
    assert all(not o.spot and o.disk_size is None for o in offers)
    # the H100 row and the CPU region in "unknown-region" cannot be provisioned
    assert provider.last_report.counts["unsupported_region"] == 2
    assert "unknown-region" not in {o.location for o in offers}


@responses.activate
def test_malformed_and_unknown_rows() -> None:
    data = load()
    l4 = data["server_meta"][1]
    data["server_meta"] = [
        {**l4, "price_per_hour": "call us"},
        "junk",
        {**l4, "gpu_type": "B 9000", "vram": None, "effective_num_free_devices": 1},
        {**l4, "effective_num_free_devices": 0, "num_free_devices": 0},
    ]
    data["cpu_meta"]["combinations"].append(
        {"available": True, "vcpus": "many", "ram_gb": 8, "price": 1, "regions": {}}
    )
    responses.get(URL, json=data)
    provider = JarvisLabsProvider(api_key="k")

    offers = provider.get()

    assert [(o.instance_name, o.gpu_name, o.gpu_memory) for o in offers if o.gpu_count] == [
        ("B9000-1x", "B9000", None),
    ]
    assert provider.last_report.counts["malformed"] == 3
    assert provider.last_report.unknown_gpus.total() == 1


@responses.activate
def test_wrong_shape_names_the_field() -> None:
    responses.get(URL, json={"server_meta": {"L4": {}}})

    with pytest.raises(ProviderError, match="'server_meta'"):
        JarvisLabsProvider(api_key="k").get()


@responses.activate
def test_refused_key_names_the_variable() -> None:
    responses.get(URL, status=401)

    with pytest.raises(ProviderError, match="JL_API_KEY") as e:
        JarvisLabsProvider(api_key="jl-secret").get()

    assert "jl-secret" not in str(e.value)


@pytest.mark.parametrize("status", [429, 504])
@responses.activate
def test_overload_is_retried_then_a_provider_error(status: int) -> None:
    responses.get(URL, status=status)

    with pytest.raises(ProviderError, match=f"HTTP {status}"):
        JarvisLabsProvider(api_key="k").get()

    assert len(responses.calls) == 4


@responses.activate
def test_invalid_json_is_a_provider_error() -> None:
    responses.get(URL, body="Service Unavailable")

    with pytest.raises(ProviderError, match="invalid JSON"):
        JarvisLabsProvider(api_key="k").get()


@responses.activate
def test_custom_api_url_and_spot() -> None:
    responses.get("https://backendeu.jarvislabs.net/misc/server_meta", json={"server_meta": []})

    assert JarvisLabsProvider(api_key="k", api_url="https://backendeu.jarvislabs.net/").get() == []
    assert JarvisLabsProvider(api_key="k").get(QueryFilter(spot=True)) == []
    assert len(responses.calls) == 1


def test_credentials_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JL_API_KEY", raising=False)
    monkeypatch.delenv("JARVISLABS_API_KEY", raising=False)
    with pytest.raises(MissingCredsError, match="JL_API_KEY"):
        JarvisLabsProvider.from_env()
    monkeypatch.setenv("JARVISLABS_API_KEY", "alias-secret")
    assert JarvisLabsProvider.from_env().api_key == "alias-secret"
    monkeypatch.setenv("JL_API_KEY", "jl-secret")
    provider = JarvisLabsProvider.from_env()
    assert provider.api_key == "jl-secret"
    assert "jl-secret" not in repr(provider)


@responses.activate
def test_free_devices_are_the_reading() -> None:
    answer = load()
    for row in answer["server_meta"]:
        if row["gpu_type"] == "A100-80GB":
            row["num_free_devices"] = row["effective_num_free_devices"] = 0  # sold out
    answer["cpu_meta"]["combinations"][0]["regions"]["india-noida-01"] = False
    responses.get(URL, json=answer)

    offers = JarvisLabsProvider(api_key="k").get()

    # What is free is offered and reads True; a sold-out GPU type or CPU region has no offer,
    # as in gpuhunt 0.1.34.
    assert offers and all(o.available is True for o in offers)
    assert "A100" not in {o.gpu_name for o in offers}
    assert not [o for o in offers if o.gpu_count == 0]
