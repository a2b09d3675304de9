"""Daytona: sandboxes metered per resource (GPUs, vCPUs, RAM, disk), queried live.

Sources:

- `GET https://billing.app.daytona.io/gpu-pricing`, public: `{"gpus": [{"type",
  "onDemandPricePerHour", "spotPricePerHour"}], "resources": {"onDemand": {"vcpuPerHour",
  "memoryGiBPerHour", "diskGiBPerHour"}, "spot": {...}}}`, the per-GPU and per-unit hourly rates.
- `GET {api}/shared-regions`, public: `[{"id": "us"}, ...]`, where CPU sandboxes run.
- With `DAYTONA_API_KEY` (sent as `Authorization: Bearer`): `GET {api}/api-keys/current` gives
  the key's `organizationId` (asked once per provider), then
  `GET {api}/organizations/{id}/gpu-capacity` gives `{"capacity": [{"gpuType",
  "availableOnDemand", "availableSpot"}]}`, the GPUs the organization can have now.

`{api}` is `https://app.daytona.io/api` or `DAYTONA_API_URL` (https, or http to loopback). None
of the answers is paginated. Authenticated requests never follow redirects, so the key is only
ever sent to `{api}` itself.

Decisions (names, locations, GPU counts, spot, shapes, prices, order and `provider_data` as in
gpuhunt 0.1.34, checked offer by offer against 0.1.34's own output in the tests):

- No fixed instance types: every offer is a sandbox shape sized for the query. A GPU sandbox is
  offered at `CPUS_PER_GPU` vCPUs, `MEMORY_PER_GPU` GiB RAM (`CONSUMER_MEMORY_PER_GPU` on GeForce
  cards) and `DISK_PER_GPU` GiB disk per GPU (`balance_resources=False`: 1, 1 and 1), each moved
  into the query's bounds (a minimum rounds up to a whole unit, a maximum down) and Daytona's
  published per-GPU limits of `MAX_CPUS_PER_GPU` vCPUs, `MAX_MEMORY_PER_GPU` GiB RAM and
  `MAX_DISK_PER_GPU` GiB disk. A CPU sandbox starts from Daytona's default, 1 vCPU, 1 GiB RAM and
  3 GiB disk. The price is what those amounts cost at the rates: GPUs + vCPUs + RAM + disk.
- `get(query)` returns only offers that match the query (`matches`), whoever calls it.
- GPU sandboxes: one offer per GPU type, GPU count (1 to `MAX_GPU_COUNT`, within the query's
  bounds) and purchase option: on-demand, and spot (`spot=True`, priced with the spot rates for
  the GPU and the resources alike). Without a key, availability is not known and every count is
  offered; with one, counts stop at the organization's capacity for that type and option.
  GPU capacity is scheduled across Daytona's fleet, so these offers are in location `earth`.
- CPU sandboxes (`gpu_count=0`, on-demand): one shape for the query, offered in each shared
  region; the regions are not asked for when that shape cannot match the query.
- Names: `{n}x-{GPU}-{cpu}cpu-{ram}gb-{disk}gb` ("1x-H100-8cpu-100gb-256gb") and
  `{cpu}cpu-{ram}gb-{disk}gb`. `provider_data["gpu_type"]` is Daytona's name of the GPU, which
  creating the sandbox takes, when it differs from gpuhunt's ("RTX-PRO-6000").
- GPU types: names through the shared resolver, memory and vendor from the accelerator tables.
  Types on the rate card that sandbox creation rejects (`NOT_CREATABLE`) are not offered, and
  neither is a type the tables do not know (warned about and counted): the rate card lists
  types before sandboxes can have them, so an unknown one is not something an orchestrator can
  order.
- A rate-card entry with a missing, non-finite or non-positive price, a capacity entry or region
  of the wrong shape is skipped and counted in `DaytonaProvider.last_report`. An answer of the
  wrong shape, or any failure of an authenticated request, fails the query with a
  `ProviderError`: with a key, offers are never shown without the capacity check.
"""

from __future__ import annotations

import logging
import math
import os
import re
import threading
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import quote, urlsplit

from typing_extensions import Self

from gpuhunt._internal.errors import ProviderError
from gpuhunt._internal.gpu_names import resolve_gpu
from gpuhunt._internal.load import livecache, transport
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem, JSONObject, QueryFilter
from gpuhunt._internal.query.match import matches
from gpuhunt.providers import _report
from gpuhunt.providers._keyed import keyed_json
from gpuhunt.providers.base import Ask, Collects, OnlineProvider

