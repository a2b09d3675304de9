"""OVHcloud: Public Cloud instances (CPU and GPU) from OVHcloud's public order catalog, collected
nightly.

Source: `GET https://eu.api.ovh.com/1.0/order/catalog/public/cloud?ovhSubsidiary=FR`, public
(no application key, no signature), one JSON document: `locale` (`currencyCode`, `subsidiary`),
`plans` and `addons`. Each instance flavor is an addon with `product` "publiccloud-instance",
a `planCode` per billing mode ("h100-380.consumption" hourly, "h100-380.monthly.postpaid",
regional variants such as ".consumption.3AZ" or ".consumption.LZ.EU"), `pricings` (`price` in
**1e-8 of the currency**, `intervalUnit` "hour" for consumption) and `blobs.technical` (`cpu.cores`,
`memory.size` GB, `gpu.model`, `gpu.number`, `gpu.memory.size`, `storage.disks[].capacity`,
`os.family`). The endpoint, the addon fields and the price unit are those OVHcloud's manager code reads
(`@ovh-ux/manager-core-api` clients of `/order/catalog/public/cloud`) and other public tools
document ("prices in units of 1e-8 EUR, net of the taxRate in locale"), read 2026-12-01. SkyPilot has no OVHcloud fetcher.

Offline rather than online: the catalog is public and changes by the month; it is collected
every 24 hours (the registry's default cadence and plausibility thresholds).

What the public catalog cannot say, and so this provider does not: in which regions a flavor is
available. That is in the authenticated, signed `/cloud/project/{id}/flavor` API (an OVHcloud
application key, secret and consumer key, and a project); gpuhunt does not call it. Prices are
the same in every region of the price list, so each flavor is one offer with `location` "eu"
(OVHcloud Europe's catalog, FR subsidiary), which has no row in the geography table: a
country would be a guess.

Decisions:

- Only the standard hourly plan (`<flavor>.consumption`) is offered; monthly, 3-AZ and
  Local Zone variants and Windows-licensed flavors (`win-`) are left out and counted.
- The catalog prices in **EUR**, excluding VAT; `price` is that converted to USD at the ECB
  reference rate of the collection day (`_internal/currency.py`), with the EUR price, rate and
  rate date in `provider_data` (`currency`, `price_native`, `fx_rate`, `fx_date`).
- GPU through `resolve_gpu(gpu.model, gpu.memory.size)`; an unknown model is kept under
  OVHcloud's spelling (NVIDIA), warned about and counted. Malformed addons are skipped and
  counted.
"""

from __future__ import annotations

import re
from typing import Any

from gpuhunt._internal import currency
from gpuhunt._internal.errors import ProviderError
from gpuhunt._internal.load import transport
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem
from gpuhunt.providers._records import BadRecord, count, gpu_or_kept, number, obj, read_each
from gpuhunt.providers._report import ParseReport
from gpuhunt.providers.base import Ask, Collects, OfflineProvider

NAME = "ovhcloud"
CATALOG_URL = "https://eu.api.ovh.com/1.0/order/catalog/public/cloud"
SUBSIDIARY = "FR"
LOCATION = "eu"
INSTANCE_PRODUCT = "publiccloud-instance"
PRICE_UNIT = 1e8  # catalog prices are in 1e-8 of the currency
_HOURLY_PLAN = re.compile(r"^([a-z0-9][a-z0-9-]*)\.consumption$")


class OVHcloudProvider(Collects[ParseReport], OfflineProvider):
    REPORT = ParseReport
    NAME = NAME

    def collect(self, ask: Ask, report: ParseReport) -> list[CatalogItem]:
        offers = parse_catalog(fetch_catalog(), report)
        return sorted(offers, key=lambda i: (i.price, i.instance_name))


def fetch_catalog() -> Any:
    return transport.request_json(
        "GET",
        CATALOG_URL,
        provider=NAME,
        params={"ovhSubsidiary": SUBSIDIARY},
        headers={"Accept": "application/json"},
    )


