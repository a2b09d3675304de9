"""Nebius AI Cloud: VM platforms and presets with on-demand and preemptible hourly prices.

Nebius exposes its API over gRPC only; gpuhunt reaches it through the `nebius` SDK (`pip install
nebius`; meant to become the `nebius` extra), imported only when a collection runs, so the
module, its parsing and its tests work without it.
The module is in three layers:

- `SDKClient`, the only code that touches the SDK: one method per RPC (list tenants, list
  projects, list platforms, estimate a price), each returning the message as a plain dict with
  the API's field names (`metadata.name`, `spec.presets[].resources.vcpu_count`, ...). SDK
  failures become `ProviderError`s.
- `fetch_snapshot(client)`: which RPCs to make (pagination, one project per region, an estimate
  for every preset on demand and, where the platform allows it, preemptible). It returns a
  JSON-able snapshot: per region, the platforms and the estimates.
- `parse_snapshot(snapshot)`: pure; turns a snapshot into `CatalogItem`s.

Tests drive `fetch_snapshot` with a fake client serving recorded-format dicts, so neither the
SDK nor the network is needed to test anything but the SDK adapter itself.

Credentials (`NebiusProvider.from_env()`), in this order:

- `NEBIUS_ACCESS_TOKEN`: an IAM access token, e.g. from `nebius iam get-access-token`
  (short-lived: fine by hand, not for a nightly job);
- a service account key: `NEBIUS_SERVICE_ACCOUNT_ID`, `NEBIUS_PUBLIC_KEY_ID` and
  `NEBIUS_PRIVATE_KEY_FILE` (path to the PEM private key of the authorized key).

The account must belong to exactly one tenant; prices are estimated in one of its projects per
region (the first by id when a region has several), so the regions in the catalog are those
where the tenant has a project.

Offers: one per (region, platform, preset, on-demand/preemptible). `instance_name` is
`"{platform} {preset}"` (e.g. `"gpu-h100-sxm 8gpu-128vcpu-1600gb"`), which orchestrators split
back into the platform and the preset to launch. `cpu` and `memory` (GiB) come from the preset,
the price from the billing calculator's hourly estimate for that exact spec. GPU platforms are
named `gpu-<model>[-variant]`; the model goes through the shared alias table (`rtx6000` is the
RTX PRO 6000 Blackwell at Nebius) and the GPU memory comes from the platform (`spec.
gpu_memory_gigabytes`). A model the tables do not know is kept under Nebius's name (all Nebius
GPUs are NVIDIA), warned about and counted in `NebiusProvider.last_report`; a preset or an
estimate with missing fields is skipped and counted there too. Grace superchip platforms
(GB200, GB300) are `cpu_arch=arm`.

`provider_data`: `fabrics` lists the InfiniBand fabrics a preset that allows GPU clustering can
join in that region (Nebius's documented fabric table, `INFINIBAND_FABRICS`; empty otherwise);
`is_preemptible_flat_rate` is true for preemptible L40S offers, which Nebius bills at the
regular flat rate rather than a spot price.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

from gpuhunt._internal.accelerators import accelerators_named, is_nvidia_superchip
from gpuhunt._internal.errors import MissingCredsError, ProviderError
from gpuhunt._internal.gpu_names import resolve_gpu
from gpuhunt._internal.models import (
    AcceleratorVendor,
    CatalogItem,
    CPUArchitecture,
)
from gpuhunt._internal.registry import sdk_imports
from gpuhunt._version import __version__
from gpuhunt.providers import _report
from gpuhunt.providers.base import Ask, Collects, OfflineProvider

logger = logging.getLogger(__name__)

TOKEN_ENV = "NEBIUS_ACCESS_TOKEN"
SERVICE_ACCOUNT_ENV = "NEBIUS_SERVICE_ACCOUNT_ID"
PUBLIC_KEY_ENV = "NEBIUS_PUBLIC_KEY_ID"
PRIVATE_KEY_FILE_ENV = "NEBIUS_PRIVATE_KEY_FILE"
CREDENTIALS_HINT = (
    f"{TOKEN_ENV}, or {SERVICE_ACCOUNT_ENV}, {PUBLIC_KEY_ENV} and {PRIVATE_KEY_FILE_ENV}"
)
# Seconds per RPC try (the SDK retries within its own policy).
RPC_TIMEOUT = 10.0
PAGE_SIZE = 100
# Platform GPU model tokens whose canonical name the alias table cannot derive.
# https://docs.nebius.com/compute/virtual-machines/types
GPU_NAME_OVERRIDES = {"rtx6000": "RTXPRO6000"}
# "NVIDIA L40S preemptible instances are excluded from spot pricing and billed at the current
# flat rate" (https://nebius.com/prices).
PREEMPTIBLE_FLAT_RATE_GPUS = frozenset({"L40S"})
# InfiniBand fabrics by (platform, region): https://docs.nebius.com/compute/clusters/gpu#fabrics
INFINIBAND_FABRICS: dict[tuple[str, str], tuple[str, ...]] = {
    ("gpu-h100-sxm", "eu-north1"): ("fabric-2", "fabric-3", "fabric-4", "fabric-6"),
    ("gpu-h200-sxm", "eu-north1"): ("fabric-7",),
    ("gpu-h200-sxm", "eu-west1"): ("fabric-5",),
    ("gpu-h200-sxm", "eu-north2"): ("eu-north2-a",),
    ("gpu-h200-sxm", "us-central1"): ("us-central1-a",),
    ("gpu-b200-sxm", "us-central1"): ("us-central1-b",),
    ("gpu-b200-sxm-a", "me-west1"): ("me-west1-a",),
    ("gpu-b300-sxm", "uk-south1"): ("uk-south1-a",),
}

_GPU_PLATFORM = re.compile(r"^gpu-([a-z0-9]+)")


# ---------------------------------------------------------------------------------------------
# Credentials


@dataclass(frozen=True)
class NebiusCredentials:
    """An access token, or a service account's authorized key (the key stays in its file)."""

    access_token: str | None = None
    service_account_id: str | None = None
    public_key_id: str | None = None
    private_key_file: str | None = None

    def __post_init__(self) -> None:
        key = (self.service_account_id, self.public_key_id, self.private_key_file)
        if not self.access_token and not all(key):
            raise MissingCredsError(f"Set {CREDENTIALS_HINT}")

    def __repr__(self) -> str:
        if self.access_token:
            return "NebiusCredentials(access_token=***)"
        return (
            f"NebiusCredentials(service_account_id={self.service_account_id!r}, "
            f"public_key_id={self.public_key_id!r}, private_key_file={self.private_key_file!r})"
        )

    @classmethod
    def from_env(cls) -> NebiusCredentials:
        token = os.getenv(TOKEN_ENV)
        if token:
            return cls(access_token=token)
        names = (SERVICE_ACCOUNT_ENV, PUBLIC_KEY_ENV, PRIVATE_KEY_FILE_ENV)
        values = {name: os.getenv(name) for name in names}
        missing = [name for name, value in values.items() if not value]
        if len(missing) == len(names):
            raise MissingCredsError(
                f"Set the {TOKEN_ENV} environment variable (or {SERVICE_ACCOUNT_ENV}, "
                f"{PUBLIC_KEY_ENV} and {PRIVATE_KEY_FILE_ENV} for a service account)"
            )
        if missing:
            raise MissingCredsError(
                f"Set the {', '.join(missing)} environment variable(s) for the Nebius "
                f"service account (or set {TOKEN_ENV})"
            )
        return cls(
            service_account_id=values[SERVICE_ACCOUNT_ENV],
            public_key_id=values[PUBLIC_KEY_ENV],
            private_key_file=values[PRIVATE_KEY_FILE_ENV],
        )


