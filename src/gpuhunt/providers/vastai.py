"""Vast.ai: a live marketplace of machines that hosts rent out, queried at `Catalog.query` time.

One call, `POST https://console.vast.ai/api/v0/bundles/`, whose JSON body is a filter of the form
`{field: {op: value}}` plus `order` (and `limit`). The body is built from the `QueryFilter` so the
marketplace returns the offers the caller can use instead of its top offers of any kind.

Decisions (why the code looks the way it does):

- Only *necessary* conditions go into the body. Vast's `cpu_cores` and `cpu_ram` describe the
  whole machine, while an offer gets a share of it (`cpu_cores_effective`), so `min_cpu` and
  `min_memory` become lower bounds on the machine (a share is never bigger than the machine) and
  `max_cpu` / `max_memory` are not sent at all: they would drop big machines whose share fits.
  GPU memory bounds get a 7% tolerance because offers report MiB that `correct_gpu_memory_gib`
  snaps to the marketed size. `max_price` is sent as `dph_total <= max` for on-demand queries and
  as `min_bid <= max` for interruptible ones; with `spot=None` an offer can match through either
  price, which one body cannot express, so no price bound is sent. `min_price` is never sent:
  the disk cost added below can lift an offer above `dph_total`. gpuhunt applies the whole
  filter again afterwards, so leaving a bound out costs bandwidth, never correctness.
- GPU names are mapped to Vast's spellings through `VAST_GPU_NAMES` (from Vast's own GPU list):
  every spelling whose canonical name is the requested one. When a requested name has no known
  spelling, the name filter is dropped and a larger `limit` asked for, so the local filter still
  has offers to choose from.
- `extra_filters={field: {op: value}}` are merged into the body keeping the stricter bound, and
  every constraint of the body is checked again locally on fields the offer has, in case
  the API ignores one.
- An offer's memory is the machine RAM scaled to its effective CPU share, kept to 0.01 GB (a
  share of a machine is rarely a whole GB); its vCPUs are the whole effective cores. Offers with
  less than one core or no RAM are skipped.
- Disk: the offer is sized to `min_disk_size` when the query sets it (that is what gets rented),
  else to the host's free disk, capped by `max_disk_size`. Its cost (`storage_cost` is
  $/GB/month) is folded into the hourly price.
- Interruptible offers: when the host sets `min_bid`, a second offer with `spot=True` is priced at
  the minimum bid plus disk and carries `provider_data["min_bid"]` (what dstack bids).
- The host's `cuda_max_good` (the newest CUDA its driver runs) is kept as
  `CatalogItem.cuda_version` (e.g. "12.2") for `min_cuda` filters, and a `min_cuda` query
  sends `cuda_max_good >= min_cuda`.
- Offers stay in the API's order (by `score` unless `order=` says otherwise); the two variants of
  one machine are ordered cheaper first.
- Vendor: the offer's `gpu_arch` when present, else the GPU table; older offers have neither
  for unknown GPUs, and Vast is an NVIDIA marketplace, so NVIDIA is assumed.
- Availability (`CatalogItem.available`, issue 38): a live marketplace offer is available
  when answered; the body asks for `rentable` and not `rented` offers. An offer is read as
  available unless it says itself that it is rented or not rentable (possible only when the
  answer is parsed without the body's filters): then False, still listed.
"""

from __future__ import annotations

import logging
import operator
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from gpuhunt._internal.accelerators import MEMORY_TOLERANCE, vendor_of
from gpuhunt._internal.form_factor import FORM_FACTOR_KEY, model_form_factor, words_form_factor
from gpuhunt._internal.gpu_names import canonical_gpu_name, filter_gpu_name, resolve_gpu
from gpuhunt._internal.load import livecache, transport
from gpuhunt._internal.models import (
    AcceleratorVendor,
    CatalogItem,
    CPUArchitecture,
    JSONObject,
    QueryFilter,
)
from gpuhunt._internal.query.parsed import parsed
from gpuhunt.providers._records import Gpu, offer
from gpuhunt.providers._report import ParseReport
from gpuhunt.providers.base import Ask, Collects, OnlineProvider