def parse_catalog(
    catalog: Any, report: ParseReport | None = None, rate: currency.Rate | None = None
) -> list[CatalogItem]:
    report = report if report is not None else ParseReport(provider=NAME)
    transport.require_fields(catalog, {"addons": list}, where=f"{NAME}: public cloud catalog")
    locale = catalog.get("locale")
    currency_code = locale.get("currencyCode") if isinstance(locale, dict) else None
    if currency_code != "EUR":
        raise ProviderError(f"{NAME}: catalog prices are in {currency_code!r}, expected EUR")
    # One rate for the whole catalog (default: today's ECB EUR rate).
    rate = rate if rate is not None else currency.reference_rate(currency_code)

    def parse(addon: Any, report: ParseReport, what: str) -> list[CatalogItem]:
        offer = _addon_offer(addon, report, rate)
        return [] if offer is None else [offer]

    return read_each(catalog["addons"], report, _what, parse)


def _what(addon: Any, index: int) -> str:
    plan = addon.get("planCode") if isinstance(addon, dict) else None
    return f"plan {plan!r}" if isinstance(plan, str) else f"addon #{index}"


def _addon_offer(raw: Any, report: ParseReport, rate: currency.Rate) -> CatalogItem | None:
    addon = obj(raw)
    if addon.get("product") != INSTANCE_PRODUCT:
        return None  # storage, IPs, licences...: not an instance
    plan = addon.get("planCode")
    match = _HOURLY_PLAN.match(plan) if isinstance(plan, str) else None
    if match is None:
        report.counts["other_plan"] += 1  # monthly, 3-AZ, Local Zone
        return None
    flavor = match.group(1)
    technical = obj(obj(addon.get("blobs"), "field 'blobs'").get("technical"), "blobs.technical")
    os_record = technical.get("os")
    if flavor.startswith("win-") or (
        isinstance(os_record, dict) and os_record.get("family") == "windows"
    ):
        report.counts["windows"] += 1
        return None
    price = _hourly_price(addon)
    cpu = count(obj(technical.get("cpu"), "field 'technical.cpu'"), "cores")
    memory = number(obj(technical.get("memory"), "field 'technical.memory'"), "size")
    disk = _disk(technical)
    gpu_count = 0
    gpu_name: str | None = None
    gpu_memory: float | None = None
    vendor: AcceleratorVendor | None = None
    gpu = technical.get("gpu")
    if isinstance(gpu, dict) and gpu.get("number"):
        gpu_count = count(gpu, "number", high=64)
        model = gpu.get("model")
        if not isinstance(model, str) or not model.strip():
            raise BadRecord("field 'gpu.model' is missing or empty")
        vram_record = gpu.get("memory")
        vram = (
            number(vram_record, "size", high=1024)
            if isinstance(vram_record, dict) and "size" in vram_record
            else None
        )
        gpu_name, vendor, gpu_memory = gpu_or_kept(model, vram, report, f"flavor {flavor}")
    return CatalogItem(
        provider=NAME,
        instance_name=flavor,
        location=LOCATION,
        price=currency.to_usd(price, rate),
        cpu=cpu,
        memory=memory,
        gpu_count=gpu_count,
        gpu_name=gpu_name,
        gpu_memory=gpu_memory,
        spot=False,
        disk_size=disk,
        gpu_vendor=vendor,
        **currency.native_fields(round(price, 6), rate),
    )


def _hourly_price(addon: dict[str, Any]) -> float:
    pricings = addon.get("pricings")
    if not isinstance(pricings, list):
        raise BadRecord("field 'pricings' is missing or not a list")
    for pricing in pricings:
        if isinstance(pricing, dict) and pricing.get("intervalUnit") == "hour":
            return number(pricing, "price", high=1e15) / PRICE_UNIT
    raise BadRecord("no hourly price in 'pricings'")


def _disk(technical: dict[str, Any]) -> float | None:
    storage = technical.get("storage")
    disks = storage.get("disks") if isinstance(storage, dict) else None
    if not isinstance(disks, list) or not disks:
        return None
    return sum(number(obj(d, "a 'storage.disks' entry"), "capacity") for d in disks)
