"""AWS EC2: on-demand prices from the EC2 Price List bulk CSV, accelerator details from
`DescribeInstanceTypes`, spot prices from `DescribeSpotPriceHistory`.

Where each number comes from
- Price, vCPUs and memory: the Price List bulk file (`EC2_PRICING_URL`, several GB). It is
  streamed line by line and only the rows we keep are held in memory, so peak memory does not grow
  with the file (see `benchmarks/aws_price_list_stream.py`). `AWS_CACHE_PATH` (or the
  `cache_path` argument) names a local copy: read when it exists, otherwise downloaded there
  atomically first. Nothing checks a cached file's age: delete it to refresh.
- A row is kept when it is what a user gets from a plain `RunInstances`: TermType and MarketOption
  OnDemand, Linux, Shared tenancy, CapacityStatus Used (not the reservation bookkeeping rows), no
  pre-installed software, USD per hour. The file quotes every non-empty field, so a row lacking
  `"OnDemand"`, `"Linux"`, ... as quoted text cannot pass and is skipped before CSV parsing, and
  TermType is checked by counting commas (the columns before it are codes): reserved-term rows
  carry "OnDemand" too, in MarketOption. This is what makes a multi-GB file cheap (about 250k
  rows/s). Unquoted or reordered files fall back to parsing more rows.
- Previous-generation families (AWS's published list, `PREVIOUS_GENERATION_FAMILIES`) are
  dropped while reading. "Current Generation" flags are not used: the DescribeInstanceTypes data
  we have marks g5, m5, c5, r5 and m6i as not current, yet they are launched every day.
- Accelerator name, count and per-device memory, and the CPU architecture: `DescribeInstanceTypes`
  (the price list has no GPU model). Each instance type is described once, in the region that
  offers most of the still-undescribed types; a region that fails is skipped with a warning and
  the next one is tried. If no region answers at all, the collection fails.
- Spot: `DescribeSpotPriceHistory` (Linux/UNIX, start time now = the current price) per region,
  all regions in parallel; the cheapest zone of a location is its spot price. Local Zones get
  spot offers from their parent region's answer (their zone names say which zone they are). A
  region whose credentials or endpoint fail is skipped with a warning.

Decisions
- Shared-GPU sizes (g6f, gr6f: a fraction of a GPU) are skipped: `gpu_count` is an integer and a
  1/8 L4 sold as "1 L4" would be wrong. Counted in `last_report.counts["fractional_gpu"]`.
- Trainium and Inferentia (NeuronInfo), Qualcomm AI100 (dl2q), FPGAs and media accelerators are
  published only when the accelerator tables know the device name: an offer with accelerators
  needs a known vendor, and `AcceleratorVendor` has no AWS member today, so these are skipped and
  counted in `last_report.counts["unsupported_accelerator"]`. When the tables learn them, they are picked up
  here without code changes (the names go through `canonical_gpu_name`), and `filter()` already
  lists trn1/trn1n/trn2/inf2.
- A GPU whose name the tables do not know is kept under AWS's spelling when AWS names a vendor
  we know (NVIDIA, AMD, ...), with a warning, counted in `last_report.unknown_gpus`.
- An instance type the price list gives GPUs but `DescribeInstanceTypes` did not describe is
  skipped (a GPU offer without a GPU name or vendor is useless), counted in
  `stats["no_gpu_details"]`; so are types in accelerator families (trn, inf, dl, f, vt) with no
  details.
- GPU memory per device is AWS's MiB snapped to the known size (AWS reports 22,888 MiB for the
  24 GB L4 and A10G).
- `filter()` keeps current GPU families users launch and a representative set of x86 CPU families.
  ARM families (g5g, m7g, ...) are collected by `get()` with `cpu_arch=arm` but not published:
  consumers of the 0.1.x catalog assume x86 images.

Credentials come from the boto3 chain (environment, profile, instance role); none found is a
`MissingCredsError`. Required IAM permissions: `ec2:DescribeInstanceTypes`,
`ec2:DescribeSpotPriceHistory`.
"""

from __future__ import annotations

import csv
import logging
import os
import re
import tempfile
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Set
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any, NamedTuple

import requests

from gpuhunt._internal.costs import interruption
from gpuhunt._internal.costs.terms import AWSReservedTap, Term
from gpuhunt._internal.errors import MissingCredsError, ProviderError
from gpuhunt._internal.formats import terms as terms_file
from gpuhunt._internal.gpu_names import resolve_gpu
from gpuhunt._internal.load import transport, urls
from gpuhunt._internal.models import (
    AcceleratorVendor,
    CatalogItem,
    CPUArchitecture,
)
from gpuhunt._internal.registry import sdk_imports
from gpuhunt.providers._report import ParseReport
from gpuhunt.providers.base import Ask, Collects, OfflineProvider

