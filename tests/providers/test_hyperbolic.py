"""Hyperbolic over a real marketplace answer (Hyperbolic's CLI example output of 2025-05-13,
trimmed: tests/providers/data/hyperbolic/README.md)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import responses
from responses import matchers

from gpuhunt._internal.errors import ProviderError
from gpuhunt._internal.models import AcceleratorVendor, QueryFilter
from gpuhunt.providers.hyperbolic import MARKETPLACE_URL, HyperbolicProvider

DATA = Path(__file__).parent / "data" / "hyperbolic"


def load() -> Any:
    return json.loads((DATA / "marketplace_2025-05-13_trimmed.json").read_text())


@responses.activate
def test_request_and_offers() -> None:
    responses.post(
        MARKETPLACE_URL, json=load(), match=[matchers.json_params_matcher({"filters": {}})]
    )
    provider = HyperbolicProvider()

    offers = provider.get()

    [call] = responses.calls
    assert "Authorization" not in call.request.headers
    # sfc-016: 6 of 8 free; luxembourg A100: 8; sfc-030: 6 of 6; l-hgx-02: 5 of 8
    assert len(offers) == 6 + 8 + 6 + 5
    by_node = {(o.instance_name, o.gpu_count): o for o in offers}
    one = by_node["sfc-016", 1]
    assert (one.price, one.cpu, one.memory, one.disk_size) == (0.99, 28, 270.0, 300.0)
    assert (one.gpu_name, one.gpu_memory, one.gpu_vendor) == (
        "H100",
        80.0,
        AcceleratorVendor.NVIDIA,
    )
    assert ("sfc-016", 7) not in by_node  # 2 of its 8 GPUs are rented
    six = by_node["sfc-030", 6]
    assert (six.price, six.cpu, six.memory, six.disk_size) == (9.0, 224, 2165.0, 2400.0)
    a100 = by_node["gpu-cluster-luxembourg-2-y7323-249912e8", 8]
    assert (a100.price, a100.gpu_name, a100.gpu_memory, a100.cpu) == (8.0, "A100", 80.0, 192)
    h200 = by_node["l-hgx-02", 1]
    # 143771 MiB reported: 140.4 GiB, the 141 GB H200
    assert (h200.price, h200.gpu_name, h200.gpu_memory) == (2.15, "H200", 141.0)
    assert {o.location for o in offers} == {"region-1"}
    assert all(o.spot for o in offers)
    # reserved nodes (the RTX 4090, RTX 3070 and L40S ones) give no offer
    assert provider.last_report.counts == {"not_rentable": 3}
    assert [o.price for o in offers] == sorted(o.price for o in offers)


@responses.activate
def test_a_key_in_the_environment_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HYPERBOLIC_API_KEY", "hb-secret")
    responses.post(MARKETPLACE_URL, json={"instances": []})

    provider = HyperbolicProvider.from_env()

    assert provider.get() == []
    assert responses.calls[0].request.headers["Authorization"] == "Bearer hb-secret"
    assert "hb-secret" not in repr(provider)
    monkeypatch.delenv("HYPERBOLIC_API_KEY")
    assert HyperbolicProvider.from_env().api_key is None  # optional: the listing is public


@responses.activate
def test_malformed_nodes_are_skipped_and_counted() -> None:
    good = load()["instances"][0]
    no_price = copy.deepcopy(good)
    no_price["id"] = "no-price"
    del no_price["pricing"]
    no_gpus = copy.deepcopy(good)
    no_gpus["id"] = "no-gpus"
    no_gpus["hardware"]["gpus"] = []
    bad_count = copy.deepcopy(good)
    bad_count["id"] = "bad-count"
    bad_count["gpus_total"] = "8"
    unknown = copy.deepcopy(good)
    unknown["id"] = "unknown"
    unknown["gpus_reserved"] = 7
    for g in unknown["hardware"]["gpus"]:
        g["model"] = "NVIDIA-X9-96GB"
        g["ram"] = 98304
    responses.post(MARKETPLACE_URL, json={"instances": [no_price, no_gpus, bad_count, [], unknown]})
    provider = HyperbolicProvider()

    offers = provider.get()

    assert [(o.instance_name, o.gpu_name, o.gpu_memory) for o in offers] == [
        ("unknown", "NVIDIA-X9-96GB", 96.0)
    ]
    report = provider.last_report
    assert report.counts["malformed"] == 4
    assert report.unknown_gpus == {"NVIDIA-X9-96GB": 1}
    assert [s.split(":")[0] for s in report.skipped] == [
        "node 'no-price'",
        "node 'no-gpus'",
        "node 'bad-count'",
        "node #3",
    ]


@responses.activate
def test_refused_key_names_the_variable() -> None:
    responses.post(MARKETPLACE_URL, status=401, json={"detail": "unauthorized"})

    with pytest.raises(ProviderError, match="HYPERBOLIC_API_KEY") as e:
        HyperbolicProvider(api_key="hb-secret").get()
    assert "hb-secret" not in str(e.value)


@pytest.mark.parametrize("status", [429, 500, 503])
@responses.activate
def test_overload_is_retried_then_an_error(status: int) -> None:
    responses.post(MARKETPLACE_URL, status=status)

    with pytest.raises(ProviderError, match=f"HTTP {status}"):
        HyperbolicProvider().get()
    assert len(responses.calls) == 4


@responses.activate
def test_a_429_then_success_is_answered() -> None:
    responses.post(MARKETPLACE_URL, status=429)
    responses.post(MARKETPLACE_URL, json=load())

    assert len(HyperbolicProvider().get()) == 25
    assert len(responses.calls) == 2


@responses.activate
def test_invalid_json_and_wrong_shape() -> None:
    responses.post(MARKETPLACE_URL, body="{")
    with pytest.raises(ProviderError, match="invalid JSON"):
        HyperbolicProvider().get()
    responses.replace(responses.POST, MARKETPLACE_URL, json={"nodes": []})
    with pytest.raises(ProviderError, match="'instances'"):
        HyperbolicProvider(api_key="k").get()


@responses.activate
def test_on_demand_queries_make_no_call() -> None:
    assert HyperbolicProvider().get(QueryFilter(spot=False)) == []
    assert len(responses.calls) == 0