# ---------------------------------------------------------------------------------------------
# The RPC boundary


class NebiusClient(Protocol):
    """The RPCs gpuhunt makes, answered as dicts with the API's (snake_case) field names."""

    def list_tenants(self, page_token: str) -> dict[str, Any]: ...

    def list_projects(self, tenant_id: str, page_token: str) -> dict[str, Any]: ...

    def list_platforms(self, project_id: str, page_token: str) -> dict[str, Any]: ...

    def estimate(
        self, project_id: str, platform: str, preset: str, preemptible: bool
    ) -> dict[str, Any]: ...

    def close(self) -> None: ...


class SDKClient:
    """`NebiusClient` over the `nebius` SDK (gRPC). Construct it only to collect."""

    def __init__(self, credentials: NebiusCredentials) -> None:
        with sdk_imports(NebiusProvider.NAME):
            from nebius.sdk import SDK
        kwargs: dict[str, Any] = {"user_agent_prefix": f"gpuhunt/{__version__}"}
        if credentials.access_token:
            kwargs["credentials"] = credentials.access_token
        else:
            kwargs["service_account_id"] = credentials.service_account_id
            kwargs["service_account_public_key_id"] = credentials.public_key_id
            kwargs["service_account_private_key_file_name"] = credentials.private_key_file
        self._sdk = _call_sdk("connect", lambda: SDK(**kwargs))

    def _wait(self, what: str, request: Any) -> Any:
        return _call_sdk(what, request.wait)

    def _page(
        self, what: str, client: Any, request: Any, item: Callable[[Any], Any]
    ) -> dict[str, Any]:
        """One page of a listing: `client`'s `list(request)`, each item as `item` makes it."""
        response = self._wait(what, client(self._sdk).list(request, per_retry_timeout=RPC_TIMEOUT))
        return {
            "items": [item(i) for i in response.items],
            "next_page_token": response.next_page_token or "",
        }

    def list_tenants(self, page_token: str) -> dict[str, Any]:
        from nebius.api.nebius.iam.v1 import ListTenantsRequest, TenantServiceClient

        request = ListTenantsRequest(page_size=PAGE_SIZE, page_token=page_token)
        return self._page(
            "list tenants",
            TenantServiceClient,
            request,
            lambda t: {"metadata": _metadata(t.metadata)},
        )

    def list_projects(self, tenant_id: str, page_token: str) -> dict[str, Any]:
        from nebius.api.nebius.iam.v1 import ListProjectsRequest, ProjectServiceClient

        request = ListProjectsRequest(
            parent_id=tenant_id, page_size=PAGE_SIZE, page_token=page_token
        )
        return self._page(
            "list projects",
            ProjectServiceClient,
            request,
            lambda p: {"metadata": _metadata(p.metadata), "status": {"region": p.status.region}},
        )

    def list_platforms(self, project_id: str, page_token: str) -> dict[str, Any]:
        from nebius.api.nebius.compute.v1 import ListPlatformsRequest, PlatformServiceClient

        request = ListPlatformsRequest(
            parent_id=project_id, page_size=PAGE_SIZE, page_token=page_token
        )
        return self._page("list platforms", PlatformServiceClient, request, platform_to_dict)

    def estimate(
        self, project_id: str, platform: str, preset: str, preemptible: bool
    ) -> dict[str, Any]:
        from nebius.api.nebius.billing.v1alpha1 import CalculatorServiceClient

        response = self._wait(
            "estimate price",
            CalculatorServiceClient(self._sdk).estimate(
                estimate_request(project_id, platform, preset, preemptible),
                per_retry_timeout=RPC_TIMEOUT,
            ),
        )
        return estimate_to_dict(response)

    def close(self) -> None:
        try:
            self._sdk.sync_close(timeout=RPC_TIMEOUT)
        except Exception as e:  # noqa: BLE001 - closing must not hide the collection's outcome
            logger.warning("nebius: closing the SDK failed: %s", type(e).__name__)