logger = logging.getLogger(__name__)

NAME = "vastai"
BUNDLES_URL = "https://console.vast.ai/api/v0/bundles/"
# Vast reports RAM in MB (1000-based) and GPU memory in MiB.
MB_PER_GB = 1000
HOURS_PER_MONTH = 30 * 24
# Asked for when the GPU-name filter cannot be sent, so the local filter has enough to choose from.
UNFILTERED_LIMIT = 3000
GPU_MEMORY_TOLERANCE = MEMORY_TOLERANCE  # the one tolerance, under the name it had here

Operator = Literal["lt", "lte", "eq", "neq", "gte", "gt", "in", "notin"]
FilterValue = Any
Filters = dict[str, Any]

# Spellings from Vast's GPU list (vast/controller/gpulist.json), used to turn a canonical name
# into the `gpu_name` values Vast matches. Spellings we cannot map are kept under their own name.
# fmt: off
VAST_GPU_NAMES: tuple[str, ...] = (
    # Data center
    "A10", "A10g", "A16", "A30", "A40", "A100 PCIE", "A100 SXM4", "A100 SXM", "A100X",
    "A800 PCIE", "B200", "B300", "B300 PC", "GH200 SXM", "H100 PCIE", "H100 SXM", "H100 NVL",
    "H200", "H200 NVL", "L4", "L40", "L40S", "Tesla K80", "Tesla P4", "Tesla P40",
    "Tesla P100", "Tesla T4", "Tesla V100",
    # GeForce
    "GTX 1070", "GTX 1080", "GTX 1080 Ti", "RTX 2060", "RTX 2060S", "RTX 2070", "RTX 2070S",
    "RTX 2080", "RTX 2080S", "RTX 2080 Ti", "RTX 3050", "RTX 3060", "RTX 3060 Ti", "RTX 3070",
    "RTX 3070 Ti", "RTX 3080", "RTX 3080 Ti", "RTX 3090", "RTX 3090 Ti", "RTX 4060",
    "RTX 4060 Ti", "RTX 4070", "RTX 4070S", "RTX 4070S Ti", "RTX 4070 Ti", "RTX 4080",
    "RTX 4080S", "RTX 4090", "RTX 4090D", "RTX 5060", "RTX 5060 Ti", "RTX 5070",
    "RTX 5070 Ti", "RTX 5080", "RTX 5090", "Titan RTX", "Titan V", "Titan Xp",
    # Workstation
    "Q RTX 4000", "Q RTX 5000", "Q RTX 6000", "Q RTX 8000", "RTX A2000", "RTX A4000",
    "RTX A4500", "RTX A5000", "RTX A6000", "RTX 2000Ada", "RTX 4000Ada", "RTX 4500Ada",
    "RTX 5000Ada", "RTX 5880Ada", "RTX 6000Ada", "RTX PRO 4000", "RTX PRO 4500",
    "RTX PRO 5000", "RTX PRO 6000", "RTX PRO 6000 S", "RTX PRO 6000 WS", "RTX PRO 6000 Max-Q",
    # AMD
    "InstinctMI50", "InstinctMI100", "InstinctMI210", "InstinctMI250X",
)
# fmt: on
# The GPU models this provider lists, for `Catalog.explain` ("who has an RTX 4090?").
LISTED_GPU_NAMES = VAST_GPU_NAMES