logger = logging.getLogger(__name__)

NAME = "aws"
EC2_PRICING_URL = (
    "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/index.csv"
)
CACHE_PATH_ENV = "AWS_CACHE_PATH"
# The Spot Instance Advisor's data: interruption bands and savings (costs.interruption).
SPOT_ADVISOR_URL = "https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json"
METADATA_LINES = 5  # FormatVersion, Disclaimer, Publication Date, Version, OfferCode
DOWNLOAD_ATTEMPTS = 3  # whole-file attempts when the stream breaks off mid-way
CHUNK_SIZE = 1 << 20
# The file is one long response: the read timeout bounds a stall, not the whole download.
DOWNLOAD_READ_TIMEOUT = 60.0  # the price list is large; the connect timeout is the usual one
DESCRIBE_BATCH = 100  # DescribeInstanceTypes accepts at most 100 names per call
# Regions to try before giving up when none has answered DescribeInstanceTypes yet.
DESCRIBE_MAX_FAILED_REGIONS = 3
SPOT_WORKERS = 32  # about one per region, so the slowest region sets the pace
SPOT_PRODUCT_DESCRIPTIONS = ["Linux/UNIX", "Linux/UNIX (Amazon VPC)"]
# botocore's defaults (60 s connect timeout, several attempts) let one dead regional endpoint
# stall the collection for minutes.
EC2_CLIENT_OPTIONS: dict[str, Any] = {
    "connect_timeout": 5,
    "read_timeout": 30,
    "retries": {"mode": "standard", "max_attempts": 3},
}


# boto3/botocore (the `aws` extra) are imported where they are used, so that this module, and
# the integrity tests that import it, work without them.
def ec2_client_config() -> Any:
    """botocore's client config for EC2 calls (`EC2_CLIENT_OPTIONS`)."""
    with sdk_imports(NAME):
        from botocore.config import Config
    return Config(**EC2_CLIENT_OPTIONS)


def _boto3() -> Any:
    with sdk_imports(NAME):
        import boto3
    return boto3


def _api_errors() -> tuple[type[Exception], type[Exception]]:
    """(ClientError, BotoCoreError): what a failed EC2 call raises."""
    with sdk_imports(NAME):
        from botocore.exceptions import BotoCoreError, ClientError
    return ClientError, BotoCoreError


# Column -> the one value a kept row has.
ACCEPTED_VALUES: dict[str, str] = {
    "TermType": "OnDemand",
    "Tenancy": "Shared",
    "Operating System": "Linux",
    "CapacityStatus": "Used",
    "Unit": "Hrs",
    "Currency": "USD",
}
NO_SOFTWARE = ("", "NA")
# Columns that hold codes (never a comma): TermType's position can be found by counting commas.
_COMMA_FREE_COLUMNS = frozenset({"SKU", "OfferTermCode", "RateCode"})
REQUIRED_COLUMNS = (
    *ACCEPTED_VALUES,
    "PricePerUnit",
    "Instance Type",
    "vCPU",
    "Memory",
    "Pre Installed S/W",
    "Region Code",
    "GPU",
)

# https://aws.amazon.com/ec2/previous-generation/ and families AWS no longer lists per region.
PREVIOUS_GENERATION_FAMILIES = frozenset(
    {
        "a1", "c1", "c3", "c4", "cc2", "cg1", "cr1", "g2", "g3", "g3s", "g4ad", "hi1", "hs1",
        "i2", "m1", "m2", "m3", "p2", "p3", "r3", "r4", "t1",
    }
)  # fmt: skip
# Families whose accelerators the price list may not mention in its GPU column.
_ACCELERATOR_FAMILY = re.compile(r"^(trn|inf|dl|f|vt)\d")
# Graviton families have a "g" right after the generation digit: m7g, c7gn, t4g, g5g, x2gd.
_GRAVITON_FAMILY = re.compile(r"^[a-z]+\d+g")

# What `filter()` publishes.
GPU_FAMILIES = frozenset(
    {
        "p4d", "p4de", "p5", "p5e", "p5en", "p6-b200", "p6-b300",
        "g4dn", "g5", "g6", "g6e", "gr6", "g7", "g7e",
    }
)  # fmt: skip
# Published once the accelerator tables know Trainium/Inferentia (see the module docstring).
NEURON_FAMILIES = frozenset({"trn1", "trn1n", "trn2", "inf2"})
CPU_FAMILIES = frozenset(
    {"t3", "m5", "c5", "r5", "m6i", "c6i", "r6i", "m7i", "c7i", "r7i"}
)  # fmt: skip
PUBLISHED_FAMILIES = GPU_FAMILIES | NEURON_FAMILIES | CPU_FAMILIES

