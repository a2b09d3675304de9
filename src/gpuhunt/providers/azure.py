"""Azure: VM sizes from the Compute resource SKUs, prices from the public Retail Prices API.

Two sources, joined on the size name (`Standard_ND96isr_H100_v5`):

- **Specs**: `ComputeManagementClient.resource_skus.list()` (`GET /subscriptions/{id}/providers/
  Microsoft.Compute/skus`), authenticated with `DefaultAzureCredential` for the subscription in
  `AZURE_SUBSCRIPTION_ID`. The live API returns one record per size and region; only
  `resourceType == "virtualMachines"` matters. Capabilities are strings: `vCPUs`,
  `vCPUsAvailable`, `MemoryGB` (GiB), `GPUs`, `CpuArchitectureType` (`x64`/`Arm64`).
- **Prices**: `GET https://prices.azure.com/api/retail/prices` (no auth), one walk per region that
  has a size, following `NextPageLink` until it is null. The `$filter` asks for Virtual Machines,
  `Consumption` prices, no Windows, no Low Priority (Azure retires Low Priority in favour of
  Spot); spot prices are the `Consumption` meters whose name ends in "Spot".

Decisions:

- The same checks run again on every price item (type, currency, unit, Windows, Low Priority,
  Dedicated Host): the filter is the API's business, a wrong price in the catalog is ours.
  When the API lists one size twice in a region (primary and non-primary meters), the lower price
  wins, so the result does not depend on page order.
- vCPUs are `vCPUsAvailable` when present: constrained-core sizes (`E16-4s_v3`) bill for 16
  vCPUs but the guest sees 4. Memory is `MemoryGB` as reported (GiB). `disk_size` is None: the
  resource disk is temporary scratch space, the OS disk is chosen at launch.
- The SKU names no GPU model, only a count. The model and memory come from the size name:
  a table of the GPU series below (Microsoft's size docs are the source of each row), then any
  part of the name that the accelerator tables know (`ND128isr_NDR_GB200_v6` -> GB200). A
  partitioned GPU (NVadsA10 v5: 1/6 to 1 A10) is reported as one GPU with its share of memory.
  A GPU size we cannot name is skipped, warned about and counted in `last_report`: the SKU gives
  no vendor either, and an offer needs one.
- Offers in the regions Microsoft lists as access restricted carry the flag
  `azure-restricted-region`, partitioned-GPU sizes `fractional-gpu` (`_internal/rentable.py`);
  a region whose spot prices are one fixed share of on-demand unlike every other region's is a
  price-list placeholder: its spot offers are left out and counted (`placeholder_spot`).
- Retired (previous-generation) series are skipped. Sizes with a price but no spec (or the
  reverse) produce no offer; priced-but-unknown sizes are counted.
- A price walk that still fails after the transport's bounded retries fails the collection
  (`ProviderError`): a catalog silently missing a region is worse than yesterday's catalog,
  which the nightly build keeps when a provider fails.
- `NextPageLink` is followed only on the prices host and at most `MAX_PAGES_PER_REGION` times,
  and a link seen twice ends the walk, so a misbehaving API cannot loop us forever.
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from gpuhunt._internal.costs.terms import Term, parse_azure_reservations
from gpuhunt._internal.errors import ProviderError
from gpuhunt._internal.formats import terms as terms_file
from gpuhunt._internal.gpu_names import resolve_gpu
from gpuhunt._internal.load import transport
from gpuhunt._internal.models import (
    AcceleratorVendor,
    CatalogItem,
    CPUArchitecture,
)
from gpuhunt._internal.registry import sdk_imports
from gpuhunt._internal.rentable import drop_placeholder_spot, offer_flags
from gpuhunt.providers import _report
from gpuhunt.providers._records import Gpu, need_number, offer
from gpuhunt.providers.base import Ask, Collects, OfflineProvider, get_creds_env

if TYPE_CHECKING:
    from azure.core.credentials import TokenCredential
    from azure.mgmt.compute import ComputeManagementClient

logger = logging.getLogger(__name__)

SUBSCRIPTION_ENV = "AZURE_SUBSCRIPTION_ID"
PRICES_URL = "https://prices.azure.com/api/retail/prices"
PRICES_API_VERSION = "2023-01-01-preview"
PRICES_FILTER = (
    "serviceName eq 'Virtual Machines'",
    "priceType eq 'Consumption'",
    "contains(productName, 'Windows') eq false",
    "contains(productName, 'Dedicated') eq false",
    "contains(meterName, 'Low Priority') eq false",
)
MAX_PAGES_PER_REGION = 200
PRICE_THREADS = 8
# The ARM SDK retries 408/429/5xx itself; bounded, with exponential backoff.
SDK_RETRY_TOTAL = 3
SDK_RETRY_BACKOFF = 0.8
SDK_CONNECT_TIMEOUT = 10
SDK_READ_TIMEOUT = 120
CREDENTIAL_HINT = f"DefaultAzureCredential and {SUBSCRIPTION_ENV}"


def prices_filter(region: str, price_type: str = "Consumption") -> str:
    """The Retail Prices `$filter` for one region; `price_type` "Reservation" asks for the
    1- and 3-year reservations (their `unitPrice` is the whole term's price)."""
    wanted = [f"priceType eq '{price_type}'" if "priceType" in f else f for f in PRICES_FILTER]
    return " and ".join([*wanted, f"armRegionName eq '{region}'"])


# ---------------------------------------------------------------------------------------------
# GPU series: size-name pattern (without "Standard_") -> GPU. `full_at` is the vCPU count
# (the size number) at which a partitioned series gets a whole GPU.


@dataclass(frozen=True)
class _Series:
    pattern: str
    gpu_name: str
    memory: float  # GiB per (whole) GPU
    full_at: int | None = None


GPU_SERIES: tuple[_Series, ...] = (
    _Series(r"NC(\d+)r?s_v3", "V100", 16),  # NCv3
    _Series(r"ND(\d+)rs_v2", "V100", 32),  # NDv2
    _Series(r"NC(\d+)as_T4_v3", "T4", 16),  # NCasT4_v3
    _Series(r"NC(\d+)ads_A100_v4", "A100", 80),  # NC A100 v4 (PCIe 80 GB)
    _Series(r"ND(\d+)asr_v4", "A100", 40),  # ND A100 v4 (SXM 40 GB)
    _Series(r"ND(\d+)amsr_A100_v4", "A100", 80),  # NDm A100 v4 (SXM 80 GB)
    _Series(r"NCC?(\d+)adi?s_H100_v5", "H100NVL", 94),  # NC(C) H100 v5: H100 NVL
    _Series(r"ND(\d+)isr?f?_H100_v5", "H100", 80),  # ND H100 v5
    _Series(r"ND(\d+)isr?f?_H200_v5", "H200", 141),  # ND H200 v5
    _Series(r"ND(\d+)isr?_MI300X_v5", "MI300X", 192),  # ND MI300X v5
    _Series(r"NV(\d+)adm?s_A10_v5", "A10", 24, full_at=36),  # NVadsA10 v5: 1/6 .. 1 A10
    _Series(r"NC(\d+)ads_A10_v4", "A10", 24, full_at=16),  # NC A10 v4
    _Series(r"NV(\d+)s_v3", "M60", 8),  # NVv3
)
_SERIES_RE = [(re.compile(f"^Standard_{s.pattern}$"), s) for s in GPU_SERIES]

# Previous-generation series Azure has retired or is retiring; never collected.
RETIRED_SERIES = re.compile(
    r"^(Basic_A\d+|Standard_A\d+|Standard_D\d+|Standard_DS\d+|Standard_DC\d+s|Standard_F\d+s?"
    r"|Standard_GS?\d+|Standard_L\d+s|Standard_NC\d+r?|Standard_NC\d+r?s_v2|Standard_ND\d+r?s"
    r"|Standard_NV\d+|Standard_NV\d+s_v2)$"
)

# Families kept by `filter()`: the CPU sizes and the GPU series users launch.
# CPU: Dsv3 and Esv4 (with its isolated and constrained-vCPU sizes) only, as gpuhunt 0.1.x
# publishes: they are the CPU series dstack's Azure backend launches (its supported-series list:
# Dsv3, Esv4 and the GPU series below; it needs premium-storage "s" sizes). Ev3/Esv3, Dv4 and
# newer generations would only add rows no dstack version launches.
KEEP_SERIES = re.compile(
    r"^Standard_("
    r"D\d+s_v3"  # Dsv3
    r"|E\d+i?s_v4|E\d+-\d+s_v4"  # Esv4, isolated (E80is_v4), constrained vCPU (E16-4s_v4)
    r"|NC\d+r?s_v3|ND\d+rs_v2|NC\d+as_T4_v3|NC\d+ads_A100_v4|ND\d+asr_v4|ND\d+amsr_A100_v4"
    r"|NCC?\d+adi?s_H100_v5|ND\d+isr?f?_H100_v5|ND\d+isr?f?_H200_v5|ND\d+isr?_MI300X_v5"
    r"|NV\d+adm?s_A10_v5|NC\d+ads_A10_v4"
    r")$"
)


@dataclass(frozen=True)
class GPUSpec:
    name: str
    memory: float | None
    vendor: AcceleratorVendor


def gpu_for_size(size_name: str) -> GPUSpec | None:
    """The GPU of a GPU size, from its name; None when the name tells us nothing we know."""
    for regex, series in _SERIES_RE:
        if m := regex.match(size_name):
            gpu = resolve_gpu(series.gpu_name, float(series.memory))
            assert gpu is not None, series.gpu_name  # the table only names known GPUs
            memory = gpu.memory
            if series.full_at:
                memory = round(memory * min(1.0, int(m.group(1)) / series.full_at), 2)
            return GPUSpec(gpu.name, memory, gpu.vendor)
    # "Standard_ND128isr_NDR_GB200_v6" -> "NDR", "GB200"
    for token in size_name.split("_")[2:]:
        if re.fullmatch(r"v\d+", token):
            continue
        if (gpu := resolve_gpu(token)) is not None:
            return GPUSpec(gpu.name, gpu.memory or None, gpu.vendor)
    return None


def is_retired(size_name: str) -> bool:
    return RETIRED_SERIES.match(size_name) is not None


# ---------------------------------------------------------------------------------------------
# Parsing (pure)


@dataclass
class ParseReport(_report.ParseReport):
    """azure's collection report (see `providers._report`)."""

    provider: str = "azure"
    unpriced_sizes: Counter[str] = field(default_factory=Counter)  # priced, but no spec
    # region -> spot offers left out as placeholder prices (`rentable.drop_placeholder_spot`)
    placeholder_spot: Counter[str] = field(default_factory=Counter)


@dataclass(frozen=True)
class VMSize:
    name: str
    cpu: int
    memory: float
    gpu_count: int
    gpu: GPUSpec | None
    cpu_arch: CPUArchitecture
    locations: frozenset[str]


def _capabilities(record: Mapping[str, Any]) -> dict[str, str]:
    caps = record.get("capabilities")
    if not isinstance(caps, list):
        raise ValueError("no capabilities list")
    out: dict[str, str] = {}
    for cap in caps:
        if isinstance(cap, Mapping) and isinstance(cap.get("name"), str):
            out[cap["name"]] = str(cap.get("value"))
    return out


def _number(caps: Mapping[str, str], name: str) -> float:
    value = need_number(
        caps.get(name), f"capability {name!r}", refusal="is missing", parse_text=True
    )
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"capability {name!r} is out of range: {caps[name]!r}")
    return value