class VastAIProvider(Collects[ParseReport], OnlineProvider):
    """Live Vast.ai offers. The bundles endpoint is public: no credentials are needed.

    `extra_filters` adds body constraints (`{"reliability2": {"gte": 0.9}}`), `community_cloud`
    (default True) includes community hosts besides datacenter ones, `order` is Vast's sort
    (default `[("score", "desc")]`).
    """

    NAME = NAME
    REPORT = ParseReport

    def __init__(
        self,
        extra_filters: Mapping[str, Mapping[Operator, FilterValue]] | None = None,
        community_cloud: bool | None = None,
        order: Iterable[tuple[str, str]] | None = None,
    ) -> None:
        for field, constraints in (extra_filters or {}).items():
            if not isinstance(constraints, Mapping):
                raise ValueError(
                    f"extra_filters[{field!r}] must map operators to values, e.g. {{'gte': 1}}"
                )
        self.extra_filters = {k: dict(v) for k, v in (extra_filters or {}).items()}
        self.community_cloud = True if community_cloud is None else community_cloud
        self.order = [(str(f), str(d)) for f, d in (order or [("score", "desc")])]

    @classmethod
    def from_env(cls) -> VastAIProvider:
        return cls()

    def collect(self, ask: Ask, report: ParseReport) -> list[CatalogItem]:
        q = ask.filter
        body = self.make_filters(q)
        return parse_offers(fetch_bundles(body), q, filters=body, report=report)

    def make_filters(self, q: QueryFilter) -> Filters:
        """The bundles request body for `q`, with `extra_filters` merged in."""
        body = make_filters(q, community_cloud=self.community_cloud, order=self.order)
        for field, constraints in self.extra_filters.items():
            current = body.setdefault(field, {})
            for op, value in constraints.items():
                current[op] = stricter_constraint(op, current.get(op), value)
        return body


def fetch_bundles(body: Filters) -> Any:
    """The decoded bundles answer for `body`, shared by identical concurrent queries."""
    return livecache.request_json("POST", BUNDLES_URL, provider=NAME, json=body)


def make_filters(
    q: QueryFilter,
    *,
    community_cloud: bool = True,
    order: Iterable[tuple[str, str]] = (("score", "desc"),),
) -> Filters:
    """The bundles request body for `q`, read through its parsed form (`query/parsed.py`): the
    values `matches` compares, so what is sent never asks for less than `matches` keeps."""
    p = parsed(q)
    body: Filters = {}

    def put(field: str, op: str, value: Any) -> None:
        body.setdefault(field, {})[op] = value

    if p.min_cpu is not None:
        put("cpu_cores", "gte", p.min_cpu)
    if p.min_memory is not None:
        put("cpu_ram", "gte", p.min_memory * MB_PER_GB)
    if p.min_gpu_count is not None:
        put("num_gpus", "gte", p.min_gpu_count)
    if p.max_gpu_count is not None:
        put("num_gpus", "lte", p.max_gpu_count)
    if p.gpu_names is not None:
        names = vast_gpu_names(q.gpu_name or [])
        if names:
            put("gpu_name", "in", names)
        else:
            body["limit"] = UNFILTERED_LIMIT
    if p.min_gpu_memory is not None:
        put("gpu_ram", "gte", p.min_gpu_memory * 1024 * (1 - MEMORY_TOLERANCE))
    if p.max_gpu_memory is not None:
        put("gpu_ram", "lte", p.max_gpu_memory * 1024 * (1 + MEMORY_TOLERANCE))
    if p.min_disk_size is not None:
        put("disk_space", "gte", p.min_disk_size)
    if p.max_price is not None:
        if p.spot is False:
            put("dph_total", "lte", p.max_price)
        elif p.spot is True:
            put("min_bid", "lte", p.max_price)
    if p.min_compute_capability is not None:
        put("compute_cap", "gte", compute_cap(p.min_compute_capability))
    if p.max_compute_capability is not None:
        put("compute_cap", "lte", compute_cap(p.max_compute_capability))
    if p.min_cuda is not None and p.min_cuda[1] < 10:  # Vast's value is a float: 12.8
        put("cuda_max_good", "gte", float(f"{p.min_cuda[0]}.{p.min_cuda[1]}"))
    if not community_cloud:
        put("datacenter", "eq", True)
    put("rentable", "eq", True)
    put("rented", "eq", False)
    body["order"] = [[field, direction] for field, direction in order]
    return body