ClientFactory = Callable[[str], Any]


def family_of(instance_type: str) -> str:
    return instance_type.split(".", 1)[0]


# ---------------------------------------------------------------------------------------------
# Pure parsing


class PriceListRow(NamedTuple):
    """A kept on-demand price list row: an instance type's hourly Linux price in one location."""

    instance_type: str
    location: str  # "Region Code": a region, Local Zone or Wavelength Zone
    price: float
    cpu: int
    memory: float  # GiB
    gpu_count: float  # as the file writes it: fractions for shared-GPU sizes
    physical_processor: str


@dataclass(frozen=True)
class Accelerator:
    name: str  # canonical when the tables know it, AWS's spelling otherwise
    known: bool
    vendor: AcceleratorVendor | None
    count: int
    memory: float | None  # GiB per device
    fractional: bool  # a share of one device (g6f)


@dataclass(frozen=True)
class InstanceDetails:
    cpu_arch: CPUArchitecture | None
    accelerator: Accelerator | None


def parse_price_list(lines: Iterable[str], stats: Counter[str] | None = None) -> list[PriceListRow]:
    """The rows to keep from the Price List bulk CSV given as text lines (metadata included).

    Reads the lines once, holding only kept rows. A row that cannot be parsed is skipped and
    counted (`stats["malformed"]`); a file without the columns we need is a `ProviderError`.
    When one instance type appears twice in one location, the cheaper row wins.
    """
    stats = Counter() if stats is None else stats
    it = iter(lines)
    metadata = [next(it, "") for _ in range(METADATA_LINES)]
    header_line = next(it, "")
    header = next(csv.reader([header_line]), [])
    col = {name: i for i, name in enumerate(header)}
    missing = [name for name in REQUIRED_COLUMNS if name not in col]
    if missing:
        raise ProviderError(
            f"{NAME}: the EC2 price list has no {missing[0]!r} column after {METADATA_LINES} "
            f"metadata lines (first line: {metadata[0][:40]!r})"
        )
    _log_metadata(metadata)
    market = col.get("MarketOption")
    software = col["Pre Installed S/W"]
    checks = [(col[name], value) for name, value in ACCEPTED_VALUES.items()]
    if market is not None:
        checks.append((market, "OnDemand"))
    quoted = header_line.startswith('"')
    needles = tuple(f'"{v}"' for v in dict.fromkeys(ACCEPTED_VALUES.values())) if quoted else ()
    term_column: int | None = col["TermType"]
    if not quoted or not set(header[:term_column]) <= _COMMA_FREE_COLUMNS:
        term_column = None
    i_type, i_loc, i_price = col["Instance Type"], col["Region Code"], col["PricePerUnit"]
    i_cpu, i_mem, i_gpu = col["vCPU"], col["Memory"], col["GPU"]
    i_proc = col.get("Physical Processor")

    kept: dict[tuple[str, str], PriceListRow] = {}
    for row in csv.reader(_candidate_records(it, needles, term_column, stats)):
        if len(row) != len(header):
            stats["malformed"] += 1
            continue
        if row[software] not in NO_SOFTWARE or any(row[i] != v for i, v in checks):
            stats["rejected"] += 1
            continue
        instance_type = row[i_type]
        if family_of(instance_type) in PREVIOUS_GENERATION_FAMILIES:
            stats["previous_generation"] += 1
            continue
        try:
            parsed = PriceListRow(
                instance_type=instance_type,
                location=row[i_loc],
                price=float(row[i_price]),
                cpu=int(row[i_cpu]),
                memory=_parse_gib(row[i_mem]),
                gpu_count=float(row[i_gpu]) if row[i_gpu] not in ("", "NA") else 0.0,
                physical_processor=row[i_proc] if i_proc is not None else "",
            )
        except ValueError:
            stats["malformed"] += 1
            logger.warning("aws: skipping a malformed price list row for %r", instance_type)
            continue
        if not instance_type or not parsed.location or parsed.price <= 0:
            stats["malformed"] += 1
            continue
        if parsed.gpu_count and not parsed.gpu_count.is_integer():
            stats["fractional_gpu"] += 1
            continue
        key = (instance_type, parsed.location)
        if key in kept:
            stats["duplicate"] += 1
            if kept[key].price <= parsed.price:
                continue
        kept[key] = parsed
    stats["accepted"] = len(kept)
    return list(kept.values())


