"""Vultr: cloud and bare-metal plans, queried live.

`GET https://api.vultr.com/v2/plans?type=all` and `GET /v2/plans-metal`, both paginated with
`per_page` and the cursor in `meta.links.next`. Both endpoints are public; the API key
(`VULTR_API_KEY`, optional) is only used to ask which dedicated GPU plans (`vdm`) the account
can deploy in each region (`/v2/regions/{id}/availability?type=vdm`).

Decisions:

- Plans: cloud GPU (`vcg`), dedicated GPU (`vdm`), bare metal (GPU and CPU) and the CPU families
  `vc2`, `vhf`, `vhp`, `voc`. Other plan types are skipped. One offer per plan and location.
- Only on-demand offers: plans with `deploy_ondemand: false` are skipped; zero-priced plans (the
  free tier) are not offers. A plan without `hourly_cost` (older answers) is malformed: the
  monthly cost does not say the hourly one.
- GPUs: `vcg` plans name the GPU (`gpu_type` "NVIDIA_A100") and their total GPU memory
  (`gpu_vram_gb`); the count is that memory over the GPU's full memory (Vultr's A100s are the
  80 GB kind: the largest known size is used), at least 1 for fractional GPUs, which keep the
  fraction's memory. Bare-metal ids spell count and GPU (`vbm-112c-2048gb-8-h100-gpu`; no count
  means one), with `l40` meaning the L40S. `vdm` plans carry no GPU metadata: known ids are listed
  in `VDM_GPUS`, others are read from the id's GPU and total VRAM.
- A GPU our tables do not know is kept under Vultr's name when its vendor can still be told
  (the `NVIDIA_`/`AMD_` prefix, `gpu_brand`), counted and logged; otherwise skipped, counted.
- `vdm` locations: with an API key, the account's regional availability replaces the public
  locations (which can be empty for plans the account may deploy); if that lookup fails, `vdm`
  plans get no locations rather than unverified ones, and the other offers are kept.
- `regions=[...]` limits offers (and availability lookups) to those regions.
- The query filter: `spot=True` needs no API call (no spot offers); a filter that excludes GPUs
  skips the per-region availability calls.
- Bare metal: vCPUs are the CPU threads; `disk_size` is one disk (`disk`, of `disk_count`).
  Superchips (GH200) are ARM.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import quote

from gpuhunt._internal.accelerators import is_nvidia_superchip
from gpuhunt._internal.errors import ProviderError
from gpuhunt._internal.gpu_names import canonical_gpu_name, resolve_gpu
from gpuhunt._internal.load import livecache, transport
from gpuhunt._internal.models import (
    AcceleratorVendor,
    CatalogItem,
    CPUArchitecture,
    JSONObject,
    QueryFilter,
)
from gpuhunt.providers._records import Gpu, offer
from gpuhunt.providers._report import ParseReport
from gpuhunt.providers.base import Ask, Collects, OnlineProvider

logger = logging.getLogger(__name__)

NAME = "vultr"
API_URL = "https://api.vultr.com/v2"
CREDENTIAL = "VULTR_API_KEY"
PER_PAGE = 500
MAX_PAGES = 20
AVAILABILITY_WORKERS = 8
CPU_PLAN_TYPES = frozenset({"vc2", "vhf", "vhp", "voc"})
_MIB_PER_GIB = 1024

# Dedicated GPU plans whose GPUs the API does not describe: id -> (GPU count, canonical name).
# The MI325X plan's "1536vram" suffix disagrees with Vultr's documented 8 x 256 GB.
VDM_GPUS: dict[str, tuple[int, str]] = {
    "vcg-a16-6c-64g-16vram": (1, "A16"),
    "vcg-a16-96c-960g-256vram": (16, "A16"),
    "vcg-a16-96c-878g-256vram": (16, "A16"),
    "vcg-a40-24c-120g-48vram": (1, "A40"),
    "vcg-a40-96c-480g-192vram": (4, "A40"),
    "vcg-a100-12c-120g-80vram": (1, "A100"),
    "vcg-a100-96c-960g-640vram": (8, "A100"),
    "vcg-h100-216c-1914gb-640vram": (8, "H100"),
    "vcg-b200-248c-2826g-1536vram": (8, "B200"),
    "vcg-mi325x-252c-2872g-1536vram": (8, "MI325X"),
    "vcg-mi355x-252c-2872g-2304vram": (8, "MI355X"),
}
# GPU tokens in plan ids that name another GPU than they spell.
_ID_GPU_TOKENS = {"l40": "L40S"}
# The memory of a whole GPU where the tables list several sizes (passed to `resolve_gpu`,
# which otherwise takes the smallest): Vultr's A100 is the 80 GB board (its dedicated plan
# vcg-a100-12c-120g-80vram has one GPU and 80 GB). Fractional plans derive their GPU count
# from this size.
GPU_MEMORY: dict[str, float] = {"A100": 80.0}
_METAL_GPU_ID = re.compile(r"^vbm-\d+c-\d+gb-(?:(?P<count>\d+)-)?(?P<gpu>[a-z0-9]+)-gpu$")
_VDM_ID = re.compile(r"^vcg-(?P<gpu>[a-z0-9]+)-\d+c-\d+gb?-(?P<vram>\d+)vram$")


class VultrProvider(Collects[ParseReport], OnlineProvider):
    NAME = NAME
    REPORT = ParseReport

    def __init__(self, api_key: str | None = None, regions: Iterable[str] | None = None) -> None:
        self.api_key = api_key or None
        self.regions = list(regions) if regions else None

    def __repr__(self) -> str:
        key = "'***'" if self.api_key else "None"
        return f"VultrProvider(api_key={key}, regions={self.regions!r})"

    @classmethod
    def from_env(cls) -> VultrProvider:
        # The plans are public: without a key, the public catalog is still offered.
        return cls(api_key=os.getenv(CREDENTIAL) or None)

    def collect(self, ask: Ask, report: ParseReport) -> list[CatalogItem]:
        q = ask.filter
        if q.spot is True:
            return []
        plans = fetch_pages("/plans", "plans", {"type": "all"})
        plans_metal = fetch_pages("/plans-metal", "plans_metal", {})
        vdm_locations = None
        if self.api_key and _may_want_gpus(q):
            vdm_locations = self._vdm_locations(self.api_key)
        offers = parse_offers(
            plans, plans_metal, vdm_locations=vdm_locations, regions=self.regions, report=report
        )
        return sorted(offers, key=lambda i: i.price)

    def _vdm_locations(self, api_key: str) -> dict[str, list[str]]:
        try:
            return fetch_vdm_locations(api_key, self.regions)
        except ProviderError as e:
            logger.warning("%s: dedicated GPU availability unknown, not offering them: %s", NAME, e)
            return {}


def _may_want_gpus(q: QueryFilter) -> bool:
    return not (q.max_gpu_count == 0 or q.max_total_gpu_memory == 0)


def _get(path: str, params: dict[str, Any], api_key: str | None = None) -> Any:
    url = API_URL + path
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    return livecache.request_json(
        "GET",
        url,
        provider=NAME,
        secret=api_key,
        credential=CREDENTIAL if api_key else None,
        params=params,
        headers=headers,
    )


def fetch_pages(
    path: str, field: str, params: dict[str, Any], api_key: str | None = None
) -> list[Any]:
    """Every item of a paginated list endpoint, following the cursor in `meta.links.next`."""
    items: list[Any] = []
    cursor = ""
    for _ in range(MAX_PAGES):
        page_params = {**params, "per_page": PER_PAGE}
        if cursor:
            page_params["cursor"] = cursor
        data = _get(path, page_params, api_key)
        transport.require_fields(data, {field: list}, where=f"{NAME}: GET {path}")
        items.extend(data[field])
        cursor = _next_cursor(data)
        if not cursor:
            return items
    logger.warning("%s: GET %s has more than %d pages, using the first ones", NAME, path, MAX_PAGES)
    return items


def _next_cursor(data: JSONObject) -> str:
    meta = data.get("meta")
    links = meta.get("links") if isinstance(meta, dict) else None
    cursor = links.get("next") if isinstance(links, dict) else None
    return cursor if isinstance(cursor, str) else ""


def fetch_vdm_locations(api_key: str, regions: list[str] | None) -> dict[str, list[str]]:
    """Plan id -> the regions where this account can deploy that dedicated GPU plan."""
    if not regions:
        regions = [r["id"] for r in fetch_pages("/regions", "regions", {}, api_key)]

    def availability(region: str) -> Any:
        return _get(f"/regions/{quote(region, safe='')}/availability", {"type": "vdm"}, api_key)

    with ThreadPoolExecutor(max_workers=AVAILABILITY_WORKERS) as pool:
        answers = list(pool.map(transport.carried(availability), regions))
    locations: dict[str, list[str]] = {}
    for region, answer in zip(regions, answers):
        transport.require_fields(
            answer, {"available_plans": list}, where=f"{NAME}: availability of {region}"
        )
        for plan_id in answer["available_plans"]:
            locations.setdefault(plan_id, []).append(region)
    return locations


def parse_offers(
    plans: list[Any],
    plans_metal: list[Any],
    *,
    vdm_locations: dict[str, list[str]] | None = None,
    regions: Iterable[str] | None = None,
    report: ParseReport | None = None,
) -> list[CatalogItem]:
    """Offers from decoded plan lists (`plans` and `plans_metal` of the answers)."""
    report = report if report is not None else ParseReport(provider=VultrProvider.NAME)
    wanted = set(regions) if regions else None
    offers: list[CatalogItem] = []
    kinds: list[tuple[list[Any], Callable[[JSONObject, ParseReport], _Shape | None]]] = [
        (plans_metal, _metal_shape),
        (plans, _instance_shape),
    ]
    for plan_list, shape_of in kinds:
        for plan in plan_list:
            plan_id = plan.get("id") if isinstance(plan, dict) else None
            with report.record(f"plan {plan_id}"):
                offers.extend(_plan_offers(plan, shape_of, report, vdm_locations, wanted))
    return offers


def _plan_offers(
    plan: Any,
    shape_of: Callable[[JSONObject, ParseReport], _Shape | None],
    report: ParseReport,
    vdm_locations: dict[str, list[str]] | None,
    wanted: set[str] | None,
) -> list[CatalogItem]:
    if not isinstance(plan, dict):
        raise TypeError(f"plan is a {type(plan).__name__}")
    if plan.get("deploy_ondemand") is False:
        return []
    shape = shape_of(plan, report)
    if shape is None:
        return []
    price = float(plan["hourly_cost"])
    locations = plan["locations"]
    if plan.get("type") == "vdm" and vdm_locations is not None:
        locations = vdm_locations.get(plan["id"], [])
    if price <= 0:
        return []
    return [
        shape.offer(str(plan["id"]), str(location), price)
        for location in locations
        if location and (wanted is None or location in wanted)
    ]


class _Shape:
    """What a plan offers, wherever it is deployed."""

    def __init__(
        self,
        *,
        cpu: int,
        memory: float,
        disk: float | None,
        gpu: tuple[int, str, float, AcceleratorVendor] | None = None,
    ) -> None:
        self.cpu = cpu
        self.memory = memory
        self.disk = disk
        self.gpu = gpu

    def offer(self, plan_id: str, location: str, price: float) -> CatalogItem:
        gpu_count, gpu_name, gpu_memory, vendor = self.gpu or (0, None, None, None)
        arm = gpu_name is not None and is_nvidia_superchip(gpu_name)
        gpu = Gpu(gpu_count, gpu_name, vendor, gpu_memory)
        arch = CPUArchitecture.ARM if arm else CPUArchitecture.X86
        return offer(
            NAME, plan_id, location, price, self.cpu, self.memory, gpu, self.disk, cpu_arch=arch
        )


def _metal_shape(plan: JSONObject, report: ParseReport) -> _Shape | None:
    plan_id = str(plan["id"])
    gpu = None
    if plan_id.endswith("-gpu"):
        match = _METAL_GPU_ID.match(plan_id)
        if match is None:
            report.skip(f"bare-metal plan {plan_id}", "cannot read its GPUs")
            return None
        gpu = _gpu(plan_id, match["gpu"], int(match["count"] or 1), None, None, report)
        if gpu is None:
            return None
    return _Shape(
        cpu=int(plan["cpu_threads"]),
        memory=float(plan["ram"]) / _MIB_PER_GIB,
        disk=float(plan["disk"]),
        gpu=gpu,
    )


def _instance_shape(plan: JSONObject, report: ParseReport) -> _Shape | None:
    plan_type = plan["type"]
    plan_id = str(plan["id"])
    gpu = None
    if plan_type == "vcg":
        gpu_type = str(plan["gpu_type"])
        vendor_token, _, token = gpu_type.partition("_")
        total = float(plan["gpu_vram_gb"])
        gpu = _gpu(plan_id, token or gpu_type, None, total, vendor_token, report)
    elif plan_type == "vdm":
        if plan_id in VDM_GPUS:
            count, name = VDM_GPUS[plan_id]
            gpu = _gpu(plan_id, name, count, None, plan.get("gpu_brand"), report)
        elif match := _VDM_ID.match(plan_id):
            gpu = _gpu(
                plan_id, match["gpu"], None, float(match["vram"]), plan.get("gpu_brand"), report
            )
        else:
            report.skip(f"dedicated plan {plan_id}", "cannot read its GPUs")
        if gpu is None:
            return None
    elif plan_type not in CPU_PLAN_TYPES:
        report.counts["unsupported_type"] += 1
        logger.debug("%s: skipping plan %s of type %s", NAME, plan_id, plan_type)
        return None
    return _Shape(
        cpu=int(plan["vcpu_count"]),
        memory=float(plan["ram"]) / _MIB_PER_GIB,
        disk=float(plan["disk"]),
        gpu=gpu,
    )


def _gpu(
    plan_id: str,
    token: str,
    count: int | None,
    total_memory: float | None,
    vendor_hint: Any,
    report: ParseReport,
) -> tuple[int, str, float, AcceleratorVendor] | None:
    """(count, name, memory per GPU, vendor) from a plan's GPU token and what else it says:
    a count (bare metal, known dedicated plans) or the total GPU memory (cloud GPU plans)."""
    spelling = _ID_GPU_TOKENS.get(token.lower()) or token
    canonical = canonical_gpu_name(spelling)
    gpu = resolve_gpu(spelling, GPU_MEMORY.get(canonical or ""))
    full_memory: float | None
    vendor: AcceleratorVendor | None
    if gpu is None:
        name, full_memory, vendor = token.upper(), None, _vendor_from_hint(vendor_hint)
        report.unknown_gpu(token, f"plan {plan_id}")
    else:
        name, full_memory, vendor = gpu.name, gpu.memory, gpu.vendor
    if vendor is None:
        logger.warning("%s: no vendor for GPU %r of plan %s, skipping", NAME, token, plan_id)
        return None
    if count is None:
        if total_memory is None:
            return None
        # Fractional GPUs (a slice of one) count as one GPU with the slice's memory.
        count = max(1, int(total_memory // full_memory)) if full_memory else 1
        return count, name, total_memory / count, vendor
    if full_memory is None:
        if total_memory is None:
            logger.warning(
                "%s: unknown memory of GPU %r in plan %s, skipping", NAME, token, plan_id
            )
            return None
        return count, name, total_memory / count, vendor
    return count, name, float(full_memory), vendor


def _vendor_from_hint(hint: Any) -> AcceleratorVendor | None:
    if isinstance(hint, str):
        try:
            return AcceleratorVendor.cast(hint)
        except ValueError:
            return None
    return None
