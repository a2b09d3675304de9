"""Azure VM prices by region (`anycloud-sh/catalog`, `azure/vms.csv`) -> our Azure CatalogItems,
shaped as the Azure collector (`gpuhunt.providers.azure`) publishes them.

No Retail Prices API answer for a GPU size was ever recorded, so the Azure part of the snapshot is
this public, dated price table: a bot (anycloud-bot) commits it with a dated message ("Update
catalogs 2026-05-20"), in SkyPilot's catalog columns (`InstanceType, AcceleratorName,
AcceleratorCount, vCPUs, MemoryGiB, GpuInfo, Price, SpotPrice, Region, Generation`), one row per
VM size and region where a Linux pay-as-you-go price is listed, in every public Azure region. It
is a price list by region: a row says the size is sold there at that price, not that capacity
is free. Its `Generation` is written unquoted, so "V1,V2" spreads over two fields: the first nine
columns are read by position and the rest is `Generation`.

The conversion follows the collector wherever the file and the collector differ:

- only the series the collector's `filter()` keeps (`azure.KEEP_SERIES`); other rows are
  counted in `Converted.not_kept`;
- the GPU model and memory come from the size name through the collector's own
  `azure.gpu_for_size` (NC H100 v5 is "H100NVL" 94 GB where the file says "H100"; a partitioned
  A10 gets its share of memory); the GPU count is `AcceleratorCount`, except that a share of a
  partitioned GPU (`0.167` for NV6ads_A10_v5) is one GPU, as the collector reports it;
- the location is `Region` as written (Azure's `armRegionName`, lower case, as the collector);
- the flags the collector sets: `azure-restricted-region` in Microsoft's access-restricted
  regions, `fractional-gpu` on partitioned-GPU sizes (`_internal/rentable.py`);
- `Price` makes an on-demand offer, `SpotPrice` a spot offer (`spot=True`, its own price); a
  `SpotPrice` equal to `Price` (ND H200 v5 only) is not taken for a spot price: Azure's Spot
  meters are discounted, so the column holds the on-demand number there; counted in
  `Converted.spot_copies`;
- a row of a kept size that cannot make an offer (no price, no GPU count, a malformed number,
  a constrained-vCPU size whose usable vCPUs the file does not give) is skipped and counted
  with why (`Converted.skipped`), never repaired by hand.

Pure: `convert()` takes rows and returns offers; `read()` is the only I/O.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from gpuhunt._internal.models import CatalogItem, CPUArchitecture
from gpuhunt._internal.rentable import offer_flags
from gpuhunt.providers import azure
from gpuhunt.providers._records import Gpu, offer

DATA = Path(__file__).resolve().parent / "data"
REPOSITORY = "anycloud-sh/catalog"
PATH = "azure/vms.csv"
COMMIT = "62ff0a987e0c257a89235415d2877812fb1aaf29"
COMMIT_DATE = "2026-05-20"
STORED = DATA / "anycloud_azure_vms_62ff0a98_excerpt.csv"
SOURCE = f"{REPOSITORY} {PATH}@{COMMIT}"
COLUMNS = (
    "InstanceType",
    "AcceleratorName",
    "AcceleratorCount",
    "vCPUs",
    "MemoryGiB",
    "GpuInfo",
    "Price",
    "SpotPrice",
    "Region",
    "Generation",
)
# Constrained-vCPU sizes (`Standard_E8-4s_v4`): the file's `vCPUs` is the count billed (8), the
# collector writes the count the guest sees (`vCPUsAvailable`, 4), which the file does not hold.
_CONSTRAINED = re.compile(r"^Standard_[A-Z]+\d+-\d+")
# The series Azure sells in fractions of one GPU (`azure.GPU_SERIES` entries with `full_at`).
_PARTITIONED = [re.compile(f"^Standard_{s.pattern}$") for s in azure.GPU_SERIES if s.full_at]


@dataclass
class Converted:
    items: list[CatalogItem]
    rows: int = 0
    not_kept: int = 0  # sizes the Azure collector does not publish (retired, other series)
    skipped: list[str] = field(default_factory=list)  # rows of kept sizes, each with why
    spot_copies: int = 0  # `SpotPrice` == `Price`: not a spot price, no spot offer


def _price(text: str, what: str) -> float | None:
    if not text.strip():
        return None
    value = float(text)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{what} is {text!r}")
    return value


def _gpu_count(name: str, text: str) -> int:
    count = float(text)
    if not math.isfinite(count) or count <= 0:
        raise ValueError(f"AcceleratorCount is {text!r}")
    if count < 1 and any(p.match(name) for p in _PARTITIONED):
        return 1  # a share of one GPU, reported as one GPU with its share of memory
    if count != int(count):
        raise ValueError(f"AcceleratorCount is {text!r}")
    return int(count)


def convert(rows: Iterable[Mapping[str, str]]) -> Converted:
    """Every offer the Azure collector would publish from these rows."""
    out = Converted(items=[])
    best: dict[tuple[str, str, bool], CatalogItem] = {}
    for row in rows:
        out.rows += 1
        name = (row.get("InstanceType") or "").strip()
        if not azure.KEEP_SERIES.match(name) or azure.is_retired(name):
            out.not_kept += 1
            continue
        region = (row.get("Region") or "").strip().lower()
        try:
            if not region:
                raise ValueError("no Region")
            if _CONSTRAINED.match(name):
                raise ValueError("a constrained-vCPU size: vCPUs is the billed count")
            cpu, memory = float(row["vCPUs"]), float(row["MemoryGiB"])
            if not cpu >= 1 or not memory > 0:
                raise ValueError(f"vCPUs={row['vCPUs']!r} MemoryGiB={row['MemoryGiB']!r}")
            spec = azure.gpu_for_size(name)
            count_text = (row.get("AcceleratorCount") or "").strip()
            gpu = Gpu(0, None, None, None)
            if spec is not None:
                if not count_text:
                    raise ValueError("a GPU size without AcceleratorCount")
                gpu = Gpu(_gpu_count(name, count_text), spec.name, spec.vendor, spec.memory)
            elif count_text:
                raise ValueError(f"a CPU size with AcceleratorCount {count_text!r}")
            on_demand = _price(row.get("Price") or "", "Price")
            spot = _price(row.get("SpotPrice") or "", "SpotPrice")
            if not on_demand:
                raise ValueError("no Price")
        except (KeyError, ValueError) as e:
            out.skipped.append(f"{name} in {region or '?'}: {e}")
            continue
        prices = [(on_demand, False)]
        if spot and spot == on_demand:
            out.spot_copies += 1
        elif spot:
            prices.append((spot, True))
        for price, is_spot in prices:
            item = offer(
                azure.AzureProvider.NAME,
                name,
                region,
                price,
                int(cpu),
                memory,
                gpu,
                spot=is_spot,
                flags=offer_flags(azure.AzureProvider.NAME, name, region),
                cpu_arch=CPUArchitecture.X86,
            )
            # As the collector: one offer per (size, region, spot), the lower price if twice.
            key = (name, region, is_spot)
            if key not in best or price < best[key].price:
                best[key] = item
    out.items = list(best.values())
    return out


def parse(lines: Iterable[str]) -> list[dict[str, str]]:
    """CSV lines -> rows by column name, `Generation` being the rest of the fields ("V1,V2" is
    written unquoted); a row with fewer fields lacks the columns it does not reach."""
    reader = csv.reader(lines)
    header = next(reader, None)
    if tuple(header or ()) != COLUMNS:
        raise ValueError(f"header {header} is not {list(COLUMNS)}")
    rows = []
    for fields in reader:
        if len(fields) > len(COLUMNS):
            fields = [*fields[: len(COLUMNS) - 1], ",".join(fields[len(COLUMNS) - 1 :])]
        rows.append(dict(zip(COLUMNS, fields, strict=False)))
    return rows


def read(path: Path = STORED) -> list[dict[str, str]]:
    """The stored rows (an unexpected header is an error naming the file)."""
    with path.open(newline="", encoding="utf-8") as f:
        try:
            return parse(f)
        except ValueError as e:
            raise ValueError(f"{path.name}: {e}") from None


def collect() -> list[CatalogItem]:
    """The Azure snapshot offers: the stored excerpt converted, the collector's filter applied."""
    converted = convert(read())
    return azure.AzureProvider.filter(converted.items)