def _candidate_records(
    lines: Iterator[str],
    needles: tuple[str, ...],
    term_column: int | None,
    stats: Counter[str],
) -> Iterator[str]:
    """CSV records (a quoted field may span lines) that may be kept; counts every record.

    A record may be kept if it contains every needle and, when `term_column` is given (the
    columns before TermType never hold commas), its TermType field is "OnDemand": reserved-term
    rows contain "OnDemand" too, in MarketOption.
    """
    rows = rejected = 0
    pending: str | None = None
    term = '"OnDemand"'
    for line in lines:
        if pending is not None:
            line = pending + line
            pending = None
        if line.count('"') & 1:  # inside a quoted field: the record goes on
            pending = line
            continue
        if len(line) < 3 and not line.strip():
            continue
        rows += 1
        if term_column is not None:
            start = 0
            for _ in range(term_column):
                start = line.find(",", start) + 1
            if not line.startswith(term, start):
                rejected += 1
                continue
        for needle in needles:
            if needle not in line:
                rejected += 1
                break
        else:
            yield line
    if pending is not None:
        rows += 1
        yield pending  # unbalanced quotes at the end: let csv report it as it reads it
    stats["rows"] += rows
    stats["rejected"] += rejected


def _parse_gib(text: str) -> float:
    number, _, unit = text.partition(" ")
    if unit not in ("GiB", "GB"):
        raise ValueError(f"memory {text!r}")
    return float(number.replace(",", ""))


def _log_metadata(metadata: list[str]) -> None:
    fields = dict(row[:2] for row in csv.reader(metadata) if len(row) >= 2)
    logger.info(
        "aws: EC2 price list version %s, published %s",
        fields.get("Version", "?"),
        fields.get("Publication Date", "?"),
    )


def parse_instance_types(
    items: Iterable[Mapping[str, Any]], stats: Counter[str] | None = None
) -> dict[str, InstanceDetails]:
    """`DescribeInstanceTypes` items -> details by instance type (architecture, accelerator)."""
    stats = Counter() if stats is None else stats
    out: dict[str, InstanceDetails] = {}
    for item in items:
        try:
            name = item["InstanceType"]
            out[name] = InstanceDetails(
                cpu_arch=_cpu_arch(item.get("ProcessorInfo", {}).get("SupportedArchitectures")),
                accelerator=_accelerator(item),
            )
        except (KeyError, TypeError, ValueError, IndexError):
            stats["malformed_instance_type"] += 1
            logger.warning("aws: skipping a malformed DescribeInstanceTypes item")
    return out


def _cpu_arch(architectures: list[str] | None) -> CPUArchitecture | None:
    if not architectures:
        return None
    if "arm64" in architectures:
        return CPUArchitecture.ARM
    if "x86_64" in architectures:
        return CPUArchitecture.X86
    return None


# DescribeInstanceTypes section -> its list of devices; GPUs first, they are what we publish.
_ACCELERATOR_SECTIONS = (
    ("GpuInfo", "Gpus"),
    ("NeuronInfo", "NeuronDevices"),
    ("InferenceAcceleratorInfo", "Accelerators"),
    ("FpgaInfo", "Fpgas"),
    ("MediaAcceleratorInfo", "Accelerators"),
)


def _accelerator(item: Mapping[str, Any]) -> Accelerator | None:
    for section, key in _ACCELERATOR_SECTIONS:
        devices = (item.get(section) or {}).get(key) or []
        if not devices:
            continue
        first = devices[0]
        aws_name = str(first["Name"])
        memory_mib = (first.get("MemoryInfo") or {}).get("SizeInMiB")
        gpu = resolve_gpu(aws_name, memory_mib / 1024 if memory_mib else None)
        vendor = gpu.vendor if gpu else _vendor(first.get("Manufacturer"))
        count = sum(int(d.get("Count", 0)) for d in devices if d.get("Name") == aws_name)
        if len(devices) > 1 and any(d.get("Name") != aws_name for d in devices):
            logger.warning("aws: %s mixes accelerators; using %s", item["InstanceType"], aws_name)
        partition = float(first.get("GpuPartitionSize", 1.0))
        memory = gpu.memory if gpu else (memory_mib / 1024 if memory_mib else None)
        return Accelerator(
            name=gpu.name if gpu else aws_name,
            known=gpu is not None,
            vendor=vendor,
            count=count,
            memory=float(round(memory)) if memory else None,  # whole GiB, as 0.1.x published
            fractional=partition < 1 or count == 0,
        )
    return None


def _vendor(manufacturer: Any) -> AcceleratorVendor | None:
    try:
        return AcceleratorVendor.cast(manufacturer)
    except ValueError:
        return None


