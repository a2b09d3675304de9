"""Vultr over recorded plan lists (tests/providers/data/vultr, from ../shared/fixtures): GPU plans
with `hourly_cost`/`gpu_vram_gb`/`gpu_type` (plans_vcg.json, plans_metal_gpu.json) and libcloud's
2021 answers, which predate `hourly_cost`. The regional availability answers (`available_plans`)
are built from Vultr's API reference, for which no recording exists."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import responses
from responses import matchers

from gpuhunt._internal.errors import ProviderError
from gpuhunt._internal.models import AcceleratorVendor, CPUArchitecture, QueryFilter
from gpuhunt.providers import vultr
from gpuhunt.providers.vultr import VultrProvider

DATA = Path(__file__).parent / "data" / "vultr"
PLANS_URL = "https://api.vultr.com/v2/plans"
METAL_URL = "https://api.vultr.com/v2/plans-metal"
REGIONS_URL = "https://api.vultr.com/v2/regions"


def load(name: str) -> Any:
    return json.loads((DATA / name).read_text())


def query_of(call: Any) -> dict[str, list[str]]:
    return parse_qs(urlsplit(call.request.url).query)


VDM_PLAN = {
    "id": "vcg-a40-24c-120g-48vram",
    "vcpu_count": 24,
    "ram": 122880,
    "disk": 1400,
    "hourly_cost": 1.712,
    "type": "vdm",
    "locations": [],
    "deploy_ondemand": True,
    "gpu_brand": "NVIDIA",
}
CPU_PLAN = {
    "id": "vc2-2c-4gb",
    "vcpu_count": 2,
    "ram": 4096,
    "disk": 80,
    "hourly_cost": 0.027,
    "type": "vc2",
    "locations": ["fra", "ewr"],
}


def mock_plans(plans: list[Any], metal: list[Any]) -> None:
    responses.get(
        PLANS_URL,
        json={"plans": plans, "meta": {"total": len(plans), "links": {"next": "", "prev": ""}}},
    )
    responses.get(METAL_URL, json={"plans_metal": metal, "meta": {"links": {"next": ""}}})


@responses.activate
def test_requests_and_gpu_offers() -> None:
    responses.get(PLANS_URL, json=load("plans_vcg.json"))
    responses.get(METAL_URL, json=load("plans_metal_gpu.json"))

    offers = VultrProvider().get()

    plans_call, metal_call = responses.calls
    assert query_of(plans_call) == {"type": ["all"], "per_page": ["500"]}
    assert query_of(metal_call) == {"per_page": ["500"]}
    assert "Authorization" not in plans_call.request.headers
    assert [(o.instance_name, o.location, o.price) for o in offers] == [
        ("vcg-a100-1c-6g-4vram", "ewr", 0.123),
        ("vcg-a100-6c-60g-40vram", "ewr", 1.397),
        ("vcg-a100-12c-120g-80vram", "ewr", 2.397),
        ("vbm-256c-2048gb-8-mi300x-gpu", "ord", 17.52),
        ("vbm-112c-2048gb-8-h100-gpu", "sea", 23.92),
    ]
    fraction, forty, whole, mi300x, h100 = offers
    # a slice of an A100 is one GPU with the slice's memory
    assert (fraction.gpu_name, fraction.gpu_count, fraction.gpu_memory) == ("A100", 1, 4.0)
    assert (fraction.cpu, fraction.memory, fraction.disk_size) == (1, 6.0, 70.0)
    assert (forty.gpu_count, forty.gpu_memory) == (1, 40.0)
    assert (whole.gpu_count, whole.gpu_memory, whole.memory) == (1, 80.0, 120.0)
    assert (mi300x.gpu_name, mi300x.gpu_count, mi300x.gpu_memory) == ("MI300X", 8, 192.0)
    assert mi300x.gpu_vendor == AcceleratorVendor.AMD
    assert (mi300x.cpu, mi300x.memory, mi300x.disk_size) == (256, 2321924 / 1024, 3576.0)
    assert (h100.gpu_name, h100.gpu_count, h100.gpu_memory, h100.cpu) == ("H100", 8, 80.0, 224)
    assert h100.gpu_vendor == AcceleratorVendor.NVIDIA
    assert all(not o.spot and o.cpu_arch == CPUArchitecture.X86 for o in offers)


@responses.activate
def test_pages_are_followed_by_cursor() -> None:
    first = load("plans_vcg.json")
    first["meta"] = {"total": 4, "links": {"next": "bmV4dF9fdmMyLTJjLTRnYg==", "prev": ""}}
    responses.get(
        PLANS_URL,
        json=first,
        match=[matchers.query_param_matcher({"type": "all", "per_page": "500"})],
    )
    responses.get(
        PLANS_URL,
        json={"plans": [CPU_PLAN], "meta": {"total": 4, "links": {"next": "", "prev": "x"}}},
        match=[
            matchers.query_param_matcher(
                {"type": "all", "per_page": "500", "cursor": "bmV4dF9fdmMyLTJjLTRnYg=="}
            )
        ],
    )
    responses.get(METAL_URL, json=load("plans_metal_libcloud_2021.json"))

    offers = VultrProvider().get()

    assert len([c for c in responses.calls if c.request.url.startswith(PLANS_URL + "?")]) == 2
    assert {(o.instance_name, o.location) for o in offers if o.gpu_count == 0} == {
        ("vc2-2c-4gb", "fra"),
        ("vc2-2c-4gb", "ewr"),
    }
    assert len([o for o in offers if o.gpu_count]) == 3


@responses.activate
def test_plans_without_hourly_cost_are_malformed_and_counted() -> None:
    old_plans = load("plans_libcloud_2021.json")["plans"]
    mock_plans([*old_plans, CPU_PLAN], load("plans_metal_libcloud_2021.json")["plans_metal"])
    provider = VultrProvider()

    offers = provider.get()

    assert {o.instance_name for o in offers} == {"vc2-2c-4gb"}
    # 17 vc2/vhf plans and 4 bare-metal plans; the 4 dedicated-cloud (vdc) plans are a type
    # that is not offered at all
    assert provider.last_report.counts["malformed"] == 17 + 4
    assert provider.last_report.counts["unsupported_type"] == 4


@responses.activate
def test_cpu_and_arm_and_skipped_plans() -> None:
    gh200 = {
        "id": "vbm-72c-480gb-gh200-gpu",
        "cpu_threads": 72,
        "ram": 491520,
        "disk": 960,
        "hourly_cost": 2.99,
        "locations": ["ewr", ""],
    }
    l40 = {**gh200, "id": "vbm-64c-2048gb-8-l40-gpu", "cpu_threads": 128, "hourly_cost": 12.0}
    free = {**CPU_PLAN, "id": "vc2-1c-0.5gb-free", "hourly_cost": 0}
    preemptible_only = {**CPU_PLAN, "id": "vhf-1c-1gb", "type": "vhf", "deploy_ondemand": False}
    storage = {**CPU_PLAN, "id": "vx9-1c", "type": "vx9"}
    mock_plans([CPU_PLAN, free, preemptible_only, storage], [gh200, l40])
    provider = VultrProvider()

    offers = provider.get()

    assert [(o.instance_name, o.location) for o in offers] == [
        ("vc2-2c-4gb", "fra"),
        ("vc2-2c-4gb", "ewr"),
        ("vbm-72c-480gb-gh200-gpu", "ewr"),
        ("vbm-64c-2048gb-8-l40-gpu", "ewr"),
    ]
    cpu, _, superchip, l40s = offers
    assert (cpu.cpu, cpu.memory, cpu.gpu_count, cpu.gpu_vendor) == (2, 4.0, 0, None)
    assert (superchip.gpu_name, superchip.gpu_count, superchip.cpu_arch) == (
        "GH200",
        1,
        CPUArchitecture.ARM,
    )
    assert (l40s.gpu_name, l40s.gpu_count, l40s.gpu_memory) == ("L40S", 8, 48.0)
    assert provider.last_report.counts["unsupported_type"] == 1


@responses.activate
def test_unknown_gpu_is_kept_under_vultr_name_and_counted() -> None:
    plan = {
        **load("plans_vcg.json")["plans"][1],
        "id": "vcg-x9-8c-64g-32vram",
        "gpu_type": "NVIDIA_X9",
        "gpu_vram_gb": 32,
    }
    mock_plans([plan], [])
    provider = VultrProvider()

    [offer] = provider.get()

    assert (offer.gpu_name, offer.gpu_vendor, offer.gpu_count, offer.gpu_memory) == (
        "X9",
        AcceleratorVendor.NVIDIA,
        1,
        32.0,
    )
    assert provider.last_report.unknown_gpus.total() == 1


@responses.activate
def test_dedicated_gpu_locations_come_from_account_availability() -> None:
    mock_plans([CPU_PLAN, {**VDM_PLAN, "locations": ["ewr"]}], [])
    auth = matchers.header_matcher({"Authorization": "Bearer vultr-secret"})
    responses.get(
        REGIONS_URL,
        json={"regions": [{"id": "blr"}, {"id": "ord"}], "meta": {"links": {"next": ""}}},
        match=[auth],
    )
    responses.get(
        f"{REGIONS_URL}/blr/availability",
        json={"available_plans": [VDM_PLAN["id"], CPU_PLAN["id"]]},
        match=[auth, matchers.query_param_matcher({"type": "vdm"})],
    )
    responses.get(f"{REGIONS_URL}/ord/availability", json={"available_plans": []}, match=[auth])

    offers = VultrProvider(api_key="vultr-secret").get()

    [dedicated] = [o for o in offers if o.instance_name == VDM_PLAN["id"]]
    assert dedicated.location == "blr"  # the account's availability, not the public "ewr"
    assert (
        dedicated.gpu_name,
        dedicated.gpu_count,
        dedicated.gpu_memory,
        dedicated.cpu,
        dedicated.memory,
    ) == ("A40", 1, 48.0, 24, 120.0)
    assert {o.location for o in offers if o.instance_name == CPU_PLAN["id"]} == {"fra", "ewr"}
    plan_calls = [c for c in responses.calls if c.request.url.startswith(PLANS_URL)]
    assert all("Authorization" not in c.request.headers for c in plan_calls)


@responses.activate
def test_regions_limit_offers_and_availability_lookups() -> None:
    mock_plans([CPU_PLAN, VDM_PLAN], [])
    responses.get(f"{REGIONS_URL}/fra/availability", json={"available_plans": [VDM_PLAN["id"]]})

    offers = VultrProvider(api_key="k", regions=["fra"]).get()

    assert [(o.instance_name, o.location) for o in offers] == [
        ("vc2-2c-4gb", "fra"),
        ("vcg-a40-24c-120g-48vram", "fra"),
    ]
    assert not any(c.request.url.startswith(REGIONS_URL + "?") for c in responses.calls)


@responses.activate
def test_failed_availability_drops_only_dedicated_gpus(caplog: pytest.LogCaptureFixture) -> None:
    mock_plans([{**CPU_PLAN, "locations": ["blr"]}, {**VDM_PLAN, "locations": ["blr"]}], [])
    responses.get(f"{REGIONS_URL}/blr/availability", status=503)

    with caplog.at_level(logging.WARNING):
        offers = VultrProvider(api_key="vultr-secret", regions=["blr"]).get()

    assert {o.instance_name for o in offers} == {CPU_PLAN["id"]}
    assert "dedicated GPU availability unknown" in caplog.text
    assert "vultr-secret" not in caplog.text
    assert len([c for c in responses.calls if "availability" in c.request.url]) == 4


@responses.activate
def test_refused_key_names_the_variable() -> None:
    responses.get(f"{REGIONS_URL}/blr/availability", status=401)

    with pytest.raises(ProviderError, match="VULTR_API_KEY") as e:
        vultr.fetch_vdm_locations("vultr-secret", ["blr"])

    assert "vultr-secret" not in str(e.value)


@responses.activate
def test_filters_skip_work() -> None:
    mock_plans([CPU_PLAN, VDM_PLAN], [])

    assert VultrProvider(api_key="k").get(QueryFilter(spot=True)) == []
    assert len(responses.calls) == 0
    VultrProvider(api_key="k").get(QueryFilter(max_gpu_count=0))
    assert not any("regions" in c.request.url for c in responses.calls)


@pytest.mark.parametrize("status", [429, 500])
@responses.activate
def test_overload_is_retried_then_a_provider_error(status: int) -> None:
    responses.get(PLANS_URL, status=status)

    with pytest.raises(
        ProviderError, match=f"vultr: GET https://api.vultr.com/v2/plans returned HTTP {status}"
    ):
        VultrProvider().get()

    assert len(responses.calls) == 4


@responses.activate
def test_invalid_json_and_wrong_shape_are_provider_errors() -> None:
    responses.get(PLANS_URL, body="not json")
    with pytest.raises(ProviderError, match="invalid JSON"):
        VultrProvider().get()


@responses.activate
def test_wrong_shape_names_the_field() -> None:
    responses.get(PLANS_URL, json={"plans": {"vc2-1c-1gb": {}}})
    with pytest.raises(ProviderError, match="'plans'"):
        VultrProvider().get()


def test_from_env_and_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VULTR_API_KEY", raising=False)
    assert VultrProvider.from_env().api_key is None
    monkeypatch.setenv("VULTR_API_KEY", "vultr-secret")
    provider = VultrProvider.from_env()
    assert provider.api_key == "vultr-secret"
    assert "vultr-secret" not in repr(provider)


def test_known_dedicated_plans_and_id_fallback() -> None:
    b200 = {**VDM_PLAN, "id": "vcg-b200-248c-2826g-1536vram", "locations": ["ewr"]}
    h200 = {**VDM_PLAN, "id": "vcg-h200-192c-2048g-1128vram", "locations": ["ewr"]}

    offers = vultr.parse_offers([b200, h200], [])

    assert [(o.gpu_name, o.gpu_count, o.gpu_memory) for o in offers] == [
        ("B200", 8, 180.0),
        ("H200", 8, 141.0),
    ]
