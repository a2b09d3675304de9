"""CloudRiftProvider over a CloudRift answer.

No recorded CloudRift response exists (the shared fixture is SHAPE only): the test data was built
from CloudRift's public API facts, see replay_cloudrift.py for every source and what is
illustrative.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import responses
from scripts.replay import replay_cloudrift as replay

from gpuhunt._internal.accelerators import accelerators_named
from gpuhunt._internal.errors import ProviderError
from gpuhunt._internal.models import AcceleratorVendor, CPUArchitecture
from gpuhunt.providers.cloudrift import (
    CloudRiftProvider,
    ParseReport,
    list_url,
    parse_instance_types,
)

GIB = 1024**3


def payload() -> dict[str, Any]:
    return copy.deepcopy(replay.load())


def types_of(p: dict[str, Any]) -> list[dict[str, Any]]:
    types: list[dict[str, Any]] = p["data"]["instance_types"]
    return types


def at(offers, name: str, location: str):
    [found] = [o for o in offers if (o.instance_name, o.location) == (name, location)]
    return found


def test_replay_gives_one_offer_per_variant_and_hosting_datacenter() -> None:
    offers = replay.collect()

    assert sorted((o.instance_name, o.location) for o in offers) == [
        ("rtx49-7-50-500-nr.1", "ap-east-tw-kn-2"),
        ("rtx59-16c-nr.1", "usny01_a01"),
        ("rtx59-7-50-400-ec.1", "ustx1a_a01"),
        ("rtx59-7-50-400-ec.2", "ustx1a_a01"),
        ("rtxpro6000-12-100-1500-nr.1", "eu-central-it-gv-1"),
        ("rtxpro6000-12-100-1500-nr.1", "usny01_a01"),
        ("rtxpro6000-12-100-1500-nr.2", "eu-central-it-gv-1"),
        ("rtxpro6000-12-100-1500-nr.2", "usny01_a01"),
        ("v100-5-85-800-generic.1", "ap_northeast_kr_se_1"),
    ]  # v100-...generic.16 is hosted nowhere (empty nodes_per_dc): no offer
    # No node of the RTX PRO 6000 is free, yet it is listed where it is hosted.
    assert [o.price for o in offers] == sorted(o.price for o in offers)
    assert (offers[0].instance_name, offers[0].price) == ("v100-5-85-800-generic.1", 0.25)
    assert all(not o.spot and o.cpu_arch == CPUArchitecture.X86 for o in offers)
    assert replay.collect() == offers  # deterministic


def test_replay_facts_cents_bytes_and_names() -> None:
    offers = replay.collect()

    rtx5090 = at(offers, "rtx59-7-50-400-ec.1", "ustx1a_a01")
    assert rtx5090.price == 0.65  # 65.0 cents
    # cpu_count, as the variant's name ("rtx59-7-50-400") and gpuhunt 0.1.34 have it
    assert (rtx5090.cpu, rtx5090.memory, rtx5090.disk_size) == (7, 50.0, 400.0)
    assert (rtx5090.gpu_count, rtx5090.gpu_name, rtx5090.gpu_memory) == (1, "RTX5090", 32)
    assert rtx5090.gpu_vendor == AcceleratorVendor.NVIDIA

    assert at(offers, "rtx59-16c-nr.1", "usny01_a01").price == 0.624

    pro = at(offers, "rtxpro6000-12-100-1500-nr.2", "eu-central-it-gv-1")
    assert (pro.price, pro.cpu, pro.memory, pro.disk_size) == (2.7872, 24, 200.0, 3000.0)
    assert (pro.gpu_count, pro.gpu_name, pro.gpu_memory) == (2, "RTXPRO6000", 96)

    rtx4090 = at(offers, "rtx49-7-50-500-nr.1", "ap-east-tw-kn-2")
    assert (rtx4090.price, rtx4090.gpu_name, rtx4090.gpu_memory) == (0.39, "RTX4090", 24)

    v100 = at(offers, "v100-5-85-800-generic.1", "ap_northeast_kr_se_1")
    assert (v100.gpu_name, v100.gpu_memory, v100.cpu) == ("V100", 16, 5)  # "V100 SXM2"


@responses.activate
def test_request_sent() -> None:
    replay.register(responses.mock)  # matches only the exact JSON body
    offers = CloudRiftProvider().get()

    assert offers
    assert len(responses.calls) == 1  # the listing is one page
    request = responses.calls[0].request
    assert (request.method, request.url) == ("POST", list_url())
    assert request.url == "https://api.cloudrift.ai/api/v1/instance-types/list"
    assert "X-API-Key" not in request.headers  # the listing is public


def test_server_address_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLOUDRIFT_SERVER_ADDRESS", "https://staging.example/")
    with responses.RequestsMock() as rsps:
        rsps.add(
            responses.POST, "https://staging.example/api/v1/instance-types/list", json=payload()
        )
        assert CloudRiftProvider.from_env().get()


def test_cpu_is_cpu_count_not_logical_cpu_count() -> None:
    p = payload()
    variant = types_of(p)[0]["variants"][0]
    assert (variant["cpu_count"], variant["logical_cpu_count"]) == (7, 14)
    assert at(parse_instance_types(p), "rtx59-7-50-400-ec.1", "ustx1a_a01").cpu == 7
    del variant["logical_cpu_count"]  # not needed
    assert at(parse_instance_types(p), "rtx59-7-50-400-ec.1", "ustx1a_a01").cpu == 7


def test_vram_reported_as_a_total_is_divided() -> None:
    p = payload()
    types_of(p)[0]["variants"][1]["vram"] = 64 * GIB  # 2x RTX 5090 reported as 64 GiB in all
    offers = parse_instance_types(p)
    assert at(offers, "rtx59-7-50-400-ec.2", "ustx1a_a01").gpu_memory == 32


def test_free_nodes_in_an_unlisted_datacenter_still_make_an_offer() -> None:
    p = payload()
    types_of(p)[3]["variants"][0]["available_nodes_per_dc"]["usny01_a01"] = 1
    offers = parse_instance_types(p)
    assert {o.location for o in offers if o.instance_name == "v100-5-85-800-generic.1"} == {
        "ap_northeast_kr_se_1",
        "usny01_a01",
    }


def test_unknown_gpu_is_kept_warned_and_counted(caplog: pytest.LogCaptureFixture) -> None:
    p = payload()
    types_of(p).append(
        {
            "name": "rtx69",
            "brand_short": "RTX 6090",
            "variants": [copy.deepcopy(types_of(p)[0]["variants"][0]) | {"name": "rtx69-1.1"}],
        }
    )
    types_of(p).append(
        {
            "name": "mi450x",
            "brand_short": "Instinct MI450X",
            "variants": [copy.deepcopy(types_of(p)[0]["variants"][0]) | {"name": "mi450x-1.1"}],
        }
    )
    report = ParseReport()
    offers = parse_instance_types(p, report)

    new = at(offers, "rtx69-1.1", "ustx1a_a01")
    assert (new.gpu_name, new.gpu_vendor, new.gpu_memory) == (
        "RTX 6090",
        AcceleratorVendor.NVIDIA,
        32,
    )
    amd = at(offers, "mi450x-1.1", "ustx1a_a01")
    assert (amd.gpu_name, amd.gpu_vendor) == ("Instinct MI450X", AcceleratorVendor.AMD)
    assert report.unknown_gpus == {"RTX 6090": 1, "Instinct MI450X": 1}
    assert report.skipped == []
    assert "RTX 6090" in caplog.text


def test_known_amd_gpu() -> None:
    p = payload()
    variant = copy.deepcopy(types_of(p)[0]["variants"][0])
    variant.update(name="mi350x-15-250-1000-gv.1", vram=288 * GIB, cost_per_hour=230.0)
    types_of(p).append({"name": "mi350x", "brand_short": "MI350X", "variants": [variant]})
    amd = at(parse_instance_types(p), "mi350x-15-250-1000-gv.1", "ustx1a_a01")
    assert (amd.gpu_name, amd.gpu_vendor, amd.gpu_memory, amd.price) == (
        "MI350X",
        AcceleratorVendor.AMD,
        288,
        2.3,
    )


def test_malformed_variants_are_skipped_and_counted() -> None:
    p = payload()
    types_of(p)[0]["variants"][0]["cost_per_hour"] = "65"
    del types_of(p)[1]["variants"][0]["dram"]
    types_of(p)[2]["variants"] = None
    provider = CloudRiftProvider()
    with responses.RequestsMock() as rsps:
        rsps.add(responses.POST, list_url(), json=p)
        offers = provider.get()

    names = {o.instance_name for o in offers}
    assert "rtx59-7-50-400-ec.1" not in names and "rtxpro6000-12-100-1500-nr.1" not in names
    assert "rtx49-7-50-500-nr.1" not in names
    assert "rtx59-16c-nr.1" in names and "v100-5-85-800-generic.1" in names
    assert len(provider.last_report.skipped) == 3
    assert any("cost_per_hour has type str" in s for s in provider.last_report.skipped)
    assert any("'dram'" in s for s in provider.last_report.skipped)


def test_shape_only_fixture_is_rejected_clearly() -> None:
    # The shared SHAPE fixture has placeholder values and no brand_short: nothing can be named.
    with pytest.raises(ProviderError, match="without brand_short"):
        parse_instance_types(replay.load("instance_types_list_SHAPE_ONLY.json"))


def test_every_variant_malformed_is_an_error_not_an_empty_catalog() -> None:
    p = {"data": {"instance_types": [{"name": "x", "variants": [{"name": "x.1"}]}]}}
    with pytest.raises(ProviderError, match="none of 1 variants"):
        parse_instance_types(p)


@pytest.mark.parametrize(
    "answer, message",
    [
        ("Invalid API version", "the server answered 'Invalid API version'"),
        ({"version": "2025-01-29"}, "'data' is missing"),
        ({"data": {"types": []}}, "'instance_types' is missing"),
        ({"data": {"instance_types": {}}}, "'instance_types' has type dict"),
    ],
)
def test_wrong_shape_is_a_provider_error_naming_the_field(answer: Any, message: str) -> None:
    with pytest.raises(ProviderError, match=message):
        parse_instance_types(answer)


@pytest.mark.parametrize("status", [401, 403])
def test_refused_request_is_a_provider_error(status: int) -> None:
    with responses.RequestsMock() as rsps:
        rsps.add(responses.POST, list_url(), status=status)
        with pytest.raises(ProviderError, match=f"refused with HTTP {status}"):
            CloudRiftProvider().get()


@pytest.mark.parametrize("status", [429, 500, 502])
def test_throttling_and_server_errors_are_retried_then_fail(status: int) -> None:
    with responses.RequestsMock() as rsps:
        listing = rsps.add(responses.POST, list_url(), status=status)
        with pytest.raises(ProviderError, match=f"HTTP {status}"):
            CloudRiftProvider().get()
    assert listing.call_count == 4  # one try and three bounded retries


def test_malformed_json_is_a_provider_error() -> None:
    with responses.RequestsMock() as rsps:
        rsps.add(responses.POST, list_url(), body='{"data": {"instance_types": [')
        with pytest.raises(ProviderError, match="invalid JSON"):
            CloudRiftProvider().get()


def test_gpu_names_resolve_to_canonical_names() -> None:
    unresolved = sorted(
        {o.gpu_name for o in replay.collect() if o.gpu_name and not accelerators_named(o.gpu_name)}
    )
    assert unresolved == [], (
        f"CloudRift GPU names missing from the accelerator tables: {unresolved}"
    )


def test_free_nodes_are_the_availability_reading() -> None:
    offers = replay.collect()
    reading = {(o.instance_name, o.location): o.available for o in offers}

    # Two free RTX 4090 and V100 nodes; every RTX 5090 and RTX PRO 6000 node rented out.
    assert reading[("rtx49-7-50-500-nr.1", "ap-east-tw-kn-2")] is True
    assert reading[("v100-5-85-800-generic.1", "ap_northeast_kr_se_1")] is True
    assert reading[("rtx59-7-50-400-ec.1", "ustx1a_a01")] is False
    assert reading[("rtxpro6000-12-100-1500-nr.1", "eu-central-it-gv-1")] is False
    # An empty `available_nodes_per_dc` counts no free node there.
    assert reading[("rtx59-16c-nr.1", "usny01_a01")] is False


def test_no_reading_without_available_nodes_per_dc() -> None:
    p = payload()
    variant = types_of(p)[0]["variants"][0]
    del variant["available_nodes_per_dc"]
    offer = at(parse_instance_types(p), variant["name"], "ustx1a_a01")
    assert offer.available is None
