"""Google Cloud: Compute Engine VMs (with GPUs) and Cloud TPUs, priced from the Billing Catalog.

Credentials: the project in `GCP_PROJECT_ID` and Google's application default credentials (ADC:
`GOOGLE_APPLICATION_CREDENTIALS`, `gcloud auth application-default login`, or the metadata server).
Five sources, all read-only:

- machine types of every zone: `MachineTypesClient.aggregated_list` (google-cloud-compute, REST);
- GPU types of every zone: `AcceleratorTypesClient.aggregated_list`;
- prices: `CloudCatalogClient.list_skus` (google-cloud-billing, REST) for Compute Engine
  (`services/6F81-5844-456A`) and Cloud TPU (`services/E000-3F24-B8AA`), in USD;
- TPU types per zone: the Cloud TPU API v2 (`tpu.googleapis.com/v2/projects/{p}/locations` and
  `.../locations/{zone}/acceleratorTypes`), called through gpuhunt's transport with an ADC bearer
  token, so no TPU SDK is needed.

Compute Engine has no per-machine price: a price is composed from SKUs per region and capacity
(on-demand, spot, DWS calendar mode), as GCP's own calculator does:

    vCPUs x "<Series> Instance Core" + GiB x "<Series> Instance Ram"
    + GPUs x "<GPU> GPU running in ..." + bundled local SSD GiB x "SSD backed Local Storage" / 730

Spot SKUs have `usageType` "Preemptible" ("Spot Preemptible ..." / "... attached to Spot
Preemptible VMs"); DWS calendar-mode SKUs start with "DWS Calendar Mode". Machines sold per GPU
slice (A4: "... Nvidia B200 (1 gpu slice)") cost GPUs x slice price, which covers the whole VM.
Commitment, reserved, sole-tenancy, custom-shape, premium and flex-start SKUs never price an offer.
A machine type is listed only where every component has a price; a region without SKUs for its
series gives no offer rather than a guess.

Decisions (and facts from GCP's documentation the APIs do not carry):

- N1 machines take attachable GPUs (T4, V100, P100, P4, K80) in the counts and within the vCPU and
  memory limits GCP publishes per GPU count (`N1_GPU_LIMITS`), capped by the zone's
  `maximumCardsPerInstance`; each combination is an offer named after the N1 machine type.
- Shared-core E2 machines are billed for a fraction of a vCPU (e2-micro 0.25, e2-small 0.5,
  e2-medium 1) although the API reports 2; f1/g1 (billed per instance) and m2 (commitments only)
  are not priced. Machine types whose state is DEPRECATED, OBSOLETE or DELETED are skipped.
- Fractional G4 shapes (g4-standard-6/12/24) report one RTX PRO 6000; they get the VRAM of their
  share (12/24/48 GB) and that share of the GPU price.
- Bundled local SSD comes from the API's `bundledLocalSsds` (375 GiB partitions), else from the
  documented sizes of accelerator-optimized machines (`BUNDLED_LOCAL_SSD_GIB`); it is in the price,
  `disk_size` stays None (boot disks are chosen at launch).
- Memory is `memoryMb / 1024` rounded to 0.01 GiB; CPU architecture from the API's
  `architecture` (ARM64 -> arm), else known Arm series.
- TPUs: single-host TPU VM types only (`TPU_HOSTS`: host vCPUs and RAM are documented facts, the
  API lists only the chips); multi-host slices are not listed. An offer has `gpu_count=1`, the
  accelerator type as `gpu_name` ("v5litepod-8", as gpuhunt 0.1.x published), vendor google and
  the slice's total HBM as `gpu_memory`. Cloud TPU SKUs (v2, v3, v4) are priced per device of four
  chips, Compute Engine TPU SKUs (v5e, v5p, v6e) per chip; the price scales with the chip count
  from the topology ("2x4" = 8 chips).
- Every VM offer has `provider_data["is_dws_calendar_mode"]`. Flags: `gcp-dws-calendar-mode` on
  calendar-mode offers, `gcp-a4` on a4-*, `gcp-g4` on g4-standard-* (older consumers cannot launch
  those). `filter()` keeps the families users launch (any GPU/TPU offer; n2, e2 standard shapes,
  c4, n4, h3, m1, m4, a2, g2) and drops on-demand offers GCP does not sell on demand (A4, A4X,
  A3 Ultra, A3 High below 8 GPUs) unless they are calendar-mode offers.
- Errors: a missing `GCP_PROJECT_ID` (in `from_env`) or ADC (looked up lazily, on the first call:
  the lookup may probe the GCE metadata server) is a `MissingCredsError` naming it; a refused call is a
  `ProviderError` naming the credentials; 429/5xx/connection errors are retried `MAX_RETRIES` times
  with backoff (the SDK's own retries are turned off so the bound holds); an answer the SDK cannot
  parse is a `ProviderError`. A record with no name, vCPUs or memory is skipped and counted in
  `GCPProvider.last_report`; a GPU type the tables do not know is kept under GCP's name, warned
  about and counted there. A TPU zone whose listing fails is skipped with a warning (all failing is
  an error).
"""

from __future__ import annotations

import enum
import functools
import logging
import math
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, TypeVar

import requests

from gpuhunt._internal.costs.terms import Term
from gpuhunt._internal.errors import MissingCredsError, ProviderError
from gpuhunt._internal.formats import terms as terms_file
from gpuhunt._internal.gpu_names import gpu_memory_from_name, resolve_gpu
from gpuhunt._internal.load import transport, urls
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem, CPUArchitecture
from gpuhunt._internal.registry import sdk_imports
from gpuhunt.providers import _report
from gpuhunt.providers.base import Ask, Collects, OfflineProvider, get_creds_env

if TYPE_CHECKING:
    from google.auth.credentials import Credentials

logger = logging.getLogger(__name__)

T = TypeVar("T")

PROJECT_ENV = "GCP_PROJECT_ID"
ADC_ENV = "GOOGLE_APPLICATION_CREDENTIALS"
ADC_HINT = (
    f"the application default credentials ({ADC_ENV} or `gcloud auth application-default login`)"
)
SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)
COMPUTE_SERVICE = "services/6F81-5844-456A"
TPU_SERVICE = "services/E000-3F24-B8AA"
TPU_API_URL = "https://tpu.googleapis.com/v2"

