"""CloudRift: GPU virtual machines from the public instance-type listing.

One call, which needs no credentials: `POST https://api.cloudrift.ai/api/v1/instance-types/list`
with `{"version": <API date>, "data": {"selector": {"ByServiceAndLocation": {"services":
["vm"]}}}}`. The answer's `data.instance_types[]` each have a GPU `brand_short` ("RTX 5090",
"RTX PRO 6000", "V100 SXM2", ...) and `variants[]`: one per GPU count and host type, with
`cost_per_hour` in **cents**, `dram`, `disk` and per-GPU `vram` in **bytes**, `cpu_count` and
`logical_cpu_count`, and `nodes_per_dc` / `available_nodes_per_dc` (datacenter -> node count).

Decisions:
- An offer is listed in every datacenter that hosts the variant (`nodes_per_dc`, plus any in
  `available_nodes_per_dc`), whether or not a node is free right now: free nodes are a live
  reading the orchestrator checks at launch; a nightly catalog built from them would drop
  whatever was rented out at collection time. The reading is kept (issue 38):
  `CatalogItem.available` is True where `available_nodes_per_dc` counts a free node in
  that datacenter, False where it counts none or leaves the datacenter out; a variant without
  `available_nodes_per_dc` (or a count that is not a number) gives no reading.
- `cpu` is `cpu_count` (see `_cpu` for the evidence).
- `vram` is read per GPU; when it is exactly the GPU count times the known size of that GPU it
  is taken as a total and divided (the API documents neither).
- GPU names go through the shared alias table. A name it does not know is not dropped: the
  offer is kept under CloudRift's name, a warning is logged, and it is counted in
  `CloudRiftProvider.last_report`. Malformed variants are skipped and counted there too.

`memory` is GiB; `disk_size` GB. CloudRift has no spot market. `CLOUDRIFT_SERVER_ADDRESS`
overrides the API host (for staging servers).
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from typing import Any

from gpuhunt._internal.accelerators import MEMORY_TOLERANCE, accelerators_named
from gpuhunt._internal.errors import ProviderError
from gpuhunt._internal.gpu_names import canonical_gpu_name, resolve_gpu
from gpuhunt._internal.load import transport
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem
from gpuhunt.providers import _report
from gpuhunt.providers._records import Gpu, json_number, named, need_number, offer, positive
from gpuhunt.providers.base import Ask, Collects, OfflineProvider

logger = logging.getLogger(__name__)

NAME = "cloudrift"
SERVER_ADDRESS = "https://api.cloudrift.ai"
SERVER_ADDRESS_ENV = "CLOUDRIFT_SERVER_ADDRESS"
API_VERSION = "2025-03-21"
LIST_REQUEST: dict[str, Any] = {"selector": {"ByServiceAndLocation": {"services": ["vm"]}}}

_GIB = 1024**3
_AMD_HINT = re.compile(r"\b(amd|radeon|instinct)\b|\bmi\d{3}", re.IGNORECASE)


@dataclass
class ParseReport(_report.ParseReport):
    """cloudrift's collection report (see `providers._report`)."""

    provider: str = "cloudrift"


class CloudRiftProvider(Collects[ParseReport], OfflineProvider):
    NAME = NAME
    REPORT = ParseReport

    def __init__(self, server_address: str | None = None) -> None:
        self.server_address = (
            server_address or os.getenv(SERVER_ADDRESS_ENV) or SERVER_ADDRESS
        ).rstrip("/")
        self.last_report = ParseReport()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(server_address={self.server_address!r})"

    def collect(self, ask: Ask, report: ParseReport) -> list[CatalogItem]:
        return parse_instance_types(fetch_instance_types(self.server_address), report)


def list_url(server_address: str = SERVER_ADDRESS) -> str:
    return f"{server_address.rstrip('/')}/api/v1/instance-types/list"


def fetch_instance_types(server_address: str = SERVER_ADDRESS) -> Any:
    return transport.request_json(
        "POST",
        list_url(server_address),
        provider=CloudRiftProvider.NAME,
        json={"version": API_VERSION, "data": LIST_REQUEST},
    )


