"""Checks of one decoded API record at the boundary, shared by the providers added for issue 30
(Fluidstack, Shadeform, Hyperbolic, Prime Intellect, Paperspace, Scaleway, OVHcloud).

A record that fails one raises `BadRecord` naming the field; the provider then skips that
record with `ParseReport.skip` and goes on with the others (a malformed row is skipped and
counted, never the whole answer lost). `json_number` and `need_number` are the one reading of a
JSON number for the older providers too (RunPod, Verda, CloudRift, Lium, Azure)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from gpuhunt._internal import rentable
from gpuhunt._internal.gpu_names import gpu_memory_from_name, resolve_gpu
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem, CPUArchitecture, JSONObject
from gpuhunt.providers._report import ParseReport

# Marketplaces' spellings of an upstream cloud unlike the gpuhunt provider selling its machines.
_CLOUD_PROVIDERS = {"datacrunch": "verda", "lambda": "lambdalabs"}
# gpuhunt providers' names (a test checks them against `providers/*.py`).
_PROVIDER_NAMES = frozenset(
    {
        "aws",
        "azure",
        "cloudrift",
        "crusoe",
        "cudo",
        "daytona",
        "digitalocean",
        "fluidstack",
        "gcp",
        "hotaisle",
        "hyperbolic",
        "jarvislabs",
        "lambdalabs",
        "lium",
        "nebius",
        "oci",
        "ovhcloud",
        "paperspace",
        "primeintellect",
        "runpod",
        "scaleway",
        "seeweb",
        "tensordock",
        "vastai",
        "verda",
        "vultr",
    }
)


@dataclass(frozen=True)
class Gpu:
    """An offer's GPUs: how many, their name in the accelerator tables, vendor and GiB each."""

    count: int
    name: str | None
    vendor: AcceleratorVendor | None
    memory: float | None


NO_GPU = Gpu(0, None, None, None)


def offer(
    provider: str,
    name: str,
    location: str,
    price: float,
    cpu: int,
    memory: float,
    gpu: Gpu = NO_GPU,
    disk_size: float | None = None,
    *,
    spot: bool = False,
    flags: list[str] | None = None,
    cpu_arch: CPUArchitecture = CPUArchitecture.X86,
    provider_data: JSONObject | None = None,
    available: bool | None = None,
    resold_from: str | None = None,
    cuda_version: str | None = None,
) -> CatalogItem:
    """The `CatalogItem` every provider builds from what it read: on-demand and of unknown disk
    unless said, the GPUs as one `Gpu`; `available` is the provider's availability reading
    (None: it does not say, docs/availability.md). A share of a GPU (`gpu_fraction`) and a
    marketplace host's momentary listing (`momentary`) are set from `rentable.offer_facts`.
    How the location is known (`location_source`) is "listed": the provider's own answer
    sells it there."""
    return CatalogItem(
        provider=provider,
        instance_name=name,
        location=location,
        price=price,
        cpu=cpu,
        memory=memory,
        gpu_count=gpu.count,
        gpu_name=gpu.name,
        gpu_memory=gpu.memory,
        spot=spot,
        disk_size=disk_size,
        gpu_vendor=gpu.vendor,
        flags=flags if flags is not None else [],
        cpu_arch=cpu_arch,
        # A copy each, so offers built from one dict do not share it.
        provider_data=dict(provider_data) if provider_data is not None else {},
        available=available,
        resold_from=resold_from,
        cuda_version=cuda_version,
        location_source="listed",
        **rentable.offer_facts(provider, name),
    )


class BadRecord(ValueError):
    """A record that cannot be offered, with the reason."""


def read_each(
    records: Iterable[Any],
    report: ParseReport,
    name: Callable[[Any, int], str],
    parse: Callable[[Any, ParseReport, str], Iterable[CatalogItem]],
) -> list[CatalogItem]:
    """The offers `parse(record, report, what)` reads from each record, `what` being
    `name(record, index)`. A record refused with `BadRecord` is skipped with its reason and
    counted as malformed; any other exception of one record is skipped and counted too
    (`ParseReport.record`): one bad record never costs the others."""
    offers: list[CatalogItem] = []
    for index, record in enumerate(records):
        what = name(record, index)
        with report.record(what):
            try:
                offers.extend(parse(record, report, what))
            except BadRecord as e:
                report.counts["malformed"] += 1
                report.skip(what, str(e))
    return offers


def obj(value: Any, what: str = "record") -> dict[str, Any]:
    if not isinstance(value, dict):
        raise BadRecord(f"{what}: expected an object, got {type(value).__name__}")
    return value


def text(record: dict[str, Any], key: str) -> str:
    value = record.get(key)
    if not isinstance(value, str) or not value.strip():
        raise BadRecord(f"field {key!r} is missing or empty")
    return value.strip()