SDK_TIMEOUT = 60.0  # seconds per page request
MAX_RETRIES = 3
RETRY_BACKOFF = 1.0  # seconds before the first retry, doubled each time
MAX_PAGES = 1000  # a runaway pagination is an error, not an endless loop
SKU_PAGE_SIZE = 5000
HOURS_PER_MONTH = 730  # how GCP converts monthly (GiB-month) prices to hourly
LOCAL_SSD_PARTITION_GIB = 375

# Compute Engine accelerator type -> (canonical GPU name, memory GiB per GPU).
GCP_ACCELERATORS: dict[str, tuple[str, float]] = {
    "nvidia-tesla-k80": ("K80", 12.0),
    "nvidia-tesla-p4": ("P4", 8.0),
    "nvidia-tesla-p100": ("P100", 16.0),
    "nvidia-tesla-v100": ("V100", 16.0),
    "nvidia-tesla-t4": ("T4", 16.0),
    "nvidia-tesla-a100": ("A100", 40.0),
    "nvidia-a100-80gb": ("A100", 80.0),
    "nvidia-l4": ("L4", 24.0),
    "nvidia-h100-80gb": ("H100", 80.0),
    "nvidia-h100-mega-80gb": ("H100", 80.0),
    "nvidia-h200-141gb": ("H200", 141.0),
    "nvidia-b200": ("B200", 180.0),
    "nvidia-gb200": ("GB200", 186.0),
    "nvidia-rtx-pro-6000": ("RTXPRO6000", 96.0),
}
# Fractional G4 shapes: the share of the one RTX PRO 6000 the API reports.
FRACTIONAL_GPU_SHARE: dict[str, float] = {
    "g4-standard-6": 1 / 8,
    "g4-standard-12": 1 / 4,
    "g4-standard-24": 1 / 2,
}
# GPUs attachable to N1: GPU count -> (max vCPUs, max memory GB) of the N1 machine type.
N1_GPU_LIMITS: dict[str, dict[int, tuple[int, float]]] = {
    "nvidia-tesla-t4": {1: (48, 312), 2: (48, 312), 4: (96, 624)},
    "nvidia-tesla-v100": {1: (12, 78), 2: (24, 156), 4: (48, 312), 8: (96, 624)},
    "nvidia-tesla-p100": {1: (16, 104), 2: (32, 208), 4: (96, 624)},
    "nvidia-tesla-p4": {1: (24, 156), 2: (48, 312), 4: (96, 624)},
    "nvidia-tesla-k80": {1: (8, 52), 2: (16, 104), 4: (32, 208), 8: (64, 208)},
}
SHARED_CORE_VCPUS: dict[str, float] = {"e2-micro": 0.25, "e2-small": 0.5, "e2-medium": 1.0}
UNPRICED_FAMILIES = frozenset({"f1", "g1", "m2"})
ARM_FAMILIES = frozenset({"t2a", "c4a", "n4a", "a4x"})
# Machine-name prefixes billed under another series' SKUs than their first token says.
FAMILY_OVERRIDES: tuple[tuple[str, str], ...] = (
    ("a3-megagpu-", "a3-megagpu"),  # "A3Plus Instance ..."
    ("a3-ultragpu-", "a3-ultragpu"),
    ("n1-ultramem-", "m1"),  # aliases of m1-ultramem / m1-megamem
    ("n1-megamem-", "m1"),
)
# Bundled local SSD of accelerator-optimized machines (GiB), used when the API omits
# `bundledLocalSsds`.
BUNDLED_LOCAL_SSD_GIB: dict[str, int] = {
    "a2-ultragpu-1g": 375,
    "a2-ultragpu-2g": 750,
    "a2-ultragpu-4g": 1500,
    "a2-ultragpu-8g": 3000,
    "a3-highgpu-1g": 750,
    "a3-highgpu-2g": 1500,
    "a3-highgpu-4g": 3000,
    "a3-highgpu-8g": 6000,
    "a3-edgegpu-8g": 6000,
    "a3-megagpu-8g": 6000,
    "a3-ultragpu-8g": 12000,
}


@dataclass(frozen=True)
class TPUHost:
    cpu: int
    memory: float  # GB


# Single-host TPU VM types: host vCPUs and RAM as documented per TPU generation.
TPU_HOSTS: dict[str, TPUHost] = {
    "v2-8": TPUHost(96, 334),
    "v3-8": TPUHost(96, 334),
    "v4-8": TPUHost(240, 407),
    "v5litepod-1": TPUHost(24, 48),
    "v5litepod-4": TPUHost(112, 192),
    "v5litepod-8": TPUHost(224, 384),
    "v5p-8": TPUHost(208, 448),
    "v6e-1": TPUHost(44, 176),
    "v6e-4": TPUHost(180, 720),
    "v6e-8": TPUHost(180, 1440),
}
TPU_HBM_GIB_PER_CHIP: dict[str, float] = {
    "v2": 16,
    "v3": 32,
    "v4": 32,
    "v5litepod": 16,
    "v5p": 95,
    "v6e": 32,
}
# Cloud TPU SKUs price a device (four chips); Compute Engine TPU SKUs price one chip.
TPU_CHIPS_PER_SKU_UNIT: dict[str, int] = {"v2": 4, "v3": 4, "v4": 4}

PUBLISHED_PREFIXES = (
    "m4-",
    "c4-",
    "n4-",
    "h3-",
    "n2-",
    "e2-medium",
    "e2-standard-",
    "e2-highmem-",
    "e2-highcpu-",
    "m1-",
    "a2-",
    "g2-",
)
# GPUs published on N1 machines: T4 and V100, as gpuhunt 0.1.34 (which attaches only these two
# to N1). The others N1 takes are collected (the attach limits stay tested) but not published:
# the K80 reached its end of life on Compute Engine (https://cloud.google.com/compute/docs/gpus:
# "NVIDIA K80 ... See NVIDIA K80 EOL"), and 0.1.x stopped offering the Pascal P100 and P4, so
# dstack never saw them; publishing them now would hand older dstack versions offers they
# never had.
N1_PUBLISHED_GPUS = frozenset({"T4", "V100"})
# dstack 0.19.33 asks for G4 machines with the flag "gcp-g4-preview" (later versions use
# "gcp-g4"); gpuhunt 0.1.x publishes each G4 offer twice, once with each flag, and so do we
# (`with_legacy_g4_preview`) until that dstack version no longer matters.
G4_FLAG = "gcp-g4"
G4_PREVIEW_FLAG = "gcp-g4-preview"