def build_offers(
    rows: Iterable[PriceListRow],
    details: Mapping[str, InstanceDetails],
    stats: Counter[str] | None = None,
    report: ParseReport | None = None,
) -> list[CatalogItem]:
    """On-demand offers from price list rows and the instance types' details. GPU names the
    tables do not know are counted in `stats["unknown_gpu_name"]` and, by name, in `report`."""
    stats = Counter() if stats is None else stats
    warned: set[tuple[str, str]] = set()

    def note(reason: str, instance_type: str, message: str) -> None:
        stats[reason] += 1
        if (reason, instance_type) not in warned:
            warned.add((reason, instance_type))
            log = (
                logger.warning if reason in ("unknown_gpu_name", "no_gpu_details") else logger.info
            )
            log("aws: %s: %s", instance_type, message)

    offers = []
    for row in rows:
        det = details.get(row.instance_type)
        acc = det.accelerator if det else None
        arch = (det.cpu_arch if det else None) or _guess_cpu_arch(row)
        gpu: tuple[str, AcceleratorVendor, int, float | None] | None = None
        if acc is None:
            if row.gpu_count or (det is None and _ACCELERATOR_FAMILY.match(row.instance_type)):
                note("no_gpu_details", row.instance_type, "no accelerator details; skipped")
                continue
        elif acc.fractional:
            note("fractional_gpu", row.instance_type, f"a share of one {acc.name}; skipped")
            continue
        elif acc.vendor is None or not acc.count:
            note(
                "unsupported_accelerator",
                row.instance_type,
                f"{acc.name} is not in the accelerator tables; skipped",
            )
            continue
        else:
            if not acc.known:
                note("unknown_gpu_name", row.instance_type, f"unknown GPU {acc.name!r}; kept")
                if report is not None:
                    report.unknown_gpu(acc.name, f"{row.instance_type}; kept under that name")
            gpu = (acc.name, acc.vendor, acc.count, acc.memory)
        offers.append(
            CatalogItem(
                provider=NAME,
                instance_name=row.instance_type,
                location=row.location,
                price=row.price,
                cpu=row.cpu,
                memory=row.memory,
                gpu_count=gpu[2] if gpu else 0,
                gpu_name=gpu[0] if gpu else None,
                gpu_memory=gpu[3] if gpu else None,
                gpu_vendor=gpu[1] if gpu else None,
                spot=False,
                disk_size=None,
                cpu_arch=arch,
            )
        )
    return offers


def _guess_cpu_arch(row: PriceListRow) -> CPUArchitecture:
    if "graviton" in row.physical_processor.lower() or _GRAVITON_FAMILY.match(row.instance_type):
        return CPUArchitecture.ARM
    return CPUArchitecture.X86


def parse_spot_price_history(
    items: Iterable[Mapping[str, Any]], stats: Counter[str] | None = None
) -> dict[tuple[str, str], float]:
    """`DescribeSpotPriceHistory` items -> the cheapest price per (instance type, location).

    The location is the zone name without its letter: "us-east-1a" -> "us-east-1",
    "us-west-2-lax-1a" -> the Local Zone "us-west-2-lax-1".
    """
    stats = Counter() if stats is None else stats
    prices: dict[tuple[str, str], float] = {}
    for item in items:
        try:
            zone = str(item["AvailabilityZone"])
            key = (str(item["InstanceType"]), zone[:-1] if zone[-1:].isalpha() else zone)
            price = float(item["SpotPrice"])
        except (KeyError, TypeError, ValueError):
            stats["malformed_spot_price"] += 1
            continue
        if price <= 0:
            stats["malformed_spot_price"] += 1
            continue
        if key not in prices or price < prices[key]:
            prices[key] = price
    return prices


def with_spot_offers(
    offers: list[CatalogItem], spot_prices: Mapping[tuple[str, str], float]
) -> list[CatalogItem]:
    """The on-demand offers plus a spot copy of each that has a spot price."""
    spot = [
        replace(o, spot=True, price=price, flags=list(o.flags), provider_data=dict(o.provider_data))
        for o in offers
        if (price := spot_prices.get((o.instance_name, o.location))) is not None
    ]
    return offers + spot


def _sort_key(o: CatalogItem) -> tuple[float, str, str, bool]:
    return (o.price, o.instance_name, o.location, o.spot)


# ---------------------------------------------------------------------------------------------
# Fetching


class _BrokenStream(ProviderError):
    """The price list download broke off after it started; worth another attempt."""