def parse_vm_size(record: Mapping[str, Any], report: ParseReport) -> VMSize | None:
    """One resource SKU record (REST JSON) -> a VM size, or None if it is not one we list."""
    name = record.get("name")
    if not isinstance(name, str) or not name:
        report.skip("resource SKU without a name", "field 'name' is missing")
        return None
    if record.get("resourceType") != "virtualMachines" or is_retired(name):
        return None
    try:
        caps = _capabilities(record)
        cpu = _number(caps, "vCPUsAvailable") if "vCPUsAvailable" in caps else None
        cpu = cpu or _number(caps, "vCPUs")
        memory = _number(caps, "MemoryGB")
        gpu_count = int(_number(caps, "GPUs")) if "GPUs" in caps else 0
    except ValueError as e:
        report.skip(name, str(e))
        return None
    if cpu < 1 or memory <= 0:
        report.skip(name, f"vCPUs={cpu} MemoryGB={memory}")
        return None
    gpu = None
    if gpu_count:
        gpu = gpu_for_size(name)
        if gpu is None:
            report.unknown_gpu(name, f"{gpu_count} GPUs in a size we cannot read; not listed")
            return None
    arch = caps.get("CpuArchitectureType", "x64").lower()
    locations = record.get("locations")
    return VMSize(
        name=name,
        cpu=int(cpu),
        memory=memory,
        gpu_count=gpu_count,
        gpu=gpu,
        cpu_arch=CPUArchitecture.ARM if arch.startswith("arm") else CPUArchitecture.X86,
        locations=frozenset(
            loc.lower()
            for loc in (locations if isinstance(locations, list) else [])
            if isinstance(loc, str)
        ),
    )


