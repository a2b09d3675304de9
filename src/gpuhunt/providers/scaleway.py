"""Scaleway: Instances (CPU and GPU) from Scaleway's public product catalog, collected nightly.

Source: `GET https://api.scaleway.com/product-catalog/v2alpha1/public-catalog/products`
with `product_types=instance`, `page` and `page_size`, answering
`{"products": [...], "total_count": N}`. The catalog "does not require authentication"
(Scaleway's Product Catalog API reference,
https://www.scaleway.com/en/developers/api/product-catalog/public-catalog/, read 2026-12-01);
the field names are those of its example and of Scaleway's SDK types
(scaleway-sdk-python `product_catalog/v2alpha1/types.py`). SkyPilot has no Scaleway fetcher;
its catalog sees Scaleway only through Shadeform.

Offline rather than online: the price list is public (no user key is needed to read it) and
changes by the month, not the minute; reading it whole takes several pages. It is collected
every 24 hours (the registry's default cadence and plausibility thresholds, made for a price
list).

Each product used is one Instance type in one zone: `properties.instance.offer_id`
("H100-1-80G"; the reference's own example has none, and then `product`, "POP2-HC-2C-4G
Instance", names the type), `locality.zone`, `price.retail_price` (`currency_code`,
`units`, `nanos`) per `unit_of_measure` (`hour`, `size`), `properties.hardware` (`cpu.virtual.count`,
`cpu.arch`, `ram.size` in bytes, `storage.total` in bytes, `gpu.count`, `gpu.type`,
`gpu.description`) and `status`.

Decisions:

- Scaleway prices in **EUR**; `price` is that converted to USD at the ECB reference rate of
  the collection day (`_internal/currency.py`), with the EUR price, rate and rate date kept in
  `provider_data` (`currency`, `price_native`, `fx_rate`, `fx_date`; docs/currency.md). A price
  in another currency is a malformed product (skipped and counted).
- Products of another unit than one hour, without a zone, or whose status is
  `end_of_sale`, `end_of_deployment`, `end_of_support`, `end_of_life` or `retired` (cannot be
  ordered) are left out and counted; other malformed products are skipped and counted.
- `disk_size` is the local storage in GB (`storage.total`), None when it is 0 (block storage
  only, sized at order time). `cpu_arch` from `cpu.arch` (`arm64` -> ARM).
- GPU through `resolve_gpu(gpu.type, memory)`, the memory per GPU taken from the offer id's
  trailing size ("H100-1-80G" -> 80) when it has one, else from the description; an unknown
  model is kept under Scaleway's spelling (NVIDIA), warned about and counted.
- Pages are followed until `total_count` products arrived or a page comes back empty (at most
  100 pages).
"""

from __future__ import annotations

import re
from typing import Any

from gpuhunt._internal import currency
from gpuhunt._internal.gpu_names import gpu_memory_from_name
from gpuhunt._internal.load import transport
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem, CPUArchitecture
from gpuhunt.providers._records import (
    BadRecord,
    count,
    gpu_or_kept,
    number,
    obj,
    read_each,
    text,
)
from gpuhunt.providers._report import ParseReport
from gpuhunt.providers.base import Ask, Collects, OfflineProvider

NAME = "scaleway"
PRODUCTS_URL = "https://api.scaleway.com/product-catalog/v2alpha1/public-catalog/products"
PAGE_SIZE = 100
MAX_PAGES = 100
GIB = 1024**3
GB = 1000**3
NOT_ORDERABLE = frozenset(
    {"end_of_sale", "end_of_deployment", "end_of_support", "end_of_life", "retired"}
)
_OFFER_MEMORY = re.compile(r"-(\d+)G$", re.IGNORECASE)


class ScalewayProvider(Collects[ParseReport], OfflineProvider):
    REPORT = ParseReport
    NAME = NAME

    def collect(self, ask: Ask, report: ParseReport) -> list[CatalogItem]:
        offers = parse_products(fetch_products(), report)
        return sorted(offers, key=lambda i: (i.price, i.instance_name, i.location))


def fetch_products() -> list[Any]:
    """Every Instance product, over all pages."""

    def page(number: int) -> Any:
        return transport.request_json(
            "GET",
            PRODUCTS_URL,
            provider=NAME,
            params={"product_types": "instance", "page": number, "page_size": PAGE_SIZE},
            headers={"Accept": "application/json"},
        )

    return transport.collect_pages(
        page, "products", "total_count", where=f"{NAME}: public-catalog", max_pages=MAX_PAGES
    )


