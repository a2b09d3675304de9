"""Lium: GPU pods on hosts listed in Lium's public inventory feed, queried live.

Source: `GET https://lium.io/api/public/v1/nodes`, public (no credential), answering
`{"generated_at", "count", "nodes": [...]}` in one document (no pagination). Each node is one
host: `gpu_model`, `gpu_count`, `available_gpu_count` (free now), `min_rentable_gpu_count` (the
smallest order checkout accepts), `price_per_gpu_hour`, `gpu_memory_gb`, `cpu_count`, `ram_gb`,
`disk_free_gb`, `tier` (`secure` or `spot`), `country_code`, `region`, `city` and `rent_url`.

Decisions (for the same feed they give gpuhunt 0.1.34's offers, plus those of GPU models the
tables do not know, which 0.1.34 left out):

- One offer per GPU count a renter can order on a node, from `min_rentable_gpu_count` to
  `available_gpu_count`. A missing minimum means the node cannot be split (only the whole node,
  and only while all its GPUs are free).
- A pod with `k` of the node's `n` GPUs gets `k/n` of the host's vCPUs (whole, rounded down), of
  its RAM after the host's reserve and of its free disk. The feed rounds RAM and free disk to
  the nearest GB, so both start from half a GB less. Lium keeps `max(4, 1% of RAM)` GiB for the
  host and sizes the pod's memory in whole GiB, rounded down. The pod's share of free disk is
  split into a volume (2/3) and the container storage (1/3), each rounded down; jobs run on the
  container, so only that third is the offer's disk. Shapes with less than one vCPU or one GB of
  disk are not offered.
- Price: `price_per_gpu_hour` times the GPU count. `spot` is Lium's `spot` tier.
- `instance_name` is the node id, `location` `<country code>-<region>` lower-cased ("us-va",
  "jp-13"); `provider_data["rent_url"]` is the node's rent page as the feed gives it.
- GPU names go through the shared resolver; GPU memory is the feed's, snapped to the known size
  of that GPU ("140" GB H200 -> 141). A model the tables do not know is kept under Lium's
  spelling with the feed's memory (Lium hosts NVIDIA GPUs), warned about and counted.
- A node with a missing or ill-typed field, a non-finite or non-positive price or an
  implausible count or size is skipped and counted in `LiumProvider.last_report`.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

from typing_extensions import Self

from gpuhunt._internal.errors import ProviderError
from gpuhunt._internal.gpu_names import resolve_gpu
from gpuhunt._internal.load import livecache
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem, JSONObject
from gpuhunt.providers import _report
from gpuhunt.providers._records import Gpu, need_number, offer
from gpuhunt.providers.base import Ask, Collects, OnlineProvider

logger = logging.getLogger(__name__)

NAME = "lium"
NODES_URL = "https://lium.io/api/public/v1/nodes"
SPOT_TIER = "spot"
PRICE_DIGITS = 5

# The feed's RAM and disk are whole GB rounded to nearest: the true amount may be this much less.
FEED_ROUNDING_GB = 0.5
# What the host keeps for its own services (Lium's pod docs): max(4 GiB, 1% of its RAM).
HOST_RAM_RESERVE_MIN_GB = 4.0
HOST_RAM_RESERVE_SHARE = 0.01
# A pod's disk share is split into a volume and the container's storage quota, which is this part.
CONTAINER_DISK_SHARE = 1 / 3

# Bounds of a plausible node; anything outside is a broken record, not a real machine.
MAX_GPUS_PER_NODE = 64
MAX_CPUS_PER_NODE = 4096
MAX_RAM_GB = 64 * 1024
MAX_DISK_GB = 10 * 1024 * 1024
MAX_GPU_MEMORY_GB = 1024
MAX_PRICE_PER_GPU_HOUR = 1000.0


@dataclass
class ParseReport(_report.ParseReport):
    provider: str = NAME


class LiumProvider(Collects[ParseReport], OnlineProvider):
    """Offers from Lium's public nodes feed; needs no credential."""

    NAME = NAME
    REPORT = ParseReport

    def __init__(self) -> None:
        self.last_report = ParseReport()

    @classmethod
    def from_env(cls) -> Self:
        return cls()  # the feed is public

    def collect(self, ask: Ask, report: ParseReport) -> list[CatalogItem]:
        offers = parse_nodes(fetch_nodes(), report)
        return sorted(offers, key=lambda i: (i.price, i.instance_name, i.gpu_count))


