"""Crusoe over recorded VM types and capacities.

Data: `vm_types_testfixture.json` and `capacities_testfixture.json` are the shared fixtures (one
item each, from public test code). The shared VM type lacks `memory_gb`, so on its own it is a
malformed record. `vm_types_with_specs.json` and `capacities_several_locations.json` were built
for these tests with the fields gpuhunt 0.1.x reads from the same endpoints (`memory_gb`,
`disk_gb`, `cpu_type`, Crusoe's `gpu_type` spellings); their sizes are illustrative.
The signature is checked against an independent implementation of the algorithm in Crusoe's API
reference (docs.crusoecloud.com/reference/api, "Generating a signature").
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import hmac
import json
from pathlib import Path
from typing import Any

import pytest
import responses

from gpuhunt._internal.errors import MissingCredsError, ProviderError
from gpuhunt._internal.models import AcceleratorVendor, CPUArchitecture
from gpuhunt.providers import crusoe
from gpuhunt.providers._report import ParseReport
from gpuhunt.providers.crusoe import CrusoeProvider, gpu_price, parse_offers, signed_headers

DATA = Path(__file__).parent / "data" / "crusoe"
ACCESS_KEY = "AKtest0123456789"
# Crusoe secret keys are raw URL-safe base64 without padding.
SECRET_KEY = base64.urlsafe_b64encode(b"\xfb\xff-crusoe-test-secret-\xfe").decode().rstrip("=")
PROJECT = "ab4a6b00-aa5f-408e-a9fb-ac6de5eb45ab"
BASE = "https://api.crusoecloud.com/v1alpha5"
TYPES_URL = f"{BASE}/projects/{PROJECT}/compute/vms/types"
CAPACITIES_URL = f"{BASE}/capacities"
NOW = datetime.datetime(2024, 5, 1, 12, 30, 45, 123456, tzinfo=datetime.timezone.utc)


def load(name: str) -> Any:
    return json.loads((DATA / name).read_text())


def expected_authorization(path: str, query: str, verb: str, timestamp: str) -> str:
    payload = f"{path}\n{query}\n{verb}\n{timestamp}\n"
    key = base64.urlsafe_b64decode(SECRET_KEY + "=" * (-len(SECRET_KEY) % 4))
    mac = hmac.new(key, payload.encode("ascii"), hashlib.sha256).digest()
    return f"Bearer 1.0:{ACCESS_KEY}:{base64.urlsafe_b64encode(mac).decode().rstrip('=')}"


@pytest.fixture
def provider(monkeypatch) -> CrusoeProvider:
    monkeypatch.setattr(crusoe, "_now", lambda: NOW)
    return CrusoeProvider(access_key=ACCESS_KEY, secret_key=SECRET_KEY, project_id=PROJECT)


def recorded(types: str, capacities: str) -> None:
    responses.add(responses.GET, TYPES_URL, json=load(types))
    responses.add(responses.GET, CAPACITIES_URL, json=load(capacities))


class TestSigning:
    @responses.activate
    def test_requests_are_signed(self, provider):
        recorded("vm_types_with_specs.json", "capacities_several_locations.json")
        provider.get()
        assert [c.request.url for c in responses.calls] == [TYPES_URL, CAPACITIES_URL]
        timestamp = "2024-05-01T12:30:45+00:00"
        for call, path in zip(
            responses.calls,
            [f"/v1alpha5/projects/{PROJECT}/compute/vms/types", "/v1alpha5/capacities"],
        ):
            headers = call.request.headers
            assert call.request.method == "GET"
            assert headers["X-Crusoe-Timestamp"] == timestamp
            assert headers["Authorization"] == expected_authorization(path, "", "GET", timestamp)

    def test_query_parameters_are_signed_in_canonical_order(self):
        headers = signed_headers(
            "get", "/v1alpha5/capacities", {"product_name": "a40.1x", "location": "us-east1-a"},
            NOW, ACCESS_KEY, SECRET_KEY,
        )  # fmt: skip
        assert headers["Authorization"] == expected_authorization(
            "/v1alpha5/capacities",
            "location=us-east1-a&product_name=a40.1x",
            "GET",
            "2024-05-01T12:30:45+00:00",
        )

    def test_secret_that_is_not_base64(self):
        with pytest.raises(ProviderError, match="CRUSOE_SECRET_KEY") as error:
            signed_headers("GET", "/v1alpha5/capacities", None, NOW, ACCESS_KEY, "not base64!")
        assert "not base64!" not in str(error.value)


class TestCredentials:
    def test_from_env(self, monkeypatch):
        monkeypatch.setenv("CRUSOE_ACCESS_KEY", ACCESS_KEY)
        monkeypatch.setenv("CRUSOE_SECRET_KEY", SECRET_KEY)
        monkeypatch.setenv("CRUSOE_PROJECT_ID", PROJECT)
        provider = CrusoeProvider.from_env()
        assert provider.project_id == PROJECT
        assert ACCESS_KEY not in repr(provider) and SECRET_KEY not in repr(provider)
        assert CrusoeProvider().project_id == PROJECT  # the constructor reads them too

    @pytest.mark.parametrize(
        "missing", ["CRUSOE_ACCESS_KEY", "CRUSOE_SECRET_KEY", "CRUSOE_PROJECT_ID"]
    )
    def test_missing_variable_is_named(self, monkeypatch, missing):
        for name, value in [
            ("CRUSOE_ACCESS_KEY", ACCESS_KEY),
            ("CRUSOE_SECRET_KEY", SECRET_KEY),
            ("CRUSOE_PROJECT_ID", PROJECT),
        ]:
            monkeypatch.setenv(name, value)
        monkeypatch.delenv(missing)
        with pytest.raises(MissingCredsError, match=missing):
            CrusoeProvider.from_env()

    @responses.activate
    def test_refused_keys_are_named_not_shown(self, provider):
        responses.add(responses.GET, TYPES_URL, status=401, json={"code": "bad_credentials"})
        with pytest.raises(ProviderError) as error:
            provider.get()
        message = str(error.value)
        assert "CRUSOE_ACCESS_KEY" in message and "CRUSOE_SECRET_KEY" in message
        assert ACCESS_KEY not in message and SECRET_KEY not in message


class TestOffers:
    @responses.activate
    def test_offers(self, provider):
        recorded("vm_types_with_specs.json", "capacities_several_locations.json")
        offers = provider.get()
        assert [(o.instance_name, o.location, o.price) for o in offers] == [
            ("c1a.16x", "eu-iceland1-a", 0.64),
            ("mi300x-192gb.8x", "us-east1-a", 27.6),
            ("h100-80gb-sxm-ib.8x", "us-east1-a", 31.2),
            ("h100-80gb-sxm-ib.8x", "us-southcentral1-a", 31.2),
        ]
        cpu_only, mi300x, h100, _ = offers
        assert (h100.gpu_name, h100.gpu_count, h100.gpu_memory) == ("H100", 8, 80.0)
        assert (h100.cpu, h100.memory, h100.disk_size) == (176, 1440.0, 7680.0)
        assert h100.gpu_vendor == AcceleratorVendor.NVIDIA
        assert h100.provider_data == {"disk_gb": 7680}
        assert h100.spot is False
        assert (mi300x.gpu_name, mi300x.gpu_memory) == ("MI300X", 192.0)
        assert mi300x.gpu_vendor == AcceleratorVendor.AMD
        assert (cpu_only.gpu_count, cpu_only.gpu_name, cpu_only.cpu) == (0, None, 16)
        assert (cpu_only.disk_size, cpu_only.provider_data) == (None, {"disk_gb": 0})
        # gb200 is unpriced; broken.1x has no cpu_cores; one capacity has no quantity;
        # l40s has no free capacity.
        assert provider.last_report.counts == {"unpriced": 1, "malformed": 2}

    def test_arm_type(self):
        types = {"items": [{**load("vm_types_with_specs.json")["items"][4], "cpu_type": "arm64"}]}
        capacities = {"items": [{"type": "c1a.16x", "location": "us-east1-a", "quantity": 1}]}
        (offer,) = parse_offers(types, capacities)
        assert offer.cpu_arch == CPUArchitecture.ARM

    @responses.activate
    def test_shared_fixture_type_without_memory_is_skipped_and_counted(self, provider):
        recorded("vm_types_testfixture.json", "capacities_testfixture.json")
        assert provider.get() == []
        assert provider.last_report.counts == {"malformed": 1}

    def test_shared_fixture_gpu_type_spelling_is_priced(self):
        vm_type = {**load("vm_types_testfixture.json")["items"][0], "memory_gb": 1440}
        (offer,) = parse_offers({"items": [vm_type]}, load("capacities_testfixture.json"))
        assert (offer.instance_name, offer.location) == ("h100-80gb-sxm-ib.8x", "us-east1-a")
        assert (offer.gpu_name, offer.gpu_count, offer.price) == ("H100", 8, 31.2)
        assert offer.disk_size is None and offer.provider_data == {"disk_gb": 0}

    @pytest.mark.parametrize(
        ("gpu_type", "price"),
        [
            ("A100-PCIe-40GB", 1.45),
            ("A100-SXM-80GB", 1.95),
            ("H100", 3.90),
            ("A100", None),  # PCIe and SXM prices differ
            ("GB200-NVL-186GB", None),
        ],
    )
    def test_gpu_prices(self, gpu_type, price):
        assert gpu_price(gpu_type) == price

    def test_unknown_gpu_type_is_kept_and_counted(self, monkeypatch):
        monkeypatch.setitem(crusoe._PRICE_BY_KEY, "x9000sxm96gb", 2.5)
        vm_type = {
            "product_name": "x9000-96gb.1x",
            "num_gpu": 1,
            "gpu_type": "X9000-SXM-96GB",
            "cpu_cores": 12,
            "memory_gb": 120,
        }
        capacities = {"items": [{"type": "x9000-96gb.1x", "location": "us-east1-a", "quantity": 1}]}
        report = ParseReport()
        (offer,) = parse_offers({"items": [vm_type]}, capacities, report)
        assert (offer.gpu_name, offer.gpu_memory, offer.price) == ("X9000-SXM-96GB", 96.0, 2.5)
        assert offer.gpu_vendor == AcceleratorVendor.NVIDIA
        assert report.unknown_gpus == {"X9000-SXM-96GB": 1}


class TestErrors:
    @responses.activate
    def test_server_errors_are_retried_a_bounded_number_of_times(self, provider):
        responses.add(responses.GET, TYPES_URL, status=500)
        with pytest.raises(ProviderError, match="crusoe: GET .* HTTP 500"):
            provider.get()
        assert len(responses.calls) == 4

    @responses.activate
    def test_malformed_json(self, provider):
        responses.add(responses.GET, TYPES_URL, body="{items")
        with pytest.raises(ProviderError, match="invalid JSON"):
            provider.get()

    def test_wrong_shape_names_the_field(self):
        with pytest.raises(ProviderError, match="VM types: field 'items' is missing"):
            parse_offers({"types": []}, {"items": []})
        with pytest.raises(ProviderError, match="capacities: field 'items' has type dict"):
            parse_offers({"items": []}, {"items": {}})


class TestCaching:
    @responses.activate
    def test_answers_are_cached_per_project_and_keys(self, provider, monkeypatch):
        recorded("vm_types_with_specs.json", "capacities_several_locations.json")
        provider.get()
        provider.get()
        assert len(responses.calls) == 2
        other = CrusoeProvider(access_key="AKother", secret_key=SECRET_KEY, project_id=PROJECT)
        other.get()
        assert len(responses.calls) == 4
