"""Vast.ai over recorded bundles answers (tests/providers/data/vastai, from ../shared/fixtures):
two real offers captured with `vastai search offers --raw` (2022 and 2024 field sets) and the
documented example answer, whose `offers` is an object rather than a list."""

from __future__ import annotations

import copy
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import requests
import responses

from gpuhunt._internal.constraints import matches
from gpuhunt._internal.errors import ProviderError
from gpuhunt._internal.load import livecache
from gpuhunt._internal.models import AcceleratorVendor, CPUArchitecture, QueryFilter
from gpuhunt._internal.query.filters import make_filter
from gpuhunt.providers import vastai
from gpuhunt.providers.vastai import BUNDLES_URL, VastAIProvider

DATA = Path(__file__).parent / "data" / "vastai"


def load(name: str) -> Any:
    return json.loads((DATA / name).read_text())


def offer_2024(**overrides: Any) -> dict[str, Any]:
    offer = load("bundles_offers_2024.json")["offers"][0]
    offer.update(overrides)
    return offer


def sent_body(call_index: int = -1) -> dict[str, Any]:
    return json.loads(responses.calls[call_index].request.body)


@responses.activate
def test_filter_body_maps_the_query_to_vast_fields() -> None:
    responses.post(BUNDLES_URL, json={"offers": []})
    q = QueryFilter(
        gpu_name=["A100", "RTX4090"],
        min_gpu_count=2,
        max_gpu_count=8,
        min_gpu_memory=80,
        max_gpu_memory=80,
        min_cpu=8,
        max_cpu=64,
        min_memory=64,
        max_memory=512,
        min_disk_size=100,
        max_price=3.5,
        spot=False,
        min_compute_capability=(8, 0),
    )

    VastAIProvider().get(q)

    [call] = responses.calls
    assert call.request.method == "POST"
    assert call.request.url == "https://console.vast.ai/api/v0/bundles/"
    assert sent_body() == {
        "gpu_name": {"in": ["A100 PCIE", "A100 SXM4", "A100 SXM", "RTX 4090"]},
        "num_gpus": {"gte": 2, "lte": 8},
        "gpu_ram": {"gte": pytest.approx(80 * 1024 * 0.93), "lte": pytest.approx(80 * 1024 * 1.07)},
        # machine-level bounds only where they are necessary for the offer's share
        "cpu_cores": {"gte": 8},
        "cpu_ram": {"gte": 64000},
        "disk_space": {"gte": 100},
        "dph_total": {"lte": 3.5},
        "compute_cap": {"gte": 800},
        "rentable": {"eq": True},
        "rented": {"eq": False},
        "order": [["score", "desc"]],
    }


@responses.activate
def test_spot_queries_bound_the_minimum_bid_and_open_queries_no_price() -> None:
    responses.post(BUNDLES_URL, json={"offers": []})

    VastAIProvider().get(QueryFilter(max_price=1.0, spot=True))
    VastAIProvider().get(QueryFilter(max_price=1.0))

    assert sent_body(0)["min_bid"] == {"lte": 1.0}
    assert "dph_total" not in sent_body(0)
    assert not {"min_bid", "dph_total"} & sent_body(1).keys()


@responses.activate
def test_gpu_names_are_sent_in_vast_spelling() -> None:
    responses.post(BUNDLES_URL, json={"offers": []})

    VastAIProvider().get(QueryFilter(gpu_name=["B300", "H100NVL", "RTX8000", "A5000"]))

    assert sent_body()["gpu_name"] == {
        "in": ["B300", "B300 PC", "H100 NVL", "Q RTX 8000", "RTX A5000"]
    }
    assert "limit" not in sent_body()


@responses.activate
def test_a_gpu_vast_cannot_spell_drops_the_name_filter_and_asks_for_more() -> None:
    responses.post(BUNDLES_URL, json={"offers": []})

    VastAIProvider().get(QueryFilter(gpu_name=["H100", "MI300X"]))

    assert "gpu_name" not in sent_body()
    assert sent_body()["limit"] == 3000


@responses.activate
def test_extra_filters_keep_the_stricter_bound_and_scope_controls() -> None:
    responses.post(BUNDLES_URL, json={"offers": []})
    provider = VastAIProvider(
        extra_filters={"compute_cap": {"gte": 600, "lt": 1200}, "reliability2": {"gte": 0.9}},
        community_cloud=False,
        order=[("dph_total", "asc")],
    )

    provider.get(QueryFilter(min_compute_capability=(8, 0)))
    provider.get(QueryFilter(min_compute_capability=(5, 0)))

    assert sent_body(0)["compute_cap"] == {"gte": 800, "lt": 1200}
    assert sent_body(1)["compute_cap"] == {"gte": 600, "lt": 1200}
    assert sent_body(0)["reliability2"] == {"gte": 0.9}
    assert sent_body(0)["datacenter"] == {"eq": True}
    assert sent_body(0)["order"] == [["dph_total", "asc"]]