class Capacity(enum.Enum):
    ON_DEMAND = "on-demand"
    SPOT = "spot"
    DWS_CALENDAR = "dws-calendar"


@dataclass
class ParseReport(_report.ParseReport):
    """gcp's collection report (see `providers._report`)."""

    provider: str = "gcp"
    failed_tpu_zones: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class MachineType:
    zone: str
    name: str
    cpu: int
    memory: float  # GiB
    gpu_type: str | None = None  # Compute Engine accelerator type, e.g. "nvidia-tesla-t4"
    gpu_count: int = 0
    local_ssd_gib: int = 0
    cpu_arch: CPUArchitecture = CPUArchitecture.X86


@dataclass(frozen=True)
class TPUType:
    zone: str
    name: str  # "v5litepod-8"
    chips: int


# (kind, key, region, capacity) -> USD per hour per unit (vCPU, GiB, GPU, GPU slice, chip...)
PriceKey = tuple[str, str, str, Capacity]


class PriceBook:
    def __init__(self) -> None:
        self.prices: dict[PriceKey, float] = {}

    def add(self, key: PriceKey, price: float, sku_id: str) -> None:
        known = self.prices.get(key)
        if known is None:
            self.prices[key] = price
        elif not math.isclose(known, price):
            logger.debug("gcp: SKU %s repeats %s at %s (kept %s)", sku_id, key, price, known)

    def get(self, kind: str, key: str, region: str, capacity: Capacity) -> float | None:
        return self.prices.get((kind, key, region, capacity))

    def __len__(self) -> int:
        return len(self.prices)


# ---------------------------------------------------------------------------------------------
# Parsing (pure): decoded API JSON in, machine types / prices / offers out.


def zone_region(zone: str) -> str:
    return zone.rsplit("-", 1)[0]


def machine_family(name: str) -> str:
    for prefix, family in FAMILY_OVERRIDES:
        if name.startswith(prefix):
            return family
    return name.split("-", 1)[0]


def parse_machine_types(items: Mapping[str, Any], report: ParseReport) -> list[MachineType]:
    """Machine types from the `items` map of `machineTypes.aggregatedList` (scope -> list)."""
    out: list[MachineType] = []
    for zone, record in _zone_records(sorted(items.items()), "machineTypes", "machine types"):
        machine = _machine_type(zone, record, report)
        if machine is not None:
            out.append(machine)
    return out


def _zone_records(
    scopes: Iterable[tuple[str, Any]], field: str, what: str
) -> Iterator[tuple[str, Any]]:
    """(zone, record) pairs of an `aggregatedList` answer's zone scopes; regions and warnings
    are passed over, a non-list `field` is a `ProviderError`."""
    for scope, scoped in scopes:
        if not scope.startswith("zones/") or not isinstance(scoped, Mapping):
            continue
        records = scoped.get(field) or []
        if not isinstance(records, list):
            raise ProviderError(f"gcp: {what} of {scope}: field {field!r} is not a list")
        zone = scope.split("/", 1)[1]
        for record in records:
            yield zone, record


def _machine_type(zone: str, record: Any, report: ParseReport) -> MachineType | None:
    if not isinstance(record, Mapping):
        report.skip(f"machine type in {zone}", "not an object")
        return None
    name = record.get("name")
    cpus = record.get("guestCpus")
    memory_mb = record.get("memoryMb")
    if not isinstance(name, str) or not name:
        report.skip(f"machine type in {zone}", "no name")
        return None
    if not isinstance(cpus, int) or cpus <= 0 or not isinstance(memory_mb, int) or memory_mb <= 0:
        report.skip(f"{name} in {zone}", "no guestCpus or memoryMb")
        return None
    state = (record.get("deprecated") or {}).get("state") or ""
    if state in ("DEPRECATED", "OBSOLETE", "DELETED"):
        logger.debug("gcp: %s in %s is %s", name, zone, state)
        return None
    gpu_type: Any = None
    gpu_count: Any = 0
    accelerators = record.get("accelerators") or []
    if accelerators:
        first = accelerators[0] if isinstance(accelerators, list) else None
        if isinstance(first, Mapping):
            gpu_type = first.get("guestAcceleratorType")
            gpu_count = first.get("guestAcceleratorCount")
        if not isinstance(gpu_type, str) or not gpu_type:
            gpu_type = None
        if gpu_type is None or not isinstance(gpu_count, int) or gpu_count <= 0:
            report.skip(f"{name} in {zone}", "malformed accelerators")
            return None
    family = machine_family(name)
    arm = record.get("architecture") == "ARM64" or family in ARM_FAMILIES
    return MachineType(
        zone=zone,
        name=name,
        cpu=cpus,
        memory=round(memory_mb / 1024, 2),
        gpu_type=gpu_type,
        gpu_count=gpu_count,
        local_ssd_gib=_bundled_local_ssd_gib(name, record),
        cpu_arch=CPUArchitecture.ARM if arm else CPUArchitecture.X86,
    )


def _bundled_local_ssd_gib(name: str, record: Mapping[str, Any]) -> int:
    bundled = record.get("bundledLocalSsds") or {}
    partitions = bundled.get("partitionCount") if isinstance(bundled, Mapping) else None
    if isinstance(partitions, int) and partitions > 0:
        return partitions * LOCAL_SSD_PARTITION_GIB
    return BUNDLED_LOCAL_SSD_GIB.get(name, 0)


