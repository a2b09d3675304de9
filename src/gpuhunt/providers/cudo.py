"""CUDO Compute: VM machine types whose vCPUs, RAM, GPUs and disk are rented by the unit.

Source: `GET https://rest.compute.cudo.org/v1/vms/machine-types-2`, public (the API reference
lists it with "No authorization required"), answering `{"machineTypes": [...]}`: one item per
data center and machine type, with per-unit hourly prices (`vcpuPriceHr`, `memoryGibPriceHr`,
`gpuPriceHr`, `minStorageGibPriceHr`, `ipv4PriceHr`, each `{"value": "<decimal string>"}`), the
largest free amounts one VM can take (`maxVcpuFree`, `maxMemoryGibFree`, `maxGpuFree`,
`maxStorageGibFree`) and the allowed ratios (`min/maxVcpuPerMemoryGib`, `min/maxVcpuPerGpu`).
The endpoint takes no filter parameters, so one cached answer serves every query.

Decisions:
- One offer per machine type: the fewest GPUs the filter allows, vCPUs/RAM/disk sized by the
  shared heuristic in `gpuhunt.providers._balance` within the machine type's free amounts and
  ratios, at least `MIN_VCPUS` vCPUs, `MIN_MEMORY_GB` of RAM and `MIN_DISK_GB` of boot disk.
- Price = units x unit prices + one public IPv4 address (every VM gets one).
- Machine types without a GPU model are CPU-only offers (`gpu_count=0`).
- `instance_name` is CUDO's machine type, `location` the data center id; `provider_data` keeps
  `gpu_model_id`, which a deployment needs. Prices are on-demand (no commitment term).
"""

from __future__ import annotations

import logging
import re
from typing import Any

from typing_extensions import Self

from gpuhunt._internal.gpu_names import canonical_gpu_name, gpu_memory_from_name, resolve_gpu
from gpuhunt._internal.load import livecache, transport
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem, QueryFilter
from gpuhunt.providers._balance import HostLimits, size_resources, smallest_gpu_count
from gpuhunt.providers._records import Gpu, offer
from gpuhunt.providers._report import ParseReport
from gpuhunt.providers.base import Ask, Collects, OnlineProvider

logger = logging.getLogger(__name__)

API_URL = "https://rest.compute.cudo.org/v1"
MACHINE_TYPES_URL = f"{API_URL}/vms/machine-types-2"
MIN_VCPUS = 2
MIN_MEMORY_GB = 8
MIN_DISK_GB = 100
PRICE_DIGITS = 5

# "A40 (compute mode)": a note on how the card is configured, not part of its name.
_PARENTHESES = re.compile(r"\s*\([^)]*\)")


class CudoProvider(Collects[ParseReport], OnlineProvider):
    NAME = "cudo"
    REPORT = ParseReport

    @classmethod
    def from_env(cls) -> Self:
        return cls()  # the machine type listing is public

    def collect(self, ask: Ask, report: ParseReport) -> list[CatalogItem]:
        payload = fetch_machine_types()
        offers = parse_machine_types(payload, ask.query_filter, ask.balance_resources, report)
        return sorted(offers, key=lambda i: i.price)


def fetch_machine_types() -> Any:
    return livecache.request_json("GET", MACHINE_TYPES_URL, provider=CudoProvider.NAME)


def parse_machine_types(
    payload: Any,
    q: QueryFilter | None = None,
    balance_resources: bool = True,
    report: ParseReport | None = None,
) -> list[CatalogItem]:
    """Offers from a decoded machine-types-2 answer. Malformed items are skipped and counted in
    `report.counts["malformed"]`; GPU models the tables do not know are kept under CUDO's name and
    counted in `report.unknown_gpus`."""
    q = q or QueryFilter()
    report = report if report is not None else ParseReport(provider=CudoProvider.NAME)
    transport.require_fields(payload, {"machineTypes": list}, where="cudo: machine-types-2")
    offers = []
    for item in payload["machineTypes"]:
        with report.record("machine type"):
            offer = _machine_type_offer(item, q, balance_resources, report)
            if offer is not None:
                offers.append(offer)
    return offers


