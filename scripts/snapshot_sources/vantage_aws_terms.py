"""AWS reserved (1- and 3-year, No Upfront) prices of GPU instance types from instances.vantage.sh
data (as committed in tsaol/aws-gpu `data/gpu_instances_raw.json`, the file the AWS spot part
already reads) -> EC2 Price List rows -> the library's own reader (`parse_aws_reserved`).

The stored input is `data/vantage_aws_gpu_terms_2d0108c7_excerpt.csv` (cut by `main` below from
the whole file; its README entry says how): per instance type and region of the snapshot's AWS
on-demand offers, the Linux `reserved` entries `yrTerm{1,3}{Standard,Convertible}.noUpfront`,
strings verbatim. Decisions:

- Only No Upfront: vantage states each reserved option as one effective hourly price, which for
  Partial and All Upfront folds the upfront fee into the hour; the fee and the hourly rate the
  Price List states apart cannot be told back from it, so those options are not shipped. A No
  Upfront term has no fee: its effective hourly is the Price List's hourly rate.
- A row becomes the one Price List row the AWS price list states for that term (Linux, Shared
  tenancy, no pre-installed software, `Unit` Hrs), with the columns the reader reads; the
  reader, not this module, decides what a term is.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

if not __package__:  # run as a script: the repository root makes `scripts` importable
    sys.path.insert(0, str(ROOT))
from scripts.snapshot_sources import excerpt  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"
REPOSITORY = "tsaol/aws-gpu"
PATH = "data/gpu_instances_raw.json"
COMMIT = "2d0108c7bd261c8e40493fbd35135437bd6c9099"
DATE = "2025-11-30"  # the commit's date; the same commit's files say "Last updated: 2025-11-30"
WHOLE_SHA256 = "307f1cb2707bddcbe621645cb59f379dd1bc102e4878062ef1ec7d37a96fb04a"
STORED = DATA / "vantage_aws_gpu_terms_2d0108c7_excerpt.csv"
COLUMNS = ("instance_type", "region", "reserved", "linux_hourly")
# vantage's key -> (LeaseContractLength, OfferingClass) as the Price List spells them
KEYS = {
    "yrTerm1Standard.noUpfront": ("1yr", "standard"),
    "yrTerm3Standard.noUpfront": ("3yr", "standard"),
    "yrTerm1Convertible.noUpfront": ("1yr", "convertible"),
    "yrTerm3Convertible.noUpfront": ("3yr", "convertible"),
}
SOURCE = f"{REPOSITORY}:{PATH}@{COMMIT[:8]} (instances.vantage.sh data)"
_PRICE_LIST_COLUMNS = (
    "SKU",
    "OfferTermCode",
    "TermType",
    "PriceDescription",
    "Unit",
    "PricePerUnit",
    "Currency",
    "LeaseContractLength",
    "PurchaseOption",
    "OfferingClass",
    "Instance Type",
    "Region Code",
    "Tenancy",
    "Operating System",
    "Pre Installed S/W",
    "CapacityStatus",
)


def trim(doc: Iterable[dict[str, Any]], offers: set[tuple[str, str]]) -> list[list[str]]:
    """The Linux No Upfront reserved prices of the (type, region) pairs in `offers`, in the
    file's order (types, regions, then `KEYS`' order)."""
    rows: list[list[str]] = []
    for item in doc:
        for region, by_os in (item.get("pricing") or {}).items():
            if (item["instance_type"], region) not in offers:
                continue
            reserved = (by_os.get("linux") or {}).get("reserved") or {}
            rows += [[item["instance_type"], region, k, reserved[k]] for k in KEYS if k in reserved]
    return rows


def price_list_lines(text: str) -> Iterator[str]:
    """The stored excerpt as EC2 Price List bulk CSV lines (metadata, header, one row a term)."""
    reader = csv.DictReader(io.StringIO(text))
    if tuple(reader.fieldnames or ()) != COLUMNS:
        raise ValueError(f"{STORED.name}: expected columns {COLUMNS}, got {reader.fieldnames}")
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for line in (
        ["FormatVersion", "v1.0"],
        ["Disclaimer", f"rows rebuilt from {SOURCE}"],
        ["Publication Date", f"{DATE}T00:00:00Z"],
        ["Version", COMMIT[:8]],
        ["OfferCode", "AmazonEC2"],
        list(_PRICE_LIST_COLUMNS),
    ):
        writer.writerow(line)
    for n, row in enumerate(reader):
        lease, klass = KEYS.get(
            row["reserved"] or "", ("", "")
        )  # an unknown key: the reader skips it
        sku = f"{row['instance_type']}:{row['region']}"
        writer.writerow(
            [sku, str(n), "Reserved", "", "Hrs", row["linux_hourly"], "USD", lease, "No Upfront"]
            + [klass, row["instance_type"], row["region"], "Shared", "Linux", "NA", "Used"]
        )
    yield from out.getvalue().splitlines(keepends=True)


def terms(path: Path = STORED) -> list[Any]:
    """The stored excerpt's terms, read by `gpuhunt._internal.costs.terms.parse_aws_reserved`."""
    from gpuhunt._internal.costs.terms import parse_aws_reserved

    when = dt.datetime.fromisoformat(DATE).replace(tzinfo=dt.timezone.utc)
    lines = price_list_lines(path.read_text(encoding="utf-8"))
    return parse_aws_reserved(lines, source=SOURCE, observed_at=when)


def snapshot_aws_offers(snapshot: Path) -> set[tuple[str, str]]:
    """The (type, region) pairs of the on-demand AWS offers of a snapshot archive."""
    rows = excerpt.snapshot_rows(snapshot, "aws")
    return {(r["instance_name"], r["location"]) for r in rows if r["spot"] == "False"}


def main() -> int:
    got = excerpt.read_whole(__doc__, PATH, COMMIT, WHOLE_SHA256, STORED)
    if got is None:
        return 1
    whole, snapshot, output = got
    excerpt.write_csv(output, COLUMNS, trim(json.loads(whole), snapshot_aws_offers(snapshot)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
