"""Oracle Cloud (OCI): shapes and prices from the public Cost Estimator, regions from the
identity API.

- `GET https://www.oracle.com/a/ocom/docs/cloudestimator2/data/shapes.json` lists every shape
  (`VM.GPU3.1`, `BM.GPU.H100.8`, `BM.Standard.E4.128`, ...) with its GPU count and memory, bundled
  memory, whether it can run preemptible, and the products (part numbers) it is billed by:
  `ocpu` and `memory`, with quantities.
- `GET .../products.json` prices each part number: `PAY_AS_YOU_GO` in USD per hour.
- `IdentityClient.list_regions()` (oci SDK, API-key auth) names every commercial region. OCI
  prices are the same in every region, so each shape is listed in each region.

Both Cost Estimator files are parsed with pydantic models (`Shape`, `Product`): a document whose
envelope is wrong, or in which most records fail validation, is a `ProviderError` naming the
field; a single malformed record is skipped, warned about and counted in `last_report`.

Decisions (facts from Oracle's docs where they are not in the data):

- Which shapes: not hidden, `ACTIVE`, `shapeType` vm/bm, `subType` standard/gpu/optimized.
  DenseIO shapes are left out (their price includes NVMe disk products we do not model).
- Names: the estimator writes some as "BM.GPU.GB200.4 (NVL72)"; the Compute API name has no
  suffix, and that is what users launch.
- Price: the sum of the shape's products at the USD pay-as-you-go rate. For GPU shapes the
  `ocpu` product is priced **per GPU-hour** (the H100 part is $10: per GPU, not per OCPU), so it
  is multiplied by the GPU count. A tiered rate (a free allowance, then a price) uses the last
  tier: the rate a user pays past the allowance.
- CPUs: 1 OCPU is 2 vCPUs on x86 and on Ampere A2, 1 vCPU on other Arm shapes. GPU shapes are
  x86 unless the GPU is a Grace superchip (GB200, GB300): the estimator's `processorType` of GPU
  shapes describes the GPU generation ("hopper") and is wrong for some (BM.GPU4.8 says "arm").
- Shape specs the estimator omits or misstates come from Oracle's compute shapes reference
  (`SHAPE_SPECS`). GPU memory is `gpuMemoryQty / gpuQty`, unless that is under half of what the
  GPU is known to have, in which case the estimator gave the per-GPU figure (BM.GPU.MI355X.8:
  288, BM.GPU.GB300.4: 278).
- Preemptible: shapes that allow it get a spot offer at OCI's published discount ("preemptible
  capacity costs 50% less than on-demand"), flagged `oci-spot` so older consumers skip it.
- A GPU shape whose GPU the accelerator tables do not know is skipped and counted
  (`last_report.unknown_gpus`): an offer needs a vendor, and the estimator names none.

Credentials: `OCI_CLI_USER`, `OCI_CLI_TENANCY`, `OCI_CLI_FINGERPRINT`, `OCI_CLI_REGION` and
`OCI_CLI_KEY_CONTENT` (or `OCI_CLI_KEY_FILE`) when any of them is set, otherwise the profile
`OCI_CLI_PROFILE` (default `DEFAULT`) of `OCI_CLI_CONFIG_FILE` (default `~/.oci/config`). What
is missing is named in a `MissingCredsError`. The key is never logged or shown.
"""

from __future__ import annotations

import logging
import math
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict

from gpuhunt._internal.accelerators import accelerators_named, is_nvidia_superchip, vendor_of
from gpuhunt._internal.errors import MissingCredsError, ProviderError
from gpuhunt._internal.gpu_names import canonical_gpu_name, resolve_gpu
from gpuhunt._internal.load import transport
from gpuhunt._internal.models import (
    AcceleratorVendor,
    CatalogItem,
    CPUArchitecture,
)
from gpuhunt._internal.registry import sdk_imports
from gpuhunt.providers import _report
from gpuhunt.providers._records import Gpu, offer
from gpuhunt.providers.base import Ask, Collects, OfflineProvider

