"""TensorDock over recorded hostnodes answers.

Data: `hostnode_specs.json` is the shared fixture (one host's `specs`, from gpuhunt's own
TensorDock tests). `hostnodes.json` is the full envelope built for these tests: its first host is
the example answer of the hostnodes endpoint as documented in a public TensorDock SDK (no `vram`
field), the second carries `hostnode_specs.json`, and the others (offline host, GPU model key the
tables do not know, host without `specs`) follow the same documented shape.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import requests
import responses

from gpuhunt._internal.errors import ProviderError
from gpuhunt._internal.load import livecache
from gpuhunt._internal.models import AcceleratorVendor, QueryFilter
from gpuhunt.providers.tensordock import (
    HOSTNODES_URL,
    TensorDockProvider,
    gpu_identity,
    hostnode_params,
    parse_hostnodes,
)

DATA = Path(__file__).parent / "data" / "tensordock"
L40_HOST = "7d3a07b6-de25-44a2-a9f4-1cd241fa0d0f"
RTX3080_HOST = "02c65d45-6da5-4232-a8db-ee0e5bc76110"


def load(name: str) -> Any:
    return json.loads((DATA / name).read_text())


@pytest.fixture
def specs_only() -> dict[str, Any]:
    """The shared fixture wrapped as the only host of a listing."""
    host = {
        "location": {"city": "Chicago", "country": "United States", "region": "Illinois"},
        "specs": load("hostnode_specs.json"),
        "status": {"listed": True, "online": True},
    }
    return {"hostnodes": {L40_HOST: host}, "success": True}


def l40_price(cpu: int, memory: int, disk: int, gpus: int) -> float:
    specs = load("hostnode_specs.json")
    return round(
        cpu * specs["cpu"]["price"]
        + memory * specs["ram"]["price"]
        + disk * specs["storage"]["price"]
        + gpus * specs["gpu"]["l40-pcie-48gb"]["price"],
        5,
    )


def only(offers: list) -> Any:
    assert len(offers) == 1, offers
    return offers[0]


class TestRequest:
    @responses.activate
    def test_public_listing_with_filter_minimums_as_parameters(self):
        responses.add(responses.GET, HOSTNODES_URL, json=load("hostnodes.json"))
        q = QueryFilter(min_gpu_count=2, min_gpu_memory=40, min_cpu=8, min_memory=63.5)
        TensorDockProvider().get(q)
        assert len(responses.calls) == 1
        request = responses.calls[0].request
        assert request.method == "GET"
        assert request.url.startswith(HOSTNODES_URL + "?")
        sent = dict(p.split("=") for p in request.url.split("?", 1)[1].split("&"))
        assert sent == {"minGPUCount": "2", "minVRAM": "40", "minvCPUs": "8", "minRAM": "64"}
        assert "Authorization" not in request.headers
        assert request.headers["User-Agent"].startswith("gpuhunt/")

    def test_open_filter_sends_no_parameters(self):
        assert hostnode_params(QueryFilter()) == {}
        assert hostnode_params(QueryFilter(min_gpu_count=0, min_disk_size=200)) == {
            "minStorage": 200
        }

    def test_from_env_needs_no_credential(self, monkeypatch):
        monkeypatch.delenv("TENSORDOCK_API_KEY", raising=False)
        assert isinstance(TensorDockProvider.from_env(), TensorDockProvider)


class TestOffers:
    @responses.activate
    def test_listing(self):
        responses.add(responses.GET, HOSTNODES_URL, json=load("hostnodes.json"))
        provider = TensorDockProvider()
        offers = provider.get(QueryFilter())
        by_host = {o.instance_name: o for o in offers}
        # The offline Virginia host is not offered; the host without specs is malformed.
        assert set(by_host) == {RTX3080_HOST, L40_HOST, "8db2ec46-c094-4262-bc7e-6c76617f4237"}
        assert provider.last_report.counts == {"malformed": 1}
        assert sum(provider.last_report.unknown_gpus.values()) == 1
        assert [o.price for o in offers] == sorted(o.price for o in offers)

        rtx = by_host[RTX3080_HOST]
        assert (rtx.gpu_name, rtx.gpu_count, rtx.gpu_memory) == ("RTX3080", 1, 10.0)
        assert rtx.gpu_vendor == AcceleratorVendor.NVIDIA
        assert rtx.location == "canada"
        assert rtx.provider_data == {
            "gpu_model": "geforcertx3080-pcie-10gb",
            "region": "Manitoba",
            "city": "Winnipeg",
        }
        # 2 GB RAM per GB of VRAM, a vCPU per 6 GB rounded to even, 30 GB disk at least.
        assert (rtx.cpu, rtx.memory, rtx.disk_size) == (4, 20.0, 30.0)
        assert rtx.price == round(4 * 0.003 + 20 * 0.002 + 30 * 0.00005 + 0.15, 5)
        assert rtx.spot is False

        l40 = by_host[L40_HOST]
        assert (l40.gpu_name, l40.gpu_memory, l40.location) == ("L40", 48.0, "unitedstates")

        unknown = by_host["8db2ec46-c094-4262-bc7e-6c76617f4237"]
        assert unknown.gpu_name == "adartxa5000-pcie-32gb"
        assert unknown.gpu_memory == 32.0
        assert unknown.gpu_vendor == AcceleratorVendor.NVIDIA

    @pytest.mark.parametrize(
        ("q", "balance", "expected"),
        [
            # (cpu, memory, disk, gpus)
            (QueryFilter(), True, (16, 96, 96, 1)),
            (QueryFilter(), False, (2, 2, 30, 1)),
            (QueryFilter(min_cpu=4), True, (16, 96, 96, 1)),
            (QueryFilter(min_cpu=4), False, (4, 2, 30, 1)),
            (QueryFilter(min_memory=3), True, (16, 96, 96, 1)),
            (QueryFilter(min_memory=3), False, (2, 4, 30, 1)),
            (QueryFilter(min_gpu_count=2), True, (32, 192, 192, 2)),
            (QueryFilter(min_total_gpu_memory=100), True, (48, 288, 288, 3)),
            (QueryFilter(min_cpu=256, min_gpu_count=1), True, (256, 96, 96, 1)),
            (QueryFilter(max_memory=32), True, (6, 32, 48, 1)),
            (QueryFilter(max_cpu=9), True, (8, 96, 96, 1)),
            (QueryFilter(min_disk_size=500, max_disk_size=600), True, (16, 96, 500, 1)),
        ],
    )
    def test_sizing_of_the_shared_fixture(self, specs_only, q, balance, expected):
        offer = only(parse_hostnodes(specs_only, q, balance))
        cpu, memory, disk, gpus = expected
        assert (offer.cpu, offer.memory, offer.disk_size, offer.gpu_count) == (
            cpu,
            memory,
            disk,
            gpus,
        )
        assert offer.price == l40_price(cpu, memory, disk, gpus)

    @pytest.mark.parametrize(
        "q",
        [
            QueryFilter(min_cpu=1000),
            QueryFilter(min_memory=2000),
            QueryFilter(max_gpu_count=0),
            QueryFilter(min_total_gpu_memory=100, max_gpu_count=2),
            QueryFilter(min_gpu_count=9),
        ],
    )
    def test_impossible_filters_give_no_offer(self, specs_only, q):
        assert parse_hostnodes(specs_only, q) == []

    def test_balanced_offer_has_sensible_ram_for_an_a100(self):
        payload = {
            "hostnodes": {
                "h": {
                    "location": {"country": "Norway"},
                    "specs": {
                        "cpu": {"amount": 64, "price": 0.003},
                        "gpu": {"a100-pcie-80gb": {"amount": 4, "price": 1.2, "vram": 80}},
                        "ram": {"amount": 512, "price": 0.002},
                        "storage": {"amount": 4000, "price": 5e-05},
                    },
                }
            }
        }
        balanced = only(parse_hostnodes(payload, QueryFilter(gpu_name=["A100"]), True))
        cheapest = only(parse_hostnodes(payload, QueryFilter(gpu_name=["A100"]), False))
        assert (balanced.gpu_name, balanced.memory, balanced.cpu) == ("A100", 160.0, 28)
        assert (cheapest.memory, cheapest.cpu) == (2.0, 2)

    @pytest.mark.parametrize(
        ("key", "expected"),
        [
            ("geforcertx4090-pcie-24gb", ("RTX4090", AcceleratorVendor.NVIDIA, 24.0)),
            ("geforcertx3060tilhr-pcie-8gb", ("RTX3060Ti", AcceleratorVendor.NVIDIA, 8.0)),
            ("geforcegtx1070-pcie-8gb", ("GTX1070", AcceleratorVendor.NVIDIA, 8.0)),
            ("rtxa6000-pcie-48gb", ("A6000", AcceleratorVendor.NVIDIA, 48.0)),
            ("h100-sxm5-80gb", ("H100", AcceleratorVendor.NVIDIA, 80.0)),
            ("v100-sxm2-16gb", ("V100", AcceleratorVendor.NVIDIA, 16.0)),
        ],
    )
    def test_gpu_model_keys(self, key, expected):
        assert gpu_identity(key) == expected

    def test_stated_vram_wins_over_the_key(self):
        assert gpu_identity("a100-pcie-40gb", 80)[2] == 80.0
        # near a size the tables know for that GPU: that size (resolve_gpu's rule)
        assert gpu_identity("l40-pcie-48gb", 46)[2] == 48.0


class TestErrors:
    @responses.activate
    def test_rate_limit_is_retried_a_bounded_number_of_times(self):
        responses.add(responses.GET, HOSTNODES_URL, status=429)
        with pytest.raises(ProviderError, match="HTTP 429"):
            TensorDockProvider().get()
        assert len(responses.calls) == 4  # the first try and 3 retries

    @responses.activate
    def test_server_error_then_success(self):
        responses.add(responses.GET, HOSTNODES_URL, status=502)
        responses.add(responses.GET, HOSTNODES_URL, json=load("hostnodes.json"))
        assert TensorDockProvider().get()
        assert len(responses.calls) == 2

    @responses.activate
    def test_refusal(self):
        responses.add(responses.GET, HOSTNODES_URL, status=403)
        with pytest.raises(ProviderError, match="tensordock: GET .* HTTP 403"):
            TensorDockProvider().get()

    @responses.activate
    def test_timeout(self):
        responses.add(responses.GET, HOSTNODES_URL, body=requests.exceptions.ReadTimeout())
        with pytest.raises(ProviderError, match="timed out"):
            TensorDockProvider().get()

    @responses.activate
    def test_malformed_json(self):
        responses.add(responses.GET, HOSTNODES_URL, body="<html>maintenance</html>")
        with pytest.raises(ProviderError, match="invalid JSON"):
            TensorDockProvider().get()

    @pytest.mark.parametrize(
        ("payload", "message"),
        [
            ({"success": True}, "'hostnodes' is missing"),
            ({"hostnodes": [], "success": True}, "'hostnodes' has type list"),
            ({"success": False, "error": "x"}, "success=false"),
        ],
    )
    def test_wrong_shape(self, payload, message):
        with pytest.raises(ProviderError, match=message):
            parse_hostnodes(payload)


class TestCaching:
    @responses.activate
    def test_identical_queries_share_one_call(self):
        responses.add(responses.GET, HOSTNODES_URL, json=load("hostnodes.json"))
        provider = TensorDockProvider()
        first = provider.get(QueryFilter(min_gpu_count=1))
        second = provider.get(QueryFilter(min_gpu_count=1), balance_resources=False)
        assert len(responses.calls) == 1
        assert [o.instance_name for o in first] and [o.instance_name for o in second]
        provider.get(QueryFilter(min_gpu_count=2))  # other parameters, other request
        assert len(responses.calls) == 2

    @responses.activate
    def test_fifty_concurrent_queries_make_one_call(self):
        def slow_answer(request: Any) -> tuple[int, dict, str]:
            time.sleep(0.2)
            return 200, {}, json.dumps(load("hostnodes.json"))

        responses.add_callback(responses.GET, HOSTNODES_URL, callback=slow_answer)
        provider = TensorDockProvider()
        results: list[int] = []
        lock = threading.Lock()

        def query() -> None:
            offers = provider.get(QueryFilter())
            with lock:
                results.append(len(offers))

        threads = [threading.Thread(target=query) for _ in range(50)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=10)
        assert results == [3] * 50
        assert len(responses.calls) == 1
        assert livecache.LIVE_CACHE.get(
            livecache.request_key("tensordock", "GET", HOSTNODES_URL, {}, None), lambda: None
        )