def _call_sdk(what: str, fn: Callable[[], Any]) -> Any:
    """Run one SDK call; any failure becomes a `ProviderError` with a safe message."""
    try:
        return fn()
    except ProviderError:
        raise
    except Exception as e:  # noqa: BLE001 - the SDK's errors share no base: any becomes a safe ProviderError
        status = getattr(e, "status", None)
        code = getattr(getattr(status, "code", None), "name", None)
        detail = f"{type(e).__name__}{f' {code}' if code else ''}"
        hint = (
            f"; check {CREDENTIALS_HINT}"
            if code in ("UNAUTHENTICATED", "PERMISSION_DENIED")
            else ""
        )
        raise ProviderError(f"nebius: {what} failed: {detail}{hint}") from None


def _metadata(metadata: Any) -> dict[str, Any]:
    return {"id": metadata.id, "name": metadata.name, "parent_id": metadata.parent_id}


def platform_to_dict(platform: Any) -> dict[str, Any]:
    """A `nebius.compute.v1.Platform` as a dict with the API's field names."""
    spec = platform.spec
    return {
        "metadata": _metadata(platform.metadata),
        "spec": {
            "human_readable_name": spec.human_readable_name,
            "gpu_memory_gigabytes": spec.gpu_memory_gigabytes,
            "presets": [
                {
                    "name": preset.name,
                    "resources": {
                        "vcpu_count": preset.resources.vcpu_count,
                        "memory_gibibytes": preset.resources.memory_gibibytes,
                        "gpu_count": preset.resources.gpu_count,
                    },
                    "allow_gpu_clustering": preset.allow_gpu_clustering,
                }
                for preset in spec.presets
            ],
        },
        "status": {"allowed_for_preemptibles": platform.status.allowed_for_preemptibles},
    }