if TYPE_CHECKING:
    from oci.identity import IdentityClient

    from gpuhunt.providers._oci_schema import Product, Shape

logger = logging.getLogger(__name__)

COST_ESTIMATOR_URL = "https://www.oracle.com/a/ocom/docs/cloudestimator2/data"
SHAPES_URL = f"{COST_ESTIMATOR_URL}/shapes.json"
PRODUCTS_URL = f"{COST_ESTIMATOR_URL}/products.json"
# https://docs.oracle.com/en-us/iaas/Content/Compute/Concepts/preemptible.htm
PREEMPTIBLE_DISCOUNT = 0.5
SPOT_FLAG = "oci-spot"
SHAPE_TYPES = ("vm", "bm")
SUB_TYPES = ("standard", "gpu", "optimized")

ENV_VARS = {
    "user": "OCI_CLI_USER",
    "tenancy": "OCI_CLI_TENANCY",
    "fingerprint": "OCI_CLI_FINGERPRINT",
    "region": "OCI_CLI_REGION",
    "key_content": "OCI_CLI_KEY_CONTENT",
    "key_file": "OCI_CLI_KEY_FILE",
}
CONFIG_FILE_ENV = "OCI_CLI_CONFIG_FILE"
PROFILE_ENV = "OCI_CLI_PROFILE"
DEFAULT_CONFIG_FILE = "~/.oci/config"
CREDENTIAL_HINT = (
    "OCI_CLI_USER/OCI_CLI_TENANCY/OCI_CLI_FINGERPRINT/OCI_CLI_KEY_CONTENT or ~/.oci/config"
)

# The identity call is retried by the SDK on 429 and 5xx, a bounded number of times.
IDENTITY_MAX_ATTEMPTS = 4
IDENTITY_RETRY_BASE_SLEEP = 1.0
IDENTITY_RETRY_JITTER = 1.0
IDENTITY_TIMEOUT = (10.0, 60.0)


# ---------------------------------------------------------------------------------------------
# Cost Estimator documents


@dataclass
class ParseReport(_report.ParseReport):
    """oci's collection report (see `providers._report`)."""

    provider: str = "oci"


def parse_document(payload: Any, model: type[Any], document: str, report: ParseReport) -> list[Any]:
    """`{"items": [...]}` -> validated records (`Shape`, `Product`); bad records skipped, a
    changed shape raised."""
    # `_schema()` is the lazily imported module, so Any to mypy; its function returns a list.
    records: list[Any] = _schema().parse_document(payload, model, document, report)
    return records


def _oci_sdk() -> Any:
    """The oci SDK (the `oci` extra), imported where it is used."""
    with sdk_imports(OCIProvider.NAME):
        import oci
    return oci


def _schema() -> Any:
    """The pydantic models of the estimator documents (`_oci_schema`), imported on first use:
    pydantic is in the `oci` extra, and the integrity tests import this module without it."""
    with sdk_imports(OCIProvider.NAME):
        from gpuhunt.providers import _oci_schema
    return _oci_schema


_SCHEMA_NAMES = frozenset(
    {"Shape", "ShapeProduct", "TypeValue", "Price", "Localization", "Product"}
)