logger = logging.getLogger(__name__)

NAME = "daytona"
PRICING_URL = "https://billing.app.daytona.io/gpu-pricing"
API_URL = "https://app.daytona.io/api"
KEY_ENV = "DAYTONA_API_KEY"
URL_ENV = "DAYTONA_API_URL"
# dstack imports GPU_REGION (0.1.34's name); GPU_LOCATION is the same value under this
# package's earlier name, kept for whoever used it.
GPU_REGION = "earth"
GPU_LOCATION = GPU_REGION
MAX_GPU_COUNT = 8
PRICE_DIGITS = 6

# Daytona's published GPU sandbox limits (docs: sandboxes, GPU sandboxes), per GPU.
MAX_CPUS_PER_GPU = 16
MAX_MEMORY_PER_GPU = 192
MAX_DISK_PER_GPU = 512
# The shape a GPU sandbox is offered at, per GPU, when the query does not ask for more or less:
# gpuhunt 0.1.34's defaults (read from its 0.1.34 wheel, 2026-12-01), which dstack's Daytona
# backend was built and priced against. GeForce cards get half the RAM.
CPUS_PER_GPU = 8
MEMORY_PER_GPU = 100
CONSUMER_MEMORY_PER_GPU = 50
DISK_PER_GPU = 256
# A CPU sandbox created without resources: 1 vCPU, 1 GiB RAM, 3 GiB disk (Daytona's sandbox
# docs, "Resources"; also 0.1.34's). CPU sandboxes have no published limit; the query bounds them.
CPU_SANDBOX_DEFAULT = (1, 1, 3)
_CONSUMER_GPU = re.compile(r"RTX[2-5]0[5-9]0(Ti|SUPER)?$")

# On the rate card, but the sandbox API rejects gpuType=["B200"] as an invalid GPU type.
NOT_CREATABLE = frozenset({"B200"})

# Rates beyond these are a broken answer, not a price.
MAX_GPU_PRICE_PER_HOUR = 1000.0
MAX_UNIT_PRICE_PER_HOUR = 100.0
MAX_CAPACITY = 100_000

# (purchase option as the API names it, spot)
PURCHASE_OPTIONS = (("onDemand", False), ("spot", True))


@dataclass
class ParseReport(_report.ParseReport):
    provider: str = NAME
    capacity_checked: bool = False  # whether GPU offers were limited to the org's capacity


@dataclass(frozen=True)
class Rates:
    """$/h of one vCPU, one GiB of RAM and one GiB of disk."""

    vcpu: float
    memory: float
    disk: float


@dataclass(frozen=True)
class GpuType:
    type: str  # Daytona's name, what sandbox creation takes
    name: str  # gpuhunt's canonical name
    vendor: AcceleratorVendor
    memory: float
    prices: dict[bool, float]  # spot -> $/h per GPU


@dataclass(frozen=True)
class Pricing:
    gpus: list[GpuType]
    rates: dict[bool, Rates]  # spot -> rates


Capacity = dict[str, dict[bool, int]]  # gpu type -> spot -> GPUs available