def estimate_request(project_id: str, platform: str, preset: str, preemptible: bool) -> Any:
    """The calculator request pricing one VM of `platform`/`preset` in the project's region."""
    from nebius.api.nebius.billing.v1alpha1 import EstimateRequest, ResourceSpec
    from nebius.api.nebius.common.v1 import ResourceMetadata
    from nebius.api.nebius.compute.v1 import (
        CreateInstanceRequest,
        InstanceSpec,
        PreemptibleSpec,
        ResourcesSpec,
    )

    spec = InstanceSpec(
        resources=ResourcesSpec(platform=platform, preset=preset),
        preemptible=PreemptibleSpec() if preemptible else None,
    )
    instance = CreateInstanceRequest(metadata=ResourceMetadata(parent_id=project_id), spec=spec)
    return EstimateRequest(resource_spec=ResourceSpec(compute_instance_spec=instance))


def estimate_to_dict(response: Any) -> dict[str, Any]:
    """An `EstimateResponse` as `{"hourly_cost": {"general": {"total": {"cost": "..."}}}}`."""
    general = response.hourly_cost.general
    if general is None:
        return {"hourly_cost": {}}
    return {"hourly_cost": {"general": {"total": {"cost": general.total.cost}}}}


# ---------------------------------------------------------------------------------------------
# Fetching: which RPCs, in which order


def _pages(what: str, list_page: Callable[[str], dict[str, Any]]) -> Iterator[Any]:
    """Every item of a paginated list RPC."""
    token = ""
    seen: set[str] = set()
    while True:
        page = _call_sdk(what, partial(list_page, token))
        items = page.get("items", []) if isinstance(page, dict) else None
        if not isinstance(items, list):
            raise ProviderError(f"nebius: {what} answer has no 'items' list")
        yield from items
        token = page.get("next_page_token") or ""
        if not token:
            return
        if token in seen:
            raise ProviderError(f"nebius: {what} pagination repeats a page token")
        seen.add(token)


def region_projects(client: NebiusClient) -> dict[str, str]:
    """One project id per region of the caller's (single) tenant."""
    tenants = list(_pages("list tenants", client.list_tenants))
    if len(tenants) != 1:
        raise ProviderError(
            f"nebius: expected the credentials to see 1 tenant, found {len(tenants)}"
        )
    tenant_id = _dig(tenants[0], "metadata", "id")
    if not isinstance(tenant_id, str):
        raise ProviderError("nebius: tenant has no field 'metadata.id'")
    by_region: dict[str, list[str]] = {}
    for project in _pages("list projects", partial(client.list_projects, tenant_id)):
        project_id = _dig(project, "metadata", "id")
        region = _dig(project, "status", "region")
        if isinstance(project_id, str) and isinstance(region, str) and region:
            by_region.setdefault(region, []).append(project_id)
        else:
            logger.warning("nebius: project without id or region skipped")
    return {region: sorted(ids)[0] for region, ids in sorted(by_region.items())}


