"""RunPod: GPU pods (Secure and Community Cloud), Instant Clusters and CPU pods.

Everything comes from RunPod's GraphQL API (`POST https://api.runpod.io/graphql`). The
read-only catalog queries used here need no API key, so the provider has no credential.

What is asked, and how it is batched:

1. One discovery request: the listed data centers (Secure Cloud locations), the country codes
   (Community Cloud locations), every GPU type with its largest pod size per cloud, and the GPU
   types of Instant Clusters (`gpuTypes(input: {cluster: true})`) with their cluster price.
2. Pod prices: RunPod prices a pod for one GPU count in one location of one cloud
   (`lowestPrice(input: {gpuCount, dataCenterId | countryCode, secureCloud, minCudaVersion})`).
   Each such (cloud, location, GPU count) is one `PodQuery`; up to `BATCH_SIZE` of them travel in
   one request as GraphQL aliases (`q0: gpuTypes { ... lowestPrice(input: $q0) }`), and the
   answer under each alias is read together with the `PodQuery` that produced it. Hosts must run
   CUDA `RunpodProvider.MIN_CUDA_VERSION` or newer (`minCudaVersion`), which is also what an
   orchestrator must ask for when it provisions the pod. GPU pod offers carry it as
   `CatalogItem.cuda_version`, which `min_cuda` filters read.
3. CPU pods: `cpuFlavors { specifics(input: {dataCenterId}) }` per listed data center, batched
   the same way (`CpuQuery`).

Offers:

- GPU pods: one offer per GPU type that is in stock for a `PodQuery`; `location` is the data
  center id (Secure Cloud, e.g. `EU-SE-1`) or the country code (Community Cloud, e.g. `US`).
  The on-demand price is the GPU type's `securePrice`/`communityPrice` (what the console shows
  per GPU; the query's `lowestPrice.uninterruptablePrice` when that is missing) times the GPU
  count. A spot (interruptible) offer is added where the query's quote has a minimum bid
  (`lowestPrice.minimumBidPrice`, per GPU), the price a spot pod starts at in that location.
  The type-level `secureSpotPrice`/`communitySpotPrice` fields are not asked for: RunPod is
  retiring interruptible pods, and a field removed from the schema would fail every query,
  while a missing bid just means no spot offer. vCPUs and RAM are the smallest pod RunPod
  would give for that query (`minVcpu`, `minMemory`).
- Instant Clusters: flag `runpod-cluster`; one offer per node-group data center, priced at
  `clusterPrice` times the node's GPU count; `provider_data["pod_counts"]` lists how many pods a
  cluster can have (RunPod does not report it; it is 2 to 8 nodes for every cluster type).
  A cluster type RunPod returns without CPU/RAM is out of stock for a long time and is skipped.
- CPU pods: flag `runpod-cpu`; each flavor (e.g. `cpu3g`) sized from its `minVcpu` upwards in
  doublings up to `maxVcpu`; RAM is `ramMultiplier` GB per vCPU, disk `diskLimitPerVcpu` GB per
  vCPU, and `specifics.securePrice` (the price of the smallest size) scales with the vCPUs.
  Instance names are `{flavor}-{vcpu}-{memory}` (e.g. `cpu3g-4-16`), as RunPod names them.

GPU names go through the shared alias table (display name first, then the type id). A GPU RunPod
sells that the tables do not know is kept under RunPod's display name, warned about and counted
in `RunpodProvider.last_report`; so is a MIG slice (a name such as "B300 1g.34gb"), whose
resources are not those of the full GPU. A record with missing or ill-typed fields is skipped and
counted. A GraphQL `errors` answer, an HTTP failure or a payload of the wrong shape fails the
whole collection with a `ProviderError`: a catalog silently missing some locations is worse
than the nightly build keeping yesterday's catalog.

`filter()` drops Argentina (`AR`), a Community Cloud location unusable for its network problems.

Availability (`CatalogItem.available`, issue 38): RunPod's reading is the quote's
`stockStatus` ("High", "Medium", "Low"; null when out of stock). GPU and CPU pod offers exist
only where it is set, so they are all `available: True`; a query whose quote has no stock gives
no offer, as in gpuhunt 0.1.34, whose published RunPod catalog dstack reads (decision: keeping
them would mean inventing the CPU/RAM RunPod leaves out of a stockless quote). A cluster type's
quote is one for the type, not per data center: its `stockStatus` marks every one of its
locations, True when set, False when null.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from gpuhunt._internal.errors import ProviderError
from gpuhunt._internal.form_factor import FORM_FACTOR_KEY, model_form_factor, words_form_factor
from gpuhunt._internal.gpu_names import resolve_gpu
from gpuhunt._internal.load import transport
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem, JSONObject
from gpuhunt.providers import _records, _report
from gpuhunt.providers._records import json_number
from gpuhunt.providers.base import Ask, Collects, OfflineProvider

logger = logging.getLogger(__name__)

API_URL = "https://api.runpod.io/graphql"
FLAG_CPU = "runpod-cpu"
FLAG_CLUSTER = "runpod-cluster"
# Aliases per GraphQL request: few requests, answers of a few hundred kB at most.
BATCH_SIZE = 20
MAX_PARALLEL_REQUESTS = 4
# Nodes an Instant Cluster can have; RunPod's API does not report it.
CLUSTER_POD_COUNTS = list(range(2, 9))
# GPU count asked for when pricing clusters: without it RunPod returns no vCPUs/RAM per node.
CLUSTER_NODE_GPU_COUNT = 8
# Locations that `filter()` removes: Argentina (Community Cloud) has unusable networking.
EXCLUDED_LOCATIONS = frozenset({"AR"})

# "B300 1g.34gb", "A100 MIG 3g.40gb": a slice of a GPU, not the GPU.
_MIG_SLICE = re.compile(r"\bmig\b|\b\d+g\.\d+gb\b", re.IGNORECASE)
_GRAPHQL_ERROR_CHARS = 200


DISCOVERY_QUERY = (
    """
