"""JarvisLabs: GPU and CPU virtual machines with their current free capacity, queried live.

`GET {API_URL}/misc/server_meta` with a bearer token (`JL_API_KEY`, the variable JarvisLabs'
own tools read; `JARVISLABS_API_KEY` is accepted too). The answer lists, per GPU type and
region, the price per GPU, vCPUs and RAM per GPU, the free devices and the most GPUs one machine
takes (`server_meta`), and the CPU machine sizes with the regions that have them (`cpu_meta`).

Decisions:

- Only regions in `JARVISLABS_REGION_URLS` are offered: VMs are created through a per-region API
  host that `server_meta` does not name, so an offer elsewhere could not be launched. Rows in
  other regions are skipped, logged and counted.
- GPU rows: VM rows only (`workload_type` "vm", or null, which older VM rows carry); container
  rows are not offers. One offer per GPU count from 1 to the smaller of the free devices
  (`effective_num_free_devices`, else `num_free_devices`) and the machine's `num_gpus` (1 when
  absent), named `<GPU>-<n>x`, priced, sized and RAM'd per GPU times n. No disk size (chosen at
  creation). VMs have no spot pricing, so no spot offers.
- GPU names: JarvisLabs' `gpu_type` mapped with the GPU tables ("A100-80GB" -> A100, "RTX-PRO6000"
  and "RTX PRO 6000" -> RTXPRO6000); an unknown type is kept without spaces, logged and counted.
  `provider_data["gpu_type"]` always holds JarvisLabs' own token, which creating the VM needs.
  GPU memory: the row's `vram`, else the tables. Vendor: NVIDIA unless the tables say otherwise.
- CPU offers: each available combination in each region marked true, named `cpu-<vcpus>x<ram>`.
- The query filter: `spot=True` needs no API call.
- Availability (`CatalogItem.available`, issue 38): every offer is one the answer says is
  free now (a GPU count within the free devices, a CPU size in a region marked true), so every
  offer reads True. Sizes beyond the free devices and CPU regions marked false are not
  offered, as in gpuhunt 0.1.34, which dstack 0.22 runs against this API (decision: a 0.1.x
  caller would otherwise be shown GPU counts it cannot create).
"""

from __future__ import annotations

import logging
import os
from typing import Any

from gpuhunt._internal.errors import MissingCredsError
from gpuhunt._internal.gpu_names import resolve_gpu
from gpuhunt._internal.load import livecache, transport
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem, JSONObject
from gpuhunt.providers._records import Gpu, offer
from gpuhunt.providers._report import ParseReport
from gpuhunt.providers.base import Ask, Collects, OnlineProvider, get_creds_env

logger = logging.getLogger(__name__)

NAME = "jarvislabs"
API_URL = "https://backendn.jarvislabs.net"
SERVER_META_PATH = "/misc/server_meta"
CREDENTIAL = "JL_API_KEY"
CREDENTIAL_ALIAS = "JARVISLABS_API_KEY"
API_URL_ENV = "JARVISLABS_API_URL"
# Region -> the API host that creates VMs there. Keep in sync with JarvisLabs' provisioning hosts.
JARVISLABS_REGION_URLS: dict[str, str] = {
    "india-01": "https://backendprod.jarvislabs.net",
    "india-chennai-01": "https://backendc.jarvislabs.net",
    "india-noida-01": "https://backendn.jarvislabs.net",
    "europe-01": "https://backendeu.jarvislabs.net",
}
_VM_WORKLOADS = ("vm", None)


class JarvisLabsProvider(Collects[ParseReport], OnlineProvider):
    NAME = NAME
    REPORT = ParseReport

    def __init__(self, api_key: str | None = None, api_url: str | None = None) -> None:
        self.api_key = api_key or _key_from_env()
        self.api_url = (api_url or API_URL).rstrip("/")

    def __repr__(self) -> str:
        return f"JarvisLabsProvider(api_key='***', api_url={self.api_url!r})"

    @classmethod
    def from_env(cls) -> JarvisLabsProvider:
        return cls(api_key=_key_from_env(), api_url=os.getenv(API_URL_ENV) or None)

    def collect(self, ask: Ask, report: ParseReport) -> list[CatalogItem]:
        if ask.spot is True:
            return []
        offers = parse_server_meta(fetch_server_meta(self.api_url, self.api_key), report=report)
        return sorted(offers, key=lambda i: (i.price, i.instance_name, i.location))


