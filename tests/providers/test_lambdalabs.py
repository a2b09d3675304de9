"""LambdaLabsProvider over recorded API answers (see replay_lambdalabs.py for where they came from:
instance_types.json is the shared fixture, images.json was built from Lambda's API docs)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import responses
from scripts.replay import replay_lambdalabs as replay

from gpuhunt._internal.accelerators import accelerators_named
from gpuhunt._internal.errors import MissingCredsError, ProviderError
from gpuhunt._internal.models import AcceleratorVendor, CPUArchitecture
from gpuhunt.providers.lambdalabs import (
    FLAG_ARM,
    IMAGES_URL,
    INSTANCE_TYPES_URL,
    LambdaLabsProvider,
    parse_image_regions,
    parse_instance_types,
)

ALL_REGIONS = {
    "asia-northeast-1",
    "asia-northeast-2",
    "asia-south-1",
    "australia-east-1",
    "europe-central-1",
    "me-west-1",
    "us-east-1",
    "us-east-3",
    "us-midwest-1",
    "us-south-2",
    "us-south-3",
    "us-west-1",
    "us-west-2",
    "us-west-3",
}
ARM_REGIONS = {"us-east-1", "us-east-3"}


def instance_types() -> dict[str, Any]:
    return copy.deepcopy(replay.load("instance_types.json"))


def regions() -> dict[CPUArchitecture, list[str]]:
    return parse_image_regions(replay.load("images.json"))


def by_name(offers, name):
    return [o for o in offers if o.instance_name == name]


def test_replay_gives_every_instance_type_in_every_region() -> None:
    offers = replay.collect()

    assert len(offers) == 4 * len(ALL_REGIONS)
    assert {o.instance_name for o in offers} == {
        "gpu_1x_a10",
        "gpu_8x_h100_sxm5",
        "gpu_8x_a100",
        "gpu_1x_h100_sxm5",
    }
    for name in ("gpu_1x_a10", "gpu_8x_h100_sxm5", "gpu_8x_a100", "gpu_1x_h100_sxm5"):
        assert {o.location for o in by_name(offers, name)} == ALL_REGIONS
    # Sold out everywhere at recording time, yet listed: the catalog says what Lambda sells.
    assert {o.location for o in by_name(offers, "gpu_8x_a100")} == ALL_REGIONS
    assert [o.price for o in offers] == sorted(o.price for o in offers)
    assert offers[0].instance_name == "gpu_1x_a10"
    assert offers[-1].instance_name == "gpu_8x_h100_sxm5"
    assert replay.collect() == offers  # deterministic


def test_replay_facts_of_each_instance_type() -> None:
    offers = {o.instance_name: o for o in replay.collect() if o.location == "us-west-1"}

    a10 = offers["gpu_1x_a10"]
    assert (a10.price, a10.cpu, a10.memory) == (0.75, 30, 200.0)
    assert (a10.gpu_count, a10.gpu_name, a10.gpu_memory) == (1, "A10", 24)
    assert a10.disk_size == pytest.approx(1400 * 1.073741824, abs=0.01)
    assert a10.gpu_vendor == AcceleratorVendor.NVIDIA
    assert not a10.spot and a10.flags == [] and a10.cpu_arch == CPUArchitecture.X86

    h100x8 = offers["gpu_8x_h100_sxm5"]
    # "8x H100" alone names no memory; the type's gpu_description "H100 (80 GB SXM5)" does.
    assert (h100x8.price, h100x8.cpu, h100x8.memory) == (35.92, 208, 1800.0)
    assert (h100x8.gpu_count, h100x8.gpu_name, h100x8.gpu_memory) == (8, "H100", 80)

    a100 = offers["gpu_8x_a100"]
    # No memory in the description: the smallest known A100 (40 GB), never more than sold.
    assert (a100.price, a100.cpu, a100.gpu_count, a100.gpu_name, a100.gpu_memory) == (
        15.92,
        124,
        8,
        "A100",
        40,
    )

    h100 = offers["gpu_1x_h100_sxm5"]
    assert (h100.price, h100.cpu, h100.memory, h100.gpu_count, h100.gpu_memory) == (
        4.29,
        26,
        225.0,
        1,
        80,
    )
    assert h100.cpu_arch == CPUArchitecture.X86


@responses.activate
def test_requests_sent() -> None:
    replay.register(responses.mock)
    offers = LambdaLabsProvider("secret-token").get()

    assert offers
    assert [(c.request.method, c.request.url) for c in responses.calls] == [
        ("GET", INSTANCE_TYPES_URL),
        ("GET", IMAGES_URL),
    ]  # no pagination: each endpoint answers in one page
    for call in responses.calls:
        assert call.request.headers["Authorization"] == "Bearer secret-token"
        assert call.request.headers["User-Agent"].startswith("gpuhunt/")


def test_region_with_capacity_is_listed_even_without_an_image() -> None:
    payload = instance_types()
    payload["data"]["gpu_1x_a10"]["regions_with_capacity_available"].append(
        {"name": "us-south-1", "description": "Texas, USA"}
    )
    offers = parse_instance_types(payload, regions())

    assert "us-south-1" in {o.location for o in by_name(offers, "gpu_1x_a10")}
    assert "us-south-1" not in {o.location for o in by_name(offers, "gpu_8x_a100")}


def test_superchip_is_arm_with_flag_and_only_where_arm_images_exist() -> None:
    payload = instance_types()
    payload["data"]["gpu_1x_gh200"] = {
        "instance_type": {
            "name": "gpu_1x_gh200",
            "description": "1x GH200 (96 GB)",
            "gpu_description": "GH200 (96 GB)",
            "price_cents_per_hour": 149,
            "specs": {"vcpus": 64, "memory_gib": 432, "storage_gib": 4096, "gpus": 1},
        },
        "regions_with_capacity_available": [],
    }
    offers = by_name(parse_instance_types(payload, regions()), "gpu_1x_gh200")

    assert {o.location for o in offers} == ARM_REGIONS
    for o in offers:
        assert (o.gpu_name, o.gpu_memory, o.price) == ("GH200", 96, 1.49)
        assert o.cpu_arch == CPUArchitecture.ARM
        assert o.flags == [FLAG_ARM]


def test_architecture_field_decides_the_cpu_arch() -> None:
    payload = instance_types()
    payload["data"]["gpu_1x_h100_sxm5"]["instance_type"]["architecture"] = "arm64"
    offers = by_name(parse_instance_types(payload, regions()), "gpu_1x_h100_sxm5")

    # ARM image regions, plus us-south-2 where the API reports capacity for this type.
    assert {o.location for o in offers} == ARM_REGIONS | {"us-south-2"}
    assert all(o.cpu_arch == CPUArchitecture.ARM and o.flags == [FLAG_ARM] for o in offers)


def test_images_without_architecture_count_as_x86() -> None:
    payload = {"data": [{"region": {"name": "us-west-1"}}, {"region": {"name": "us-east-1"}}]}
    assert parse_image_regions(payload) == {CPUArchitecture.X86: ["us-east-1", "us-west-1"]}


def test_unknown_gpu_is_kept_warned_and_counted(caplog: pytest.LogCaptureFixture) -> None:
    payload = instance_types()
    payload["data"]["gpu_1x_a10"]["instance_type"]["description"] = "1x Example GPU (40 GB SXM4)"
    provider = LambdaLabsProvider("t")
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, INSTANCE_TYPES_URL, json=payload)
        rsps.add(responses.GET, IMAGES_URL, json=replay.load("images.json"))
        offers = provider.get()

    kept = by_name(offers, "gpu_1x_a10")
    assert len(kept) == len(ALL_REGIONS)
    assert {(o.gpu_name, o.gpu_memory, o.gpu_count) for o in kept} == {("Example GPU", 40, 1)}
    assert provider.last_report.unknown_gpus == {"Example GPU": 1}
    assert provider.last_report.skipped == []
    assert "Example GPU" in caplog.text


def test_malformed_record_is_skipped_and_counted() -> None:
    payload = instance_types()
    del payload["data"]["gpu_8x_a100"]["instance_type"]["price_cents_per_hour"]
    payload["data"]["gpu_1x_a10"]["instance_type"]["specs"]["vcpus"] = "thirty"
    provider = LambdaLabsProvider("t")
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, INSTANCE_TYPES_URL, json=payload)
        rsps.add(responses.GET, IMAGES_URL, json=replay.load("images.json"))
        offers = provider.get()

    assert {o.instance_name for o in offers} == {"gpu_8x_h100_sxm5", "gpu_1x_h100_sxm5"}
    assert len(provider.last_report.skipped) == 2
    assert any("price_cents_per_hour" in s for s in provider.last_report.skipped)
    assert any("specs.vcpus" in s for s in provider.last_report.skipped)


def test_cpu_only_type_and_count_from_description() -> None:
    payload = instance_types()
    payload["data"]["cpu_4x_general"] = {
        "instance_type": {
            "name": "cpu_4x_general",
            "description": "4x CPU",
            "gpu_description": "",
            "price_cents_per_hour": 16,
            "specs": {"vcpus": 4, "memory_gib": 16, "storage_gib": 64, "gpus": 0},
        },
        "regions_with_capacity_available": [],
    }
    del payload["data"]["gpu_8x_a100"]["instance_type"]["specs"]["gpus"]
    offers = parse_instance_types(payload, regions())

    cpu = by_name(offers, "cpu_4x_general")[0]
    assert (cpu.gpu_count, cpu.gpu_name, cpu.gpu_memory, cpu.gpu_vendor) == (0, None, None, None)
    assert {o.gpu_count for o in by_name(offers, "gpu_8x_a100")} == {8}


def test_every_record_malformed_is_an_error_not_an_empty_catalog() -> None:
    payload = {"data": {"x": {"instance_type": {"name": "x"}}}}
    with pytest.raises(ProviderError, match="none of 1 instance types"):
        parse_instance_types(payload, regions())


@pytest.mark.parametrize(
    "payload, field",
    [({"error": {"code": "x"}}, "data"), ({"data": []}, "data"), ([], "expected an object")],
)
def test_wrong_shape_is_a_provider_error_naming_the_field(payload: Any, field: str) -> None:
    with pytest.raises(ProviderError, match=field):
        parse_instance_types(payload, regions())


def test_401_names_the_credential_and_not_the_secret() -> None:
    with responses.RequestsMock() as rsps:
        rsps.add(
            responses.GET,
            INSTANCE_TYPES_URL,
            status=401,
            json={"error": {"code": "global/invalid-api-key"}},
        )
        with pytest.raises(ProviderError) as e:
            LambdaLabsProvider("very-secret").get()
    assert "LAMBDALABS_TOKEN" in str(e.value)
    assert "very-secret" not in str(e.value)


@pytest.mark.parametrize("status", [429, 500, 503])
def test_throttling_and_server_errors_are_retried_then_fail(status: int) -> None:
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, INSTANCE_TYPES_URL, json=replay.load("instance_types.json"))
        images = rsps.add(responses.GET, IMAGES_URL, status=status)
        with pytest.raises(ProviderError, match=f"HTTP {status}"):
            LambdaLabsProvider("t").get()
    assert images.call_count == 4  # one try and three bounded retries


def test_transient_error_then_success() -> None:
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, INSTANCE_TYPES_URL, status=502)
        rsps.add(responses.GET, INSTANCE_TYPES_URL, json=replay.load("instance_types.json"))
        rsps.add(responses.GET, IMAGES_URL, json=replay.load("images.json"))
        offers = LambdaLabsProvider("t").get()
    assert len(offers) == 4 * len(ALL_REGIONS)


def test_malformed_json_is_a_provider_error() -> None:
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, INSTANCE_TYPES_URL, body="<html>maintenance</html>")
        with pytest.raises(ProviderError, match="invalid JSON"):
            LambdaLabsProvider("t").get()


def test_missing_token_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LAMBDALABS_TOKEN", raising=False)
    with pytest.raises(MissingCredsError, match="LAMBDALABS_TOKEN"):
        LambdaLabsProvider.from_env()


def test_repr_hides_the_token() -> None:
    assert "very-secret" not in repr(LambdaLabsProvider("very-secret"))


def test_gpu_names_resolve_to_canonical_names() -> None:
    unresolved = sorted(
        {o.gpu_name for o in replay.collect() if o.gpu_name and not accelerators_named(o.gpu_name)}
    )
    assert unresolved == [], f"Lambda GPU names missing from the accelerator tables: {unresolved}"


def test_available_exactly_where_lambda_reported_capacity() -> None:
    # The recorded answer: the A10 had capacity in us-west-1 only, the 8x A100 nowhere.
    offers = replay.collect()

    available = {(o.instance_name, o.location) for o in offers if o.available}
    assert available == {
        ("gpu_1x_a10", "us-west-1"),
        ("gpu_8x_h100_sxm5", "us-east-1"),
        ("gpu_1x_h100_sxm5", "us-south-2"),
    }
    # Sold out is a reading too (False), never a missing offer.
    a100 = by_name(offers, "gpu_8x_a100")
    assert {o.location for o in a100} == ALL_REGIONS
    assert all(o.available is False for o in a100)
    assert all(isinstance(o.available, bool) for o in offers)