def parse_instance_types(payload: Any, report: ParseReport | None = None) -> list[CatalogItem]:
    """Offers from the decoded `instance-types/list` answer, one per variant and datacenter."""
    report = report if report is not None else ParseReport()
    where = "cloudrift: POST /api/v1/instance-types/list"
    if isinstance(payload, str):  # the API answers some errors as a bare JSON string
        raise ProviderError(f"{where}: the server answered {payload[:200]!r}")
    transport.require_fields(payload, {"data": dict}, where=where)
    transport.require_fields(payload["data"], {"instance_types": list}, where=f"{where}: data")
    instance_types = payload["data"]["instance_types"]
    offers: list[CatalogItem] = []
    variants_seen = 0
    for i, instance_type in enumerate(instance_types):
        name = instance_type.get("name") if isinstance(instance_type, dict) else None
        what = f"instance type {name!r}" if name else f"instance type #{i}"
        variants = instance_type.get("variants") if isinstance(instance_type, dict) else None
        if not isinstance(variants, list):
            report.skip(what, "no variants list")
            continue
        variants_seen += len(variants)
        for j, variant in enumerate(variants):
            vname = variant.get("name") if isinstance(variant, dict) else None
            try:
                offers.extend(_parse_variant(instance_type, variant, report))
            except (KeyError, TypeError, ValueError, AttributeError) as e:
                why = f"missing field {e}" if isinstance(e, KeyError) else str(e)
                report.skip(f"variant {vname or f'#{j}'!r} of {what}", why)
    if variants_seen and not offers and report.skipped:
        # Every variant failed: the answer changed shape; publishing nothing would look like
        # CloudRift selling nothing.
        raise ProviderError(
            f"{where}: none of {variants_seen} variants could be read: "
            + "; ".join(report.skipped[:3])
        )
    return sorted(offers, key=lambda o: (o.price, o.instance_name, o.location))


def _cpu(variant: dict[str, Any]) -> float:
    """The variant's CPUs: `cpu_count`, not `logical_cpu_count` (its double in every recorded
    variant: hyper-threads).

    No CloudRift API documentation of these two fields could be found (the answer's other
    units, cents and bytes, are undocumented too), so the decision rests on what CloudRift
    itself sells by: a variant is named <gpu>-<cpus>-<ram GB>-<disk GB>, and the CPU part is
    `cpu_count` ("rtx59-7-50-400-ec.1": cpu_count 7, dram 50 GB, disk 400 GB;
    "v100-5-85-800-generic.1": cpu_count 5). gpuhunt 0.1.34 publishes `cpu_count` as well, so
    CPU filters written against CloudRift offers keep matching the same offers. Revisit if
    CloudRift documents that a VM gets `logical_cpu_count` vCPUs.
    """
    return need_number(variant["cpu_count"], "cpu_count")


def _parse_variant(
    instance_type: dict[str, Any], variant: Any, report: ParseReport
) -> list[CatalogItem]:
    variant, name = named(variant, "name")
    cents = positive(need_number(variant["cost_per_hour"], "cost_per_hour"), "cost_per_hour")
    cpu = _cpu(variant)
    memory = need_number(variant["dram"], "dram") / _GIB
    disk = need_number(variant["disk"], "disk") / 10**9
    gpu_count = int(need_number(variant["gpu_count"], "gpu_count"))
    gpu_name, gpu_memory, gpu_vendor = None, None, None
    if gpu_count:
        vram = need_number(variant["vram"], "vram") / _GIB
        gpu_name, gpu_vendor, gpu_memory = _gpu(instance_type, name, vram, gpu_count, report)
    free = variant.get("available_nodes_per_dc")
    hosting = {**(free or {}), **variant["nodes_per_dc"]}
    datacenters = sorted(dc for dc in hosting if isinstance(dc, str) and dc)
    price, ram = round(cents / 100, 4), round(memory, 2)
    gpu = Gpu(gpu_count, gpu_name, gpu_vendor, gpu_memory)

    disk = round(disk, 1)
    return [
        offer(NAME, name, dc, price, int(cpu), ram, gpu, disk, available=_reading(free, dc))
        for dc in datacenters
    ]


def _reading(free: Any, dc: str) -> bool | None:
    """The availability reading of `available_nodes_per_dc` for one datacenter, if it says."""
    if not isinstance(free, dict):
        return None
    nodes = json_number(free.get(dc, 0))
    return None if nodes is None else nodes > 0


def _gpu(
    instance_type: dict[str, Any],
    variant_name: str,
    vram_gib: float,
    gpu_count: int,
    report: ParseReport,
) -> tuple[str, AcceleratorVendor, float]:
    """(name, vendor, memory GiB per GPU) of a GPU variant."""
    brand = instance_type.get("brand_short")
    if not isinstance(brand, str) or not brand.strip():
        raise ValueError("GPU variant of an instance type without brand_short")
    raw = brand.strip()
    per_gpu = _per_gpu_memory(vram_gib, gpu_count, canonical_gpu_name(raw) or raw)
    gpu = resolve_gpu(raw, per_gpu)
    if gpu is not None:
        return gpu.name, gpu.vendor, float(round(gpu.memory))
    report.unknown_gpu(raw, f"variant {variant_name}; kept under that name")
    vendor = AcceleratorVendor.AMD if _AMD_HINT.search(raw) else AcceleratorVendor.NVIDIA
    return raw, vendor, float(round(per_gpu))


def _per_gpu_memory(vram_gib: float, gpu_count: int, gpu_name: str) -> float:
    known = {a.memory for a in accelerators_named(gpu_name)}

    def near_known(gib: float) -> bool:
        return any(abs(gib - m) / m < MEMORY_TOLERANCE for m in known if m)

    if gpu_count > 1 and not near_known(vram_gib) and near_known(vram_gib / gpu_count):
        vram_gib /= gpu_count
    return vram_gib