def read_price_list(
    url: str = EC2_PRICING_URL,
    cache_path: str | None = None,
    stats: Counter[str] | None = None,
    new_tap: Callable[[], AWSReservedTap] | None = None,
) -> list[PriceListRow]:
    """Kept price list rows, from `cache_path` if it exists, else from `url` (streamed, and saved
    to `cache_path` first when one is given). A download that breaks off mid-way is started again,
    at most `DOWNLOAD_ATTEMPTS` times in all. `new_tap()`, when given, makes the reserved-term
    tap each attempt's lines pass through (the same single read collects the terms)."""
    stats = Counter() if stats is None else stats
    for attempt in range(1, DOWNLOAD_ATTEMPTS + 1):
        attempt_stats: Counter[str] = Counter()
        tap = new_tap() if new_tap is not None else None
        try:
            if cache_path:
                if not os.path.exists(cache_path):
                    _download(url, cache_path)
                with open(cache_path, encoding="utf-8", errors="replace", newline="") as f:
                    rows = parse_price_list(tap.watch(f) if tap else f, attempt_stats)
            else:
                with _http_lines(url) as lines:
                    rows = parse_price_list(tap.watch(lines) if tap else lines, attempt_stats)
        except _BrokenStream as e:
            if attempt == DOWNLOAD_ATTEMPTS:
                raise ProviderError(f"{e} ({DOWNLOAD_ATTEMPTS} attempts)") from None
            logger.warning("%s; starting again (attempt %d)", e, attempt + 1)
            continue
        stats.update(attempt_stats)
        return rows
    raise AssertionError("unreachable")


@contextmanager
def _http_response(url: str) -> Iterator[requests.Response]:
    response = transport.request(
        "GET",
        url,
        provider=NAME,
        stream=True,
        timeout=(transport.default_timeout()[0], DOWNLOAD_READ_TIMEOUT),
    )
    try:
        yield response
    finally:
        response.close()


def _chunks(response: requests.Response, url: str) -> Iterator[bytes]:
    received = 0
    try:
        for chunk in response.iter_content(CHUNK_SIZE):
            received += len(chunk)
            yield chunk
    except requests.RequestException as e:
        raise _BrokenStream(
            f"{NAME}: GET {urls.safe_url(url)} broke off after {received} bytes "
            f"({type(e).__name__})"
        ) from None


def _split_lines(chunks: Iterable[bytes]) -> Iterator[str]:
    """Text lines (with their "\\n") from byte chunks; "\\n" never occurs inside a UTF-8
    multi-byte character, so splitting bytes first is safe."""
    rest = b""
    for chunk in chunks:
        parts = (rest + chunk).split(b"\n")
        rest = parts.pop()
        for part in parts:
            yield (part + b"\n").decode("utf-8", "replace")
    if rest:
        yield rest.decode("utf-8", "replace")


@contextmanager
def _http_lines(url: str) -> Iterator[Iterator[str]]:
    with _http_response(url) as response:
        yield _split_lines(_chunks(response, url))


def _download(url: str, path: str) -> None:
    """Save `url` to `path` so that `path` never holds a partial file."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=os.path.basename(path) + ".", suffix=".part")
    logger.info("aws: downloading the EC2 price list to %s", path)
    try:
        with os.fdopen(fd, "wb") as f, _http_response(url) as response:
            for chunk in _chunks(response, url):
                f.write(chunk)
        os.replace(tmp, path)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@lru_cache(maxsize=1)
def ec2_regions() -> frozenset[str]:
    """Regions with an EC2 endpoint, from botocore's bundled endpoint data (no network)."""
    session = _boto3().session.Session()
    return frozenset(
        region
        for partition in session.get_available_partitions()
        for region in session.get_available_regions("ec2", partition_name=partition)
    )


def api_region(location: str, regions: Set[str]) -> str | None:
    """The region whose API answers for a location ("us-west-2-lax-1" -> "us-west-2")."""
    if location in regions:
        return location
    parents = [r for r in regions if location.startswith(r + "-")]
    return max(parents, key=len) if parents else None


def types_by_region(
    pairs: Iterable[tuple[str, str]], regions: Set[str]
) -> tuple[dict[str, set[str]], set[str]]:
    """(instance type, location) pairs -> types per API region, and locations with no region."""
    by_region: dict[str, set[str]] = {}
    orphans: set[str] = set()
    for instance_type, location in pairs:
        region = api_region(location, regions)
        if region is None:
            orphans.add(location)
        else:
            by_region.setdefault(region, set()).add(instance_type)
    return by_region, orphans


def _region_error(e: Exception) -> str:
    client_error, _ = _api_errors()
    if isinstance(e, client_error):
        error = e.response.get("Error", {})  # type: ignore[attr-defined]
        return f"{error.get('Code', 'ClientError')}: {error.get('Message', '')}"
    return f"{type(e).__name__}: {e}"


def _describe_batch(client: Any, names: list[str]) -> list[dict[str, Any]]:
    """One batch; names AWS says it does not know (InvalidInstanceType) are dropped and the
    rest asked again."""
    client_error, _ = _api_errors()
    names = list(names)
    while names:
        try:
            items: list[dict[str, Any]] = []
            pages = client.get_paginator("describe_instance_types").paginate(InstanceTypes=names)
            for page in pages:
                items.extend(page.get("InstanceTypes", []))
            return items
        except client_error as e:
            error = e.response.get("Error", {})  # type: ignore[attr-defined]
            if error.get("Code") != "InvalidInstanceType":
                raise
            unknown = set(re.findall(r"[\w.-]+", error.get("Message", "").partition("[")[2]))
            if not unknown & set(names):
                raise
            logger.warning("aws: the EC2 API does not know %s", ", ".join(sorted(unknown)))
            names = [n for n in names if n not in unknown]
    return []