def parse_products(
    products: list[Any], report: ParseReport | None = None, rate: currency.Rate | None = None
) -> list[CatalogItem]:
    # One rate for the whole list (default: today's ECB EUR rate); failing it fails the list.
    rate = rate if rate is not None else currency.reference_rate("EUR")
    report = report if report is not None else ParseReport(provider=NAME)

    def parse(product: Any, report: ParseReport, what: str) -> list[CatalogItem]:
        offer = _product_offer(product, report, what, rate)
        return [] if offer is None else [offer]

    return read_each(products, report, _what, parse)


def _what(product: Any, index: int) -> str:
    sku = product.get("sku") if isinstance(product, dict) else None
    return f"product {sku!r}" if isinstance(sku, str) else f"product #{index}"


def _product_offer(
    raw: Any, report: ParseReport, what: str, rate: currency.Rate
) -> CatalogItem | None:
    product = obj(raw)
    if product.get("status") in NOT_ORDERABLE:
        report.counts["not_orderable"] += 1
        return None
    properties = obj(product.get("properties"), "field 'properties'")
    instance = properties.get("instance")
    if not isinstance(instance, dict):
        report.counts["not_an_instance"] += 1
        return None
    offer_id = _offer_id(product, instance)
    unit = obj(product.get("unit_of_measure"), "field 'unit_of_measure'")
    if unit.get("unit") != "hour" or unit.get("size") != 1:
        report.counts["not_hourly"] += 1
        return None
    locality = obj(product.get("locality"), "field 'locality'")
    zone = locality.get("zone")
    if not isinstance(zone, str) or not zone:
        report.counts["no_zone"] += 1
        return None
    price = _price(obj(product.get("price"), "field 'price'"))
    hardware = obj(properties.get("hardware"), "field 'properties.hardware'")
    cpu_record = obj(hardware.get("cpu"), "field 'hardware.cpu'")
    virtual = cpu_record.get("virtual")
    cpu = count(virtual, "count") if isinstance(virtual, dict) else count(cpu_record, "threads")
    arch = CPUArchitecture.ARM if cpu_record.get("arch") == "arm64" else CPUArchitecture.X86
    memory = number(obj(hardware.get("ram"), "field 'hardware.ram'"), "size") / GIB
    storage = hardware.get("storage")
    local = storage.get("total") if isinstance(storage, dict) else None
    disk = float(local) / GB if isinstance(local, (int, float)) and local > 0 else None
    gpu_count = 0
    gpu_name: str | None = None
    gpu_memory: float | None = None
    vendor: AcceleratorVendor | None = None
    gpu = hardware.get("gpu")
    if isinstance(gpu, dict) and gpu.get("count"):
        gpu_count = count(gpu, "count", high=64)
        gpu_name, vendor, gpu_memory = _gpu(gpu, offer_id, report, what)
    return CatalogItem(
        provider=NAME,
        instance_name=offer_id,
        location=zone,
        price=currency.to_usd(price, rate),
        cpu=cpu,
        memory=round(memory, 3),
        gpu_count=gpu_count,
        gpu_name=gpu_name,
        gpu_memory=gpu_memory,
        spot=False,
        disk_size=disk,
        gpu_vendor=vendor,
        cpu_arch=arch,
        **currency.native_fields(round(price, 6), rate),
    )


def _offer_id(product: dict[str, Any], instance: dict[str, Any]) -> str:
    """The Instance type: `properties.instance.offer_id`, or, as in the API reference's own
    example, which has none, the `product` name without its " Instance" suffix."""
    offer_id = instance.get("offer_id")
    if isinstance(offer_id, str) and offer_id.strip():
        return offer_id.strip()
    name = text(product, "product")
    if not name.endswith(" Instance"):
        raise BadRecord("no 'offer_id' and 'product' does not name an Instance type")
    return name.removesuffix(" Instance").strip()


def _price(price: dict[str, Any]) -> float:
    retail = obj(price.get("retail_price"), "field 'price.retail_price'")
    if retail.get("currency_code") != "EUR":
        raise BadRecord(f"price in {retail.get('currency_code')!r}, not EUR")
    units = retail.get("units", 0)
    nanos = retail.get("nanos", 0)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (units, nanos)):
        raise BadRecord("price 'units'/'nanos' are not whole numbers")
    value: float = units + nanos / 1e9
    if not value > 0:
        raise BadRecord(f"price is {value!r}, not positive")
    return value


def _gpu(
    gpu: dict[str, Any], offer_id: str, report: ParseReport, what: str
) -> tuple[str, AcceleratorVendor, float | None]:
    spelling = text(gpu, "type")
    description = gpu.get("description") if isinstance(gpu.get("description"), str) else ""
    m = _OFFER_MEMORY.search(offer_id)
    memory = float(m.group(1)) if m else gpu_memory_from_name(str(description))
    return gpu_or_kept(spelling, memory, report, what, str(description))