def parse_accelerator_types(items: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """Zone -> accelerator type -> `maximumCardsPerInstance`, from
    `acceleratorTypes.aggregatedList`."""
    out: dict[str, dict[str, int]] = {}
    for zone, record in _zone_records(items.items(), "acceleratorTypes", "accelerator types"):
        if not isinstance(record, Mapping):
            continue
        name, cards = record.get("name"), record.get("maximumCardsPerInstance")
        state = (record.get("deprecated") or {}).get("state") or ""
        if (
            isinstance(name, str)
            and isinstance(cards, int)
            and cards > 0
            and state not in ("OBSOLETE", "DELETED")
        ):
            out.setdefault(zone, {})[name] = cards
    return out


def n1_gpu_machine_types(
    machine_types: Iterable[MachineType], accelerators: Mapping[str, Mapping[str, int]]
) -> list[MachineType]:
    """N1 machine types with each attachable GPU count their zone offers and GCP allows."""
    n1_by_zone: dict[str, list[MachineType]] = {}
    for machine in machine_types:
        if machine_family(machine.name) == "n1" and not machine.gpu_type:
            n1_by_zone.setdefault(machine.zone, []).append(machine)
    out: list[MachineType] = []
    for zone in sorted(accelerators):
        for gpu_type, max_cards in sorted(accelerators[zone].items()):
            for count, (max_cpu, max_memory) in N1_GPU_LIMITS.get(gpu_type, {}).items():
                if count > max_cards:
                    continue
                out.extend(
                    replace(machine, gpu_type=gpu_type, gpu_count=count)
                    for machine in n1_by_zone.get(zone, [])
                    if machine.cpu <= max_cpu and machine.memory <= max_memory
                )
    return out


_IGNORED_SKU = re.compile(
    r"sole tenancy|sole-tenant|reserved|commitment|premium|custom|suspended|extended|licens|flex",
    re.IGNORECASE,
)
_DWS_PREFIX = "DWS Calendar Mode "
_SPOT_PREFIX = re.compile(r"^(?:Spot Preemptible |Preemptible )")
_TPU_VERSION = re.compile(r"\bTPU[-\s]?(v\d+[a-z]*)", re.IGNORECASE)
_CORE_RAM = re.compile(r"^(?P<series>.+?)\s+(?:Instance\s+)?(?P<kind>Core|Ram)\b", re.IGNORECASE)
_SERIES_LOCAL_SSD = re.compile(r"^(?P<series>\S+) Instance Local SSD\b")
_GPU_NAME_END = re.compile(r"\s+(?:GPU\b|running in\b|attached to\b)")
_SERIES_TOKEN = re.compile(r"[A-Za-z]\d+[A-Za-z]*")
_NAMED_SERIES = {
    "memory-optimized": "m1",
    "compute optimized": "c2",
    "a3plus": "a3-megagpu",
}
# How the Billing Catalog spells a GPU (normalised) -> the Compute Engine accelerator type.
GPU_SKU_ALIASES: dict[str, str] = {
    "nvidia-tesla-a100-80gb": "nvidia-a100-80gb",
    "nvidia-h100-80gb-mega": "nvidia-h100-mega-80gb",
    "nvidia-h100-80gb-plus": "nvidia-h100-mega-80gb",
    "rtx-6000-96gb": "nvidia-rtx-pro-6000",
    "nvidia-rtx-6000-96gb": "nvidia-rtx-pro-6000",
    "nvidia-rtx-pro-6000-96gb": "nvidia-rtx-pro-6000",
}


def _series_family(series: str) -> str | None:
    text = series.strip().lower()
    if text in _NAMED_SERIES:
        return _NAMED_SERIES[text]
    token = series.split()[0] if series.split() else ""
    if _SERIES_TOKEN.fullmatch(token):
        return _NAMED_SERIES.get(token.lower(), token.lower())
    return None


def _gpu_key(name: str) -> str:
    key = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return GPU_SKU_ALIASES.get(key, key)


def classify_sku(sku: Mapping[str, Any]) -> tuple[str, str, Capacity] | None:
    """What a SKU prices: (kind, key, capacity), or None for SKUs that price no offer.

    Kinds: core/ram (key: machine family), gpu/gpu_slice (key: accelerator type),
    local_ssd (key: machine family, "" for the generic SKU), tpu/tpu_pod (key: TPU version).
    """
    category = sku.get("category") or {}
    usage = category.get("usageType")
    if usage == "Preemptible":
        capacity = Capacity.SPOT
    elif usage == "OnDemand":
        capacity = Capacity.ON_DEMAND
    else:
        return None
    text = sku.get("description") or ""
    if not isinstance(text, str) or _IGNORED_SKU.search(text):
        return None
    if text.startswith(_DWS_PREFIX):
        if capacity is Capacity.SPOT:
            return None
        capacity, text = Capacity.DWS_CALENDAR, text[len(_DWS_PREFIX) :]
    text = _SPOT_PREFIX.sub("", text)
    group = category.get("resourceGroup")
    if group == "TPU" or text.lower().startswith("tpu"):
        if not (version := _TPU_VERSION.search(text)):
            return None
        name = version.group(1).lower()
        name = "v5litepod" if name == "v5e" else name
        return ("tpu_pod" if " pod" in text.lower() else "tpu", name, capacity)
    resource_family = category.get("resourceFamily")
    if resource_family == "Storage":
        if text.startswith("SSD backed Local Storage"):
            return ("local_ssd", "", capacity)
        return None
    if resource_family != "Compute":
        return None
    if match := _SERIES_LOCAL_SSD.match(text):
        family = _series_family(match.group("series"))
        return ("local_ssd", family, capacity) if family else None
    if "(1 gpu slice)" in text:
        name = text.split("(1 gpu slice)", 1)[0]
        name = re.sub(r"^[A-Za-z]\d+\w*\s+", "", name)  # "A4 Nvidia B200 " -> "Nvidia B200 "
        return ("gpu_slice", _gpu_key(name), capacity)
    if group == "GPU":
        return ("gpu", _gpu_key(_GPU_NAME_END.split(text, 1)[0]), capacity)
    if match := _CORE_RAM.match(text):
        family = _series_family(match.group("series"))
        if family is None:
            return None
        return (match.group("kind").lower(), family, capacity)
    return None


def sku_hourly_price(sku: Mapping[str, Any]) -> float | None:
    """The first-tier USD price per hour of one unit, or None if the SKU has no usable price."""
    try:
        expression = sku["pricingInfo"][0]["pricingExpression"]
        unit_price = expression["tieredRates"][0]["unitPrice"]
        price = int(unit_price.get("units") or 0) + int(unit_price.get("nanos") or 0) / 1e9
        usage_unit = expression["usageUnit"]
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        return None
    currency = unit_price.get("currencyCode") or "USD"
    if currency != "USD":
        return None
    if usage_unit in ("h", "GiBy.h"):
        return price
    if usage_unit.endswith(".mo"):
        return price / HOURS_PER_MONTH
    return None


def parse_skus(skus: Iterable[Mapping[str, Any]], report: ParseReport) -> PriceBook:
    """The prices that compose offers, per region and capacity, from Billing Catalog SKUs."""
    book = PriceBook()
    for sku in skus:
        if not isinstance(sku, Mapping):
            report.skip("billing SKU", "not an object")
            continue
        what = classify_sku(sku)
        if what is None:
            continue
        kind, key, capacity = what
        price = sku_hourly_price(sku)
        sku_id = str(sku.get("skuId") or sku.get("name") or "?")
        if price is None:
            report.skip(f"SKU {sku_id}", "no hourly USD price")
            continue
        regions = sku.get("serviceRegions") or []
        for region in regions if isinstance(regions, list) else []:
            book.add((kind, key, region, capacity), price, sku_id)
    return book


def _slice_price(
    machine: MachineType, book: PriceBook, region: str, capacity: Capacity
) -> float | None:
    if not machine.gpu_type:
        return None
    slice_price = book.get("gpu_slice", machine.gpu_type, region, capacity)
    if slice_price is None:
        return None
    return slice_price * machine.gpu_count * FRACTIONAL_GPU_SHARE.get(machine.name, 1.0)


def machine_price(machine: MachineType, book: PriceBook, capacity: Capacity) -> float | None:
    """The hourly price of a machine type in its zone, or None if GCP lists no price for a part."""
    family = machine_family(machine.name)
    if family in UNPRICED_FAMILIES:
        return None
    region = zone_region(machine.zone)
    if (whole := _slice_price(machine, book, region, capacity)) is not None:
        return whole  # a GPU slice covers the whole VM
    core = book.get("core", family, region, capacity)
    ram = book.get("ram", family, region, capacity)
    if core is None or ram is None:
        return None
    price = SHARED_CORE_VCPUS.get(machine.name, machine.cpu) * core + machine.memory * ram
    if machine.gpu_type:
        gpu = book.get("gpu", machine.gpu_type, region, capacity)
        if gpu is None:
            return None
        price += gpu * machine.gpu_count * FRACTIONAL_GPU_SHARE.get(machine.name, 1.0)
    if machine.local_ssd_gib:
        ssd = book.get("local_ssd", family, region, capacity)
        if ssd is None:
            ssd = book.get("local_ssd", "", region, capacity)
        if ssd is None:
            return None
        price += machine.local_ssd_gib * ssd
    return price


# Committed use (resource-based): the same components as on demand, priced by SKUs such as
# "Commitment v1: A2 Cpu in Americas for 1 Year", "Commitment v1: A2 Ram in ...",
# "Commitment v1: Nvidia H100 80GB GPU running in Americas for 1 Year". Read as the on-demand
# SKU they commit to, a machine's term is composed like its on-demand price; a machine with a
# component that has no commitment SKU (bundled local SSD, for one) gets no term.
COMMITMENT_TERMS = {"Commit1Yr": "1y", "Commit3Yr": "3y"}
_COMMITMENT = re.compile(r"^Commitment(?:\s+v\d+)?:\s*(?P<body>.+?)\s+for\s+\d+\s+Years?\s*$")
_COMMITMENT_CORE_RAM = re.compile(
    r"^(?P<series>.+?)\s+(?P<kind>Cpu|Core|Ram)\s+in\s+(?P<where>.+)$"
)


def commitment_as_on_demand(sku: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """(term, the SKU restated as the on-demand component it commits to), or None."""
    category = sku.get("category") or {}
    term = COMMITMENT_TERMS.get(str(category.get("usageType")))
    match = _COMMITMENT.match(str(sku.get("description") or ""))
    if term is None or match is None:
        return None
    body = match.group("body")
    core_ram = _COMMITMENT_CORE_RAM.match(body)
    if core_ram and category.get("resourceGroup") in ("CPU", "RAM"):
        kind = "Ram" if core_ram.group("kind") == "Ram" else "Core"
        body = f"{core_ram.group('series')} Instance {kind} running in {core_ram.group('where')}"
    restated = {**category, "usageType": "OnDemand"}
    return term, {**sku, "description": body, "category": restated}


def commitment_books(skus: Iterable[Any]) -> dict[str, PriceBook]:
    """Per term, the commitment prices as a PriceBook of on-demand components."""
    by_term: dict[str, list[dict[str, Any]]] = {}
    for sku in skus:
        found = commitment_as_on_demand(sku) if isinstance(sku, Mapping) else None
        if found is not None:
            by_term.setdefault(found[0], []).append(found[1])
    # Skips here are already counted by the on-demand pass over the same SKUs.
    return {term: parse_skus(items, ParseReport()) for term, items in sorted(by_term.items())}


def make_vm_terms(
    machine_types: Iterable[MachineType],
    books: Mapping[str, PriceBook],
    *,
    observed_at: datetime | None,
) -> list[Term]:
    """Committed-use terms per machine type and zone: billed monthly, nothing upfront."""
    machines = list(machine_types)
    terms: list[Term] = []
    for term, book in books.items():
        for machine in machines:
            price = machine_price(machine, book, Capacity.ON_DEMAND)
            if price is None or price <= 0:
                continue
            terms.append(
                Term(
                    provider=GCPProvider.NAME,
                    instance_name=machine.name,
                    location=machine.zone,
                    term=term,
                    payment="none",
                    offering_class="",
                    hourly=round(price, 6),
                    upfront=0.0,
                    source=f"https://cloudbilling.googleapis.com/v1/{COMPUTE_SERVICE}/skus",
                    observed_at=observed_at,
                )
            )
    return terms


@dataclass(frozen=True)
class GPUInfo:
    name: str
    memory: float | None
    vendor: AcceleratorVendor


def gpu_info(gpu_type: str, report: ParseReport) -> GPUInfo | None:
    """Canonical name, memory and vendor of a Compute Engine accelerator type."""
    name, memory = GCP_ACCELERATORS.get(gpu_type, (gpu_type, None))
    gpu = resolve_gpu(name, memory)
    if gpu is not None:
        return GPUInfo(gpu.name, gpu.memory, gpu.vendor)
    report.unknown_gpu(gpu_type, "GCP's accelerator types")
    if gpu_type.startswith("nvidia-"):
        return GPUInfo(gpu_type, gpu_memory_from_name(gpu_type), AcceleratorVendor.NVIDIA)
    return None


def offer_flags(instance_name: str, capacity: Capacity) -> list[str]:
    flags = []
    if capacity is Capacity.DWS_CALENDAR:
        flags.append("gcp-dws-calendar-mode")
    if instance_name.startswith("a4-"):
        flags.append("gcp-a4")
    elif instance_name.startswith("g4-standard-"):
        flags.append(G4_FLAG)
    return flags


def with_legacy_g4_preview(offers: Iterable[CatalogItem]) -> list[CatalogItem]:
    """Each G4 offer, followed by a copy flagged `gcp-g4-preview` instead of `gcp-g4`."""
    out: list[CatalogItem] = []
    for offer in offers:
        out.append(offer)
        if G4_FLAG in offer.flags:
            flags = [G4_PREVIEW_FLAG if f == G4_FLAG else f for f in offer.flags]
            out.append(replace(offer, flags=flags, provider_data=dict(offer.provider_data)))
    return out


def make_vm_offers(
    machine_types: Iterable[MachineType], book: PriceBook, report: ParseReport
) -> list[CatalogItem]:
    offers: list[CatalogItem] = []
    for machine in machine_types:
        gpu: GPUInfo | None = None
        if machine.gpu_type:
            gpu = gpu_info(machine.gpu_type, report)
            if gpu is None:
                report.skip(
                    f"{machine.name} in {machine.zone}", f"no vendor for {machine.gpu_type}"
                )
                continue
        for capacity in Capacity:
            price = machine_price(machine, book, capacity)
            if price is None:
                continue
            gpu_memory = None
            if gpu is not None and gpu.memory is not None:
                gpu_memory = gpu.memory * FRACTIONAL_GPU_SHARE.get(machine.name, 1.0)
            offers.append(
                CatalogItem(
                    provider=GCPProvider.NAME,
                    instance_name=machine.name,
                    location=machine.zone,
                    price=round(price, 6),
                    cpu=machine.cpu,
                    memory=machine.memory,
                    gpu_count=machine.gpu_count if gpu else 0,
                    gpu_name=gpu.name if gpu else None,
                    gpu_memory=gpu_memory,
                    spot=capacity is Capacity.SPOT,
                    disk_size=None,
                    gpu_vendor=gpu.vendor if gpu else None,
                    flags=offer_flags(machine.name, capacity),
                    cpu_arch=machine.cpu_arch,
                    provider_data={"is_dws_calendar_mode": capacity is Capacity.DWS_CALENDAR},
                )
            )
    return offers


def parse_tpu_accelerator_types(
    zone: str, records: Iterable[Any], report: ParseReport
) -> list[TPUType]:
    """TPU types of a zone from the TPU API's `acceleratorTypes` list."""
    out: list[TPUType] = []
    for record in records:
        name = record.get("type") if isinstance(record, Mapping) else None
        configs = record.get("acceleratorConfigs") if isinstance(record, Mapping) else None
        try:
            topology = configs[0]["topology"]  # type: ignore[index]
            chips = math.prod(int(part) for part in topology.split("x"))
        except (TypeError, KeyError, IndexError, ValueError, AttributeError):
            chips = 0
        if not isinstance(name, str) or not name or chips <= 0:
            report.skip(f"TPU type {name!r} in {zone}", "no type or topology")
            continue
        out.append(TPUType(zone=zone, name=name, chips=chips))
    return out


def tpu_version(name: str) -> str:
    return name.rsplit("-", 1)[0]


def tpu_price(tpu: TPUType, book: PriceBook, capacity: Capacity) -> float | None:
    version = tpu_version(tpu.name)
    region = zone_region(tpu.zone)
    unit = book.get("tpu", version, region, capacity)
    if unit is None:
        unit = book.get("tpu_pod", version, region, capacity)
    if unit is None:
        return None
    return unit / TPU_CHIPS_PER_SKU_UNIT.get(version, 1) * tpu.chips


def make_tpu_offers(tpus: Iterable[TPUType], book: PriceBook) -> list[CatalogItem]:
    offers: list[CatalogItem] = []
    for tpu in tpus:
        host = TPU_HOSTS.get(tpu.name)
        if host is None:  # multi-host slices and types whose host we do not know
            logger.debug("gcp: TPU %s in %s is not a known single-host type", tpu.name, tpu.zone)
            continue
        hbm = TPU_HBM_GIB_PER_CHIP.get(tpu_version(tpu.name))
        for capacity in (Capacity.ON_DEMAND, Capacity.SPOT):
            price = tpu_price(tpu, book, capacity)
            if price is None:
                continue
            offers.append(
                CatalogItem(
                    provider=GCPProvider.NAME,
                    instance_name=tpu.name,
                    location=tpu.zone,
                    price=round(price, 6),
                    cpu=host.cpu,
                    memory=host.memory,
                    gpu_count=1,
                    gpu_name=tpu.name,
                    gpu_memory=hbm * tpu.chips if hbm else None,
                    spot=capacity is Capacity.SPOT,
                    disk_size=None,
                    gpu_vendor=AcceleratorVendor.GOOGLE,
                    provider_data={"is_dws_calendar_mode": False},
                )
            )
    return offers


def _sort_key(item: CatalogItem) -> tuple[Any, ...]:
    return (
        item.price,
        item.instance_name,
        item.location,
        item.spot,
        item.gpu_name or "",
        item.flags,
    )


def _not_sold_on_demand(item: CatalogItem) -> bool:
    if item.spot or item.provider_data.get("is_dws_calendar_mode"):
        return False
    name = item.instance_name
    if name.startswith(("a4-", "a4x-", "a3-ultragpu-")):
        return True
    return name.startswith("a3-highgpu-") and item.gpu_count < 8


# ---------------------------------------------------------------------------------------------
# Fetching: the SDK and HTTP calls, with bounded retries and safe error messages.


@functools.lru_cache(maxsize=1)
def _sdk() -> SimpleNamespace:
    """The Google SDK (the `gcp` extra), imported on first use: the parsing above, and the
    integrity tests that import this module, work without it."""
    with sdk_imports("gcp"):
        import google.auth
        import google.auth.exceptions
        import google.auth.transport.requests
        from google.api_core import exceptions as api_exceptions
        from google.cloud import billing_v1, compute_v1
        from google.protobuf import json_format
    return SimpleNamespace(
        auth=google.auth,
        api_exceptions=api_exceptions,
        billing_v1=billing_v1,
        compute_v1=compute_v1,
        json_format=json_format,
        transient=(
            api_exceptions.TooManyRequests,
            api_exceptions.InternalServerError,
            api_exceptions.BadGateway,
            api_exceptions.ServiceUnavailable,
            api_exceptions.GatewayTimeout,
            requests.ConnectionError,
            requests.Timeout,
            google.auth.exceptions.TransportError,  # e.g. the token endpoint unreachable
        ),
    )


def _sdk_call(what: str, call: Callable[[], T]) -> T:
    """Run one SDK request; transient failures are retried `MAX_RETRIES` times, every failure
    becomes a `ProviderError` that says what failed without echoing URLs or headers."""
    sdk = _sdk()
    api_exceptions = sdk.api_exceptions
    for attempt in range(MAX_RETRIES + 1):
        try:
            return call()
        except sdk.transient as e:
            if attempt == MAX_RETRIES:
                raise ProviderError(
                    f"gcp: {what} failed after {attempt + 1} attempts: {_describe(e)}"
                ) from None
            delay = RETRY_BACKOFF * 2**attempt
            logger.info("gcp: %s failed (%s), retrying in %.1fs", what, _describe(e), delay)
            time.sleep(delay)
        except sdk.auth.exceptions.GoogleAuthError:
            raise ProviderError(f"gcp: {what}: {ADC_HINT} could not be used") from None
        except (api_exceptions.Unauthorized, api_exceptions.Forbidden) as e:
            raise ProviderError(
                f"gcp: {what} was refused with HTTP {e.code}; check {ADC_HINT} and {PROJECT_ENV}"
            ) from None
        except api_exceptions.GoogleAPICallError as e:
            raise ProviderError(f"gcp: {what} returned HTTP {e.code}") from None
        except (sdk.json_format.ParseError, ValueError, TypeError, KeyError):
            raise ProviderError(f"gcp: {what} returned a malformed response") from None
        except requests.RequestException as e:
            raise ProviderError(f"gcp: {what} failed: {type(e).__name__}") from None
    raise AssertionError("unreachable")


def _describe(error: Exception) -> str:
    code = getattr(error, "code", None)
    return f"HTTP {code}" if isinstance(code, int) else type(error).__name__


def _to_json(message: Any) -> dict[str, Any]:
    as_dict: dict[str, Any] = type(message).to_dict(message, preserving_proto_field_name=False)
    return as_dict


def _aggregated(what: str, list_page: Callable[[str], Any]) -> dict[str, dict[str, list[Any]]]:
    """Every page of a Compute `aggregatedList`, merged: scope -> field -> records."""
    merged: dict[str, dict[str, list[Any]]] = {}
    token = ""
    for _ in range(MAX_PAGES):
        page = _sdk_call(what, functools.partial(list_page, token))
        for scope, scoped in page.items.items():
            for key, value in _to_json(scoped).items():
                if isinstance(value, list):
                    merged.setdefault(scope, {}).setdefault(key, []).extend(value)
        token = page.next_page_token
        if not token:
            return merged
    raise ProviderError(f"gcp: {what} did not end after {MAX_PAGES} pages")


def fetch_machine_types(client: Any, project: str) -> dict[str, dict[str, list[Any]]]:
    def list_page(token: str) -> Any:
        request = _sdk().compute_v1.AggregatedListMachineTypesRequest(
            project=project, page_token=token
        )
        return client.aggregated_list(request=request, retry=None, timeout=SDK_TIMEOUT)

    return _aggregated("listing machine types", list_page)


def fetch_accelerator_types(client: Any, project: str) -> dict[str, dict[str, list[Any]]]:
    def list_page(token: str) -> Any:
        request = _sdk().compute_v1.AggregatedListAcceleratorTypesRequest(
            project=project, page_token=token
        )
        return client.aggregated_list(request=request, retry=None, timeout=SDK_TIMEOUT)

    return _aggregated("listing accelerator types", list_page)


def fetch_skus(client: Any, service: str) -> list[dict[str, Any]]:
    """Every SKU of a Billing Catalog service, in USD, as REST-shaped JSON."""
    skus: list[dict[str, Any]] = []
    token = ""
    what = f"listing the SKUs of {service}"
    for _ in range(MAX_PAGES):
        request = _sdk().billing_v1.ListSkusRequest(
            parent=service, currency_code="USD", page_size=SKU_PAGE_SIZE, page_token=token
        )
        page = _sdk_call(
            what,
            functools.partial(client.list_skus, request=request, retry=None, timeout=SDK_TIMEOUT),
        )
        skus.extend(_to_json(sku) for sku in page.skus)
        token = page.next_page_token
        if not token:
            return skus
    raise ProviderError(f"gcp: {what} did not end after {MAX_PAGES} pages")


def _tpu_list(url: str, key: str, headers: Mapping[str, str]) -> list[Any]:
    items: list[Any] = []
    token = ""
    for _ in range(MAX_PAGES):
        data = transport.request_json(
            "GET",
            url,
            provider=GCPProvider.NAME,
            credential=ADC_ENV,
            headers=dict(headers),
            params={"pageToken": token} if token else None,
        )
        if not isinstance(data, dict):
            raise ProviderError(f"gcp: {urls.safe_url(url)}: expected an object")
        page = data.get(key, [])
        if not isinstance(page, list):
            raise ProviderError(f"gcp: {urls.safe_url(url)}: field {key!r} is not a list")
        items.extend(page)
        token = data.get("nextPageToken") or ""
        if not token:
            return items
    raise ProviderError(f"gcp: {urls.safe_url(url)} did not end after {MAX_PAGES} pages")


_ZONE = re.compile(r"[a-z]+-[a-z]+\d+-[a-z]")


def fetch_tpu_types(
    project: str, headers: Mapping[str, str], report: ParseReport
) -> dict[str, list[Any]]:
    """Zone -> the TPU API's accelerator types there. A zone that fails is skipped."""
    base = f"{TPU_API_URL}/projects/{project}/locations"
    locations = _tpu_list(base, "locations", headers)
    zones = sorted(
        {
            loc["locationId"]
            for loc in locations
            if isinstance(loc, Mapping)
            and isinstance(loc.get("locationId"), str)
            and _ZONE.fullmatch(loc["locationId"])
        }
    )
    out: dict[str, list[Any]] = {}
    for zone in zones:
        try:
            out[zone] = _tpu_list(f"{base}/{zone}/acceleratorTypes", "acceleratorTypes", headers)
        except ProviderError as e:
            logger.warning("gcp: skipping TPU zone %s: %s", zone, e)
            report.failed_tpu_zones.append(zone)
    if zones and not out:
        raise ProviderError(f"gcp: listing TPU types failed in all {len(zones)} zones")
    return out


def default_credentials() -> Credentials:
    """Application default credentials with the cloud-platform scope."""
    auth = _sdk().auth
    credentials: Credentials
    try:
        credentials, _ = auth.default(scopes=list(SCOPES))
    except auth.exceptions.DefaultCredentialsError:
        raise MissingCredsError(
            f"gcp: no application default credentials; set {ADC_ENV} or run "
            "`gcloud auth application-default login`"
        ) from None
    return credentials


def _bearer(credentials: Credentials) -> dict[str, str]:
    auth = _sdk().auth
    try:
        if not credentials.valid:
            request = auth.transport.requests.Request(session=transport.session())
            credentials.refresh(request)  # type: ignore[no-untyped-call]  # google-auth: untyped
    except auth.exceptions.GoogleAuthError:
        raise ProviderError(f"gcp: refreshing the access token failed; check {ADC_HINT}") from None
    return {"Authorization": f"Bearer {credentials.token}"}


class GCPProvider(Collects[ParseReport], OfflineProvider):
    """Compute Engine VMs and Cloud TPUs of the whole public catalog (see the module notes)."""

    NAME = "gcp"
    REPORT = ParseReport

    def __init__(self, project: str, credentials: Credentials | None = None) -> None:
        """`credentials` default to the application default credentials, looked up on first
        use (the lookup may probe the GCE metadata server, so constructing stays offline)."""
        self.project = project
        self._credentials = credentials
        self.last_report = ParseReport()
        self.last_terms: list[Term] = []  # committed-use terms of the last `get()`

    @property
    def credentials(self) -> Credentials:
        if self._credentials is None:
            self._credentials = default_credentials()
        return self._credentials

    def __repr__(self) -> str:
        return f"{type(self).__name__}(project={self.project!r}, credentials=***)"

    @classmethod
    def from_env(cls) -> GCPProvider:
        return cls(get_creds_env(PROJECT_ENV))

    def collect(self, ask: Ask, report: ParseReport) -> list[CatalogItem]:
        sdk = _sdk()
        compute = sdk.compute_v1.MachineTypesClient(credentials=self.credentials, transport="rest")
        gpus = sdk.compute_v1.AcceleratorTypesClient(credentials=self.credentials, transport="rest")
        billing = sdk.billing_v1.CloudCatalogClient(credentials=self.credentials, transport="rest")

        machines = parse_machine_types(fetch_machine_types(compute, self.project), report)
        machines += n1_gpu_machine_types(
            machines, parse_accelerator_types(fetch_accelerator_types(gpus, self.project))
        )
        observed_at = datetime.now(timezone.utc)
        skus = fetch_skus(billing, COMPUTE_SERVICE) + fetch_skus(billing, TPU_SERVICE)
        book = parse_skus(skus, report)
        offers = make_vm_offers(machines, book, report)
        terms = make_vm_terms(machines, commitment_books(skus), observed_at=observed_at)

        tpus: list[TPUType] = []
        for zone, records in fetch_tpu_types(
            self.project, _bearer(self.credentials), report
        ).items():
            tpus += parse_tpu_accelerator_types(zone, records, report)
        offers += make_tpu_offers(tpus, book)

        if ask.apply_filter:
            offers = self.filter(offers)
        offers = with_legacy_g4_preview(offers)
        offers.sort(key=_sort_key)
        sold = {(o.instance_name, o.location) for o in offers}
        # Terms beside the offers, never offers: for the machines published on demand.
        self.last_terms = [t for t in terms if (t.instance_name, t.location) in sold]
        logger.info(
            "gcp: %d offers from %d machine types, %d TPU types and %d prices (%d skipped, %d unknown GPUs)",
            len(offers),
            len(machines),
            len(tpus),
            len(book),
            len(report.skipped),
            sum(report.unknown_gpus.values()),
        )
        return offers

    def extra_tables(self) -> dict[str, bytes]:
        """The committed-use terms of the last `get()` as the terms file beside the CSV."""
        return (
            {terms_file.SUFFIX: terms_file.write_terms(self.last_terms)} if self.last_terms else {}
        )

    @classmethod
    def filter(cls, offers: list[CatalogItem]) -> list[CatalogItem]:
        return [
            offer
            for offer in offers
            if (offer.gpu_name or offer.instance_name.startswith(PUBLISHED_PREFIXES))
            and not (
                machine_family(offer.instance_name) == "n1"
                and offer.gpu_name not in N1_PUBLISHED_GPUS
            )
            and not _not_sold_on_demand(offer)
        ]