def fetch_snapshot(client: NebiusClient) -> dict[str, Any]:
    """Everything the catalog needs, as a JSON-able snapshot (see `parse_snapshot`)."""
    regions = []
    for region, project_id in region_projects(client).items():
        platforms = list(_pages("list platforms", partial(client.list_platforms, project_id)))
        estimates = []
        for platform in platforms:
            name = _dig(platform, "metadata", "name")
            presets = _dig(platform, "spec", "presets")
            if not isinstance(name, str) or not isinstance(presets, list):
                continue  # parse_snapshot reports it
            for preset in presets:
                preset_name = _dig(preset, "name")
                if not isinstance(preset_name, str):
                    continue
                for preemptible in _modes(platform):
                    ask = partial(client.estimate, project_id, name, preset_name, preemptible)
                    estimates.append(
                        {
                            "platform": name,
                            "preset": preset_name,
                            "preemptible": preemptible,
                            "response": _call_sdk("estimate price", ask),
                        }
                    )
        logger.info(
            "nebius: %s: %d platforms, %d estimates", region, len(platforms), len(estimates)
        )
        regions.append(
            {
                "region": region,
                "project_id": project_id,
                "platforms": platforms,
                "estimates": estimates,
            }
        )
    return {"regions": regions}


def _modes(platform: Any) -> list[bool]:
    """Pricing modes of a platform: on demand, and preemptible where the platform allows it."""
    return [False, True] if _dig(platform, "status", "allowed_for_preemptibles") else [False]


# ---------------------------------------------------------------------------------------------
# Parsing (pure)


@dataclass
class ParseReport(_report.ParseReport):
    provider: str = "nebius"

    @property
    def skipped_records(self) -> int:
        return len(self.skipped)


@dataclass(frozen=True)
class PlatformGpu:
    name: str
    vendor: AcceleratorVendor
    memory: float | None
    cpu_arch: CPUArchitecture