def test_community_cloud_is_included_by_default() -> None:
    assert "datacenter" not in VastAIProvider().make_filters(QueryFilter())
    assert "datacenter" not in VastAIProvider(community_cloud=True).make_filters(QueryFilter())


def test_extra_filters_must_map_operators() -> None:
    with pytest.raises(ValueError, match="reliability2"):
        VastAIProvider(extra_filters={"reliability2": 0.9})  # type: ignore[dict-item]


@responses.activate
def test_offers_from_the_2024_answer() -> None:
    responses.post(BUNDLES_URL, json=load("bundles_offers_2024.json"))

    offers = VastAIProvider().get()

    # 96-core machine, 24 effective cores -> a quarter of its 64393 MB of RAM
    disk_cost = 1607.875 * 0.0013333333333333335 / 720
    spot, ondemand = offers
    assert ondemand.instance_name == spot.instance_name == "11684738"
    assert ondemand.location == "cn-guangxi"
    assert (ondemand.cpu, ondemand.memory, ondemand.disk_size) == (24, 16.1, 1607.875)
    assert (ondemand.gpu_name, ondemand.gpu_count, ondemand.gpu_memory) == ("RTX4090", 1, 24.0)
    assert ondemand.gpu_vendor == AcceleratorVendor.NVIDIA
    assert ondemand.cpu_arch == CPUArchitecture.X86
    assert ondemand.price == round(0.24666666666666665 + disk_cost, 5) == 0.24964
    assert not ondemand.spot
    assert ondemand.provider_data == {}
    assert (ondemand.cuda_version, ondemand.available) == ("12.2", True)
    assert spot.spot and spot.price == round(0.2 + disk_cost, 5) == 0.20298
    assert spot.provider_data == {"min_bid": 0.2}
    assert (spot.cuda_version, spot.available) == ("12.2", True)


@responses.activate
def test_the_asked_disk_is_rented_and_priced() -> None:
    responses.post(BUNDLES_URL, json=load("bundles_offers_2022.json"))

    offers = VastAIProvider().get(QueryFilter(min_disk_size=30))

    spot, ondemand = offers
    assert ondemand.instance_name == "5006600"
    assert ondemand.location == "norway"
    assert (ondemand.cpu, ondemand.memory, ondemand.disk_size) == (4, 32.14, 30.0)
    assert (ondemand.gpu_name, ondemand.gpu_memory) == ("RTX3090", 24.0)
    # storage_cost is $/GB/month: 30 GB at $0.2 adds $0.00833/h
    assert ondemand.price == 0.32833
    assert spot.price == round(0.1438056 + 30 * 0.2 / 720, 5)
    assert spot.provider_data == {"min_bid": 0.1438056}
    assert (spot.cuda_version, spot.available) == ("11.7", True)


@responses.activate
def test_spot_filter_selects_the_variant() -> None:
    responses.post(BUNDLES_URL, json=load("bundles_offers_2024.json"))

    assert [o.spot for o in VastAIProvider().get(QueryFilter(spot=False))] == [False]
    assert [o.spot for o in VastAIProvider().get(QueryFilter(spot=True))] == [True]


@responses.activate
def test_offers_keep_the_api_order() -> None:
    pricey = offer_2024(id=1, dph_base=5.0, min_bid=None, score=300)
    cheap = offer_2024(id=2, dph_base=0.1, min_bid=None, score=100)
    responses.post(BUNDLES_URL, json={"offers": [pricey, cheap]})

    assert [o.instance_name for o in VastAIProvider().get()] == ["1", "2"]


@responses.activate
def test_unknown_gpu_is_kept_under_vast_name_and_counted() -> None:
    responses.post(
        BUNDLES_URL,
        json={"offers": [offer_2024(id=7, gpu_name="RTX 4090D", min_bid=None)]},
    )
    provider = VastAIProvider()

    [offer] = provider.get()

    assert (offer.gpu_name, offer.gpu_vendor, offer.gpu_memory) == (
        "RTX4090D",
        AcceleratorVendor.NVIDIA,
        24.0,
    )
    assert provider.last_report.unknown_gpus.total() == 1