def fetch_nodes() -> Any:
    return livecache.request_json(
        "GET", NODES_URL, provider=NAME, headers={"Accept": "application/json"}
    )


# ---------------------------------------------------------------------------------------------
# Parsing (pure).


def parse_nodes(payload: Any, report: ParseReport | None = None) -> list[CatalogItem]:
    """Offers from a decoded nodes feed. A feed of the wrong shape is a `ProviderError`; a bad
    node is skipped and recorded in `report`."""
    report = report if report is not None else ParseReport()
    if not isinstance(payload, dict) or not isinstance(payload.get("nodes"), list):
        raise ProviderError(f"{NAME}: nodes feed: expected an object with a 'nodes' list")
    nodes = payload["nodes"]
    count = payload.get("count")
    if isinstance(count, int) and not isinstance(count, bool) and count != len(nodes):
        # The feed is one document; a different count means it was cut short on the way.
        logger.warning("%s: the feed says %d nodes but lists %d", NAME, count, len(nodes))
    offers: list[CatalogItem] = []
    for index, node in enumerate(nodes):
        ident = node.get("id") if isinstance(node, dict) else None
        what = f"node {ident!r}" if isinstance(ident, str) else f"node #{index}"
        with report.record(what):
            offers.extend(node_offers(node, report, what))
    return offers


class _BadRecord(_report.SkipRecord):
    """A node that cannot be offered, with the reason."""


@dataclass(frozen=True)
class Node:
    """One node of the feed, validated."""

    id: str
    gpu_model: str
    gpu_count: int
    available_gpu_count: int
    min_gpu_count: int
    price_per_gpu_hour: float
    gpu_memory_gb: float
    cpu_count: int
    ram_gb: float
    disk_free_gb: float
    location: str
    spot: bool
    rent_url: str | None


def parse_node(node: Any) -> Node:
    """A feed node checked at the boundary; `_BadRecord` names the first bad field."""
    if not isinstance(node, dict):
        raise _BadRecord(f"expected an object, got {type(node).__name__}")
    node_id = node.get("id")
    if not isinstance(node_id, str) or not node_id.strip():
        raise _BadRecord("field 'id' is missing or empty")
    gpu_model = node.get("gpu_model")
    if not isinstance(gpu_model, str) or not gpu_model.strip():
        raise _BadRecord("field 'gpu_model' is missing or empty")
    gpu_count = _count(node, "gpu_count", low=1, high=MAX_GPUS_PER_NODE)
    available = _count(node, "available_gpu_count", low=0, high=MAX_GPUS_PER_NODE)
    if node.get("min_rentable_gpu_count") is None:
        min_gpu_count = gpu_count  # cannot be split: only the whole node is a safe order
    else:
        min_gpu_count = _count(node, "min_rentable_gpu_count", low=1, high=MAX_GPUS_PER_NODE)
    location = _location(node.get("country_code"), node.get("region"))
    if not location:
        raise _BadRecord("field 'country_code' is missing or empty")
    rent_url = node.get("rent_url")
    return Node(
        id=node_id,
        gpu_model=gpu_model.strip(),
        gpu_count=gpu_count,
        available_gpu_count=min(available, gpu_count),
        min_gpu_count=min_gpu_count,
        price_per_gpu_hour=_positive(node, "price_per_gpu_hour", MAX_PRICE_PER_GPU_HOUR),
        gpu_memory_gb=_positive(node, "gpu_memory_gb", MAX_GPU_MEMORY_GB),
        cpu_count=_count(node, "cpu_count", low=1, high=MAX_CPUS_PER_NODE),
        ram_gb=_positive(node, "ram_gb", MAX_RAM_GB),
        disk_free_gb=_positive(node, "disk_free_gb", MAX_DISK_GB),
        location=location,
        spot=node.get("tier") == SPOT_TIER,
        rent_url=rent_url if isinstance(rent_url, str) and rent_url else None,
    )


