"""Prime Intellect: a compute marketplace reselling GPU offers of many clouds, queried live.

Source: `GET https://api.primeintellect.ai/api/v1/availability/gpus?page=N&page_size=100` with
`Authorization: Bearer <PRIME_API_KEY>` (a key with the "Availability -> Read" permission),
answering `{"items": [...], "totalCount": N}` a page at a time (Prime Intellect's API guide,
https://docs.primeintellect.ai/api-reference/check-gpu-availability, and the endpoint's OpenAPI
page, read 2026-12-01; the same endpoint and fields SkyPilot's `fetch_primeintellect.py`
reads). `PRIME_API_KEY` is the variable Prime Intellect's own CLI reads. Each item is one offer
of one upstream `provider`: `cloudId` (its plan), `gpuType` ("H100_80GB"), `socket`,
`gpuCount`, `gpuMemory` (the offer's total), `dataCenter`, `country`, `vcpu`, `memory`,
`disk` (`defaultCount` each), `stockStatus`, `security`, `isSpot` and `prices` (`onDemand`,
`communityPrice`, `currency`).

Decisions:

- One offer per item, with the item's `stockStatus` as `CatalogItem.available`:
  "Unavailable" is False; "Available" (the guide's example) and "Low" (in stock, little of it)
  True; none, or a status not named here, leaves the reading out (no guess) and is counted
  in `last_report.counts["stock_status_unknown"]`. Until issue 38 an
  "Unavailable" item was left out (no release before had Prime Intellect, so no caller depends
  on that); it is now kept, marked, and still counted as "unavailable" in `last_report`.
  `CatalogItem.resold_from` is the upstream `provider` as a gpuhunt provider name where
  gpuhunt has one.
- Price: `prices.onDemand`, the offer's hourly price for all its GPUs (SkyPilot's published
  catalog has the 8-GPU Hyperstack H100 at 15.2 = 8 x the 1-GPU 1.9), else `communityPrice`;
  only USD prices are kept. `spot` is `isSpot`.
- `instance_name` is `<provider>:<cloudId>` (two upstreams may use the same plan name);
  `provider_data` keeps `provider`, `cloud_id`, `security` and `socket`, which creating a pod
  needs. `location` is the `dataCenter` (the `country` when there is none); the geography table
  takes the country from the answer's own `country`.
- GPU through `resolve_gpu(gpuType, memory)`, memory per GPU being `gpuMemory / gpuCount`
  (SkyPilot's catalog shows `gpuMemory` 160 for a 2-GPU A100 80 GB offer). A type the tables do
  not know is kept under Prime Intellect's spelling (NVIDIA unless the name says AMD), warned
  about and counted.
- Pages are followed until `totalCount` items (or an empty page) arrived, at most 50 pages.
- The request carries the key and passes `allow_redirects=False`.
- An item with a missing or ill-typed field is skipped and counted in `last_report`.
"""

from __future__ import annotations

from typing import Any

from gpuhunt._internal.errors import ProviderError
from gpuhunt._internal.load import transport
from gpuhunt._internal.models import CatalogItem, QueryFilter
from gpuhunt.providers._keyed import KeyedProvider, keyed_json
from gpuhunt.providers._records import (
    BadRecord,
    Gpu,
    count,
    gpu_or_kept,
    number,
    obj,
    offer,
    read_each,
    resold_from,
    text,
)
from gpuhunt.providers._report import ParseReport

NAME = "primeintellect"
AVAILABILITY_URL = "https://api.primeintellect.ai/api/v1/availability/gpus"
CREDENTIAL = "PRIME_API_KEY"
PAGE_SIZE = 100  # the API's maximum
MAX_PAGES = 50
MAX_PRICE_PER_HOUR = 10_000.0
# `stockStatus` values (lower-cased) read as availability; others give no reading.
_STOCK_READINGS = {"available": True, "low": True, "unavailable": False}


class PrimeIntellectProvider(KeyedProvider):
    NAME = NAME
    CREDENTIAL = CREDENTIAL
    HAS_SPOT = True

    def _offers(self, query_filter: QueryFilter | None, report: ParseReport) -> list[CatalogItem]:
        return parse_items(fetch_items(self.api_key), report)


def fetch_items(api_key: str) -> list[Any]:
    """Every item, over all pages."""
    auth = {"Authorization": f"Bearer {api_key}"}

    def page(number: int) -> Any:
        params = {"page": number, "page_size": PAGE_SIZE}
        return keyed_json("GET", AVAILABILITY_URL, NAME, CREDENTIAL, api_key, auth, params=params)

    return transport.collect_pages(
        page,
        "items",
        "totalCount",
        where=f"{NAME}: GET /api/v1/availability/gpus",
        max_pages=MAX_PAGES,
    )


def parse_items(items: list[Any], report: ParseReport | None = None) -> list[CatalogItem]:
    """Offers from decoded availability items."""
    report = report if report is not None else ParseReport(provider=NAME)
    if not isinstance(items, list):
        raise ProviderError(f"{NAME}: availability items: expected a list")
    return read_each(items, report, _what, _item_offer)


def _what(item: Any, index: int) -> str:
    if isinstance(item, dict) and isinstance(item.get("cloudId"), str):
        return f"offer {item.get('provider')}:{item['cloudId']}"
    return f"offer #{index}"


def _item_offer(raw: Any, report: ParseReport, what: str) -> list[CatalogItem]:

    item = obj(raw)
    available = _STOCK_READINGS.get(str(item.get("stockStatus") or "").lower())
    upstream = text(item, "provider")
    cloud_id = text(item, "cloudId")
    gpu_type = text(item, "gpuType")
    gpu_count = count(item, "gpuCount", high=64)
    prices = obj(item.get("prices"), "field 'prices'")
    currency = prices.get("currency", "USD")
    if currency != "USD":
        raise BadRecord(f"price in {currency!r}, not USD")
    key = "onDemand" if prices.get("onDemand") is not None else "communityPrice"
    price = number(prices, key, high=MAX_PRICE_PER_HOUR)
    location = item.get("dataCenter") or item.get("country")
    if not isinstance(location, str) or not location.strip():
        raise BadRecord("fields 'dataCenter' and 'country' are both missing")
    cpu = count(obj(item.get("vcpu"), "field 'vcpu'"), "defaultCount")
    memory = number(obj(item.get("memory"), "field 'memory'"), "defaultCount", high=64 * 1024)
    disk_record = item.get("disk")
    disk = (
        number(disk_record, "defaultCount")
        if isinstance(disk_record, dict) and disk_record.get("defaultCount") is not None
        else None
    )
    total_vram = item.get("gpuMemory")
    vram = number(item, "gpuMemory", high=64 * 1024) / gpu_count if total_vram is not None else None
    name, vendor, memory_per_gpu = gpu_or_kept(gpu_type, vram, report, what)
    provider_data: dict[str, Any] = {"provider": upstream, "cloud_id": cloud_id}
    for field, value in (("security", item.get("security")), ("socket", item.get("socket"))):
        if isinstance(value, str) and value:
            provider_data[field] = value
    if available is None:
        report.counts["stock_status_unknown"] += 1
    if available is False:
        report.counts["unavailable"] += 1
    gpu = Gpu(gpu_count, name, vendor, memory_per_gpu)
    what, where, spot = f"{upstream}:{cloud_id}", location.strip(), item.get("isSpot") is True
    data = provider_data
    return [
        offer(
            NAME,
            what,
            where,
            round(price, 5),
            cpu,
            memory,
            gpu,
            disk,
            spot=spot,
            provider_data=data,
            available=available,
            resold_from=resold_from(upstream),
        )
    ]