def _key_from_env() -> str:
    try:
        return get_creds_env(CREDENTIAL)
    except MissingCredsError:
        if alias := os.getenv(CREDENTIAL_ALIAS):
            return alias
        raise


def fetch_server_meta(api_url: str, api_key: str) -> Any:
    url = api_url + SERVER_META_PATH
    return livecache.request_json(
        "GET",
        url,
        provider=NAME,
        secret=api_key,
        credential=CREDENTIAL,
        headers={"Authorization": f"Bearer {api_key}"},
    )


def parse_server_meta(data: Any, *, report: ParseReport | None = None) -> list[CatalogItem]:
    """Offers from a decoded `server_meta` answer."""
    transport.require_fields(data, {"server_meta": list}, where=f"{NAME}: server_meta answer")
    cpu_meta = data.get("cpu_meta") or {}
    if not isinstance(cpu_meta, dict):
        transport.require_fields(data, {"cpu_meta": dict}, where=f"{NAME}: server_meta answer")
    report = report if report is not None else ParseReport(provider=JarvisLabsProvider.NAME)
    offers: list[CatalogItem] = []
    for row in data["server_meta"]:
        with report.record("GPU row"):
            offers.extend(_gpu_offers(row, report))
    for combo in cpu_meta.get("combinations") or []:
        with report.record("CPU combination"):
            offers.extend(_cpu_offers(combo, report))
    return offers


def _supported_region(region: str, report: ParseReport) -> bool:
    if region in JARVISLABS_REGION_URLS:
        return True
    report.counts["unsupported_region"] += 1
    logger.warning("%s: no provisioning host known for region %r, skipping", NAME, region)
    return False


def _gpu_offers(row: JSONObject, report: ParseReport) -> list[CatalogItem]:
    if not isinstance(row, dict):
        raise TypeError(f"row is a {type(row).__name__}")
    if row.get("workload_type") not in _VM_WORKLOADS:
        return []
    region = str(row["region"])
    if not _supported_region(region, report):
        return []
    gpu_type = str(row["gpu_type"])
    if not gpu_type:
        raise ValueError("empty gpu_type")
    price = float(row["price_per_hour"])
    cpu_per_gpu = int(row["cpus_per_gpu"])
    ram_per_gpu = float(row["ram_per_gpu"])
    free = _int_or_zero(row.get("effective_num_free_devices")) or _int_or_zero(
        row.get("num_free_devices")
    )
    per_machine = _int_or_zero(row.get("num_gpus")) or 1

    reported_memory = _float_or_none(row.get("vram"))
    gpu = resolve_gpu(gpu_type, reported_memory)
    if gpu is None:
        gpu_name = "".join(gpu_type.split())
        report.unknown_gpu(gpu_type, f"region {region}; kept as {gpu_name!r}")
        gpu_memory, vendor = reported_memory, AcceleratorVendor.NVIDIA
    else:
        gpu_name, gpu_memory, vendor = gpu.name, gpu.memory, gpu.vendor
    # n is within the free devices: the answer's reading that it can be created now
    data: JSONObject = {"gpu_type": gpu_type}

    def sized(n: int) -> CatalogItem:
        name, gpus = f"{gpu_name}-{n}x", Gpu(n, gpu_name, vendor, gpu_memory)
        cost, cpu, ram = round(price * n, 5), cpu_per_gpu * n, ram_per_gpu * n
        return offer(NAME, name, region, cost, cpu, ram, gpus, provider_data=data, available=True)

    return [sized(n) for n in range(1, min(free, per_machine) + 1)]


def _cpu_offers(combo: JSONObject, report: ParseReport) -> list[CatalogItem]:
    if not combo.get("available"):
        return []
    vcpus = int(combo["vcpus"])
    ram = float(combo["ram_gb"])
    price = float(combo["price"])
    name = f"cpu-{vcpus}x{ram:g}"
    return [
        offer(NAME, name, region, price, vcpus, ram, available=True)
        for region, available in (combo.get("regions") or {}).items()
        if available and _supported_region(region, report)
    ]


def _int_or_zero(value: Any) -> int:
    try:
        return int(float(value))
    except (TypeError, ValueError, OverflowError):
        return 0


def _float_or_none(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None