def parse_vm_sizes(records: Iterable[Any], report: ParseReport) -> dict[str, VMSize]:
    """Resource SKU records -> VM sizes by name, with every region each is listed in."""
    sizes: dict[str, VMSize] = {}
    for record in records:
        if not isinstance(record, Mapping):
            report.skip("resource SKU", f"expected an object, got {type(record).__name__}")
            continue
        size = parse_vm_size(record, report)
        if size is None:
            continue
        if (known := sizes.get(size.name)) is not None:
            size = VMSize(**{**known.__dict__, "locations": known.locations | size.locations})
        sizes[size.name] = size
    return sizes


@dataclass(frozen=True)
class Price:
    size: str
    region: str
    price: float
    spot: bool


def parse_price_item(item: Any, report: ParseReport) -> Price | None:
    """One Retail Prices item -> a Linux pay-as-you-go or spot hourly price, or None."""
    if not isinstance(item, Mapping):
        report.skip("price item", f"expected an object, got {type(item).__name__}")
        return None
    size, region = item.get("armSkuName"), item.get("armRegionName")
    if not size or not region:
        return None  # meters not tied to one VM size in one region (e.g. global licences)
    if not isinstance(size, str) or not isinstance(region, str):
        report.skip("price item", "armSkuName/armRegionName are not strings")
        return None
    product, meter = str(item.get("productName", "")), str(item.get("meterName", ""))
    if (
        item.get("type") != "Consumption"
        or item.get("currencyCode") != "USD"
        or item.get("unitOfMeasure") != "1 Hour"
        or "Windows" in product
        or "Dedicated" in product
        or "Low Priority" in meter
    ):
        return None
    price = item.get("retailPrice")
    if isinstance(price, bool) or not isinstance(price, (int, float)) or not math.isfinite(price):
        report.skip(f"price of {size} in {region}", f"retailPrice is {price!r}")
        return None
    if price <= 0:
        return None
    return Price(size=size, region=region.lower(), price=float(price), spot=meter.endswith("Spot"))