def number(record: dict[str, Any], key: str, *, low: float = 0.0, high: float = math.inf) -> float:
    """A finite number in (low, high]; numeric strings ("2.89") are accepted, as some APIs
    send prices so."""
    value = record.get(key)
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise BadRecord(f"field {key!r} is not a number: {str(value)[:40]!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadRecord(f"field {key!r} is missing or not a number")
    if not math.isfinite(value) or not low < value <= high:
        raise BadRecord(f"field {key!r} is {value!r}, outside ({low:g}, {high:g}]")
    return float(value)


def json_number(value: object) -> float | None:
    """`value` as a float if the decoded answer holds a number there, else None (missing, a
    string, null). A bool is not a number here although Python counts True as 1: an API that
    sends `true` for a count or a price has changed shape. NaN and infinity pass; callers that
    refuse them say so (`need_number`)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def need_number(
    value: object,
    what: str,
    *,
    error: type[ValueError] = ValueError,
    refusal: str = "has type {type}",
    parse_text: bool = False,
    finite: bool = False,
) -> float:
    """`json_number`, raising `error(f"{what} {refusal}")` (`{type}` filled in with the type
    found) instead of answering None, so the parser skips the record and says why.

    The providers that share it differ on purpose, kept as parameters: `parse_text` reads a
    numeric string (Azure sends every capability as text; an unreadable one is "{what} is not
    a number: '...'"); `finite` refuses NaN and infinity ("{what} is not finite", Lium);
    `error` is the class the caller's record guard expects (Lium's is a `SkipRecord`)."""
    number: float | None
    if parse_text and isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            raise error(f"{what} is not a number: {value!r}") from None
    else:
        number = json_number(value)
        if number is None:
            raise error(f"{what} {refusal.format(type=type(value).__name__)}")
    if finite and not math.isfinite(number):
        raise error(f"{what} is not finite")
    return number


def named(record: Any, key: str) -> tuple[dict[str, Any], str]:
    """`record` as an object, with its name `record[key]`, for the providers whose record
    guard catches `KeyError` and `ValueError` (CloudRift, Verda): ValueError when it is no
    object or the name is empty or not text, KeyError when there is none."""
    if not isinstance(record, dict):
        raise ValueError(f"expected an object, got {type(record).__name__}")
    name = record[key]
    if not isinstance(name, str) or not name:
        raise ValueError(f"{key} is empty")
    return record, name


def positive(value: float, what: str) -> float:
    """`value`, or ValueError when it is not above zero (a price of nothing is no offer)."""
    if value <= 0:
        raise ValueError(f"{what} is {value}")
    return value


def count(record: dict[str, Any], key: str, *, low: int = 1, high: int = 4096) -> int:
    return whole(record.get(key), f"field {key!r}", low=low, high=high)


def whole(value: Any, what: str, *, low: int = 1, high: int = 4096) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadRecord(f"{what} is missing or not a number")
    if not math.isfinite(value) or value != int(value) or not low <= value <= high:
        raise BadRecord(f"{what} is {value!r}, not a whole number in [{low}, {high}]")
    return int(value)


def gpu_or_kept(
    spelling: str,
    memory: float | None,
    report: ParseReport,
    where: str,
    *also: str,
) -> tuple[str, AcceleratorVendor, float | None]:
    """(name, vendor, GiB per GPU) of a provider's GPU through the one resolver (`spelling`,
    else each of `also`, e.g. a description). A GPU the tables do not know is kept under the
    provider's spelling and counted (`report.unknown_gpu`): vendor AMD for an Instinct-style
    "MI..." name, else NVIDIA (what these clouds sell), memory as reported or written in the
    name."""
    for text in (spelling, *also):
        resolved = resolve_gpu(text, memory) if text else None
        if resolved is not None:
            return resolved.name, resolved.vendor, resolved.memory
    report.unknown_gpu(spelling, f"{where}; kept under that name")
    amd = spelling.upper().startswith("MI") or spelling.upper().startswith("AMD")
    vendor = AcceleratorVendor.AMD if amd else AcceleratorVendor.NVIDIA
    return spelling, vendor, memory if memory is not None else gpu_memory_from_name(spelling)


def resold_from(cloud: str) -> str:
    """`CatalogItem.resold_from` of a marketplace resale: the gpuhunt provider name of the
    upstream `cloud` a marketplace (Shadeform, Prime Intellect) names, else its own spelling."""
    key = cloud.strip().lower()
    if key in _CLOUD_PROVIDERS:
        return _CLOUD_PROVIDERS[key]
    return key if key in _PROVIDER_NAMES else cloud