class DaytonaProvider(Collects[ParseReport], OnlineProvider):
    """Daytona sandboxes. `api_key` is optional: without it the public rates and regions still
    give offers, with it GPU offers follow the organization's capacity."""

    NAME = NAME
    REPORT = ParseReport

    def __init__(self, api_key: str | None = None, api_url: str = API_URL) -> None:
        self.api_key = (api_key or "").strip() or None
        self.api_url = checked_api_url(api_url)
        self.last_report = ParseReport()
        self._organization_id: str | None = None
        self._lock = threading.Lock()
        self._told_no_key = False

    def __repr__(self) -> str:
        key = "'***'" if self.api_key else "None"
        return f"DaytonaProvider(api_key={key}, api_url={self.api_url!r})"

    @classmethod
    def from_env(cls) -> Self:
        return cls(api_key=os.getenv(KEY_ENV), api_url=os.getenv(URL_ENV) or API_URL)

    def collect(self, ask: Ask, report: ParseReport) -> list[CatalogItem]:
        q = ask.filter
        pricing = parse_pricing(fetch_pricing(), report)
        offers: list[CatalogItem] = []
        if q.max_gpu_count is None or q.max_gpu_count > 0:
            capacity = None
            if self.api_key:
                capacity = parse_capacity(self._fetch_capacity(self.api_key), report)
                report.capacity_checked = True
            else:
                self._note_no_key()
            offers += gpu_offers(pricing, capacity, q, ask.balance_resources)
        shape = cpu_offer(pricing, q, ask.balance_resources)
        # The shape has no location yet: the location filter applies to each region's copy.
        if shape is not None and matches(shape, replace(q, location=None)):
            regions = parse_regions(fetch_shared_regions(self.api_url), report)
            copies = [replace(shape, location=region) for region in regions]
            offers += [offer for offer in copies if matches(offer, q)]
        # A stable sort by price over offers made in rate-card order, as gpuhunt 0.1.34 orders
        # them: equal prices keep that order.
        return sorted(offers, key=lambda i: i.price)

    def _fetch_capacity(self, api_key: str) -> Any:
        with self._lock:
            if self._organization_id is None:
                identity = fetch_authenticated(f"{self.api_url}/api-keys/current", api_key)
                self._organization_id = parse_organization_id(identity)
            organization = quote(self._organization_id, safe="")
        return fetch_authenticated(
            f"{self.api_url}/organizations/{organization}/gpu-capacity", api_key
        )

    def _note_no_key(self) -> None:
        with self._lock:
            if self._told_no_key:
                return
            self._told_no_key = True
        # Info, not a warning: every default catalog has this provider, with or without a key.
        logger.info(
            "%s: %s is not set; GPU offers are priced but their availability is not checked",
            NAME,
            KEY_ENV,
        )


def checked_api_url(url: str) -> str:
    """The API base URL without a trailing slash; the key goes there, so it must be https (or
    http to a loopback address, for local servers)."""
    url = url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return url
    if parts.scheme == "http" and transport.is_loopback(parts.hostname or ""):
        return url
    raise ProviderError(
        f"{NAME}: {URL_ENV} must be an https:// URL (or http:// to a loopback address), "
        f"got {parts.scheme or 'no'} scheme"
    )


# ---------------------------------------------------------------------------------------------
# Requests.


def fetch_pricing() -> Any:
    return livecache.request_json(
        "GET", PRICING_URL, provider=NAME, headers={"Accept": "application/json"}
    )


def fetch_shared_regions(api_url: str) -> Any:
    return livecache.request_json(
        "GET", f"{api_url}/shared-regions", provider=NAME, headers={"Accept": "application/json"}
    )


def fetch_authenticated(url: str, api_key: str) -> Any:
    return keyed_json("GET", url, NAME, KEY_ENV, api_key, {"Authorization": f"Bearer {api_key}"})


# ---------------------------------------------------------------------------------------------
# Parsing (pure).


def parse_pricing(payload: Any, report: ParseReport | None = None) -> Pricing:
    """The rate card. Its `resources` rates are needed for every offer, so a bad one fails the
    whole answer; a bad GPU entry (or one purchase option of it) is skipped and recorded."""
    report = report if report is not None else ParseReport()
    if not isinstance(payload, dict):
        raise ProviderError(f"{NAME}: gpu-pricing: expected an object")
    resources = payload.get("resources")
    if not isinstance(resources, dict):
        raise ProviderError(f"{NAME}: gpu-pricing: field 'resources' is missing or not an object")
    rates = {spot: _rates(resources.get(option), option) for option, spot in PURCHASE_OPTIONS}
    entries = payload.get("gpus")
    if not isinstance(entries, list):
        raise ProviderError(f"{NAME}: gpu-pricing: field 'gpus' is missing or not a list")
    gpus = []
    for index, entry in enumerate(entries):
        with report.record(f"gpu-pricing entry #{index}"):
            gpu = _gpu_type(entry, index, report)
            if gpu is not None:
                gpus.append(gpu)
    return Pricing(gpus=gpus, rates=rates)


def _rates(value: Any, option: str) -> Rates:
    if not isinstance(value, dict):
        raise ProviderError(f"{NAME}: gpu-pricing: 'resources.{option}' is not an object")
    amounts = []
    for key in ("vcpuPerHour", "memoryGiBPerHour", "diskGiBPerHour"):
        rate = _finite(value.get(key))
        if rate is None or not 0 <= rate <= MAX_UNIT_PRICE_PER_HOUR:
            raise ProviderError(
                f"{NAME}: gpu-pricing: 'resources.{option}.{key}' is not a rate in "
                f"[0, {MAX_UNIT_PRICE_PER_HOUR:g}]"
            )
        amounts.append(rate)
    return Rates(*amounts)