query GpuhuntDiscovery {
  countryCodes
  dataCenters { id name listed }
  gpuTypes {
    id displayName manufacturer memoryInGb
    maxGpuCountSecureCloud maxGpuCountCommunityCloud secureCloud communityCloud
  }
  clusterGpuTypes: gpuTypes(input: {cluster: true}) {
    id displayName manufacturer memoryInGb clusterPrice maxGpuCountSecureCloud
    nodeGroupDatacenters { id }
    lowestPrice(input: {gpuCount: """
    + str(CLUSTER_NODE_GPU_COUNT)
    + """}) { minVcpu minMemory stockStatus }
  }
}
"""
)

_POD_SELECTION = """{alias}: gpuTypes {{
    id displayName manufacturer memoryInGb secureCloud communityCloud
    securePrice communityPrice
    lowestPrice(input: ${alias}) {{
      minVcpu minMemory stockStatus uninterruptablePrice minimumBidPrice
    }}
  }}"""

_CPU_SELECTION = """{alias}: cpuFlavors {{
    id displayName minVcpu maxVcpu ramMultiplier diskLimitPerVcpu
    specifics(input: {{dataCenterId: ${alias}}}) {{ stockStatus securePrice }}
  }}"""


# ---------------------------------------------------------------------------------------------
# Queries: what was asked, kept with the answer it produced.


@dataclass(frozen=True)
class PodQuery:
    """Price GPU pods of `gpu_count` GPUs in one location of one cloud."""

    secure_cloud: bool
    location: str  # data center id (Secure Cloud) or country code (Community Cloud)
    gpu_count: int

    variable_type = "GpuLowestPriceInput"

    def variables(self) -> dict[str, Any]:
        where = "dataCenterId" if self.secure_cloud else "countryCode"
        return {
            "gpuCount": self.gpu_count,
            "secureCloud": self.secure_cloud,
            where: self.location,
            "minCudaVersion": RunpodProvider.MIN_CUDA_VERSION,
        }

    def selection(self, alias: str) -> str:
        return _POD_SELECTION.format(alias=alias)


@dataclass(frozen=True)
class CpuQuery:
    """Price the CPU flavors in one data center."""

    data_center: str

    variable_type = "String!"

    def variables(self) -> str:
        return self.data_center

    def selection(self, alias: str) -> str:
        return _CPU_SELECTION.format(alias=alias)


class _Query(Protocol):
    variable_type: str

    def variables(self) -> Any: ...

    def selection(self, alias: str) -> str: ...


Q = TypeVar("Q", bound=_Query)


def build_batch(queries: Sequence[_Query], name: str) -> tuple[str, dict[str, Any], list[str]]:
    """One GraphQL document asking every query under its own alias (`q0`, `q1`, ...).

    Returns the document, its variables and the aliases in the order of `queries`.
    """
    aliases = [f"q{i}" for i in range(len(queries))]
    declarations = ", ".join(f"${a}: {q.variable_type}" for a, q in zip(aliases, queries))
    selections = "\n  ".join(q.selection(a) for a, q in zip(aliases, queries))
    document = f"query {name}({declarations}) {{\n  {selections}\n}}"
    variables = {a: q.variables() for a, q in zip(aliases, queries)}
    return document, variables, aliases


def chunks(items: Sequence[Q], size: int) -> Iterator[Sequence[Q]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


# ---------------------------------------------------------------------------------------------
# Fetching (the only I/O): POST a document, check the GraphQL envelope.


def post_graphql(document: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
    """Send one GraphQL request; the `data` object of a successful answer."""
    payload = transport.request_json(
        "POST",
        API_URL,
        provider=RunpodProvider.NAME,
        json={"query": document, "variables": variables or {}},
    )
    return graphql_data(payload)


def graphql_data(payload: Any) -> dict[str, Any]:
    """The `data` of a GraphQL answer; `errors` or a wrong shape is a `ProviderError`."""
    if not isinstance(payload, dict):
        raise ProviderError(f"runpod: GraphQL answer is {type(payload).__name__}, not an object")
    errors = payload.get("errors")
    if errors:
        first = errors[0] if isinstance(errors, list) and errors else errors
        message = first.get("message") if isinstance(first, dict) else first
        text = str(message)[:_GRAPHQL_ERROR_CHARS]
        raise ProviderError(f"runpod: GraphQL error ({len(errors)} in total): {text}")
    data = payload.get("data")
    if not isinstance(data, dict):
        raise ProviderError("runpod: GraphQL answer has no 'data' object")
    return data


def run_batched(
    queries: Sequence[Q], name: str, *, batch_size: int = BATCH_SIZE
) -> list[tuple[Q, Any]]:
    """Ask every query, `batch_size` per request, a few requests at a time.

    Returns `(query, answer)` pairs in the order of `queries`; an answer is whatever the API
    put under the query's alias (validated by the parser). An alias missing from a `data`
    object is a `ProviderError`: it would mean the answers cannot be matched to the questions.
    """
    batches = list(chunks(queries, batch_size))

    def ask(batch: Sequence[Q]) -> list[tuple[Q, Any]]:
        document, variables, aliases = build_batch(batch, name)
        data = post_graphql(document, variables)
        missing = [a for a in aliases if a not in data]
        if missing:
            raise ProviderError(f"runpod: GraphQL answer lacks alias {missing[0]!r}")
        return [(q, data[a]) for q, a in zip(batch, aliases)]

    if len(batches) <= 1:
        return [pair for batch in batches for pair in ask(batch)]
    with ThreadPoolExecutor(max_workers=MAX_PARALLEL_REQUESTS) as pool:
        answers = list(pool.map(transport.carried(ask), batches))
    return [pair for batch_answers in answers for pair in batch_answers]


# ---------------------------------------------------------------------------------------------
# Parsing (pure).


@dataclass
class ParseReport(_report.ParseReport):
    provider: str = "runpod"

    def skip_record(self, what: str, record: Any, reason: str) -> None:
        """A record left out, named by its id when it has one."""
        ident = record.get("id") if isinstance(record, dict) else None
        self.skip(f"{what} {ident!r}", reason)

    @property
    def skipped_records(self) -> int:
        return len(self.skipped)


@dataclass(frozen=True)
class Discovery:
    """Where and how large pods can be, and the Instant Cluster types."""

    data_centers: list[str]
    country_codes: list[str]
    max_secure_gpu_count: int
    max_community_gpu_count: int
    cluster_types: list[Any]


@dataclass(frozen=True)
class Gpu:
    name: str
    vendor: AcceleratorVendor
    memory: float
    # What RunPod's name says of the board ("H100 SXM", "H100 PCIe"), where the model does not
    # decide it (form_factor.py): written to provider_data["form_factor"].
    form_factor: str | None = None


def _list_field(data: dict[str, Any], key: str) -> list[Any]:
    value = data.get(key)
    if not isinstance(value, list):
        raise ProviderError(f"runpod: field {key!r} is missing or not a list")
    return value


def parse_discovery(data: dict[str, Any], report: ParseReport | None = None) -> Discovery:
    report = report if report is not None else ParseReport()
    data_centers = []
    for dc in _list_field(data, "dataCenters"):
        if not isinstance(dc, dict) or not isinstance(dc.get("id"), str):
            report.skip_record("data center", dc, "no id")
            continue
        if dc.get("listed"):
            data_centers.append(dc["id"])
    # RunPod lists `null` among the country codes (machines with no known country).
    country_codes = [c for c in _list_field(data, "countryCodes") if isinstance(c, str) and c]
    max_secure = max_community = 0
    for gpu_type in _list_field(data, "gpuTypes"):
        if not isinstance(gpu_type, dict):
            report.skip_record("GPU type", gpu_type, "not an object")
            continue
        max_secure = max(max_secure, int(json_number(gpu_type.get("maxGpuCountSecureCloud")) or 0))
        max_community = max(
            max_community, int(json_number(gpu_type.get("maxGpuCountCommunityCloud")) or 0)
        )
    cluster_types = data.get("clusterGpuTypes") or []
    if not isinstance(cluster_types, list):
        raise ProviderError("runpod: field 'clusterGpuTypes' is not a list")
    return Discovery(
        data_centers=sorted(set(data_centers)),
        country_codes=sorted(set(country_codes)),
        max_secure_gpu_count=max_secure,
        max_community_gpu_count=max_community,
        cluster_types=cluster_types,
    )


def pod_queries(discovery: Discovery) -> list[PodQuery]:
    """Every (cloud, location, GPU count) worth pricing."""
    queries = [
        PodQuery(secure_cloud=True, location=dc, gpu_count=n)
        for dc in discovery.data_centers
        for n in range(1, discovery.max_secure_gpu_count + 1)
    ]
    queries += [
        PodQuery(secure_cloud=False, location=cc, gpu_count=n)
        for cc in discovery.country_codes
        for n in range(1, discovery.max_community_gpu_count + 1)
    ]
    return queries


def gpu_of_record(record: dict[str, Any], report: ParseReport) -> Gpu | None:
    """The canonical GPU of a GPU-type record; None (counted) if it cannot be described."""
    display = record.get("displayName") if isinstance(record.get("displayName"), str) else None
    type_id = record["id"]
    memory = json_number(record.get("memoryInGb"))
    if memory is None or memory <= 0:
        report.skip_record("GPU type", record, "no memoryInGb")
        return None
    spellings = [s for s in (display, type_id) if s]
    if not any(_MIG_SLICE.search(s) for s in spellings):
        for spelling in spellings:
            if (gpu := resolve_gpu(spelling, memory)) is not None:
                said = next(filter(None, map(words_form_factor, spellings)), None)
                form = None if model_form_factor(gpu.name) else said
                return Gpu(name=gpu.name, vendor=gpu.vendor, memory=gpu.memory, form_factor=form)
    raw = display or type_id
    try:
        vendor = AcceleratorVendor.cast(record.get("manufacturer"))
    except ValueError:
        report.skip_record("GPU type", record, f"unknown GPU {raw!r} of unknown manufacturer")
        return None
    report.unknown_gpu(raw, f"GPU type {type_id}; kept under that name")
    return Gpu(name=raw, vendor=vendor, memory=memory)


def _gpu_type_records(answer: Any, what: str) -> list[Any]:
    if answer is None:
        return []
    if not isinstance(answer, list):
        raise ProviderError(f"runpod: {what} answer is {type(answer).__name__}, not a list")
    return answer


def parse_pod_offers(
    query: PodQuery, answer: Any, report: ParseReport | None = None
) -> list[CatalogItem]:
    """Offers for one `PodQuery` from the GPU types RunPod answered it with."""
    report = report if report is not None else ParseReport()
    offers: list[CatalogItem] = []
    cloud = "secure" if query.secure_cloud else "community"
    for record in _gpu_type_records(answer, "gpuTypes"):
        if not isinstance(record, dict) or not isinstance(record.get("id"), str):
            report.skip_record("GPU type", record, "not an object with an id")
            continue
        lowest = record.get("lowestPrice")
        if lowest is not None and not isinstance(lowest, dict):
            report.skip_record("GPU type", record, "lowestPrice is not an object")
            continue
        # No quote or no stock: this GPU type is not sold for this query.
        if not lowest or lowest.get("stockStatus") is None:
            continue
        if record.get(f"{cloud}Cloud") is False:
            continue
        on_demand = json_number(record.get(f"{cloud}Price"))
        if on_demand is None:
            on_demand = json_number(lowest.get("uninterruptablePrice"))
        spot = json_number(lowest.get("minimumBidPrice"))
        if not on_demand and not spot:
            continue
        cpu = json_number(lowest.get("minVcpu"))
        memory = json_number(lowest.get("minMemory"))
        if not cpu or not memory:
            report.skip_record("GPU type", record, "lowestPrice has no minVcpu/minMemory")
            continue
        gpu = gpu_of_record(record, report)
        if gpu is None:
            continue
        gpus = _records.Gpu(query.gpu_count, gpu.name, gpu.vendor, gpu.memory)
        where = (RunpodProvider.NAME, record["id"], query.location)
        # The hosts quoted run this CUDA or newer; `min_cuda` filters read it.
        data: JSONObject = {FORM_FACTOR_KEY: gpu.form_factor} if gpu.form_factor else {}
        for price, is_spot in ((on_demand, False), (spot, True)):
            if not price or price <= 0:
                continue
            total = round(price * query.gpu_count, 6)
            offers.append(
                _records.offer(
                    *where,
                    total,
                    int(cpu),
                    memory,
                    gpus,
                    spot=is_spot,
                    provider_data=data,
                    available=True,  # only quotes with a stockStatus get here
                    cuda_version=RunpodProvider.MIN_CUDA_VERSION,
                )
            )
    return offers


def parse_cluster_offers(
    cluster_types: Iterable[Any], report: ParseReport | None = None
) -> list[CatalogItem]:
    """Instant Cluster offers: one node of the type, in each data center with node groups."""
    report = report if report is not None else ParseReport()
    offers: list[CatalogItem] = []
    for record in cluster_types:
        if not isinstance(record, dict) or not isinstance(record.get("id"), str):
            report.skip_record("cluster GPU type", record, "not an object with an id")
            continue
        quote = record.get("lowestPrice")
        lowest: dict[str, Any] = quote if isinstance(quote, dict) else {}
        cpu = json_number(lowest.get("minVcpu"))
        memory = json_number(lowest.get("minMemory"))
        if not cpu or not memory:
            # RunPod leaves these out while a cluster type is out of stock for a long time.
            logger.info("runpod: cluster type %r has no vCPU/RAM quote; skipped", record["id"])
            continue
        price = json_number(record.get("clusterPrice"))
        gpu_count = json_number(record.get("maxGpuCountSecureCloud"))
        centers = record.get("nodeGroupDatacenters")
        if not price or not gpu_count or not isinstance(centers, list):
            report.skip_record("cluster GPU type", record, "no clusterPrice/GPU count/data centers")
            continue
        gpu = gpu_of_record(record, report)
        if gpu is None:
            continue
        locations = sorted({c["id"] for c in centers if isinstance(c, dict) and c.get("id")})
        gpus = _records.Gpu(int(gpu_count), gpu.name, gpu.vendor, gpu.memory)
        node = (round(price * gpu_count, 6), int(cpu), memory, gpus)
        for location in locations:
            data: JSONObject = {"pod_counts": list(CLUSTER_POD_COUNTS)}
            offers.append(
                _records.offer(
                    RunpodProvider.NAME,
                    record["id"],
                    location,
                    *node,
                    flags=[FLAG_CLUSTER],
                    provider_data=data,
                    available=lowest.get("stockStatus") is not None,
                )
            )
    return offers


def cpu_sizes(min_vcpu: int, max_vcpu: int) -> list[int]:
    """vCPU counts offered for a flavor: doublings from the smallest, and the largest."""
    sizes = []
    size = min_vcpu
    while size < max_vcpu:
        sizes.append(size)
        size *= 2
    sizes.append(max_vcpu)
    return sizes


def parse_cpu_offers(
    query: CpuQuery, answer: Any, report: ParseReport | None = None
) -> list[CatalogItem]:
    """CPU pod offers of every in-stock flavor in one data center."""
    report = report if report is not None else ParseReport()
    offers: list[CatalogItem] = []
    for flavor in _gpu_type_records(answer, "cpuFlavors"):
        if not isinstance(flavor, dict) or not isinstance(flavor.get("id"), str):
            report.skip_record("CPU flavor", flavor, "not an object with an id")
            continue
        specifics = flavor.get("specifics")
        if not isinstance(specifics, dict) or specifics.get("stockStatus") is None:
            continue
        base_price = json_number(specifics.get("securePrice"))
        if not base_price:
            continue
        min_vcpu = json_number(flavor.get("minVcpu"))
        max_vcpu = json_number(flavor.get("maxVcpu"))
        ram_per_vcpu = json_number(flavor.get("ramMultiplier"))
        disk_per_vcpu = json_number(flavor.get("diskLimitPerVcpu"))
        if not (min_vcpu and max_vcpu and ram_per_vcpu and disk_per_vcpu):
            report.skip_record("CPU flavor", flavor, "missing vCPU/RAM/disk sizing")
            continue
        if min_vcpu <= 0 or min_vcpu > max_vcpu or ram_per_vcpu <= 0 or disk_per_vcpu <= 0:
            report.skip_record("CPU flavor", flavor, "inconsistent vCPU/RAM/disk sizing")
            continue
        for vcpu in cpu_sizes(int(min_vcpu), int(max_vcpu)):
            memory = int(vcpu * ram_per_vcpu)
            name, price = f"{flavor['id']}-{vcpu}-{memory}", round(base_price * vcpu / min_vcpu, 6)
            size = (vcpu, float(memory), _records.NO_GPU, float(vcpu * disk_per_vcpu))
            offers.append(
                _records.offer(
                    RunpodProvider.NAME,
                    name,
                    query.data_center,
                    price,
                    *size,
                    flags=[FLAG_CPU],
                    available=True,  # only flavors with a stockStatus
                )
            )

    return offers


def _sort_key(item: CatalogItem) -> tuple[Any, ...]:
    return (item.price, item.instance_name, item.location, item.gpu_count, item.spot, item.cpu)


# ---------------------------------------------------------------------------------------------


class RunpodProvider(Collects[ParseReport], OfflineProvider):
    NAME = "runpod"
    REPORT = ParseReport
    # Oldest CUDA a host may run for an offer to be listed; use it when provisioning too.
    MIN_CUDA_VERSION = "12.8"

    def __init__(self, *, batch_size: int = BATCH_SIZE) -> None:
        self.batch_size = batch_size
        self.last_report = ParseReport()

    def collect(self, ask: Ask, report: ParseReport) -> list[CatalogItem]:
        discovery = parse_discovery(post_graphql(DISCOVERY_QUERY), report)
        offers = parse_cluster_offers(discovery.cluster_types, report)
        offers += self._collect(
            pod_queries(discovery), "GpuhuntPodPrices", parse_pod_offers, report
        )
        cpu_queries = [CpuQuery(dc) for dc in discovery.data_centers]
        offers += self._collect(cpu_queries, "GpuhuntCpuPrices", parse_cpu_offers, report)
        report.warn_if_incomplete()
        return sorted(offers, key=_sort_key)

    def _collect(
        self,
        queries: Sequence[Q],
        name: str,
        parse: Callable[[Q, Any, ParseReport], list[CatalogItem]],
        report: ParseReport,
    ) -> list[CatalogItem]:
        offers: list[CatalogItem] = []
        for query, answer in run_batched(queries, name, batch_size=self.batch_size):
            offers.extend(parse(query, answer, report))
        return offers

    @classmethod
    def filter(cls, offers: list[CatalogItem]) -> list[CatalogItem]:
        return [o for o in offers if o.location not in EXCLUDED_LOCATIONS]
