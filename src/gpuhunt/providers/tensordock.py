"""TensorDock marketplace: GPU hosts whose vCPUs, RAM and disk are rented by the unit.

Source: `GET https://marketplace.tensordock.com/api/v0/client/deploy/hostnodes`, public (no
credential), answering `{"hostnodes": {<hostnode id>: {"location": {...}, "specs": {...},
"status": {...}}}, "success": true}`. Each host lists per-unit hourly prices and free amounts of
`cpu`, `ram` (GB), `storage` (GB) and each GPU model (`specs.gpu.<model>.amount`, `.vram`,
`.price`). The filter's minimums go to the API as `minGPUCount`, `minVRAM`, `minvCPUs`, `minRAM`
and `minStorage`, so hosts that cannot serve them are not sent at all.

Decisions:
- One offer per host and GPU model, with the fewest GPUs the filter allows and vCPUs/RAM/disk
  sized by the shared heuristic in `gpuhunt.providers._balance` (even vCPUs and RAM, as TensorDock
  sells them; at least `MIN_DISK_GB` of disk for the OS image).
- `instance_name` is the hostnode id (what a deployment names), `location` the host's country,
  lower-cased without spaces (as gpuhunt 0.1.x reported it); region and city are in
  `provider_data` together with TensorDock's GPU model key, which deployments need.
- Hosts reported offline or unlisted are skipped. Prices are on-demand (`spot=False`).
"""

from __future__ import annotations

import logging
import math
import re
from typing import Any

from typing_extensions import Self

from gpuhunt._internal.errors import ProviderError
from gpuhunt._internal.gpu_names import gpu_memory_from_name, resolve_gpu
from gpuhunt._internal.load import livecache, transport
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem, QueryFilter
from gpuhunt.providers._balance import HostLimits, size_resources, smallest_gpu_count
from gpuhunt.providers._records import Gpu, offer
from gpuhunt.providers._report import ParseReport
from gpuhunt.providers.base import Ask, Collects, OnlineProvider

logger = logging.getLogger(__name__)

HOSTNODES_URL = "https://marketplace.tensordock.com/api/v0/client/deploy/hostnodes"
MIN_DISK_GB = 30
CPU_STEP = 2
MEMORY_STEP = 2
PRICE_DIGITS = 5

# TensorDock's model keys glue brand and variant to the chip ("geforcertx3060tilhr-pcie-8gb").
_BRAND_PREFIX = re.compile(r"^geforce(?=[rg]tx)")
_VARIANT_SUFFIX = re.compile(r"lhr(?=-|$)")  # Lite Hash Rate: same chip, mining throttled


class TensorDockProvider(Collects[ParseReport], OnlineProvider):
    NAME = "tensordock"
    REPORT = ParseReport

    @classmethod
    def from_env(cls) -> Self:
        return cls()  # the host listing is public

    def collect(self, ask: Ask, report: ParseReport) -> list[CatalogItem]:
        q = ask.filter
        payload = fetch_hostnodes(hostnode_params(q))
        offers = parse_hostnodes(payload, q, ask.balance_resources, report)
        return sorted(offers, key=lambda i: i.price)


def hostnode_params(q: QueryFilter) -> dict[str, int]:
    """The filter's minimums in the query parameters the hostnodes endpoint understands."""
    wanted = {
        "minGPUCount": q.min_gpu_count,
        "minVRAM": q.min_gpu_memory,
        "minvCPUs": q.min_cpu,
        "minRAM": q.min_memory,
        "minStorage": q.min_disk_size,
    }
    return {name: math.ceil(value) for name, value in wanted.items() if value}


def fetch_hostnodes(params: dict[str, int]) -> Any:
    return livecache.request_json(
        "GET", HOSTNODES_URL, provider=TensorDockProvider.NAME, params=params
    )


def parse_hostnodes(
    payload: Any,
    q: QueryFilter | None = None,
    balance_resources: bool = True,
    report: ParseReport | None = None,
) -> list[CatalogItem]:
    """Offers from a decoded hostnodes answer. Malformed hosts are skipped and counted in
    `report.counts["malformed"]`; GPU models the tables do not know are kept under TensorDock's name and
    counted in `report.unknown_gpus`."""
    q = q or QueryFilter()
    report = report if report is not None else ParseReport(provider=TensorDockProvider.NAME)
    if isinstance(payload, dict) and payload.get("success") is False:
        raise ProviderError("tensordock: the hostnodes listing answered success=false")
    transport.require_fields(payload, {"hostnodes": dict}, where="tensordock: hostnodes")
    offers: list[CatalogItem] = []
    for hostnode_id, host in payload["hostnodes"].items():
        with report.record(f"hostnode {hostnode_id}"):
            offers.extend(_host_offers(str(hostnode_id), host, q, balance_resources, report))
    return offers


def _host_offers(
    hostnode_id: str,
    host: dict[str, Any],
    q: QueryFilter,
    balance_resources: bool,
    report: ParseReport,
) -> list[CatalogItem]:
    status = host.get("status") or {}
    if status.get("online") is False or status.get("listed") is False:
        return []
    specs = host["specs"]
    location = host["location"]
    cpu_spec, ram_spec, disk_spec = specs["cpu"], specs["ram"], specs["storage"]
    limits = HostLimits(
        max_cpu=int(cpu_spec["amount"]),
        max_memory=float(ram_spec["amount"]),
        max_disk=float(disk_spec["amount"]),
        min_cpu=CPU_STEP,
        min_memory=MEMORY_STEP,
        min_disk=MIN_DISK_GB,
        cpu_step=CPU_STEP,
        memory_step=MEMORY_STEP,
    )
    offers = []
    for model, gpu in specs["gpu"].items():
        name, vendor, memory = gpu_identity(model, gpu.get("vram"))
        if vendor is None:
            report.unknown_gpu(model, f"host node {hostnode_id}")
            vendor = AcceleratorVendor.NVIDIA  # TensorDock hosts only NVIDIA GPUs
        count = smallest_gpu_count(int(gpu["amount"]), memory, q)
        if count is None:
            continue
        resources = size_resources(count, memory, limits, q, balance_resources)
        if resources is None:
            continue
        price = (
            resources.cpu * float(cpu_spec["price"])
            + resources.memory * float(ram_spec["price"])
            + resources.disk * float(disk_spec["price"])
            + count * float(gpu["price"])
        )
        where = (TensorDockProvider.NAME, hostnode_id, _slug(location["country"]))
        size = (resources.cpu, float(resources.memory), Gpu(count, name, vendor, memory))
        data = {"gpu_model": model, "region": location.get("region"), "city": location.get("city")}
        disk = float(resources.disk)
        offers.append(offer(*where, round(price, PRICE_DIGITS), *size, disk, provider_data=data))
    return offers


def gpu_identity(
    model: str, vram: Any = None
) -> tuple[str, AcceleratorVendor | None, float | None]:
    """(name, vendor, memory GB) of a TensorDock GPU model key such as "l40-pcie-48gb".

    An unknown model keeps its key as the name and gets vendor None."""
    spelled = _VARIANT_SUFFIX.sub("", _BRAND_PREFIX.sub("", model.lower()))
    memory = float(vram) if vram else gpu_memory_from_name(spelled)
    gpu = resolve_gpu(spelled, memory)
    if gpu is None:
        return model, None, memory
    return gpu.name, gpu.vendor, gpu.memory


def _slug(text: str) -> str:
    return text.lower().replace(" ", "")