def parse_prices(
    items: Iterable[Any], sizes: Mapping[str, VMSize], report: ParseReport
) -> list[CatalogItem]:
    """Price items joined with VM sizes -> offers (one per size, region and spot/on-demand)."""
    best: dict[tuple[str, str, bool], float] = {}
    for item in items:
        price = parse_price_item(item, report)
        if price is None:
            continue
        if price.size not in sizes:
            if not is_retired(price.size):
                report.unpriced_sizes[price.size] += 1
            continue
        key = (price.size, price.region, price.spot)
        best[key] = min(best.get(key, math.inf), price.price)
    offers = []
    for (name, region, spot), price_usd in best.items():
        size = sizes[name]
        gpu = (
            Gpu(size.gpu_count, size.gpu.name, size.gpu.vendor, size.gpu.memory)
            if size.gpu
            else Gpu(size.gpu_count, None, None, None)
        )
        args = (AzureProvider.NAME, name, region, price_usd, size.cpu, size.memory, gpu)
        flags = offer_flags(AzureProvider.NAME, name, region)
        offers.append(offer(*args, spot=spot, flags=flags, cpu_arch=size.cpu_arch))
    return offers


def _order(item: CatalogItem) -> tuple[float, str, str, bool]:
    return (item.price, item.instance_name, item.location, item.spot)