def vast_gpu_names(names: str | Iterable[str]) -> list[str]:
    """Vast's spellings of the requested GPUs (a name or a list); empty if any requested GPU
    has none (then the filter cannot be sent without losing that GPU's offers)."""
    out: list[str] = []
    for name in [names] if isinstance(names, str) else names:
        # "A100:8", "H100 SXM": ask for the GPU; `matches` applies the rest of the name.
        base, known = filter_gpu_name(name)
        wanted = (known or base).replace(" ", "").lower()
        spellings = [s for s in VAST_GPU_NAMES if offer_gpu_name(s).lower() == wanted]
        if not spellings:
            return []
        out.extend(s for s in spellings if s not in out)
    return out


def offer_gpu_name(vast_name: str) -> str:
    """Our name for a Vast GPU: the canonical one, else Vast's without spaces."""
    return canonical_gpu_name(vast_name) or vast_name.replace(" ", "")


def compute_cap(cc: tuple[int, int]) -> int:
    """Vast's `compute_cap` value: (8, 6) -> 860."""
    major, minor = cc
    return major * 100 + minor * 10


def stricter_constraint(op: str, current: FilterValue | None, new: FilterValue) -> FilterValue:
    """Combine two values for one operator so both constraints hold (`eq` and the rest: the new
    value wins; `in`: values allowed by both)."""
    if current is None:
        return new
    if op in ("gte", "gt"):
        return max(current, new)
    if op in ("lte", "lt"):
        return min(current, new)
    if op == "in" and isinstance(current, list) and isinstance(new, list | tuple):
        return [v for v in current if v in new]
    return new


_SCOPE_FIELDS = frozenset({"datacenter", "external", "order", "limit", "type"})
_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "lt": operator.lt,
    "lte": operator.le,
    "eq": operator.eq,
    "neq": operator.ne,
    "gte": operator.ge,
    "gt": operator.gt,
    "in": lambda value, allowed: value in allowed,
    "notin": lambda value, banned: value not in banned,
}


def satisfies_filters(offer: Mapping[str, Any], filters: Filters) -> bool:
    """Whether a raw offer meets every body constraint on a field it reports (fields it lacks,
    null values and scope controls such as `datacenter` cannot be judged here)."""
    for field, constraints in filters.items():
        if field in _SCOPE_FIELDS or not isinstance(constraints, dict):
            continue
        value = offer.get(field)
        if value is None:
            continue
        for op, bound in constraints.items():
            check = _OPS.get(op)
            try:
                if check is not None and not check(value, bound):
                    return False
            except TypeError:
                continue
    return True


def parse_offers(
    data: Any,
    query_filter: QueryFilter | None = None,
    *,
    filters: Filters | None = None,
    report: ParseReport | None = None,
) -> list[CatalogItem]:
    """Offers from a decoded bundles answer, in the answer's order."""
    transport.require_fields(data, {"offers": list}, where=f"{NAME}: bundles answer")
    q = query_filter or QueryFilter()
    report = report if report is not None else ParseReport(provider=VastAIProvider.NAME)
    offers: list[CatalogItem] = []
    for raw in data["offers"]:
        offer_id = raw.get("id") if isinstance(raw, dict) else None
        with report.record(f"offer {offer_id}"):
            if not isinstance(raw, dict):
                raise TypeError(f"offer is a {type(raw).__name__}")
            if filters and not satisfies_filters(raw, filters):
                report.counts["filtered"] += 1
                continue
            offers.extend(_offer_variants(raw, q, report))
    return offers