@responses.activate
def test_malformed_offers_are_skipped_and_counted() -> None:
    good = offer_2024(id=1, min_bid=None)
    no_price = offer_2024(id=2)
    del no_price["dph_base"]
    bad_ram = offer_2024(id=3, cpu_ram="lots")
    tiny = offer_2024(id=4, cpu_cores_effective=0.5)
    responses.post(BUNDLES_URL, json={"offers": [no_price, good, bad_ram, "junk", tiny]})
    provider = VastAIProvider()

    offers = provider.get()

    assert [o.instance_name for o in offers] == ["1"]
    assert provider.last_report.counts["malformed"] == 3
    assert provider.last_report.counts["no_cpu"] == 1


@responses.activate
def test_offers_failing_a_constraint_the_api_ignored_are_dropped() -> None:
    responses.post(
        BUNDLES_URL,
        json={"offers": [offer_2024(id=1, reliability2=0.5), offer_2024(id=2, reliability2=0.99)]},
    )
    provider = VastAIProvider(extra_filters={"reliability2": {"gte": 0.9}})

    offers = provider.get(QueryFilter(spot=False))

    assert [o.instance_name for o in offers] == ["2"]
    assert provider.last_report.counts["filtered"] == 1


@responses.activate
def test_documented_example_with_offers_as_object_is_a_provider_error() -> None:
    responses.post(BUNDLES_URL, json=load("openapi_doc_example_response.json"))

    with pytest.raises(ProviderError, match="'offers'"):
        VastAIProvider().get()


@responses.activate
def test_invalid_json_is_a_provider_error() -> None:
    responses.post(BUNDLES_URL, body="<html>oops</html>", content_type="text/html")

    with pytest.raises(ProviderError, match="vastai: POST .* invalid JSON"):
        VastAIProvider().get()


@pytest.mark.parametrize("status", [429, 502, 503])
@responses.activate
def test_overload_is_retried_a_bounded_number_of_times(status: int) -> None:
    responses.post(BUNDLES_URL, status=status)

    with pytest.raises(ProviderError, match=f"HTTP {status}"):
        VastAIProvider().get()

    assert len(responses.calls) == 4  # the first try and 3 retries


@responses.activate
def test_a_retry_that_succeeds_returns_offers() -> None:
    responses.post(BUNDLES_URL, status=503)
    responses.post(BUNDLES_URL, json=load("bundles_offers_2024.json"))

    assert len(VastAIProvider().get()) == 2
    assert len(responses.calls) == 2


@responses.activate
def test_timeout_is_a_provider_error() -> None:
    responses.post(BUNDLES_URL, body=requests.exceptions.ReadTimeout("slow"))

    with pytest.raises(ProviderError, match="timed out"):
        VastAIProvider().get()


@responses.activate
def test_refusal_is_a_provider_error() -> None:
    responses.post(BUNDLES_URL, status=401)

    with pytest.raises(ProviderError, match="HTTP 401"):
        VastAIProvider().get()


def test_from_env_needs_no_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VAST_API_KEY", raising=False)
    assert isinstance(VastAIProvider.from_env(), VastAIProvider)


def test_fifty_identical_concurrent_queries_make_one_api_call() -> None:
    answer = load("bundles_offers_2024.json")
    started = threading.Event()

    def slow_answer(request: Any) -> tuple[int, dict[str, str], str]:
        started.set()
        time.sleep(0.3)  # keep the call in flight while the other threads arrive
        return 200, {}, json.dumps(answer)

    q = QueryFilter(gpu_name=["RTX4090"], max_price=1.0, spot=False)
    barrier = threading.Barrier(50)
    results: list[Any] = [None] * 50

    def worker(i: int) -> None:
        barrier.wait()
        try:
            results[i] = VastAIProvider().get(copy.deepcopy(q))
        except Exception as e:  # noqa: BLE001 - reported below
            results[i] = e

    with responses.RequestsMock() as rsps:
        rsps.add_callback(responses.POST, BUNDLES_URL, callback=slow_answer)
        calls_before = livecache.LIVE_CACHE.calls
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(50)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=10)
        assert len(rsps.calls) == 1

    assert started.is_set()
    assert livecache.LIVE_CACHE.calls - calls_before == 1
    assert all(isinstance(r, list) for r in results), [
        r for r in results if not isinstance(r, list)
    ]
    assert all(r == results[0] for r in results)
    assert [o.instance_name for o in results[0]] == ["11684738"]


def test_location_formats() -> None:
    assert vastai.get_location("Guangxi, CN") == "cn-guangxi"
    assert vastai.get_location("New York, US") == "us-newyork"
    assert vastai.get_location("Norway") == "norway"
    assert vastai.get_location(None) == ""