# ---------------------------------------------------------------------------------------------
# Fetching


def _sku_to_json(sku: Any) -> Any:
    """An SDK `ResourceSku` as the REST JSON it came from (camelCase keys)."""
    if isinstance(sku, Mapping):
        # azure-mgmt-compute >= 34: models are mappings over the REST JSON
        as_dict = getattr(sku, "as_dict", None)
        return as_dict() if callable(as_dict) else dict(sku)
    return sku.serialize(keep_readonly=True)  # older msrest-based models


def fetch_resource_skus(client: ComputeManagementClient) -> list[Any]:
    """Every Compute resource SKU of the subscription (the SDK follows `nextLink`)."""
    with sdk_imports(AzureProvider.NAME):
        from azure.core.exceptions import (
            ClientAuthenticationError,
            HttpResponseError,
            ServiceRequestError,
            ServiceResponseError,
        )

    where = "azure: listing resource SKUs"
    try:
        return [_sku_to_json(sku) for sku in client.resource_skus.list()]
    except ClientAuthenticationError as e:
        status = f" with HTTP {e.status_code}" if e.status_code else ""
        raise ProviderError(f"{where} was refused{status}; check {CREDENTIAL_HINT}") from None
    except HttpResponseError as e:
        if e.status_code == 403:
            raise ProviderError(
                f"{where} was refused with HTTP 403; check {CREDENTIAL_HINT}"
            ) from None
        raise ProviderError(f"{where} failed with HTTP {e.status_code}") from None
    except (ServiceRequestError, ServiceResponseError) as e:
        raise ProviderError(f"{where} failed: {type(e).__name__}") from None


def fetch_region_prices(region: str, price_type: str = "Consumption") -> list[Any]:
    """Every price item of one region, following `NextPageLink`."""
    items: list[Any] = []
    url: str | None = PRICES_URL
    params: dict[str, str] | None = {
        "api-version": PRICES_API_VERSION,
        "$filter": prices_filter(region, price_type),
    }
    seen: set[str] = set()
    for _ in range(MAX_PAGES_PER_REGION):
        assert url is not None
        page = transport.request_json("GET", url, provider=AzureProvider.NAME, params=params)
        transport.require_fields(page, {"Items": list}, where=f"azure: prices page for {region}")
        items.extend(page["Items"])
        link = page.get("NextPageLink")
        if not link:
            return items
        if not isinstance(link, str) or urlsplit(link).hostname != urlsplit(PRICES_URL).hostname:
            raise ProviderError(f"azure: prices page for {region}: unexpected NextPageLink")
        if link in seen:
            logger.warning("azure: prices for %s: NextPageLink repeats; stopping", region)
            return items
        seen.add(link)
        url, params = link, None  # the link carries the query
    logger.warning("azure: prices for %s: stopped after %d pages", region, MAX_PAGES_PER_REGION)
    return items


def fetch_prices(regions: Iterable[str]) -> list[Any]:
    regions = sorted(set(regions))
    if not regions:
        return []
    with ThreadPoolExecutor(max_workers=min(PRICE_THREADS, len(regions))) as pool:
        pages = list(pool.map(transport.carried(fetch_region_prices), regions))
    return [item for page in pages for item in page]


