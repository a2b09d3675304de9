"""Lambda (Lambda Labs) on-demand cloud: instance types and prices from the public cloud API.

Two calls with the API key in `LAMBDALABS_TOKEN`:

- `GET /api/v1/instance-types`: every instance type Lambda currently sells, with its price in
  cents per hour, vCPUs, memory (GiB), local storage (GiB), GPU count, a GPU description such as
  "H100 (80 GB SXM5)" and `regions_with_capacity_available`;
- `GET /api/v1/images`: the machine images of every region, each with its CPU architecture.
  It is the only call that names every region Lambda operates, busy or not.

Where an offer is listed (decision): **in every region that can run its architecture, not only
where the API reports capacity.** `regions_with_capacity_available` is a live stock reading: at
collection time (once a night) popular GPUs are often sold out everywhere, and a catalog built
from it would drop H100s one night and list them the next. The catalog says what Lambda sells
and where; whether a machine is free right now is for the orchestrator to check at launch time
against this same endpoint. The reading itself is kept: each offer's `available`
is True exactly in the regions `regions_with_capacity_available` named for its type when the
catalog was collected, False in the others (a stock reading of that moment, not a promise). A
region that runs an
instance type's architecture is one that publishes an image for it (x86_64 or arm64), so an
ARM-only superchip type is not listed where no ARM image exists. Regions where the API does
report capacity for a type are always included, even if no image lists them.

GPU names come from the description ("8x A100 (40 GB SXM4)" or the type's `gpu_description`)
through the shared alias table; the memory from the description, else the smallest known size
of that GPU (never over-promising). Grace superchips (GH200, GB200, ...) and types reported as
arm64 are `cpu_arch=arm` with the `lambda-arm` flag, which older consumers do not allow.

Units: `memory` is GiB as Lambda reports it; `disk_size` is the local storage converted to GB.
Lambda has no spot market. A record the API sends malformed is skipped and counted in
`LambdaLabsProvider.last_report`; a GPU name the tables do not know is kept, warned about and
counted there too.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gpuhunt._internal.accelerators import is_nvidia_superchip
from gpuhunt._internal.errors import ProviderError
from gpuhunt._internal.gpu_names import gpu_memory_from_name, resolve_gpu
from gpuhunt._internal.load import transport
from gpuhunt._internal.models import (
    AcceleratorVendor,
    CatalogItem,
    CPUArchitecture,
)
from gpuhunt.providers import _report
from gpuhunt.providers._records import Gpu, offer
from gpuhunt.providers.base import Ask, Collects, OfflineProvider, get_creds_env

logger = logging.getLogger(__name__)

NAME = "lambdalabs"
API_URL = "https://cloud.lambdalabs.com/api/v1"
INSTANCE_TYPES_URL = f"{API_URL}/instance-types"
IMAGES_URL = f"{API_URL}/images"
TOKEN_ENV = "LAMBDALABS_TOKEN"
FLAG_ARM = "lambda-arm"

_GIB_IN_GB = 1024**3 / 10**9
# Architecture names the API uses (images: x86_64/arm64; some payloads say aarch64).
_ARCHITECTURES = {
    "x86_64": CPUArchitecture.X86,
    "amd64": CPUArchitecture.X86,
    "arm64": CPUArchitecture.ARM,
    "aarch64": CPUArchitecture.ARM,
}
# "8x A100 (40 GB SXM4)" -> count, name, details; "H100 (80 GB SXM5)" -> name, details.
_DESCRIPTION = re.compile(r"^\s*(?:(\d+)\s*x\s+)?(.+?)\s*(?:\((.*)\))?\s*$")


@dataclass
class ParseReport(_report.ParseReport):
    """lambdalabs's collection report (see `providers._report`)."""

    provider: str = "lambdalabs"


class LambdaLabsProvider(Collects[ParseReport], OfflineProvider):
    NAME = NAME
    REPORT = ParseReport

    def __init__(self, token: str) -> None:
        self._token = token
        self.last_report = ParseReport()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(token=***)"

    @classmethod
    def from_env(cls) -> LambdaLabsProvider:
        return cls(get_creds_env(TOKEN_ENV))

    def collect(self, ask: Ask, report: ParseReport) -> list[CatalogItem]:
        instance_types = fetch_instance_types(self._token)
        images = fetch_images(self._token)
        regions = parse_image_regions(images, report)
        return parse_instance_types(instance_types, regions, report)


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def fetch_instance_types(token: str) -> Any:
    return _get(INSTANCE_TYPES_URL, token)


def fetch_images(token: str) -> Any:
    return _get(IMAGES_URL, token)


def _get(url: str, token: str) -> Any:
    return transport.request_json(
        "GET", url, provider=LambdaLabsProvider.NAME, credential=TOKEN_ENV, headers=_auth(token)
    )