def node_offers(raw: Any, report: ParseReport, what: str = "node") -> list[CatalogItem]:
    """Every order a renter can place on one node (none when too few GPUs are free)."""
    node = parse_node(raw)
    if node.min_gpu_count > node.available_gpu_count:
        return []  # rented out: fewer GPUs free than the smallest order
    gpu_name, vendor, gpu_memory = gpu_identity(node.gpu_model, node.gpu_memory_gb)
    if vendor is None:
        report.unknown_gpu(node.gpu_model, what)
        vendor = AcceleratorVendor.NVIDIA  # Lium's hosts are NVIDIA machines
    host_ram = node.ram_gb - FEED_ROUNDING_GB
    pod_ram = host_ram - max(HOST_RAM_RESERVE_MIN_GB, host_ram * HOST_RAM_RESERVE_SHARE)
    free_disk = max(node.disk_free_gb - FEED_ROUNDING_GB, 0.0)
    provider_data: JSONObject = {"rent_url": node.rent_url} if node.rent_url else {}
    offers = []
    for count in range(node.min_gpu_count, node.available_gpu_count + 1):
        share = count / node.gpu_count
        cpu = int(node.cpu_count * share)
        memory = max(1, math.floor(pod_ram * share))
        disk = int(free_disk * share * CONTAINER_DISK_SHARE)
        if cpu < 1 or disk < 1:
            continue  # a slice too small to run anything
        price = round(node.price_per_gpu_hour * count, PRICE_DIGITS)
        gpu = Gpu(count, gpu_name, vendor, gpu_memory)
        size = (price, cpu, float(memory), gpu, float(disk))
        data = provider_data
        offers.append(
            offer(NAME, node.id, node.location, *size, spot=node.spot, provider_data=data)
        )
    return offers


def gpu_identity(model: str, memory_gb: float) -> tuple[str, AcceleratorVendor | None, float]:
    """(name, vendor, memory GB) of a Lium `gpu_model` through the shared resolver (which also
    reads Lium's spellings "Tesla V100 Tensor Core GPU" and "B300 SXM6 AC"); an unknown model
    keeps Lium's spelling, vendor None and the feed's memory."""
    resolved = resolve_gpu(model, float(memory_gb))
    if resolved is None:
        return model, None, float(memory_gb)
    return resolved.name, resolved.vendor, resolved.memory


def _location(country_code: Any, region: Any) -> str:
    if not isinstance(country_code, str) or not country_code.strip():
        return ""
    location = country_code.strip().lower()
    if isinstance(region, (str, int)) and not isinstance(region, bool) and str(region).strip():
        location = f"{location}-{str(region).strip().lower()}"
    return location.replace(" ", "")


def _number(node: dict[str, Any], key: str) -> float:
    return need_number(
        node.get(key),
        f"field {key!r}",
        error=_BadRecord,
        refusal="is missing or not a number",
        finite=True,
    )


def _positive(node: dict[str, Any], key: str, high: float) -> float:
    value = _number(node, key)
    if not 0 < value <= high:
        raise _BadRecord(f"field {key!r} is {value:g}, outside (0, {high:g}]")
    return value


def _count(node: dict[str, Any], key: str, *, low: int, high: int) -> int:
    value = _number(node, key)
    if value != int(value) or not low <= value <= high:
        raise _BadRecord(f"field {key!r} is {value:g}, not a whole number in [{low}, {high}]")
    return int(value)