def _machine_type_offer(
    item: dict[str, Any], q: QueryFilter, balance_resources: bool, report: ParseReport
) -> CatalogItem | None:
    gpu_model_id = item.get("gpuModelId") or ""
    has_gpu = bool(gpu_model_id)
    name: str | None = None
    vendor: AcceleratorVendor | None = None
    memory: float | None = None
    count = 0
    if has_gpu:
        name, vendor, memory = gpu_identity(item["gpuModel"], gpu_model_id)
        if name is None:
            raise ValueError(f"gpuModelId {gpu_model_id!r} without gpuModel")
        if canonical_gpu_name(name) is None:
            report.unknown_gpu(item["gpuModel"], f"machine type {item.get('machineType')}")
        found = smallest_gpu_count(int(item["maxGpuFree"]), memory, q)
        if found is None:
            return None
        count = found
    elif q.min_gpu_count:
        return None

    limits = HostLimits(
        max_cpu=int(item["maxVcpuFree"]),
        max_memory=float(item["maxMemoryGibFree"]),
        max_disk=float(item["maxStorageGibFree"]),
        min_cpu=max(MIN_VCPUS, int(item.get("minVcpu") or 0)),
        min_memory=max(MIN_MEMORY_GB, float(item.get("minMemoryGib") or 0)),
        min_disk=MIN_DISK_GB,
        cpu_per_memory=_ratio(item, "minVcpuPerMemoryGib", "maxVcpuPerMemoryGib"),
        cpu_per_gpu=_ratio(item, "minVcpuPerGpu", "maxVcpuPerGpu") if has_gpu else None,
    )
    resources = size_resources(count, memory, limits, q, balance_resources)
    if resources is None:
        return None
    price = (
        resources.cpu * _decimal(item["vcpuPriceHr"])
        + resources.memory * _decimal(item["memoryGibPriceHr"])
        + count * _decimal(item["gpuPriceHr"])
        + resources.disk * _decimal(item["minStorageGibPriceHr"])
        + _decimal(item["ipv4PriceHr"])
    )
    where = (CudoProvider.NAME, str(item["machineType"]), str(item["dataCenterId"]))
    size = (resources.cpu, float(resources.memory), Gpu(count, name, vendor, memory))
    data = {"gpu_model_id": gpu_model_id} if has_gpu else {}
    disk = float(resources.disk)
    return offer(*where, round(price, PRICE_DIGITS), *size, disk, provider_data=data)


def gpu_identity(
    gpu_model: str, gpu_model_id: str
) -> tuple[str | None, AcceleratorVendor | None, float | None]:
    """(name, vendor, memory GB) of a CUDO GPU model ("RTX A5000", "nvidia-rtx-a5000").

    An unknown model keeps CUDO's name; its vendor comes from the id's prefix."""
    spelled = _PARENTHESES.sub("", gpu_model or "").strip()
    if not spelled:
        return None, None, None
    gpu = resolve_gpu(spelled)
    if gpu is None:
        return spelled, _vendor_from_id(gpu_model_id), gpu_memory_from_name(spelled)
    return gpu.name, gpu.vendor, gpu.memory


def _vendor_from_id(gpu_model_id: str) -> AcceleratorVendor:
    prefix = gpu_model_id.split("-", 1)[0]
    try:
        return AcceleratorVendor.cast(prefix)
    except ValueError:
        return AcceleratorVendor.NVIDIA  # every GPU CUDO has listed so far


def _ratio(item: dict[str, Any], low: str, high: str) -> tuple[float, float] | None:
    if item.get(low) is None and item.get(high) is None:
        return None
    return float(item.get(low) or 0), float(item.get(high) or 0) or float("inf")


def _decimal(value: dict[str, Any]) -> float:
    return float(value["value"])