def fetch_reservations(regions: Iterable[str], sizes: Iterable[str]) -> list[Term]:
    """The 1- and 3-year reservations of `sizes` in `regions`, observed now."""
    regions, wanted = sorted(set(regions)), set(sizes)
    if not regions:
        return []
    observed_at = datetime.now(timezone.utc)
    with ThreadPoolExecutor(max_workers=min(PRICE_THREADS, len(regions))) as pool:
        pages = list(
            pool.map(transport.carried(lambda r: fetch_region_prices(r, "Reservation")), regions)
        )
    items = [item for page in pages for item in page if item.get("armSkuName") in wanted]
    return parse_azure_reservations(items, source=PRICES_URL, observed_at=observed_at)


# ---------------------------------------------------------------------------------------------


class AzureProvider(Collects[ParseReport], OfflineProvider):
    NAME = "azure"
    REPORT = ParseReport

    def __init__(self, subscription_id: str, credential: TokenCredential | None = None) -> None:
        self._subscription_id = subscription_id
        self._credential = credential
        self._client: ComputeManagementClient | None = None
        self.last_report = ParseReport()
        # (regions, sizes) of the last `get()`: where `extra_tables` asks for reservations.
        self._collected: tuple[set[str], set[str]] = (set(), set())

    def __repr__(self) -> str:
        return f"{type(self).__name__}(subscription_id=***)"

    @classmethod
    def from_env(cls) -> AzureProvider:
        return cls(subscription_id=get_creds_env(SUBSCRIPTION_ENV))

    def client(self) -> ComputeManagementClient:
        if self._client is None:
            with sdk_imports(self.NAME):
                from azure.mgmt.compute import ComputeManagementClient

            credential = self._credential
            if credential is None:
                with sdk_imports(self.NAME):
                    from azure.identity import DefaultAzureCredential

                credential = DefaultAzureCredential()
            self._client = ComputeManagementClient(
                credential=credential,
                subscription_id=self._subscription_id,
                retry_total=SDK_RETRY_TOTAL,
                retry_backoff_factor=SDK_RETRY_BACKOFF,
                connection_timeout=SDK_CONNECT_TIMEOUT,
                read_timeout=SDK_READ_TIMEOUT,
            )
        return self._client

    def collect(self, ask: Ask, report: ParseReport) -> list[CatalogItem]:
        sizes = parse_vm_sizes(fetch_resource_skus(self.client()), report)
        if not sizes:
            # an empty catalog must not replace yesterday's; the nightly build keeps that one
            raise ProviderError("azure: the subscription lists no VM sizes we could read")
        if ask.apply_filter:
            sizes = {name: s for name, s in sizes.items() if KEEP_SERIES.match(name)}
        regions = {region for size in sizes.values() for region in size.locations}
        logger.info("azure: %d VM sizes in %d regions", len(sizes), len(regions))
        offers, placeholder = drop_placeholder_spot(
            self.NAME, parse_prices(fetch_prices(regions), sizes, report)
        )
        report.placeholder_spot.update(placeholder.dropped)
        if placeholder.count:
            logger.warning(
                "azure: %d spot offers left out as placeholder prices in %s",
                placeholder.count,
                ", ".join(sorted(placeholder.regions)),
            )
        self._collected = (regions, set(sizes))
        if report.unpriced_sizes:
            logger.info("azure: %d priced sizes have no spec", len(report.unpriced_sizes))
        return sorted(offers, key=_order)

    @classmethod
    def filter(cls, offers: list[CatalogItem]) -> list[CatalogItem]:
        return [o for o in offers if KEEP_SERIES.match(o.instance_name)]

    def extra_tables(self) -> dict[str, bytes]:
        """The reservations of the last `get()`'s sizes and regions, as the terms file beside
        the catalog CSV. Optional: a failure is a warning and no file."""
        regions, sizes = self._collected
        try:
            found = fetch_reservations(regions, sizes)
        except ProviderError as e:
            logger.warning("azure: no reservation terms: %s", e)
            return {}
        return {terms_file.SUFFIX: terms_file.write_terms(found)} if found else {}