def fetch_instance_details(
    client_for: ClientFactory,
    wanted: Mapping[str, set[str]],
    stats: Counter[str] | None = None,
) -> dict[str, InstanceDetails]:
    """Describe every type in `wanted` (types per API region) once, trying regions in turn."""
    stats = Counter() if stats is None else stats
    api_errors = _api_errors()
    pending = set().union(*wanted.values()) if wanted else set()
    details: dict[str, InstanceDetails] = {}
    tried: set[str] = set()
    answered = False
    failed = 0
    while pending:
        candidates = [r for r in sorted(wanted) if r not in tried and wanted[r] & pending]
        if not candidates:
            break
        region = max(candidates, key=lambda r: len(wanted[r] & pending))
        tried.add(region)
        names = sorted(wanted[region] & pending)
        logger.info("aws: describing %d instance types in %s", len(names), region)
        try:
            client = client_for(region)
            for start in range(0, len(names), DESCRIBE_BATCH):
                batch = names[start : start + DESCRIBE_BATCH]
                details.update(parse_instance_types(_describe_batch(client, batch), stats))
                pending.difference_update(batch)
                answered = True
        except api_errors as e:
            failed += 1
            stats["describe_regions_failed"] += 1
            logger.warning(
                "aws: skipping region %s for instance types: %s", region, _region_error(e)
            )
            if not answered and failed >= DESCRIBE_MAX_FAILED_REGIONS:
                break  # the credentials or the permission, not the regions
    if pending:
        logger.warning("aws: no details for %d instance types", len(pending))
    if wanted and not answered:
        raise ProviderError(
            f"{NAME}: DescribeInstanceTypes failed in every region tried "
            f"({', '.join(sorted(tried))}); "
            "check the AWS credentials and the ec2:DescribeInstanceTypes permission"
        )
    return details


def _spot_history(client: Any, names: list[str], start: datetime) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for offset in range(0, len(names), DESCRIBE_BATCH):
        pages = client.get_paginator("describe_spot_price_history").paginate(
            InstanceTypes=names[offset : offset + DESCRIBE_BATCH],
            Filters=[{"Name": "product-description", "Values": SPOT_PRODUCT_DESCRIPTIONS}],
            StartTime=start,
        )
        for page in pages:
            items.extend(page.get("SpotPriceHistory", []))
    return items


def fetch_spot_prices(
    client_for: ClientFactory,
    wanted: Mapping[str, set[str]],
    stats: Counter[str] | None = None,
) -> dict[tuple[str, str], float]:
    """The cheapest current spot price per (instance type, location), all regions in parallel.
    A region that fails is skipped with a warning."""
    stats = Counter() if stats is None else stats
    if not wanted:
        return {}
    start = datetime.now(timezone.utc)
    regions = sorted(wanted)
    api_errors = _api_errors()

    def one_region(region: str) -> list[dict[str, Any]]:
        return _spot_history(client_for(region), sorted(wanted[region]), start)

    prices: dict[tuple[str, str], float] = {}
    with ThreadPoolExecutor(max_workers=min(SPOT_WORKERS, len(regions))) as pool:
        futures = [
            (region, pool.submit(transport.carried(one_region), region)) for region in regions
        ]
        for region, future in futures:
            try:
                items = future.result()
            except api_errors as e:
                stats["spot_regions_failed"] += 1
                logger.warning(
                    "aws: skipping region %s for spot prices: %s", region, _region_error(e)
                )
                continue
            for key, price in parse_spot_price_history(items, stats).items():
                if key not in prices or price < prices[key]:
                    prices[key] = price
    return prices


class _Clients:
    """EC2 clients per region from one boto3 session. Sessions are not thread-safe, clients
    are: clients are created under a lock and shared."""

    def __init__(self) -> None:
        self._session = _boto3().session.Session()
        self._clients: dict[str, Any] = {}
        self._lock = threading.Lock()

    def require_credentials(self) -> None:
        if self._session.get_credentials() is None:
            raise MissingCredsError(
                "Set the AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY environment variables "
                "(or AWS_PROFILE, or another source of the boto3 credential chain)"
            )

    def __call__(self, region: str) -> Any:
        with self._lock:
            if region not in self._clients:
                self._clients[region] = self._session.client(
                    "ec2", region_name=region, config=ec2_client_config()
                )
            return self._clients[region]