def _offer_variants(raw: JSONObject, q: QueryFilter, report: ParseReport) -> list[CatalogItem]:
    offer_id = raw["id"]
    cores = raw["cpu_cores"]
    effective = raw["cpu_cores_effective"]
    # Without the machine's core count its RAM cannot be shared out.
    if not cores or effective is None:
        report.counts["no_cpu"] += 1
        logger.warning("%s: offer %s reports no CPU cores, skipping", NAME, offer_id)
        return []
    cpu = int(effective)
    memory = round(float(raw["cpu_ram"]) * float(effective) / float(cores) / MB_PER_GB, 2)
    if cpu < 1 or memory <= 0:
        report.counts["no_cpu"] += 1
        logger.warning("%s: offer %s has under one core or no RAM, skipping", NAME, offer_id)
        return []

    gpu_count = int(raw["num_gpus"] or 0)
    gpu_name: str | None = None
    gpu_memory: float | None = None
    gpu_vendor: AcceleratorVendor | None = None
    if gpu_count:
        vast_name = str(raw["gpu_name"])
        gpu_name = offer_gpu_name(vast_name)
        # gpu_ram is MiB as the host's driver reports it: a little under the board's size
        gpu = resolve_gpu(vast_name, float(raw["gpu_ram"]) / 1024)
        if gpu is None:
            report.unknown_gpu(vast_name, f"offer {offer_id}; kept as {gpu_name!r}")
        gpu_memory = float(round(gpu.memory if gpu else float(raw["gpu_ram"]) / 1024))
        gpu_vendor = _vendor(raw.get("gpu_arch"), gpu_name)

    disk_size = _disk_size(float(raw["disk_space"]), q)
    disk_cost = disk_size * float(raw["storage_cost"]) / HOURS_PER_MONTH

    name, where = str(offer_id), get_location(raw.get("geolocation"))
    gpus = Gpu(gpu_count, gpu_name, gpu_vendor, gpu_memory)
    arch = _cpu_arch(raw.get("cpu_arch"))

    def item(price: float, spot: bool, data: JSONObject) -> CatalogItem:
        cost = round(price + disk_cost, 5)
        size = (cost, cpu, memory, gpus, disk_size)

        return offer(
            NAME,
            name,
            where,
            *size,
            spot=spot,
            cpu_arch=arch,
            provider_data=data,
            available=available,
            cuda_version=cuda_version,
        )

    # The newest CUDA the host's driver runs, for `min_cuda` filters.
    cuda = raw.get("cuda_max_good")
    cuda_version = f"{cuda:g}" if isinstance(cuda, (int, float)) and cuda > 0 else None
    available = raw.get("rentable") is not False and raw.get("rented") is not True
    data: JSONObject = {}
    # What Vast.ai's GPU name says of the board ("H100 SXM", "H100 PCIE"), where the model
    # does not decide it (`form_factor.py`).
    said = words_form_factor(str(raw["gpu_name"])) if gpu_count else None
    if said and not model_form_factor(gpu_name):
        data[FORM_FACTOR_KEY] = said
    variants: list[CatalogItem] = []
    if q.spot is not True:
        variants.append(item(float(raw["dph_base"]), False, data))
    min_bid = raw.get("min_bid")
    if min_bid and q.spot is not False:
        variants.append(item(float(min_bid), True, {"min_bid": min_bid, **data}))
    variants.sort(key=lambda i: i.price)
    return variants


def _disk_size(free_disk: float, q: QueryFilter) -> float:
    if q.min_disk_size is not None:
        return float(q.min_disk_size)
    if q.max_disk_size is not None:
        return min(free_disk, float(q.max_disk_size))
    return free_disk


def _vendor(gpu_arch: Any, gpu_name: str) -> AcceleratorVendor:
    if isinstance(gpu_arch, str):
        try:
            return AcceleratorVendor.cast(gpu_arch)
        except ValueError:
            pass
    return vendor_of(gpu_name) or AcceleratorVendor.NVIDIA


def _cpu_arch(value: Any) -> CPUArchitecture:
    if isinstance(value, str) and value.lower() in ("arm64", "aarch64", "arm"):
        return CPUArchitecture.ARM
    return CPUArchitecture.X86


def get_location(geolocation: str | None) -> str:
    """Vast's "City, CC" as "cc-city" (a bare country stays as is), lower case without spaces."""
    if not geolocation:
        return ""
    parts = [p.strip() for p in geolocation.split(",")]
    if len(parts) == 2 and all(parts):
        geolocation = f"{parts[1]}-{parts[0]}"
    return geolocation.lower().replace(" ", "")
