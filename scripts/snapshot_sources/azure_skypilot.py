"""SkyPilot's Azure catalog (`skypilot-org/skypilot-catalog`, `catalogs/v6/azure/vms.csv`) -> our
Azure CatalogItems, shaped as the Azure collector (`gpuhunt.providers.azure`) publishes them.

No Retail Prices API answer for a GPU size was ever recorded, so the Azure part of the snapshot is
this public price table. SkyPilot writes one row per VM size and region where the Retail Prices
API prices the size (Linux pay-as-you-go `Price`, `SpotPrice` from the Spot meter): a price list
by region, which says the size is sold there at that price, not that capacity is free. The one
version that can be read here (commit below, undated) prices the nine US regions only.

The conversion follows the collector, not SkyPilot, wherever the two differ:

- only the series the collector's `filter()` keeps (`azure.KEEP_SERIES`: Dsv3, Esv4 and the GPU
  series dstack launches); every other row is counted in `Converted.not_kept`;
- the GPU model and memory come from the size name through the collector's own
  `azure.gpu_for_size` (NC H100 v5 is "H100NVL" 94 GB, SkyPilot's "H100"; a partitioned A10 gets
  its share of memory), the GPU count from `AcceleratorCount` (the collector reads it from the
  resource SKU, which this file does not hold);
- the location is `Region` as written (Azure's `armRegionName`, lower case, as the collector);
- `Price` makes an on-demand offer, `SpotPrice` a spot offer (`spot=True`, its own price); a
  `SpotPrice` equal to `Price` (the H100 v5 rows only) is not taken for a spot price: Azure's
  Spot meters are discounted, so the column holds the on-demand number there, whatever put it
  there; counted in `Converted.spot_copies`;
- a row of a kept size that cannot make an offer (no price, no GPU count, a known SkyPilot error)
  is skipped and counted with why (`Converted.skipped`), never repaired by hand.

Pure: `convert()` takes rows and returns offers; `read()` is the only I/O.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from gpuhunt._internal.models import CatalogItem, CPUArchitecture
from gpuhunt.providers import azure
from gpuhunt.providers._records import Gpu, offer

DATA = Path(__file__).resolve().parent / "data"
REPOSITORY = "skypilot-org/skypilot-catalog"
PATH = "catalogs/v6/azure/vms.csv"
COMMIT = "098741e70562f65d7af1cceb81e33b284f742604"
STORED = DATA / "skypilot_v6_azure_vms_excerpt.csv"
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

# Sizes whose SkyPilot rows contradict a published fact, each with why: skipped and counted.
WRONG_SIZES: dict[str, str] = {
    # Microsoft's ND H100 v5 size page: 8 H100 GPUs per VM. SkyPilot's rows say 12 (and their
    # `SpotPrice` copies `Price`); an offer with a GPU count nobody can vouch for is not shipped.
    "Standard_ND96isr_H100_v5": "AcceleratorCount 12 contradicts the ND H100 v5 size (8 GPUs)",
}


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


def convert(rows: Iterable[Mapping[str, str]]) -> Converted:
    """Every offer the Azure collector would publish from these SkyPilot rows."""
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
            if name in WRONG_SIZES:
                raise ValueError(WRONG_SIZES[name])
            if not region:
                raise ValueError("no Region")
            cpu, memory = float(row["vCPUs"]), float(row["MemoryGiB"])
            if not cpu >= 1 or not memory > 0:
                raise ValueError(f"vCPUs={row['vCPUs']!r} MemoryGiB={row['MemoryGiB']!r}")
            spec = azure.gpu_for_size(name)
            count_text = (row.get("AcceleratorCount") or "").strip()
            gpu = Gpu(0, None, None, None)
            if spec is not None:
                if not count_text:
                    raise ValueError("a GPU size without AcceleratorCount")
                count = float(count_text)
                if count < 1 or count != int(count):
                    raise ValueError(f"AcceleratorCount is {count_text!r}")
                gpu = Gpu(int(count), spec.name, spec.vendor, spec.memory)
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
                cpu_arch=CPUArchitecture.X86,
            )
            # As the collector: one offer per (size, region, spot), the lower price if twice.
            key = (name, region, is_spot)
            if key not in best or price < best[key].price:
                best[key] = item
    out.items = list(best.values())
    return out


def read(path: Path = STORED) -> list[dict[str, str]]:
    """The stored rows; an unexpected header is an error, not a silent misread."""
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise ValueError(f"{path.name}: header {reader.fieldnames} is not {list(COLUMNS)}")
        return list(reader)


def collect() -> list[CatalogItem]:
    """The Azure snapshot offers: the stored excerpt converted, the collector's filter applied."""
    converted = convert(read())
    return azure.AzureProvider.filter(converted.items)