def _gpu_type(entry: Any, index: int, report: ParseReport) -> GpuType | None:
    gpu_type = entry.get("type") if isinstance(entry, dict) else None
    if not isinstance(gpu_type, str) or not gpu_type.strip():
        report.skip(f"gpu-pricing entry #{index}", "no GPU 'type'")
        return None
    what = f"gpu-pricing entry {gpu_type!r}"
    if gpu_type in NOT_CREATABLE:
        logger.debug("%s: %s: sandboxes cannot have it yet", NAME, what)
        return None
    # The rate card names a type without memory: the shared rule (the smallest size the
    # table lists) applies; every type on the card today has one size.
    resolved = resolve_gpu(gpu_type)
    if resolved is None:
        report.unknown_gpu(gpu_type, "the rate card")
        return None
    prices = {}
    for option, spot in PURCHASE_OPTIONS:
        key = f"{option}PricePerHour"
        price = _finite(entry.get(key))
        if price is not None and 0 < price <= MAX_GPU_PRICE_PER_HOUR:
            prices[spot] = price
        else:
            report.skip(
                f"{what} ({option})", f"{key} is not a price in (0, {MAX_GPU_PRICE_PER_HOUR:g}]"
            )
    if not prices:
        return None
    return GpuType(
        type=gpu_type,
        name=resolved.name,
        vendor=resolved.vendor,
        memory=resolved.memory,
        prices=prices,
    )


def parse_organization_id(payload: Any) -> str:
    organization = payload.get("organizationId") if isinstance(payload, dict) else None
    if not isinstance(organization, str) or not organization.strip():
        raise ProviderError(f"{NAME}: api-keys/current: field 'organizationId' is missing")
    return organization


def parse_capacity(payload: Any, report: ParseReport | None = None) -> Capacity:
    """GPUs the organization can have now, per type and purchase option. A bad entry is skipped
    (its type then counts as unavailable) and recorded."""
    report = report if report is not None else ParseReport()
    entries = payload.get("capacity") if isinstance(payload, dict) else None
    if not isinstance(entries, list):
        raise ProviderError(f"{NAME}: gpu-capacity: field 'capacity' is missing or not a list")
    capacity: Capacity = {}
    for index, entry in enumerate(entries):
        with report.record(f"gpu-capacity entry #{index}"):
            _capacity_entry(entry, index, report, capacity)
    return capacity


def _capacity_entry(entry: Any, index: int, report: ParseReport, capacity: Capacity) -> None:
    gpu_type = entry.get("gpuType") if isinstance(entry, dict) else None
    if not isinstance(gpu_type, str) or not gpu_type:
        report.skip(f"gpu-capacity entry #{index}", "no 'gpuType'")
        return
    counts = {}
    for option, spot in PURCHASE_OPTIONS:
        key = f"available{option[0].upper()}{option[1:]}"
        value = _finite(entry.get(key))
        if value is None or value != int(value) or not 0 <= value <= MAX_CAPACITY:
            report.skip(f"gpu-capacity entry {gpu_type!r}", f"{key} is not a count")
            return
        counts[spot] = int(value)
    capacity[gpu_type] = counts


def parse_regions(payload: Any, report: ParseReport | None = None) -> list[str]:
    """Shared region ids; an entry without an id is skipped and recorded."""
    report = report if report is not None else ParseReport()
    if not isinstance(payload, list):
        raise ProviderError(f"{NAME}: shared-regions: expected a list")
    regions = []
    for index, entry in enumerate(payload):
        region = entry.get("id") if isinstance(entry, dict) else None
        if not isinstance(region, str) or not region.strip():
            report.skip(f"shared region #{index}", "no 'id'")
            continue
        if region not in regions:
            regions.append(region)
    return regions


