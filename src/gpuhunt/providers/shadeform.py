"""Shadeform: a marketplace of GPU VMs from many clouds behind one API, queried live.

Source: `GET https://api.shadeform.ai/v1/instances/types?available=true` with the key in the
`X-API-KEY` header (`SHADEFORM_API_KEY`); one answer `{"instance_types": [...]}`, no pagination
(Shadeform's API reference, https://docs.shadeform.ai/api-reference/instances/instances-types,
and its OpenAPI spec, github.com/shadeform/docs `openapi.yaml`, read 2026-12-01; the same
endpoint, header, parameter and fields as SkyPilot's `fetch_shadeform.py`). Each record is one
instance type of one underlying `cloud`: `shade_instance_type` (Shadeform's standard name,
"A6000", "H100x8"), `cloud_instance_type`, `configuration` (`vcpus`, `memory_in_gb`,
`storage_in_gb`, `num_gpus`, `gpu_type`, `vram_per_gpu_in_gb`, `gpu_manufacturer`,
`interconnect`, `nvlink`), `hourly_price` **in cents** and `availability` (`region`,
`available`).

Decisions:

- One offer per instance type and region the answer lists, with the region's reading in
  `CatalogItem.available` (True or False, as Shadeform said). Until issue 38 only the
  regions with `available` true were kept (no release before had Shadeform, so no caller
  depends on that); a sold-out region is now listed and marked, so the person choosing where
  to run sees that the type exists there and filters with `available=True` for what launches
  now. The request still passes `available=true`, which keeps the answer to the types that can
  be launched somewhere (a marketplace lists many more).
- `instance_name` is `<cloud>_<shade_instance_type>` (two clouds sell the same Shadeform type
  at different prices); `provider_data` keeps `cloud` and `cloud_instance_type`, which a
  launch through Shadeform needs; whose machine it is, as the gpuhunt
  provider name where gpuhunt has that provider, as `CatalogItem.resold_from` ("datacrunch" is Verda, "lambda" and
  "lambdalabs" are Lambda), else Shadeform's own spelling of the cloud.
- Price: `hourly_price` / 100. On-demand only (`spot=True` queries make no call).
- GPU through `resolve_gpu(gpu_type, vram_per_gpu_in_gb)`; a model the tables do not know is
  kept under Shadeform's spelling with the vendor from `gpu_manufacturer`, warned about and
  counted; without a vendor either, the record is skipped.
- The request carries the key and passes `allow_redirects=False`.
- A record with a missing or ill-typed field is skipped and counted in `last_report`.
"""

from __future__ import annotations

from typing import Any

from gpuhunt._internal.errors import ProviderError
from gpuhunt._internal.gpu_names import resolve_gpu
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem, QueryFilter
from gpuhunt.providers._keyed import KeyedProvider, keyed_json
from gpuhunt.providers._records import (
    BadRecord,
    Gpu,
    count,
    number,
    obj,
    offer,
    read_each,
    resold_from,
    text,
)
from gpuhunt.providers._report import ParseReport

NAME = "shadeform"
TYPES_URL = "https://api.shadeform.ai/v1/instances/types"
CREDENTIAL = "SHADEFORM_API_KEY"
MAX_CENTS_PER_HOUR = 100_000.0


class ShadeformProvider(KeyedProvider):
    NAME = NAME
    CREDENTIAL = CREDENTIAL

    def _offers(self, query_filter: QueryFilter | None, report: ParseReport) -> list[CatalogItem]:
        return parse_instance_types(fetch_instance_types(self.api_key), report)


def fetch_instance_types(api_key: str) -> Any:
    auth = {"X-API-KEY": api_key}
    return keyed_json(
        "GET", TYPES_URL, NAME, CREDENTIAL, api_key, auth, params={"available": "true"}
    )


def parse_instance_types(payload: Any, report: ParseReport | None = None) -> list[CatalogItem]:
    """Offers from a decoded `/instances/types` answer."""
    report = report if report is not None else ParseReport(provider=NAME)
    if not isinstance(payload, dict) or not isinstance(payload.get("instance_types"), list):
        raise ProviderError(f"{NAME}: /instances/types: expected an object with 'instance_types'")
    return read_each(payload["instance_types"], report, _what, _type_offers)


def _what(record: Any, index: int) -> str:
    if isinstance(record, dict) and isinstance(record.get("shade_instance_type"), str):
        return f"instance type {record.get('cloud')}_{record['shade_instance_type']}"
    return f"instance type #{index}"


def _type_offers(raw: Any, report: ParseReport, what: str) -> list[CatalogItem]:
    record = obj(raw)
    cloud = text(record, "cloud")
    shade_type = text(record, "shade_instance_type")
    config = obj(record.get("configuration"), "field 'configuration'")
    price = number(record, "hourly_price", high=MAX_CENTS_PER_HOUR) / 100
    cpu = count(config, "vcpus")
    memory = number(config, "memory_in_gb", high=64 * 1024)
    disk = (
        number(config, "storage_in_gb", high=10 * 1024 * 1024)
        if "storage_in_gb" in config
        else None
    )
    gpu_count = count(config, "num_gpus", low=0, high=64)
    availability = record.get("availability")
    if not isinstance(availability, list):
        raise BadRecord("field 'availability' is missing or not a list")
    regions: list[tuple[str, bool]] = []
    for entry in availability:
        entry = obj(entry, "an 'availability' entry")
        available = entry.get("available")
        if isinstance(available, bool):  # without a reading, the region is not offered
            regions.append((text(entry, "region"), available))
    gpu_name: str | None = None
    gpu_memory: float | None = None
    vendor: AcceleratorVendor | None = None
    if gpu_count:
        gpu_name, vendor, gpu_memory = _gpu(config, report, what)
    provider_data: dict[str, Any] = {"cloud": cloud}
    if isinstance(record.get("cloud_instance_type"), str):
        provider_data["cloud_instance_type"] = record["cloud_instance_type"]
    origin = resold_from(cloud)
    name, gpu = f"{cloud}_{shade_type}", Gpu(gpu_count, gpu_name, vendor, gpu_memory)
    size = (round(price, 5), cpu, memory, gpu, disk)
    return [
        offer(
            NAME, name, region, *size, provider_data=provider_data, available=ok, resold_from=origin
        )
        for region, ok in regions
    ]


def _gpu(
    config: dict[str, Any], report: ParseReport, what: str
) -> tuple[str, AcceleratorVendor, float | None]:
    gpu_type = text(config, "gpu_type")
    vram = (
        number(config, "vram_per_gpu_in_gb", high=1024) if "vram_per_gpu_in_gb" in config else None
    )
    resolved = resolve_gpu(gpu_type, vram)
    if resolved is not None:
        return resolved.name, resolved.vendor, resolved.memory
    try:
        vendor = AcceleratorVendor.cast(str(config.get("gpu_manufacturer") or ""))
    except ValueError:
        raise BadRecord(f"GPU {gpu_type!r} is unknown and no vendor can be told") from None
    report.unknown_gpu(gpu_type, f"{what}; kept under that name")
    return gpu_type, vendor, vram