def fetch_spot_advisor(url: str = SPOT_ADVISOR_URL) -> list[interruption.Advice]:
    """The Spot Advisor's Linux bands, observed now (the document carries no date)."""
    fetched_at = datetime.now(timezone.utc)
    doc = transport.request_json("GET", url, provider=NAME)
    if not isinstance(doc, dict):
        raise ProviderError(f"{NAME}: {urls.safe_url(url)} is not a JSON object")
    try:
        return interruption.parse_spot_advisor(doc, observed_at=fetched_at)
    except ValueError as e:
        raise ProviderError(f"{NAME}: {urls.safe_url(url)}: {e}") from None


class AWSProvider(Collects[ParseReport], OfflineProvider):
    """EC2 offers in every region: on-demand from the Price List bulk file, spot from the API.

    `cache_path` (default: `$AWS_CACHE_PATH`) keeps a local copy of the price list file.
    `client_factory(region)` returns the EC2 client for a region (default: boto3's credential
    chain and endpoints); when given, the caller owns the credentials. After `get()`,
    `last_report.counts` counts what was read, kept and skipped, and why.
    """

    NAME = NAME
    REPORT = ParseReport

    def __init__(
        self,
        cache_path: str | None = None,
        *,
        client_factory: ClientFactory | None = None,
        pricing_url: str = EC2_PRICING_URL,
    ) -> None:
        self.cache_path = cache_path or os.getenv(CACHE_PATH_ENV) or None
        self.client_factory = client_factory
        self.pricing_url = pricing_url
        # Commitment terms read with the last `get()`: a table beside the offers, never offers.
        self.last_terms: list[Term] = []
        self.spot_advisor_url = SPOT_ADVISOR_URL

    def extra_tables(self) -> dict[str, bytes]:
        """Files to publish beside the catalog CSV, by suffix: the reserved terms of the last
        `get()` (`.terms`) and the Spot Advisor's bands fetched now (`.interruption`). The
        advisor is optional: when it cannot be read, a warning says so and the file is left
        out (no band is better than an invented one)."""
        tables: dict[str, bytes] = {}
        if self.last_terms:
            tables[terms_file.SUFFIX] = terms_file.write_terms(self.last_terms)
        try:
            advice = fetch_spot_advisor(self.spot_advisor_url)
        except ProviderError as e:
            logger.warning("aws: no spot interruption bands: %s", e)
        else:
            tables[interruption.SUFFIX] = interruption.write_bands(advice)
        return tables

    def collect(self, ask: Ask, report: ParseReport) -> list[CatalogItem]:
        stats = report.counts
        self.last_report = report  # already, so a failure below leaves what it counted
        client_for = self.client_factory
        if client_for is None:
            clients = _Clients()
            clients.require_credentials()  # before a download of several GB
            client_for = clients

        taps: list[AWSReservedTap] = []

        def new_tap() -> AWSReservedTap:
            families = PUBLISHED_FAMILIES if ask.apply_filter else None
            taps.append(AWSReservedTap(source=self.pricing_url, families=families))
            return taps[-1]

        rows = read_price_list(self.pricing_url, self.cache_path, stats, new_tap)
        self.last_terms = taps[-1].terms() if taps else []
        stats["reserved_terms"] = len(self.last_terms)
        if not rows:
            raise ProviderError(f"{NAME}: the EC2 price list has no on-demand Linux rows")
        if ask.apply_filter:
            # Drop what filter() would drop before asking the API about it.
            rows = [r for r in rows if family_of(r.instance_type) in PUBLISHED_FAMILIES]

        regions = ec2_regions()
        wanted, orphans = types_by_region(((r.instance_type, r.location) for r in rows), regions)
        if orphans:
            logger.info("aws: no EC2 API region for %s", ", ".join(sorted(orphans)))
        details = fetch_instance_details(client_for, wanted, stats)
        offers = build_offers(rows, details, stats, report)

        spot_wanted, _ = types_by_region(((o.instance_name, o.location) for o in offers), regions)
        spot_prices = fetch_spot_prices(client_for, spot_wanted, stats)
        offers = with_spot_offers(offers, spot_prices)
        stats["offers"] = len(offers)
        stats["spot_offers"] = sum(o.spot for o in offers)
        logger.info("aws: %s", dict(sorted(stats.items())))
        return sorted(offers, key=_sort_key)

    @classmethod
    def filter(cls, offers: list[CatalogItem]) -> list[CatalogItem]:
        """Current GPU families, Trainium/Inferentia (once the tables know them) and a
        representative set of x86 CPU families."""
        return [o for o in offers if family_of(o.instance_name) in PUBLISHED_FAMILIES]
