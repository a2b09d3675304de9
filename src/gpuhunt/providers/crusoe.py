"""Crusoe Cloud: VM types of a project, offered where Crusoe reports free capacity.

Sources (API `https://api.crusoecloud.com/v1alpha5`, every request signed, see below):
- `GET /projects/{project_id}/compute/vms/types` -> `{"items": [{"product_name", "num_gpu",
  "gpu_type", "cpu_cores", "memory_gb", "disk_gb", "cpu_type", ...}]}`;
- `GET /capacities` -> `{"items": [{"type", "location", "quantity"}]}`: free hardware per VM type
  and location (not the project's quota).
Neither endpoint is narrowed by the filter: the answers are small, and one cached answer per
project then serves every query.

Request signing (Crusoe's API reference, signature version 1.0): the payload is the request path
(with the API version), the canonical query string (parameters sorted by name, `k=v` joined by
`&`, empty when there are none), the HTTP verb and the `X-Crusoe-Timestamp` value (RFC 3339),
each followed by a newline. Its HMAC-SHA256, keyed with the URL-safe-base64-decoded secret key,
is sent URL-safe-base64-encoded without padding in
`Authorization: Bearer 1.0:<access key id>:<signature>`.

Decisions:
- The API has no prices. On-demand prices per GPU-hour (GPU VM types) and per vCPU-hour (CPU VM
  families) come from `GPU_PRICES_PER_GPU` / `CPU_PRICES_PER_VCPU`, Crusoe's published on-demand
  list prices as gpuhunt 0.1.x carried them. A type without a known price is skipped and counted
  (`report.counts["unpriced"]`): an offer without a price would be worse than none.
- Offers are on-demand only: spot capacity cannot yet be requested through the VM create API.
- A type is offered in every location where its largest reported quantity is above zero.
- `provider_data["disk_gb"]` is the type's ephemeral NVMe size (0 = none), which consumers read
  to decide whether to attach a persistent data disk; `disk_size` is that size or None.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import hashlib
import hmac
import logging
import re
from collections.abc import Mapping
from typing import Any

from typing_extensions import Self

from gpuhunt._internal.accelerators import vendor_of
from gpuhunt._internal.errors import ProviderError
from gpuhunt._internal.gpu_names import canonical_gpu_name, gpu_memory_from_name, resolve_gpu
from gpuhunt._internal.load import livecache, transport
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem, CPUArchitecture, JSONObject
from gpuhunt.providers._records import Gpu, offer
from gpuhunt.providers._report import ParseReport
from gpuhunt.providers.base import Ask, Collects, OnlineProvider, get_creds_env

logger = logging.getLogger(__name__)

NAME = "crusoe"
API_URL = "https://api.crusoecloud.com"
API_VERSION = "/v1alpha5"
SIGNATURE_VERSION = "1.0"
ACCESS_KEY_ENV = "CRUSOE_ACCESS_KEY"
SECRET_KEY_ENV = "CRUSOE_SECRET_KEY"
PROJECT_ID_ENV = "CRUSOE_PROJECT_ID"
CREDENTIALS = f"{ACCESS_KEY_ENV} and {SECRET_KEY_ENV}"

# Crusoe's `gpu_type` spelling -> on-demand USD per GPU-hour.
GPU_PRICES_PER_GPU: dict[str, float] = {
    "A100-PCIe-40GB": 1.45,
    "A100-PCIe-80GB": 1.65,
    "A100-SXM-80GB": 1.95,
    "H100-SXM-80GB": 3.90,
    "H200-SXM-141GB": 4.29,
    "B200-SXM-180GB": 7.25,
    "L40S-48GB": 1.00,
    "A40-PCIe-48GB": 0.90,
    "MI300X-192GB": 3.45,
}
# CPU VM family (the product name before the dot, "c1a.16x") -> on-demand USD per vCPU-hour.
CPU_PRICES_PER_VCPU: dict[str, float] = {"c1a": 0.04, "s1a": 0.09}


class CrusoeProvider(Collects[ParseReport], OnlineProvider):
    NAME = NAME

    REPORT = ParseReport

    def __init__(
        self,
        access_key: str | None = None,
        secret_key: str | None = None,
        project_id: str | None = None,
    ) -> None:
        self._access_key = access_key if access_key is not None else get_creds_env(ACCESS_KEY_ENV)
        self._secret_key = secret_key if secret_key is not None else get_creds_env(SECRET_KEY_ENV)
        self.project_id = project_id if project_id is not None else get_creds_env(PROJECT_ID_ENV)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(access_key='***', secret_key='***', "
            f"project_id={self.project_id!r})"
        )

    @classmethod
    def from_env(cls) -> Self:
        return cls(
            access_key=get_creds_env(ACCESS_KEY_ENV),
            secret_key=get_creds_env(SECRET_KEY_ENV),
            project_id=get_creds_env(PROJECT_ID_ENV),
        )

    def collect(self, ask: Ask, report: ParseReport) -> list[CatalogItem]:
        types = self._signed_get(f"/projects/{self.project_id}/compute/vms/types")
        capacities = self._signed_get("/capacities")
        return sorted(parse_offers(types, capacities, report), key=lambda i: i.price)

    def _signed_get(self, path: str, params: Mapping[str, str] | None = None) -> Any:
        url = f"{API_URL}{API_VERSION}{path}"
        secret = f"{self._access_key}:{self._secret_key}"

        def fetch() -> Any:
            headers = signed_headers(
                "GET", API_VERSION + path, params, _now(), self._access_key, self._secret_key
            )
            return transport.request_json(
                "GET",
                url,
                provider=self.NAME,
                credential=CREDENTIALS,
                headers=headers,
                params=dict(sorted((params or {}).items())),
            )

        key = livecache.request_key(self.NAME, url, dict(params or {}), secret=secret)
        return livecache.LIVE_CACHE.get(key, fetch)


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def signed_headers(
    method: str,
    path: str,
    params: Mapping[str, str] | None,
    now: datetime.datetime,
    access_key: str,
    secret_key: str,
) -> dict[str, str]:
    """The `X-Crusoe-Timestamp` and `Authorization` headers for one request (see the module
    docstring); `path` starts with the API version."""
    timestamp = now.astimezone(datetime.timezone.utc).replace(microsecond=0).isoformat()
    query = "&".join(f"{k}={v}" for k, v in sorted((params or {}).items()))
    payload = f"{path}\n{query}\n{method.upper()}\n{timestamp}\n"
    try:
        key = base64.urlsafe_b64decode(secret_key + "=" * (-len(secret_key) % 4))
    except (binascii.Error, ValueError):
        raise ProviderError(
            f"crusoe: {SECRET_KEY_ENV} is not a URL-safe base64 secret key"
        ) from None
    digest = hmac.new(key, payload.encode(), hashlib.sha256).digest()
    signature = base64.urlsafe_b64encode(digest).decode().rstrip("=")
    return {
        "X-Crusoe-Timestamp": timestamp,
        "Authorization": f"Bearer {SIGNATURE_VERSION}:{access_key}:{signature}",
    }


def parse_offers(
    types_payload: Any, capacities_payload: Any, report: ParseReport | None = None
) -> list[CatalogItem]:
    """Offers from decoded VM types and capacities answers. Malformed records are skipped and
    counted in `report.counts["malformed"]`, types without a known price in `report.counts["unpriced"]`, GPU
    types the tables do not know (kept under Crusoe's name) in `report.unknown_gpus`."""
    report = report if report is not None else ParseReport(provider=CrusoeProvider.NAME)
    transport.require_fields(types_payload, {"items": list}, where="crusoe: VM types")
    transport.require_fields(capacities_payload, {"items": list}, where="crusoe: capacities")
    locations = available_locations(capacities_payload["items"], report)
    offers: list[CatalogItem] = []
    for vm_type in types_payload["items"]:
        with report.record("VM type"):
            product = str(vm_type["product_name"])
            where = locations.get(product)
            if where:
                offers.extend(_type_offers(product, vm_type, where, report))
    return offers


def available_locations(capacities: list[Any], report: ParseReport) -> dict[str, list[str]]:
    """VM type -> locations (in the answer's order) whose largest reported quantity is > 0."""
    best: dict[tuple[str, str], int] = {}
    for capacity in capacities:
        with report.record("capacity"):
            key = (str(capacity["type"]), str(capacity["location"]))
            best[key] = max(best.get(key, 0), int(capacity["quantity"]))
    result: dict[str, list[str]] = {}
    for (product, location), quantity in best.items():
        if quantity > 0:
            result.setdefault(product, []).append(location)
    return result


def _type_offers(
    product: str, vm_type: dict[str, Any], locations: list[str], report: ParseReport
) -> list[CatalogItem]:
    cpu = int(vm_type["cpu_cores"])
    memory = float(vm_type["memory_gb"])
    disk_gb = vm_type.get("disk_gb") or 0
    gpu_count = int(vm_type.get("num_gpu") or 0)
    gpu_type = str(vm_type.get("gpu_type") or "")
    cpu_arch = CPUArchitecture.ARM if vm_type.get("cpu_type") == "arm64" else CPUArchitecture.X86

    vendor: AcceleratorVendor | None
    if gpu_count > 0 and gpu_type:
        gpu_name, gpu_memory = gpu_identity(gpu_type)
        vendor = vendor_of(gpu_name)
        if vendor is None:
            report.unknown_gpu(gpu_type, f"VM type {product}")
            # Crusoe rents NVIDIA and AMD Instinct ("MI...") GPUs.
            is_amd = re.match(r"mi\d", gpu_type.lower())
            vendor = AcceleratorVendor.AMD if is_amd else AcceleratorVendor.NVIDIA
        per_gpu = gpu_price(gpu_type)
        if per_gpu is None:
            report.counts["unpriced"] += 1
            logger.warning("crusoe: no price known for GPU type %r (%s)", gpu_type, product)
            return []
        price = round(gpu_count * per_gpu, 2)
    else:
        gpu_count, gpu_name, gpu_memory, vendor = 0, None, None, None
        per_vcpu = CPU_PRICES_PER_VCPU.get(product.split(".")[0])
        if per_vcpu is None:
            report.counts["unpriced"] += 1
            logger.warning("crusoe: no price known for CPU type %s", product)
            return []
        price = round(cpu * per_vcpu, 2)

    gpu = Gpu(gpu_count, gpu_name, vendor, gpu_memory)
    disk = float(disk_gb) if disk_gb else None
    data: JSONObject = {"disk_gb": disk_gb}
    arch = cpu_arch
    return [
        offer(
            NAME, product, where, price, cpu, memory, gpu, disk, cpu_arch=arch, provider_data=data
        )
        for where in locations
    ]


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


_PRICE_BY_KEY = {_key(k): v for k, v in GPU_PRICES_PER_GPU.items()}


def gpu_price(gpu_type: str) -> float | None:
    """USD per GPU-hour for a Crusoe `gpu_type`: by its exact spelling, else by its canonical
    name when exactly one priced type has that name ("H100" -> "H100-SXM-80GB")."""
    if (price := _PRICE_BY_KEY.get(_key(gpu_type))) is not None:
        return price
    canonical = canonical_gpu_name(gpu_type)
    if canonical is None:
        return None
    same_chip = [p for t, p in GPU_PRICES_PER_GPU.items() if canonical_gpu_name(t) == canonical]
    return same_chip[0] if len(same_chip) == 1 else None


def gpu_identity(gpu_type: str) -> tuple[str, float | None]:
    """(name, memory GB) of a Crusoe `gpu_type` ("H100-SXM-80GB" -> ("H100", 80.0)); an unknown
    type keeps Crusoe's spelling."""
    memory = gpu_memory_from_name(gpu_type.replace("_", " "))
    gpu = resolve_gpu(gpu_type, memory)
    if gpu is None:
        return gpu_type, memory
    return gpu.name, gpu.memory