def gpu_offers(
    pricing: Pricing,
    capacity: Capacity | None,
    q: QueryFilter | None = None,
    balance_resources: bool = True,
) -> list[CatalogItem]:
    """GPU sandbox offers that match `q`; `capacity=None` means availability is unknown (no
    key). In rate-card order, on demand before spot, counts ascending."""
    q = q or QueryFilter()
    low = max(1, q.min_gpu_count or 1)
    high = MAX_GPU_COUNT if q.max_gpu_count is None else min(MAX_GPU_COUNT, q.max_gpu_count)
    offers = []
    for gpu in pricing.gpus:
        memory_per_gpu = CONSUMER_MEMORY_PER_GPU if is_consumer_gpu(gpu.name) else MEMORY_PER_GPU
        for spot, gpu_price in gpu.prices.items():
            available = high
            if capacity is not None:
                available = min(high, capacity.get(gpu.type, {}).get(spot, 0))
            for count in range(low, available + 1):
                if balance_resources:
                    preferred = (CPUS_PER_GPU * count, memory_per_gpu * count, DISK_PER_GPU * count)
                else:
                    preferred = (1, 1, 1)
                limits = (
                    MAX_CPUS_PER_GPU * count,
                    MAX_MEMORY_PER_GPU * count,
                    MAX_DISK_PER_GPU * count,
                )
                sized = _shape(preferred, limits, q)
                if sized is None:
                    continue
                cpu, memory, disk = sized
                offer = CatalogItem(
                    provider=NAME,
                    instance_name=f"{count}x-{gpu.name}-{cpu}cpu-{memory}gb-{disk}gb",
                    location=GPU_REGION,
                    price=_price(count * gpu_price, cpu, memory, disk, pricing.rates[spot]),
                    cpu=cpu,
                    memory=float(memory),
                    gpu_count=count,
                    gpu_name=gpu.name,
                    gpu_memory=gpu.memory,
                    spot=spot,
                    disk_size=float(disk),
                    gpu_vendor=gpu.vendor,
                    provider_data=_gpu_provider_data(gpu),
                )
                if matches(offer, q):
                    offers.append(offer)
    return offers


def cpu_offer(
    pricing: Pricing, q: QueryFilter | None = None, balance_resources: bool = True
) -> CatalogItem | None:
    """The CPU sandbox shape for the query, without a location (one copy per shared region).
    Daytona's own default (1 vCPU, 1 GiB, 3 GiB) with or without balancing: it is the shape a
    sandbox gets when nothing is asked for, and every unit costs the same whatever the mix."""
    q = q or QueryFilter()
    sized = _shape(CPU_SANDBOX_DEFAULT, (math.inf, math.inf, math.inf), q)
    if sized is None:
        return None
    cpu, memory, disk = sized
    return CatalogItem(
        provider=NAME,
        instance_name=f"{cpu}cpu-{memory}gb-{disk}gb",
        location="",
        price=_price(0.0, cpu, memory, disk, pricing.rates[False]),
        cpu=cpu,
        memory=float(memory),
        gpu_count=0,
        gpu_name=None,
        gpu_memory=None,
        spot=False,
        disk_size=float(disk),
    )


def is_consumer_gpu(name: str) -> bool:
    """GeForce cards (RTX 2050-5090, Ti/SUPER included), which get the smaller RAM default."""
    return _CONSUMER_GPU.match(name) is not None


def _shape(
    preferred: tuple[int, int, int], limits: tuple[float, float, float], q: QueryFilter
) -> tuple[int, int, int] | None:
    """(vCPUs, GiB RAM, GiB disk): each the preferred amount moved into the query's bounds and
    the limit, in whole units (a minimum rounds up, a maximum down); None if a bound cannot be
    met."""
    bounds = (
        (q.min_cpu, q.max_cpu),
        (q.min_memory, q.max_memory),
        (q.min_disk_size, q.max_disk_size),
    )
    sized = []
    for want, limit, (low, high) in zip(preferred, limits, bounds):
        amount = _amount(want, low, high, limit)
        if amount is None:
            return None
        sized.append(amount)
    cpu, memory, disk = sized
    return cpu, memory, disk


def _amount(want: int, low: float | None, high: float | None, limit: float) -> int | None:
    lowest = math.ceil(max(1.0, low if low is not None else 1.0))
    highest = min(limit, high if high is not None else limit)
    if lowest > highest:
        return None
    return math.floor(min(highest, max(lowest, want)))


def _price(gpus: float, cpu: int, memory: int, disk: int, rates: Rates) -> float:
    total = gpus + cpu * rates.vcpu + memory * rates.memory + disk * rates.disk
    return round(total, PRICE_DIGITS)


def _gpu_provider_data(gpu: GpuType) -> JSONObject:
    return {"gpu_type": gpu.type} if gpu.type != gpu.name else {}


def _finite(value: Any) -> float | None:
    """A JSON number as a float; None for anything else (bools, strings, NaN, infinities)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None
