"""GCP committed-use (1- and 3-year) prices of GPU machine types from Cyclenerd's `pricing.yml`
(the file the GCP part's A2/A3/G2/G4 on-demand prices come from) -> `Term`s of the snapshot's
GCP offers.

The stored input is `data/cyclenerd_pricing_fd66b26_terms_excerpt.csv` (cut by `main` below
from the whole file; its README entry says how): per GPU machine type and region of the
snapshot's GCP on-demand offers, `cost.<region>.month_1y` and `month_3y` as YAML reads them
(Python's shortest repr of the float, the file's digits).
Decisions:

- Cyclenerd states a commitment as a month's price of the whole machine (its `month` is `hour`
  x 730 on every row of the file); a term bills every hour of its months with nothing upfront
  (`payment` none), so the term's hourly rate is the month's price / 730, and the term's own
  monthly cost (`Term.monthly_cost`, 730-hour months) is the file's number again.
- GCP prices a machine type alike in every zone of a region; the snapshot's GCP offers are per
  zone (G4: per region), so each zone offer of a priced region gets its region's terms.
- Only the A2, A3, G2 and G4 types (`FAMILIES`), whose on-demand offers are Cyclenerd's whole-
  machine prices: an N1 offer is an N1 machine with GPUs attached (anycloud's price), and
  Cyclenerd's N1 commitment prices the machine without them.
- No library reader takes Cyclenerd's per-machine totals (`parse_gcp_commitments` reads billing
  SKUs per resource), so the terms are made with `Term`, which checks them.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

if not __package__:  # run as a script: the repository root makes `scripts` importable
    sys.path.insert(0, str(ROOT))
from scripts.snapshot_sources import excerpt  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"
REPOSITORY = "Cyclenerd/google-cloud-pricing-cost-calculator"
PATH = "pricing.yml"
COMMIT = "fd66b26ff84fee5cdd94f341ea89206e76c06b99"
GENERATED = "2026-07-30T06:13:17+00:00"  # the file's own `about.generated` / `timestamp`
WHOLE_SHA256 = "f57ef17c7c01f10e5fd9115dca3ef4fde62eb088edc053af59e6ef27905f4a11"
STORED = DATA / "cyclenerd_pricing_fd66b26_terms_excerpt.csv"
COLUMNS = ("machine_type", "region", "month_1y", "month_3y")
KEYS = {"month_1y": "1y", "month_3y": "3y"}
HOURS_PER_MONTH = 730  # Cyclenerd's `month` is `hour` x 730
SOURCE = f"{REPOSITORY}:{PATH}@{COMMIT[:7]}"


FAMILIES = ("a2", "a3", "g2", "g4")  # the GPU machine types whose offers are Cyclenerd's prices


def region_of(location: str) -> str:
    """A zone's region ("us-central1-a" -> "us-central1"); a region is its own."""
    head, _, tail = location.rpartition("-")
    return head if head and len(tail) == 1 else location


def trim(doc: Mapping[str, Any], offers: set[tuple[str, str]]) -> list[list[str]]:
    """The `month_1y`/`month_3y` of every (machine type, region) of the zone offers `offers`,
    sorted; a region with neither is left out, a missing one is ""."""
    instances = doc["compute"]["instance"]
    wanted = sorted({(name, region_of(zone)) for name, zone in offers})
    rows = []
    for name, region in wanted:
        cost = ((instances.get(name) or {}).get("cost") or {}).get(region) or {}
        values = [repr(cost[k]) if k in cost else "" for k in KEYS]
        if any(values):
            rows.append([name, region, *values])
    return rows


def terms(offers: Iterable[tuple[str, str]], path: Path = STORED) -> list[Any]:
    """The stored excerpt's terms of the zone offers `offers` ((machine type, zone) pairs)."""
    from gpuhunt._internal.costs.terms import Term

    reader = csv.DictReader(io.StringIO(path.read_text(encoding="utf-8")))
    if tuple(reader.fieldnames or ()) != COLUMNS:
        raise ValueError(f"{path.name}: expected columns {COLUMNS}, got {reader.fieldnames}")
    by_region = {(r["machine_type"], r["region"]): r for r in reader}
    when = dt.datetime.fromisoformat(GENERATED)
    out = []
    for name, zone in sorted(set(offers)):
        row = by_region.get((name, region_of(zone)))
        for key, term in KEYS.items():
            if row and row[key]:
                hourly = float(row[key]) / HOURS_PER_MONTH
                out.append(Term("gcp", name, zone, term, "none", "", hourly, 0.0, SOURCE, when))
    return out


def snapshot_gcp_offers(snapshot: Path) -> set[tuple[str, str]]:
    """The (machine type, zone) pairs of the on-demand GCP GPU offers of a snapshot archive."""
    rows = excerpt.snapshot_rows(snapshot, "gcp")
    return {
        (r["instance_name"], r["location"])
        for r in rows
        if r["spot"] == "False" and r["instance_name"].split("-", 1)[0] in FAMILIES
    }


def main() -> int:
    import yaml

    got = excerpt.read_whole(__doc__, PATH, COMMIT, WHOLE_SHA256, STORED)
    if got is None:
        return 1
    whole, snapshot, output = got
    excerpt.write_csv(output, COLUMNS, trim(yaml.safe_load(whole), snapshot_gcp_offers(snapshot)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