def test_compute_cap_values() -> None:
    assert vastai.compute_cap((7, 5)) == 750
    assert vastai.compute_cap((12, 0)) == 1200


@responses.activate
def test_min_cuda_is_sent_and_the_host_cuda_kept_for_the_local_filter() -> None:
    """`cuda_max_good` is the newest CUDA the host's driver runs (Vast's API docs)."""
    old = offer_2024(id=1, cuda_max_good=12.2, min_bid=None)
    new = offer_2024(id=2, cuda_max_good=12.8, min_bid=None)
    silent = offer_2024(id=3, min_bid=None)
    silent.pop("cuda_max_good", None)
    responses.post(BUNDLES_URL, json={"offers": [old, new, silent]})
    q = make_filter(min_cuda="12.8")

    assert VastAIProvider().make_filters(q)["cuda_max_good"] == {"gte": 12.8}
    assert VastAIProvider().make_filters(QueryFilter(min_cuda="13"))["cuda_max_good"] == {  # type: ignore[arg-type]
        "gte": 13.0
    }
    offers = VastAIProvider().get(q)
    assert [o.instance_name for o in offers] == ["2", "3"]  # 12.2 failed the sent constraint
    assert [(o.provider_data, o.cuda_version, o.available) for o in offers] == [
        ({}, "12.8", True),
        ({}, None, True),  # no cuda_max_good: no version
    ]
    assert [o.instance_name for o in offers if matches(o, q)] == ["2", "3"]


@responses.activate
def test_form_factor_from_the_vast_gpu_name() -> None:
    """Vast.ai's name says the board ("H100 SXM", "H100 PCIE"): provider_data["form_factor"],
    unless the model decides it ("H100 NVL" is the H100NVL model; an RTX 4090 is a PCIe card)."""
    answer = [
        offer_2024(id=1, gpu_name="H100 SXM", gpu_ram=81559, min_bid=None),
        offer_2024(id=2, gpu_name="H100 PCIE", gpu_ram=81559, min_bid=None),
        offer_2024(id=3, gpu_name="H100 NVL", gpu_ram=95830, min_bid=None),
        offer_2024(id=4, gpu_name="RTX 4090", min_bid=None),
    ]
    responses.post(BUNDLES_URL, json={"offers": answer})
    got = {o.instance_name: o for o in VastAIProvider().get()}
    assert {k: (o.gpu_name, o.provider_data.get("form_factor")) for k, o in got.items()} == {
        "1": ("H100", "sxm"),
        "2": ("H100", "pcie"),
        "3": ("H100NVL", None),
        "4": ("RTX4090", None),
    }
    assert [got[k].form_factor for k in "1234"] == ["sxm", "pcie", "nvl", "pcie"]


def test_gpu_names_with_a_count_or_form_factor_are_sent_as_the_gpu() -> None:
    from gpuhunt.providers.vastai import vast_gpu_names

    assert vast_gpu_names(["RTX 4090:2"]) == vast_gpu_names(["RTX 4090"]) != []
    assert set(vast_gpu_names(["H100 SXM"])) == set(vast_gpu_names(["H100"]))


@responses.activate
def test_a_geolocation_that_is_an_object_skips_that_offer_only() -> None:
    """`geolocation` as an object (AttributeError on `.split`): one offer skipped and counted
    by the shared record guard (issue 27), the others served."""
    odd = offer_2024(id=7, geolocation={"country": "CN", "city": "Guangxi"})
    good = offer_2024(id=8)
    responses.post(BUNDLES_URL, json={"offers": [odd, good]})
    provider = VastAIProvider()

    offers = provider.get()

    assert {o.instance_name for o in offers} == {"8"}
    assert provider.last_report.counts["malformed"] == 1


@responses.activate
def test_an_answered_offer_is_available() -> None:
    responses.post(BUNDLES_URL, json=load("bundles_offers_2024.json"))

    offers = VastAIProvider().get()

    assert offers and all(o.available is True for o in offers)


def test_an_offer_that_says_it_is_rented_reads_unavailable() -> None:
    # Only possible when an answer is read without the body's filters: still listed, marked.
    rented = offer_2024(id=1, rented=True)
    unrentable = offer_2024(id=2, rentable=False)
    free = offer_2024(id=3)
    offers = vastai.parse_offers({"offers": [rented, unrentable, free]}, QueryFilter(spot=False))
    assert [(o.instance_name, o.available) for o in offers] == [
        ("1", False),
        ("2", False),
        ("3", True),
    ]