def parse_image_regions(
    payload: Any, report: ParseReport | None = None
) -> dict[CPUArchitecture, list[str]]:
    """Regions per CPU architecture, from the `GET /images` answer `{"data": [image, ...]}`.

    An image without `architecture` (older answers) is taken as x86_64.
    """
    report = report if report is not None else ParseReport()
    transport.require_fields(payload, {"data": list}, where="lambdalabs: GET /images")
    regions: dict[CPUArchitecture, set[str]] = {}
    for i, image in enumerate(payload["data"]):
        region = image.get("region") if isinstance(image, dict) else None
        name = region.get("name") if isinstance(region, dict) else None
        if not isinstance(name, str) or not name:
            report.skip(f"image #{i}", "no region name")
            continue
        arch_name = image.get("architecture") or "x86_64"
        arch = _ARCHITECTURES.get(str(arch_name).lower())
        if arch is None:
            report.skip(f"image #{i} in {name}", f"unknown architecture {arch_name!r}")
            continue
        regions.setdefault(arch, set()).add(name)
    return {arch: sorted(names) for arch, names in regions.items()}


def parse_instance_types(
    payload: Any,
    regions: Mapping[CPUArchitecture, Iterable[str]],
    report: ParseReport | None = None,
) -> list[CatalogItem]:
    """Offers from the `GET /instance-types` answer, one per instance type and region, by price.

    `regions` maps an architecture to the regions that can run it (see the module docstring);
    the regions where the API reports capacity for a type are added to them.
    """
    report = report if report is not None else ParseReport()
    transport.require_fields(payload, {"data": dict}, where="lambdalabs: GET /instance-types")
    offers: list[CatalogItem] = []
    for key, record in payload["data"].items():
        try:
            offers.extend(_parse_record(record, regions, report))
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            report.skip(f"instance type {key!r}", _describe(e))
    if payload["data"] and not offers:
        # Every record failed: the answer changed shape; publishing nothing would look like
        # Lambda selling nothing.
        raise ProviderError(
            f"lambdalabs: none of {len(payload['data'])} instance types could be read: "
            + "; ".join(report.skipped[:3])
        )
    return sorted(offers, key=lambda o: (o.price, o.instance_name, o.location))


def _describe(e: Exception) -> str:
    return f"missing field {e}" if isinstance(e, KeyError) else str(e)


def _parse_record(
    record: Any,
    regions: Mapping[CPUArchitecture, Iterable[str]],
    report: ParseReport,
) -> list[CatalogItem]:
    instance = record["instance_type"]
    name = _require(instance["name"], str, "name")
    specs = instance["specs"]
    price_cents = _require(instance["price_cents_per_hour"], (int, float), "price_cents_per_hour")
    if price_cents <= 0:
        raise ValueError(f"price_cents_per_hour is {price_cents}")
    vcpus = _require(specs["vcpus"], int, "specs.vcpus")
    memory_gib = _require(specs["memory_gib"], (int, float), "specs.memory_gib")
    storage_gib = _require(specs["storage_gib"], (int, float), "specs.storage_gib")
    gpu_count, gpu_name, gpu_memory = _parse_gpu(instance, report)

    arch = _ARCHITECTURES.get(str(instance.get("architecture") or "").lower())
    if arch is None:
        arch = (
            CPUArchitecture.ARM
            if gpu_name and is_nvidia_superchip(gpu_name)
            else CPUArchitecture.X86
        )
    flags = [FLAG_ARM] if arch == CPUArchitecture.ARM else []

    with_capacity = [
        r["name"]
        for r in record.get("regions_with_capacity_available") or []
        if isinstance(r, dict) and isinstance(r.get("name"), str)
    ]
    capacity = set(with_capacity)
    locations = sorted({*regions.get(arch, ()), *capacity})
    if not locations:
        report.skip(f"instance type {name!r}", f"no region runs {arch.value}")
        return []
    gpu = Gpu(gpu_count, gpu_name, AcceleratorVendor.NVIDIA if gpu_count else None, gpu_memory)
    size = (round(price_cents / 100, 4), vcpus, float(memory_gib), gpu)
    disk = round(storage_gib * _GIB_IN_GB, 2)
    return [
        offer(NAME, name, where, *size, disk, flags=list(flags), cpu_arch=arch, available=ok)
        for where in locations
        for ok in [where in capacity]
    ]


def _require(value: Any, kind: type | tuple[type, ...], what: str) -> Any:
    if isinstance(value, bool) or not isinstance(value, kind):
        raise ValueError(f"{what} has type {type(value).__name__}")
    return value


def _parse_gpu(
    instance: dict[str, Any], report: ParseReport
) -> tuple[int, str | None, float | None]:
    """GPU count, name and per-GPU memory (GiB) of an instance type."""
    parsed = [
        m
        for text in (instance.get("description"), instance.get("gpu_description"))
        if isinstance(text, str) and (m := _DESCRIPTION.match(text))
    ]
    gpus = instance["specs"].get("gpus")
    if gpus is None:  # older answers: only the description's "8x" gives the count
        count = next((int(m.group(1)) for m in parsed if m.group(1)), 0)
    else:
        count = _require(gpus, int, "specs.gpus")
    if count == 0:
        return 0, None, None
    if not parsed:
        raise ValueError("no GPU description")
    raw_name = parsed[0].group(2)
    details = [gpu_memory_from_name(m.group(3)) for m in parsed if m.group(3)]
    memory = next((m for m in details if m), None)
    gpu = resolve_gpu(raw_name, memory)
    if gpu is None:
        report.unknown_gpu(raw_name, instance["name"])
        return count, raw_name, memory
    return count, gpu.name, gpu.memory
