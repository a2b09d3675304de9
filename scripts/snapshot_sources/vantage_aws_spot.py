"""AWS spot prices of GPU instance types from instances.vantage.sh data (ec2instances.info's
`instances.json`, as committed in tsaol/aws-gpu `data/gpu_instances_raw.json`) -> the
`DescribeSpotPriceHistory` answers the AWS replay serves to the real collector.

The stored input is `data/vantage_aws_gpu_spot_2d0108c7_excerpt.csv` (how it was cut is in that
folder's README): per instance type and region, the file's Linux `ondemand` and `spot_min`
strings, verbatim. Decisions:

- `spot_min` is the price: vantage lists the lowest current Linux spot price among a region's
  zones, and the AWS collector's spot price of a location is its cheapest zone, so the two mean
  the same thing. `spot_max`/`spot_avg` are not used.
- vantage gives one price per region, not per zone, so the answer names the region where the
  API names a zone; the collector's zone-to-location rule maps both to the region, and no zone
  letter is made up.
- A row whose price is missing, not a number or not positive is skipped and counted
  (`Parsed.skipped`); a second row for the same (type, region) is skipped and counted too.
- Which offers get a spot copy is the collector's business (`with_spot_offers`): only a (type,
  region) it publishes on demand. A spot price equal to the on-demand price (10 rows: AWS caps
  spot at on-demand) is kept, as the collector would keep the API's answer.
- No timestamp is invented for the answer's items; the collector does not read one.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"
REPOSITORY = "tsaol/aws-gpu"
PATH = "data/gpu_instances_raw.json"
COMMIT = "2d0108c7bd261c8e40493fbd35135437bd6c9099"
# The commit's own date; the same commit's generated files say "Last updated: 2025-11-30".
DATE = "2025-11-30"
STORED = DATA / "vantage_aws_gpu_spot_2d0108c7_excerpt.csv"
COLUMNS = ("instance_type", "region", "linux_ondemand", "linux_spot_min")
PRODUCT_DESCRIPTION = "Linux/UNIX"


@dataclass
class Parsed:
    prices: dict[tuple[str, str], float]  # (instance type, region) -> USD/hour
    rows: int = 0
    skipped: Counter[str] = field(default_factory=Counter)


def parse(text: str) -> Parsed:
    """The stored excerpt's text -> spot price per (instance type, region), skips counted."""
    reader = csv.DictReader(io.StringIO(text))
    if tuple(reader.fieldnames or ()) != COLUMNS:
        raise ValueError(f"{STORED.name}: expected columns {COLUMNS}, got {reader.fieldnames}")
    parsed = Parsed(prices={})
    for row in reader:
        parsed.rows += 1
        key = (row["instance_type"] or "", row["region"] or "")
        try:
            price = float(row["linux_spot_min"] or "")
        except ValueError:
            parsed.skipped["malformed_price"] += 1
            continue
        if not all(key) or not price > 0:
            parsed.skipped["malformed_row"] += 1
            continue
        if key in parsed.prices:
            parsed.skipped["duplicate"] += 1
            continue
        parsed.prices[key] = price
    return parsed


def load(path: Path = STORED) -> Parsed:
    return parse(path.read_text(encoding="utf-8"))


def history_items(
    prices: Mapping[tuple[str, str], float], region: str, instance_types: Iterable[str]
) -> list[dict[str, Any]]:
    """What `DescribeSpotPriceHistory` in `region` answers for `instance_types`: one item per
    type priced there, the region standing for its zones."""
    return [
        {
            "InstanceType": name,
            "AvailabilityZone": region,
            "ProductDescription": PRODUCT_DESCRIPTION,
            "SpotPrice": f"{prices[(name, region)]}",
        }
        for name in instance_types
        if (name, region) in prices
    ]
