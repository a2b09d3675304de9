"""OCI's CPU shapes in the snapshot: the OCI collector's own parsing over recorded Cost Estimator
answers, in the regions of SkyPilot's OCI catalog.

SkyPilot's `catalogs/v8/oci/vms.csv` has no CPU shape the OCI collector would publish: its CPU
rows are `VM.Standard.E4.Flex$_<vCPUs>_<GiB>` and `VM.Standard.E5.Flex$_...`, 24 sizes per flex
shape of SkyPilot's own choosing. The collector (ours and gpuhunt 0.1.34 alike) lists a flex shape
once, at the OCPU and memory quantities `shapes.json` gives it, and no record read gives those
for a flex shape, so no flex size is published here (never a guessed one).

What is real and recorded is one fixed shape: `BM.Standard.E4.128` in the verbatim excerpt of
Oracle's `shapes.json` (`tests/providers/data/oci/cost_estimator_shapes_excerpt.json`: 128 OCPUs
of part B93113, 2,048 GB of part B93114). Its parts are priced from
`tests/providers/data/oci/replay_products.json` (B93113 $0.025 per OCPU-hour, the USD value of
Oracle's cetools price list excerpt, `lastUpdated` 2026-08-06; B93114 $0.0015 per GB-hour). Both
rates are checked against SkyPilot's E4 flex rows of the same commit as the GPU part, every size
of which is exactly `0.025 x OCPUs + 0.0015 x GB` (`check_e4_rates`, stored excerpt
`skypilot_v8_oci_vms_flex_excerpt.csv`).

The regions are those of the stored SkyPilot GPU excerpt (the OCI part's other source): the
collector lists every shape in every region `ListRegions` names, and OCI prices are the same in
every region.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuhunt._internal.models import CatalogItem
from gpuhunt.providers.oci import OCIProvider, ParseReport, parse_offers

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"
RECORDINGS = ROOT / "tests" / "providers" / "data" / "oci"
SHAPES = RECORDINGS / "cost_estimator_shapes_excerpt.json"
PRODUCTS = RECORDINGS / "replay_products.json"
GPU_ROWS = DATA / "skypilot_v8_oci_vms_gpu.csv"
FLEX_ROWS = DATA / "skypilot_v8_oci_vms_flex_excerpt.csv"
# The parts of BM.Standard.E4.128 (its `products` in shapes.json).
E4_OCPU, E4_MEMORY = "B93113", "B93114"


@dataclass
class Converted:
    items: list[CatalogItem]
    report: ParseReport = field(default_factory=ParseReport)


def regions(path: Path = GPU_ROWS) -> list[str]:
    """The regions of a SkyPilot OCI catalog, in the order of the file."""
    with path.open(newline="", encoding="utf-8") as f:
        return list(dict.fromkeys(row["Region"] for row in csv.DictReader(f)))


def convert(shapes: Any, products: Any, names: list[str]) -> Converted:
    """Cost Estimator documents and region names -> the CPU-only offers the collector makes of
    them (its filter applied); a shape it cannot price is skipped and counted in `report`."""
    report = ParseReport()
    offers = OCIProvider.filter(parse_offers(shapes, products, names, report))
    gpu = sorted({o.instance_name for o in offers if o.gpu_count})
    if gpu:
        raise ValueError(f"oci CPU part: GPU shapes in the CPU recordings: {gpu}")
    return Converted(items=offers, report=report)


def collect() -> list[CatalogItem]:
    converted = convert(json.loads(SHAPES.read_text()), json.loads(PRODUCTS.read_text()), regions())
    if converted.report.skipped:
        raise ValueError(f"oci CPU part: shapes skipped: {converted.report.skipped}")
    return converted.items


def usd_rate(products: Any, part: str) -> float:
    """The pay-as-you-go USD rate of one part of a products.json document."""
    for item in products["items"]:
        if item["partNumber"] == part:
            for loc in item["currencyCodeLocalizations"]:
                if loc["currencyCode"] == "USD":
                    return float(loc["prices"][-1]["value"])
    raise ValueError(f"{part}: no USD price in the products document")


def check_e4_rates(products: Any, path: Path = FLEX_ROWS) -> int:
    """Every `VM.Standard.E4.Flex` row of SkyPilot's catalog costs the OCPU rate times its
    OCPUs (half its vCPUs) plus the memory rate times its GB: the two rates the fixed E4 shape
    is priced with. Returns the rows checked; a row that disagrees is an error naming it."""
    ocpu, memory = usd_rate(products, E4_OCPU), usd_rate(products, E4_MEMORY)
    checked = 0
    with path.open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if not row["InstanceType"].startswith("VM.Standard.E4.Flex$"):
                continue
            expected = ocpu * float(row["vCPUs"]) / 2 + memory * float(row["MemoryGiB"])
            if abs(expected - float(row["Price"])) > 1e-9:
                raise ValueError(
                    f"{row['InstanceType']}: SkyPilot lists {row['Price']}, the E4 rates "
                    f"give {expected:.6f}"
                )
            checked += 1
    return checked