def __getattr__(name: str) -> Any:
    # `oci.Shape`, `oci.Product`, ... resolve to the models, imported on first use.
    if name in _SCHEMA_NAMES:
        return getattr(_schema(), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---------------------------------------------------------------------------------------------
# Shapes -> offers (pure)


class ShapeDataError(ValueError):
    """The estimator's data for one shape cannot be priced."""


class UnknownGPUError(ShapeDataError):
    """A GPU shape whose GPU the accelerator tables do not know."""


@dataclass(frozen=True)
class ShapeSpecs:
    ocpus: int
    memory_gb: float


# Oracle's compute shapes reference, for shapes whose estimator record lacks OCPUs or memory
# (or misstates them: GB200.4 has 144 Grace cores, the estimator says 128).
# https://docs.oracle.com/en-us/iaas/Content/Compute/References/computeshapes.htm
SHAPE_SPECS: dict[str, ShapeSpecs] = {
    "BM.GPU.B300.8": ShapeSpecs(ocpus=128, memory_gb=4096),
    "BM.GPU.GB200.4": ShapeSpecs(ocpus=144, memory_gb=960),
    "BM.GPU.GB300.4": ShapeSpecs(ocpus=144, memory_gb=960),
    "BM.GPU.RTXPRO.8": ShapeSpecs(ocpus=144, memory_gb=3072),
}
# GPU generations named by number rather than by GPU.
_NUMBERED_GPUS = {"GPU2": "P100", "GPU3": "V100", "GPU4": "A100"}
_SHAPE_ALIASES = {"RTXPRO": "RTXPRO6000"}  # BM.GPU.RTXPRO.8: RTX PRO 6000 Blackwell


def shape_name(name: str) -> str:
    """The Compute API's name of a shape: "BM.GPU.GB200.4 (NVL72)" -> "BM.GPU.GB200.4"."""
    return re.sub(r"\s*\(.*\)\s*$", "", name).strip()


def gpu_name_for_shape(name: str) -> str | None:
    """The canonical GPU of a GPU shape, from its name (`BM.GPU.A100-v2.8` -> A100)."""
    parts = re.split(r"[.\-]", name.upper())
    for part in parts:
        if part in _NUMBERED_GPUS:
            return _NUMBERED_GPUS[part]
    if "GPU" in parts and parts.index("GPU") + 1 < len(parts):
        token = parts[parts.index("GPU") + 1]
        found = canonical_gpu_name(_SHAPE_ALIASES.get(token, token))
        if found is not None and vendor_of(found) in (
            AcceleratorVendor.NVIDIA,
            AcceleratorVendor.AMD,
        ):
            return found
    return None


def usd_per_hour(product: Product) -> float:
    """The pay-as-you-go USD hourly rate of a product (past any free allowance)."""
    what = f"product {product.part_number}"
    if product.billing_model != "UCM":
        raise ShapeDataError(f"{what} has billing model {product.billing_model!r}")
    if product.price_type != "HOUR":
        raise ShapeDataError(f"{what} is priced per {product.price_type!r}")
    usd = [loc for loc in product.currency_code_localizations if loc.currency_code == "USD"]
    tiers = [p for loc in usd for p in loc.prices if p.model == "PAY_AS_YOU_GO"]
    if not tiers:
        raise ShapeDataError(f"{what} has no USD pay-as-you-go price")
    rate = max(tiers, key=lambda p: p.range_min or 0.0).value
    if not math.isfinite(rate) or rate < 0:
        raise ShapeDataError(f"{what} has price {rate!r}")
    return rate


@dataclass(frozen=True)
class PricedShape:
    name: str
    price: float
    cpu: int
    memory: float
    cpu_arch: CPUArchitecture
    gpu_count: int
    gpu_name: str | None
    gpu_memory: float | None
    gpu_vendor: AcceleratorVendor | None
    preemptible: bool


def _gpu_memory(shape: Shape, gpu_name: str, gpu_count: int) -> float | None:
    """Per-GPU memory: the estimator's figure through `resolve_gpu`, like every provider's.

    BM.GPU.GB200.4: the estimator says 756 GB for 4 GPUs (189), gpuhunt 0.1.34 hard-codes 192,
    and its own accelerator table (like ours) says 186, NVIDIA's GB200 NVL72 figure (13.4 TB of
    HBM3e for 72 GPUs); 189 is within 2% of 186, so 186, the memory GCP, Azure and Crusoe
    ("GB200-NVL-186GB") publish for the same GPU: one GPU, one size, one filter that matches
    them all. BM.GPU.GB300.4 likewise: 278 reported, 270 in the tables (0.1.34 says 278).
    """
    known = [a.memory for a in accelerators_named(gpu_name) if a.memory]
    per_gpu = None
    if shape.gpu_memory_qty:
        per_gpu = shape.gpu_memory_qty / gpu_count
        if known and per_gpu < 0.5 * min(known):
            per_gpu = shape.gpu_memory_qty  # the estimator gave the memory of one GPU
    gpu = resolve_gpu(gpu_name, per_gpu)
    return round(gpu.memory, 2) if gpu else None


def price_shape(shape: Shape, products: Mapping[str, Product]) -> PricedShape:
    """One listed shape -> its resources and hourly price; `ShapeDataError` if it cannot be."""
    name = shape_name(shape.name)
    specs = SHAPE_SPECS.get(name)
    gpu_count = shape.gpu_qty or 0
    gpu_name = gpu_name_for_shape(name) if gpu_count else None
    if gpu_count and gpu_name is None:
        raise UnknownGPUError(name)
    if gpu_name is not None:
        arch = CPUArchitecture.ARM if is_nvidia_superchip(gpu_name) else CPUArchitecture.X86
    else:
        arm = shape.processor_type.value.lower() == "arm"
        arch = CPUArchitecture.ARM if arm else CPUArchitecture.X86

    price = 0.0
    ocpus: float | None = None
    memory: float | None = None
    for product in shape.products:
        details = products.get(product.part_number)
        if details is None:
            raise ShapeDataError(f"product {product.part_number} is not in products.json")
        rate = usd_per_hour(details)
        kind = product.type.value
        if kind == "ocpu":
            ocpus = specs.ocpus if specs else product.qty
            if ocpus is None:
                raise ShapeDataError("the OCPU product has no quantity")
            price += rate * gpu_count if gpu_count else rate * ocpus
        elif kind == "memory":
            if product.qty is None:
                raise ShapeDataError("the memory product has no quantity")
            memory = product.qty
            price += rate * product.qty
        else:
            raise ShapeDataError(f"unexpected product type {kind!r}")
    if ocpus is None:
        raise ShapeDataError("no OCPU product")
    memory = memory or (specs.memory_gb if specs else None) or shape.bundle_memory_qty
    if not memory:
        raise ShapeDataError("no memory quantity")
    if price <= 0:
        raise ShapeDataError(f"price is {price}")
    threads = 1 if arch == CPUArchitecture.ARM and ".A2." not in name else 2
    return PricedShape(
        name=name,
        price=round(price, 6),
        cpu=int(ocpus * threads),
        memory=float(memory),
        cpu_arch=arch,
        gpu_count=gpu_count,
        gpu_name=gpu_name,
        gpu_memory=_gpu_memory(shape, gpu_name, gpu_count) if gpu_name else None,
        gpu_vendor=vendor_of(gpu_name),
        preemptible=shape.allow_preemptible,
    )


def is_listed(shape: Shape) -> bool:
    return (
        not shape.hidden
        and shape.status == "ACTIVE"
        and shape.shape_type.value in SHAPE_TYPES
        and shape.sub_type.value in SUB_TYPES
    )


def parse_offers(
    shapes_payload: Any,
    products_payload: Any,
    regions: Iterable[str],
    report: ParseReport,
) -> list[CatalogItem]:
    """The two Cost Estimator documents and the region names -> offers."""
    shapes = parse_document(shapes_payload, _schema().Shape, "shapes.json", report)
    products = {
        p.part_number: p
        for p in parse_document(products_payload, _schema().Product, "products.json", report)
    }
    priced: list[PricedShape] = []
    listed = [shape for shape in shapes if is_listed(shape)]
    for shape in listed:
        try:
            priced.append(price_shape(shape, products))
        except UnknownGPUError:
            report.unknown_gpu(shape.name, "a GPU shape we cannot read; not listed")
        except ShapeDataError as e:
            report.skip(f"shape {shape.name}", str(e))
    if not priced:
        first = f"; first problem: {report.skipped[0]}" if report.skipped else ""
        raise ProviderError(f"oci: no shape could be listed and priced{first}")
    offers: list[CatalogItem] = []
    for region in regions:
        for resources in priced:
            offers.append(_offer(resources, region, spot=False))
            if resources.preemptible:
                offers.append(_offer(resources, region, spot=True))
    return offers


def _offer(shape: PricedShape, region: str, spot: bool) -> CatalogItem:
    price = round(shape.price * (1 - PREEMPTIBLE_DISCOUNT), 6) if spot else shape.price
    gpu = Gpu(shape.gpu_count, shape.gpu_name, shape.gpu_vendor, shape.gpu_memory)
    args = (OCIProvider.NAME, shape.name, region, price, shape.cpu, shape.memory, gpu)
    flags = [SPOT_FLAG] if spot else []
    return offer(*args, spot=spot, flags=flags, cpu_arch=shape.cpu_arch)


def _order(item: CatalogItem) -> tuple[float, str, str, bool]:
    return (item.price, item.instance_name, item.location, item.spot)


# ---------------------------------------------------------------------------------------------
# Credentials


class OCICredentials(TypedDict, total=False):
    """API-key credentials, as in an OCI config profile (`key_content` or `key_file`)."""

    user: str | None
    key_content: str | None
    key_file: str | None
    fingerprint: str | None
    tenancy: str | None
    region: str | None


def credentials_from_env() -> OCICredentials | None:
    """Credentials from `OCI_CLI_*`, None when none of them is set; names what is missing."""
    values = {key: os.getenv(var) or None for key, var in ENV_VARS.items()}
    if not any(values[k] for k in ("user", "tenancy", "fingerprint", "key_content", "key_file")):
        return None
    missing = [ENV_VARS[k] for k in ("user", "tenancy", "fingerprint", "region") if not values[k]]
    if not values["key_content"] and not values["key_file"]:
        missing.append(f"{ENV_VARS['key_content']} (or {ENV_VARS['key_file']})")
    if missing:
        raise MissingCredsError(f"Set the {', '.join(missing)} environment variable(s) for OCI")
    return OCICredentials(
        user=values["user"],
        tenancy=values["tenancy"],
        fingerprint=values["fingerprint"],
        region=values["region"],
        key_content=values["key_content"],
        key_file=values["key_file"],
    )


def _config_problem(error: Exception) -> str:
    detail = error.args[0] if error.args else None
    if isinstance(detail, dict):  # oci.exceptions.InvalidConfig: {field: "missing"/"malformed"}
        return ", ".join(f"{key} is {why}" for key, why in sorted(detail.items()))
    return type(error).__name__


def load_config(credentials: OCICredentials | None) -> dict[str, Any]:
    """A validated oci SDK config: from `credentials`, else from the config file."""
    oci = _oci_sdk()

    if credentials and all(
        credentials.get(k) for k in ("user", "tenancy", "fingerprint", "region")
    ):
        config = {k: v for k, v in credentials.items() if v}
        try:
            oci.config.validate_config(config)
        except oci.exceptions.InvalidConfig as e:
            raise MissingCredsError(f"Invalid OCI credentials: {_config_problem(e)}") from None
        return config
    path = os.getenv(CONFIG_FILE_ENV) or DEFAULT_CONFIG_FILE
    profile = os.getenv(PROFILE_ENV) or "DEFAULT"
    if not os.path.exists(os.path.expanduser(path)):
        raise MissingCredsError(
            f"No OCI credentials: set {', '.join(ENV_VARS[k] for k in ENV_VARS if k != 'key_file')}"
            f" (or {ENV_VARS['key_file']}), or create {path}"
        )
    try:
        config = dict(oci.config.from_file(path, profile))
        oci.config.validate_config(config)  # from_file does not check what is in the profile
        return config
    except oci.exceptions.ProfileNotFound:
        raise MissingCredsError(
            f"Profile {profile!r} is not in {path} (set {PROFILE_ENV})"
        ) from None
    except (oci.exceptions.InvalidConfig, oci.exceptions.InvalidKeyFilePath) as e:
        raise MissingCredsError(
            f"Invalid OCI config {path} [{profile}]: {_config_problem(e)}"
        ) from None


# ---------------------------------------------------------------------------------------------
# Fetching


def fetch_document(url: str) -> Any:
    return transport.request_json("GET", url, provider=OCIProvider.NAME)


def _retry_strategy() -> Any:
    oci = _oci_sdk()

    return oci.retry.RetryStrategyBuilder(
        max_attempts_check=True,
        max_attempts=IDENTITY_MAX_ATTEMPTS,
        total_elapsed_time_check=True,
        total_elapsed_time_seconds=120,
        retry_max_wait_between_calls_seconds=10,
        retry_base_sleep_time_seconds=IDENTITY_RETRY_BASE_SLEEP,
        decorrelated_jitter=IDENTITY_RETRY_JITTER,
        service_error_check=True,
        service_error_retry_on_any_5xx=True,
        service_error_retry_config={429: []},
    ).get_retry_strategy()


def fetch_regions(client: IdentityClient) -> list[str]:
    """Every region's name (`us-ashburn-1`), from `ListRegions`."""
    oci = _oci_sdk()

    where = "oci: ListRegions"
    try:
        regions = client.list_regions().data
    except oci.exceptions.ServiceError as e:
        if e.status in (401, 403):
            raise ProviderError(
                f"{where} was refused with HTTP {e.status}; check {CREDENTIAL_HINT}"
            ) from None
        raise ProviderError(f"{where} failed with HTTP {e.status}") from None
    except (oci.exceptions.RequestException, oci.exceptions.ConnectTimeout) as e:
        raise ProviderError(f"{where} failed: {type(e).__name__}") from None
    names = sorted({r.name for r in regions if getattr(r, "name", None)})
    if not names:
        raise ProviderError(f"{where} returned no regions")
    return names


# ---------------------------------------------------------------------------------------------


class OCIProvider(Collects[ParseReport], OfflineProvider):
    NAME = "oci"
    REPORT = ParseReport

    def __init__(self, credentials: OCICredentials | None = None) -> None:
        self._config = load_config(credentials)
        self._client: IdentityClient | None = None
        self.last_report = ParseReport()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(region={self._config.get('region')!r}, credentials=***)"

    @classmethod
    def from_env(cls) -> OCIProvider:
        return cls(credentials_from_env())

    def identity_client(self) -> IdentityClient:
        if self._client is None:
            oci = _oci_sdk()

            try:
                self._client = oci.identity.IdentityClient(
                    self._config, retry_strategy=_retry_strategy(), timeout=IDENTITY_TIMEOUT
                )
            except (ValueError, TypeError, oci.exceptions.ClientError) as e:
                # a key that does not load, a pass phrase that is missing, ...
                raise ProviderError(
                    f"oci: cannot use the API key ({type(e).__name__}); check {CREDENTIAL_HINT}"
                ) from None
        return self._client

    def collect(self, ask: Ask, report: ParseReport) -> list[CatalogItem]:
        shapes = fetch_document(SHAPES_URL)
        products = fetch_document(PRODUCTS_URL)
        regions = fetch_regions(self.identity_client())
        offers = parse_offers(shapes, products, regions, report)
        if ask.apply_filter:
            offers = self.filter(offers)
        return sorted(offers, key=_order)

    @classmethod
    def filter(cls, offers: list[CatalogItem]) -> list[CatalogItem]:
        return [o for o in offers if KEEP_SHAPES.match(o.instance_name)]


# Standard (CPU), Optimized (HPC) and GPU shapes, VM and bare metal.
KEEP_SHAPES = re.compile(r"^(VM|BM)\.(Standard|Optimized|GPU)")