def _dig(obj: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _int(value: Any) -> int | None:
    """Proto JSON writes int64 as a string; accept both."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def _price(response: Any) -> float | None:
    cost = _dig(response, "hourly_cost", "general", "total", "cost")
    try:
        price = float(cost)
    except (TypeError, ValueError):
        return None
    return price if price > 0 else None


def platform_gpu(platform: dict[str, Any], report: ParseReport) -> PlatformGpu | None:
    """The GPU of a `gpu-*` platform; None for platforms whose name does not say."""
    name = _dig(platform, "metadata", "name")
    match = _GPU_PLATFORM.match(name) if isinstance(name, str) else None
    if match is None:
        return None
    token = match.group(1)
    reported = _int(_dig(platform, "spec", "gpu_memory_gigabytes"))
    memory = float(reported) if reported else None
    gpu = resolve_gpu(GPU_NAME_OVERRIDES.get(token) or token, memory)
    if gpu is None:
        report.unknown_gpu(token, f"platform {name}; kept under that name")
        # Every GPU Nebius offers is NVIDIA.
        return PlatformGpu(token, AcceleratorVendor.NVIDIA, memory, CPUArchitecture.X86)
    known = {a.memory for a in accelerators_named(gpu.name)}
    if memory is not None and known and gpu.memory not in known:
        logger.warning(
            "nebius: platform %s reports %s GB per %s; the tables know %s",
            name,
            memory,
            gpu.name,
            sorted(known),
        )
    arch = CPUArchitecture.ARM if is_nvidia_superchip(gpu.name) else CPUArchitecture.X86
    return PlatformGpu(gpu.name, gpu.vendor, gpu.memory, arch)


def parse_region(region: dict[str, Any], report: ParseReport | None = None) -> list[CatalogItem]:
    report = report if report is not None else ParseReport()
    location = region.get("region")
    if not isinstance(location, str) or not location:
        raise ProviderError("nebius: snapshot region has no field 'region'")
    prices: dict[tuple[str, str, bool], Any] = {}
    for estimate in region.get("estimates") or []:
        key = (estimate.get("platform"), estimate.get("preset"), bool(estimate.get("preemptible")))
        prices[key] = estimate.get("response")
    offers: list[CatalogItem] = []
    for platform in region.get("platforms") or []:
        name = _dig(platform, "metadata", "name")
        presets = _dig(platform, "spec", "presets")
        if not isinstance(name, str) or not isinstance(presets, list):
            report.skip(f"platform in {location}", "no metadata.name or spec.presets")
            continue
        gpu = platform_gpu(platform, report)
        for preset in presets:
            offers.extend(
                _preset_offers(location, name, preset, gpu, _modes(platform), prices, report)
            )
    return offers


def _preset_offers(
    location: str,
    platform: str,
    preset: Any,
    gpu: PlatformGpu | None,
    modes: list[bool],
    prices: dict[tuple[str, str, bool], Any],
    report: ParseReport,
) -> list[CatalogItem]:
    preset_name = _dig(preset, "name")
    what = f"{platform} {preset_name} in {location}"
    vcpu = _int(_dig(preset, "resources", "vcpu_count"))
    memory = _int(_dig(preset, "resources", "memory_gibibytes"))
    gpu_count = _int(_dig(preset, "resources", "gpu_count")) or 0
    if not isinstance(preset_name, str) or not vcpu or not memory:
        report.skip(what, "no name, vcpu_count or memory_gibibytes")
        return []
    if gpu_count and gpu is None:
        report.skip(what, "has GPUs but the platform does not name them")
        return []
    fabrics = (
        list(INFINIBAND_FABRICS.get((platform, location), ()))
        if _dig(preset, "allow_gpu_clustering")
        else []
    )
    offers = []
    for preemptible in modes:
        price = _price(prices.get((platform, preset_name, preemptible)))
        if price is None:
            report.skip(f"{what} ({'preemptible' if preemptible else 'on-demand'})", "no price")
            continue
        with_gpu = gpu if gpu_count else None
        offers.append(
            CatalogItem(
                provider=NebiusProvider.NAME,
                instance_name=f"{platform} {preset_name}",
                location=location,
                price=price,
                cpu=vcpu,
                memory=float(memory),
                gpu_count=gpu_count,
                gpu_name=with_gpu.name if with_gpu else None,
                gpu_memory=with_gpu.memory if with_gpu else None,
                spot=preemptible,
                disk_size=None,
                gpu_vendor=with_gpu.vendor if with_gpu else None,
                cpu_arch=with_gpu.cpu_arch if with_gpu else CPUArchitecture.X86,
                provider_data={
                    "fabrics": fabrics,
                    "is_preemptible_flat_rate": bool(
                        preemptible and with_gpu and with_gpu.name in PREEMPTIBLE_FLAT_RATE_GPUS
                    ),
                },
            )
        )
    return offers


def parse_snapshot(snapshot: Any, report: ParseReport | None = None) -> list[CatalogItem]:
    """Offers of a `fetch_snapshot` result, sorted by price."""
    report = report if report is not None else ParseReport()
    regions = _dig(snapshot, "regions")
    if not isinstance(regions, list):
        raise ProviderError("nebius: snapshot has no 'regions' list")
    offers = [offer for region in regions for offer in parse_region(region, report)]
    return sorted(offers, key=lambda o: (o.price, o.instance_name, o.location, o.spot))


# ---------------------------------------------------------------------------------------------


class NebiusProvider(Collects[ParseReport], OfflineProvider):
    NAME = "nebius"
    REPORT = ParseReport

    def __init__(
        self,
        credentials: NebiusCredentials | None = None,
        *,
        client_factory: Callable[[NebiusCredentials], NebiusClient] | None = None,
    ) -> None:
        self.credentials = credentials
        self._client_factory = client_factory or SDKClient
        self.last_report = ParseReport()

    def __repr__(self) -> str:
        return f"NebiusProvider(credentials={self.credentials!r})"

    @classmethod
    def from_env(cls) -> NebiusProvider:
        return cls(NebiusCredentials.from_env())

    def collect(self, ask: Ask, report: ParseReport) -> list[CatalogItem]:
        credentials = self.credentials or NebiusCredentials.from_env()
        client = self._client_factory(credentials)
        try:
            snapshot = fetch_snapshot(client)
        finally:
            client.close()
        offers = parse_snapshot(snapshot, report)
        report.warn_if_incomplete()
        return offers
