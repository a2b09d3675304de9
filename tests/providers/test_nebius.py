"""Nebius provider. No recorded Nebius response exists: the data in tests/providers/data/nebius/
was built from Nebius's documentation and gpuhunt 0.1.34's facts (see its README). The tests
drive the provider's real orchestration through the SDK boundary (`NebiusClient`); the SDK
adapter's message conversions are checked against the real SDK when it is installed."""

from __future__ import annotations

import copy
import sys
import types
from typing import Any

import pytest
from scripts.replay import replay_nebius
from scripts.replay.replay_nebius import FakeNebiusClient

from gpuhunt._internal.errors import MissingCredsError, ProviderError
from gpuhunt._internal.gpu_names import canonical_gpu_name
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem, CPUArchitecture
from gpuhunt.providers import nebius
from gpuhunt.providers.nebius import (
    NebiusCredentials,
    NebiusProvider,
    ParseReport,
    SDKClient,
    fetch_snapshot,
    parse_snapshot,
)

TOKEN = "v1.secret-token-value"
ALL_ENV = (
    nebius.TOKEN_ENV,
    nebius.SERVICE_ACCOUNT_ENV,
    nebius.PUBLIC_KEY_ENV,
    nebius.PRIVATE_KEY_FILE_ENV,
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ALL_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def offers() -> list[CatalogItem]:
    return replay_nebius.collect()


def find(offers: list[CatalogItem], name: str, location: str, spot: bool) -> CatalogItem:
    found = [o for o in offers if (o.instance_name, o.location, o.spot) == (name, location, spot)]
    assert len(found) == 1, (name, location, spot, found)
    return found[0]


def provider_with(client: Any) -> NebiusProvider:
    return NebiusProvider(NebiusCredentials(access_token=TOKEN), client_factory=lambda _: client)


def snapshot() -> dict[str, Any]:
    return fetch_snapshot(FakeNebiusClient(NebiusCredentials(access_token=TOKEN)))


# --- offers ----------------------------------------------------------------------------------


def test_replay_facts(offers: list[CatalogItem]) -> None:
    assert replay_nebius.RECORDED_AT == "2026-11-29"
    assert len(offers) == 20
    assert [o.price for o in offers] == sorted(o.price for o in offers)
    assert {o.location for o in offers} == {"eu-north1", "eu-west1", "us-central1"}
    assert {o.gpu_name for o in offers} == {None, "H100", "H200", "B200", "L40S"}
    assert all(o.provider == "nebius" and o.disk_size is None for o in offers)


def test_gpu_offer(offers: list[CatalogItem]) -> None:
    h100 = find(offers, "gpu-h100-sxm 1gpu-16vcpu-200gb", "eu-north1", spot=False)
    assert (h100.price, h100.cpu, h100.memory) == (2.95, 16, 200.0)
    assert (h100.gpu_count, h100.gpu_name, h100.gpu_memory) == (1, "H100", 80.0)
    assert h100.gpu_vendor == AcceleratorVendor.NVIDIA and h100.cpu_arch == CPUArchitecture.X86
    assert h100.provider_data == {"fabrics": [], "is_preemptible_flat_rate": False}
    assert find(offers, "gpu-h100-sxm 1gpu-16vcpu-200gb", "eu-north1", spot=True).price == 1.25
    h200 = find(offers, "gpu-h200-sxm 1gpu-16vcpu-200gb", "eu-west1", spot=False)
    assert (h200.price, h200.gpu_memory) == (3.5, 141.0)
    b200 = find(offers, "gpu-b200-sxm 8gpu-160vcpu-1792gb", "us-central1", spot=False)
    assert (b200.price, b200.cpu, b200.memory, b200.gpu_count) == (44.0, 160, 1792.0, 8)


def test_preemptible_only_where_allowed(offers: list[CatalogItem]) -> None:
    spot = {(o.instance_name.split()[0], o.location) for o in offers if o.spot}
    assert spot == {
        ("gpu-h100-sxm", "eu-north1"),
        ("gpu-l40s-a", "eu-north1"),
        ("gpu-h200-sxm", "eu-west1"),
    }


def test_fabrics(offers: list[CatalogItem]) -> None:
    h100x8 = find(offers, "gpu-h100-sxm 8gpu-128vcpu-1600gb", "eu-north1", spot=False)
    assert h100x8.provider_data["fabrics"] == ["fabric-2", "fabric-3", "fabric-4", "fabric-6"]
    h200x8 = find(offers, "gpu-h200-sxm 8gpu-128vcpu-1600gb", "eu-west1", spot=True)
    assert h200x8.provider_data["fabrics"] == ["fabric-5"]
    b200x8 = find(offers, "gpu-b200-sxm 8gpu-160vcpu-1792gb", "us-central1", spot=False)
    assert b200x8.provider_data["fabrics"] == ["us-central1-b"]
    for offer in offers:
        assert isinstance(offer.provider_data["fabrics"], list)
        if offer.gpu_count < 8:
            assert offer.provider_data["fabrics"] == [], offer


def test_preemptible_flat_rate(offers: list[CatalogItem]) -> None:
    l40s = find(offers, "gpu-l40s-a 1gpu-8vcpu-32gb", "eu-north1", spot=True)
    assert l40s.provider_data["is_preemptible_flat_rate"] is True
    assert l40s.price == find(offers, "gpu-l40s-a 1gpu-8vcpu-32gb", "eu-north1", False).price
    assert not find(offers, "gpu-l40s-a 1gpu-8vcpu-32gb", "eu-north1", False).provider_data[
        "is_preemptible_flat_rate"
    ]
    assert not find(offers, "gpu-h200-sxm 1gpu-16vcpu-200gb", "eu-west1", True).provider_data[
        "is_preemptible_flat_rate"
    ]


def test_cpu_offers(offers: list[CatalogItem]) -> None:
    cpu = find(offers, "cpu-d3 4vcpu-16gb", "us-central1", spot=False)
    assert (cpu.price, cpu.cpu, cpu.memory, cpu.gpu_count, cpu.gpu_name) == (
        pytest.approx(4 * 0.012 + 16 * 0.0032),
        4,
        16.0,
        0,
        None,
    )
    assert cpu.gpu_vendor is None and cpu.gpu_memory is None


# --- the RPCs made ---------------------------------------------------------------------------


def test_rpcs_made() -> None:
    client = FakeNebiusClient(NebiusCredentials(access_token=TOKEN))
    provider_with(client).get()
    assert client.closed
    assert client.calls[:2] == [
        ("list_tenants", ""),
        ("list_projects", "tenant-e00gpuhunt0replay", ""),
    ]
    platform_calls = [c for c in client.calls if c[0] == "list_platforms"]
    # One project per region (the first by id in eu-north1); the eu-north1 list has two pages.
    assert platform_calls == [
        ("list_platforms", "project-e00northa", ""),
        ("list_platforms", "project-e00northa", "page-2"),
        ("list_platforms", "project-e01west", ""),
        ("list_platforms", "project-u00central", ""),
    ]
    estimates = [c[1:] for c in client.calls if c[0] == "estimate"]
    assert ("project-e00northa", "gpu-h100-sxm", "8gpu-128vcpu-1600gb", True) in estimates
    assert ("project-e00northa", "cpu-d3", "2vcpu-8gb", True) not in estimates
    assert not [e for e in estimates if e[1] == "gpu-b200-sxm" and e[3]]
    assert len(estimates) == 20


def test_snapshot_is_json_and_parses_alone() -> None:
    import json

    snap = json.loads(json.dumps(snapshot()))
    assert [r["region"] for r in snap["regions"]] == ["eu-north1", "eu-west1", "us-central1"]
    assert parse_snapshot(snap) == replay_nebius.collect()


def test_client_closed_and_error_wrapped_on_failure() -> None:
    class Failing(FakeNebiusClient):
        def estimate(self, *args: Any) -> dict[str, Any]:
            raise LookupError("boom")

    client = Failing(NebiusCredentials(access_token=TOKEN))
    with pytest.raises(ProviderError, match="nebius: estimate price failed: LookupError"):
        provider_with(client).get()
    assert client.closed


def test_unauthenticated_names_the_credentials_and_hides_the_token() -> None:
    class Unauthenticated(Exception):
        status = types.SimpleNamespace(code=types.SimpleNamespace(name="UNAUTHENTICATED"))

    class Refusing(FakeNebiusClient):
        def list_tenants(self, page_token: str) -> dict[str, Any]:
            raise Unauthenticated(f"bad token {TOKEN}")

    with pytest.raises(ProviderError) as e:
        provider_with(Refusing(NebiusCredentials(access_token=TOKEN))).get()
    assert "UNAUTHENTICATED" in str(e.value) and nebius.TOKEN_ENV in str(e.value)
    assert TOKEN not in str(e.value)


def test_more_than_one_tenant() -> None:
    client = FakeNebiusClient(NebiusCredentials(access_token=TOKEN))
    client.tenants = {"items": client.tenants["items"] * 2, "next_page_token": ""}
    with pytest.raises(ProviderError, match="1 tenant, found 2"):
        provider_with(client).get()


def test_repeated_page_token() -> None:
    client = FakeNebiusClient(NebiusCredentials(access_token=TOKEN))
    client.projects = {**client.projects, "next_page_token": "again"}
    with pytest.raises(ProviderError, match="repeats a page token"):
        provider_with(client).get()


def test_wrong_shape() -> None:
    client = FakeNebiusClient(NebiusCredentials(access_token=TOKEN))
    client.tenants = {"tenants": []}  # type: ignore[assignment]
    with pytest.raises(ProviderError, match="found 0"):
        provider_with(client).get()
    client.tenants = {"items": "nope"}
    with pytest.raises(ProviderError, match="no 'items' list"):
        provider_with(client).get()
    with pytest.raises(ProviderError, match="'regions'"):
        parse_snapshot({"zones": []})


# --- parsing edge cases ----------------------------------------------------------------------


def one_region(platforms: list[dict[str, Any]], estimates: list[dict[str, Any]]) -> dict:
    return {"regions": [{"region": "eu-north1", "platforms": platforms, "estimates": estimates}]}


def price(platform: str, preset: str, cost: str, preemptible: bool = False) -> dict[str, Any]:
    response = {"hourly_cost": {"general": {"total": {"cost": cost}}}}
    return {
        "platform": platform,
        "preset": preset,
        "preemptible": preemptible,
        "response": response,
    }


def test_malformed_records_are_skipped_and_counted() -> None:
    snap = snapshot()
    north = snap["regions"][0]
    h100 = north["platforms"][0]
    h100["spec"]["presets"].append({"name": "1gpu-broken", "resources": {"gpu_count": 1}})
    north["platforms"].append({"metadata": {"name": "gpu-x"}})  # no presets
    for e in north["estimates"]:
        if e["preset"] == "1gpu-8vcpu-32gb" and e["preemptible"]:
            e["response"] = {"hourly_cost": {}}  # no general cost
    report = ParseReport()
    items = parse_snapshot(snap, report)
    assert report.skipped_records == 3
    assert len(items) == 19  # only the preemptible L40S offer is lost
    assert not report.unknown_gpus


def test_int64_fields_as_strings() -> None:
    platform = {
        "metadata": {"name": "gpu-h200-sxm"},
        "spec": {
            "gpu_memory_gigabytes": "141",
            "presets": [
                {
                    "name": "1gpu-16vcpu-200gb",
                    "resources": {"vcpu_count": "16", "memory_gibibytes": "200", "gpu_count": "1"},
                }
            ],
        },
        "status": {"allowed_for_preemptibles": False},
    }
    (item,) = parse_snapshot(
        one_region([platform], [price("gpu-h200-sxm", "1gpu-16vcpu-200gb", "3.5")])
    )
    assert (item.cpu, item.memory, item.gpu_count, item.gpu_memory, item.price) == (
        16,
        200.0,
        1,
        141.0,
        3.5,
    )


def test_rtx6000_platform_is_rtx_pro_6000() -> None:
    platform = {
        "metadata": {"name": "gpu-rtx6000"},
        "spec": {
            "gpu_memory_gigabytes": 96,
            "presets": [
                {
                    "name": "1gpu-8vcpu-64gb",
                    "resources": {"vcpu_count": 8, "memory_gibibytes": 64, "gpu_count": 1},
                }
            ],
        },
    }
    report = ParseReport()
    (item,) = parse_snapshot(
        one_region([platform], [price("gpu-rtx6000", "1gpu-8vcpu-64gb", "1.2")]), report
    )
    assert (item.gpu_name, item.gpu_memory) == ("RTXPRO6000", 96.0)
    assert not report.unknown_gpus


def test_unknown_gpu_is_kept_warned_and_counted(caplog: pytest.LogCaptureFixture) -> None:
    platform = {
        "metadata": {"name": "gpu-x900-sxm"},
        "spec": {
            "gpu_memory_gigabytes": 300,
            "presets": [
                {
                    "name": "1gpu-32vcpu-400gb",
                    "resources": {"vcpu_count": 32, "memory_gibibytes": 400, "gpu_count": 1},
                },
                {
                    "name": "8gpu-256vcpu-3200gb",
                    "resources": {"vcpu_count": 256, "memory_gibibytes": 3200, "gpu_count": 8},
                },
            ],
        },
    }
    estimates = [
        price("gpu-x900-sxm", "1gpu-32vcpu-400gb", "9.5"),
        price("gpu-x900-sxm", "8gpu-256vcpu-3200gb", "76"),
    ]
    report = ParseReport()
    items = parse_snapshot(one_region([platform], estimates), report)
    assert [(o.gpu_name, o.gpu_count, o.gpu_memory, o.gpu_vendor) for o in items] == [
        ("x900", 1, 300.0, AcceleratorVendor.NVIDIA),
        ("x900", 8, 300.0, AcceleratorVendor.NVIDIA),
    ]
    assert report.unknown_gpus == {"x900": 1}
    assert "x900" in caplog.text


def test_grace_superchip_is_arm() -> None:
    platform = {
        "metadata": {"name": "gpu-gb200-nvl72"},
        "spec": {
            "gpu_memory_gigabytes": 186,
            "presets": [
                {
                    "name": "4gpu-128vcpu-768gb",
                    "resources": {"vcpu_count": 128, "memory_gibibytes": 768, "gpu_count": 4},
                }
            ],
        },
    }
    (item,) = parse_snapshot(
        one_region([platform], [price("gpu-gb200-nvl72", "4gpu-128vcpu-768gb", "40")])
    )
    assert (item.gpu_name, item.cpu_arch) == ("GB200", CPUArchitecture.ARM)


def test_every_nebius_gpu_name_is_canonical() -> None:
    """Lists any GPU platform in the Nebius data whose GPU the accelerator tables do not know."""
    unresolved = []
    for region in snapshot()["regions"]:
        for platform in region["platforms"]:
            match = nebius._GPU_PLATFORM.match(platform["metadata"]["name"])
            if match:
                token = match.group(1)
                if (nebius.GPU_NAME_OVERRIDES.get(token) or canonical_gpu_name(token)) is None:
                    unresolved.append(platform["metadata"]["name"])
    assert unresolved == []


# --- credentials and the SDK adapter ---------------------------------------------------------


def test_missing_credentials_name_the_variables() -> None:
    with pytest.raises(MissingCredsError, match=nebius.TOKEN_ENV):
        NebiusProvider.from_env()


def test_partial_service_account_names_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(nebius.SERVICE_ACCOUNT_ENV, "serviceaccount-e00abc")
    with pytest.raises(MissingCredsError) as e:
        NebiusProvider.from_env()
    assert nebius.PUBLIC_KEY_ENV in str(e.value) and nebius.PRIVATE_KEY_FILE_ENV in str(e.value)
    assert nebius.SERVICE_ACCOUNT_ENV not in str(e.value).split("(")[0]


def test_credentials_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(nebius.SERVICE_ACCOUNT_ENV, "serviceaccount-e00abc")
    monkeypatch.setenv(nebius.PUBLIC_KEY_ENV, "publickey-e00def")
    monkeypatch.setenv(nebius.PRIVATE_KEY_FILE_ENV, "/secrets/key.pem")
    creds = NebiusProvider.from_env().credentials
    assert creds == NebiusCredentials(
        service_account_id="serviceaccount-e00abc",
        public_key_id="publickey-e00def",
        private_key_file="/secrets/key.pem",
    )
    monkeypatch.setenv(nebius.TOKEN_ENV, TOKEN)  # the token wins
    assert NebiusProvider.from_env().credentials == NebiusCredentials(access_token=TOKEN)


def test_repr_hides_the_token() -> None:
    provider = NebiusProvider(NebiusCredentials(access_token=TOKEN))
    assert TOKEN not in repr(provider) and TOKEN not in repr(provider.credentials)
    assert "***" in repr(provider)


def fake_sdk_modules(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Install a stand-in `nebius.sdk` module recording the `SDK(...)` keyword arguments."""
    made: list[dict[str, Any]] = []

    class SDK:
        def __init__(self, **kwargs: Any) -> None:
            made.append(kwargs)

        def sync_close(self, timeout: float | None = None) -> None:
            made.append({"closed": timeout})

    package = types.ModuleType("nebius")
    module = types.ModuleType("nebius.sdk")
    module.SDK = SDK  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "nebius", package)
    monkeypatch.setitem(sys.modules, "nebius.sdk", module)
    return made


def test_sdk_client_credentials_and_user_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    made = fake_sdk_modules(monkeypatch)
    SDKClient(NebiusCredentials(access_token=TOKEN)).close()
    SDKClient(
        NebiusCredentials(
            service_account_id="serviceaccount-e00abc",
            public_key_id="publickey-e00def",
            private_key_file="/secrets/key.pem",
        )
    )
    from gpuhunt._version import __version__

    assert made[0] == {"user_agent_prefix": f"gpuhunt/{__version__}", "credentials": TOKEN}
    assert made[1] == {"closed": nebius.RPC_TIMEOUT}
    assert made[2]["service_account_id"] == "serviceaccount-e00abc"
    assert made[2]["service_account_public_key_id"] == "publickey-e00def"
    assert made[2]["service_account_private_key_file_name"] == "/secrets/key.pem"
    assert "credentials" not in made[2]


def test_sdk_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nebius", None)
    monkeypatch.setitem(sys.modules, "nebius.sdk", None)
    with pytest.raises(
        ProviderError, match=r"not installed \(nebius\.sdk\): pip install 'gpuhunt\[nebius\]'$"
    ):
        NebiusProvider(NebiusCredentials(access_token=TOKEN)).get()


@pytest.mark.slow
def test_sdk_message_conversions() -> None:
    pytest.importorskip("nebius.api.nebius.compute.v1")
    from nebius.api.nebius.billing.v1alpha1 import (
        CostBreakdown,
        EstimateResponse,
        GeneralTotalCost,
        ResourceGroupCost,
    )
    from nebius.api.nebius.common.v1 import ResourceMetadata
    from nebius.api.nebius.compute.v1 import (
        Platform,
        PlatformSpec,
        PlatformStatus,
        Preset,
        PresetResources,
    )

    recorded = copy.deepcopy(
        replay_nebius.load("platforms.json")["project-e00northa"][0]["items"][0]
    )
    spec = recorded["spec"]
    message = Platform(
        metadata=ResourceMetadata(**recorded["metadata"]),
        spec=PlatformSpec(
            human_readable_name=spec["human_readable_name"],
            gpu_memory_gigabytes=spec["gpu_memory_gigabytes"],
            presets=[
                Preset(
                    name=p["name"],
                    resources=PresetResources(**p["resources"]),
                    allow_gpu_clustering=p["allow_gpu_clustering"],
                )
                for p in spec["presets"]
            ],
        ),
        status=PlatformStatus(**recorded["status"]),
    )
    assert nebius.platform_to_dict(message) == recorded

    response = EstimateResponse(
        hourly_cost=ResourceGroupCost(general=GeneralTotalCost(total=CostBreakdown(cost="2.95")))
    )
    assert nebius.estimate_to_dict(response) == {
        "hourly_cost": {"general": {"total": {"cost": "2.95"}}}
    }
    assert nebius.estimate_to_dict(EstimateResponse()) == {"hourly_cost": {}}

    request = nebius.estimate_request(
        "project-e00northa", "gpu-h100-sxm", "1gpu-16vcpu-200gb", True
    )
    instance = request.resource_spec.compute_instance_spec
    assert instance.metadata.parent_id == "project-e00northa"
    assert (instance.spec.resources.platform, instance.spec.resources.preset) == (
        "gpu-h100-sxm",
        "1gpu-16vcpu-200gb",
    )
    assert instance.spec.check_presence("preemptible")
    on_demand = nebius.estimate_request("p", "cpu-d3", "2vcpu-8gb", False)
    assert not on_demand.resource_spec.compute_instance_spec.spec.check_presence("preemptible")


def test_sdk_client_rpcs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each RPC method builds the real request message and converts the real response."""
    pytest.importorskip("nebius.api.nebius.compute.v1")
    import nebius.api.nebius.billing.v1alpha1 as billing
    import nebius.api.nebius.compute.v1 as compute
    import nebius.api.nebius.iam.v1 as iam
    from nebius.api.nebius.common.v1 import ResourceMetadata

    sent: list[tuple[str, Any, dict[str, Any]]] = []

    def service(name: str, response: Any) -> type:
        class Service:
            def __init__(self, sdk: Any) -> None:
                assert sdk == "sdk"

            def _call(self, request: Any, **kwargs: Any) -> Any:
                sent.append((name, request, kwargs))
                return types.SimpleNamespace(wait=lambda: response)

            list = _call
            estimate = _call

        return Service

    tenant = iam.Container(metadata=ResourceMetadata(id="tenant-e00a", name="t"))
    project = iam.Container(
        metadata=ResourceMetadata(id="project-e00b", name="p", parent_id="tenant-e00a"),
        status=iam.ContainerStatus(region="eu-north1"),
    )
    monkeypatch.setattr(
        iam, "TenantServiceClient", service("tenants", iam.ListTenantsResponse(items=[tenant]))
    )
    monkeypatch.setattr(
        iam,
        "ProjectServiceClient",
        service("projects", iam.ListProjectsResponse(items=[project], next_page_token="p2")),
    )
    platform = compute.Platform(metadata=ResourceMetadata(id="cp", name="cpu-d3"))
    monkeypatch.setattr(
        compute,
        "PlatformServiceClient",
        service("platforms", compute.ListPlatformsResponse(items=[platform])),
    )
    cost = billing.ResourceGroupCost(
        general=billing.GeneralTotalCost(total=billing.CostBreakdown(cost="0.0496"))
    )
    monkeypatch.setattr(
        billing,
        "CalculatorServiceClient",
        service("estimate", billing.EstimateResponse(hourly_cost=cost)),
    )
    client = object.__new__(SDKClient)
    client._sdk = "sdk"

    assert client.list_tenants("") == {
        "items": [{"metadata": {"id": "tenant-e00a", "name": "t", "parent_id": ""}}],
        "next_page_token": "",
    }
    assert client.list_projects("tenant-e00a", "p1") == {
        "items": [
            {
                "metadata": {"id": "project-e00b", "name": "p", "parent_id": "tenant-e00a"},
                "status": {"region": "eu-north1"},
            }
        ],
        "next_page_token": "p2",
    }
    listed = client.list_platforms("project-e00b", "")
    assert listed["items"][0]["metadata"]["name"] == "cpu-d3"
    assert client.estimate("project-e00b", "cpu-d3", "2vcpu-8gb", False) == {
        "hourly_cost": {"general": {"total": {"cost": "0.0496"}}}
    }
    names = [name for name, _, _ in sent]
    assert names == ["tenants", "projects", "platforms", "estimate"]
    assert all(kwargs == {"per_retry_timeout": nebius.RPC_TIMEOUT} for _, _, kwargs in sent)
    assert (sent[1][1].parent_id, sent[1][1].page_token) == ("tenant-e00a", "p1")
    assert sent[2][1].parent_id == "project-e00b"
    spec = sent[3][1].resource_spec.compute_instance_spec
    assert (spec.metadata.parent_id, spec.spec.resources.preset) == ("project-e00b", "2vcpu-8gb")
