"""Commitment terms (reserved instances, reservations, committed use) read from the price
lists the collectors already read: the AWS EC2 price list's `TermType=Reserved` rows, the Azure
Retail Prices API's `Reservation` items and the GCP billing catalog's `Commit1Yr`/`Commit3Yr`
SKUs.

A `Term` is never an offer: its price is not what an hour costs without the commitment, so it
lives in a table beside the offers (`formats.terms`), which 0.1.x catalogs never read.

How each source states a term
- AWS: one row for the hourly rate (`Unit` Hrs, 0 for All Upfront) and, for Partial and All
  Upfront, a second row of the same offer term for the fee (`Unit` Quantity, "Upfront Fee").
  The two rows share SKU and OfferTermCode; they are joined on (SKU, OfferTermCode).
- Azure: `unitPrice` of a `Reservation` item is the price of the WHOLE term, not an hour
  (Microsoft's "Azure Retail Prices overview"); it is recorded as an upfront fee with a zero
  hourly rate. Azure also lets the same reservation be paid monthly at the same total.
- GCP: commitments are per resource (vCPU, GiB of RAM, GPU) per hour, not per machine type;
  `parse_gcp_commitments` gives those rates. Pricing a machine type from them needs the
  collector's machine shapes, which is not done yet (docs/costs.md).
"""

from __future__ import annotations

import csv
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from gpuhunt._internal.errors import ProviderError

HOURS_PER_YEAR = 8760  # 365 days: AWS and Azure price a 1-year term over 365 days
TERM_MONTHS = {"1y": 12, "3y": 36}
PAYMENTS = ("none", "partial", "all")  # how much of the term is paid upfront
AWS_LEASES = {"1yr": "1y", "3yr": "3y"}
AWS_PAYMENTS = {"No Upfront": "none", "Partial Upfront": "partial", "All Upfront": "all"}
AZURE_TERMS = {"1 Year": "1y", "3 Years": "3y"}
GCP_TERMS = {"Commit1Yr": "1y", "Commit3Yr": "3y"}
AWS_METADATA_LINES = 5


@dataclass(frozen=True)
class Term:
    """A commitment to one instance type in one location for a fixed term."""

    provider: str
    instance_name: str
    location: str
    term: str  # "1y" | "3y"
    payment: str  # "none" | "partial" | "all" (upfront)
    offering_class: str  # AWS: "standard" | "convertible"; "" where the provider has none
    hourly: float  # billed every hour of the term, used or not
    upfront: float  # paid once at the start
    source: str  # where the price was read (a URL or a file)
    observed_at: datetime | None  # when the source was read (or published, where it says)

    def __post_init__(self) -> None:
        if self.term not in TERM_MONTHS:
            raise ValueError(f"term {self.term!r} is not one of {sorted(TERM_MONTHS)}")
        if self.payment not in PAYMENTS:
            raise ValueError(f"payment {self.payment!r} is not one of {PAYMENTS}")
        for name in ("hourly", "upfront"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} {value!r} is not a price")

    @property
    def months(self) -> int:
        return TERM_MONTHS[self.term]

    @property
    def monthly_cost(self) -> float:
        """What the term costs a month, upfront fee spread over the term (730 h months)."""
        return self.hourly * HOURS_PER_YEAR / 12 + self.upfront / self.months

    @property
    def effective_hourly(self) -> float:
        """The whole term's price over every hour of the term."""
        return self.hourly + self.upfront / (HOURS_PER_YEAR * self.months / 12)


# --------------------------------------------------------------------------------------- AWS

# Column -> the value a term of a plain Linux `RunInstances` has (the on-demand collector's
# choice, so that a term and an on-demand offer price the same thing).
AWS_SELECTION: dict[str, str] = {
    "TermType": "Reserved",
    "Tenancy": "Shared",
    "Operating System": "Linux",
    "CapacityStatus": "Used",
    "Currency": "USD",
}
_AWS_NO_SOFTWARE = ("", "NA")
_AWS_COLUMNS = (
    "SKU",
    "OfferTermCode",
    "Unit",
    "PricePerUnit",
    "LeaseContractLength",
    "PurchaseOption",
    "OfferingClass",
    "Instance Type",
    "Region Code",
    "Pre Installed S/W",
    *AWS_SELECTION,
)


class AWSReservedTap:
    """Collects the reserved terms of an EC2 price list while another reader streams it.

    `watch(lines)` yields every line unchanged (the on-demand parser reads them) and keeps,
    from the rows that carry every value of `selection`, only the fields a term needs: the
    file is read once and the rows are never held. `families` (instance families, e.g. "p5")
    limits the terms kept, as the collector's filter limits its offers.
    """

    def __init__(
        self,
        *,
        source: str,
        observed_at: datetime | None = None,
        selection: Mapping[str, str] = AWS_SELECTION,
        software: tuple[str, ...] = _AWS_NO_SOFTWARE,
        families: frozenset[str] | None = None,
    ) -> None:
        self.source, self.observed_at = source, observed_at
        self.selection, self.software, self.families = dict(selection), software, families
        self.stats: Counter[str] = Counter()
        self._head: list[str] = []
        self._col: dict[str, int] = {}
        self._checks: list[tuple[int, str]] = []
        self._needles = tuple(f'"{v}"' for v in self.selection.values())
        self._hourly: dict[tuple[str, str], tuple[str, str, str, str, str, float]] = {}
        self._fees: dict[tuple[str, str], float] = {}
        self._width = 0

    def watch(self, lines: Iterable[str]) -> Iterator[str]:
        it = iter(lines)
        for line in it:
            yield line
            self._head.append(line)
            if len(self._head) == AWS_METADATA_LINES + 1:
                self._start()
                break
        needles, take = self._needles, self._take
        pending = ""
        for line in it:
            yield line
            if pending:
                line, pending = pending + line, ""
            if line.count('"') & 1:  # a quoted field goes on to the next line
                pending = line
                continue
            for needle in needles:
                if needle not in line:
                    break
            else:
                take(line)

    def _start(self) -> None:
        metadata = {row[0]: row[1] for row in csv.reader(self._head[:-1]) if len(row) >= 2}
        header = next(csv.reader([self._head[-1]]), [])
        self._col = {name: i for i, name in enumerate(header)}
        self._width = len(header)
        missing = [name for name in (*_AWS_COLUMNS, *self.selection) if name not in self._col]
        if missing:
            raise ProviderError(f"aws: the EC2 price list has no {missing[0]!r} column")
        published = metadata.get("Publication Date")
        if self.observed_at is None and published:
            self.observed_at = datetime.fromisoformat(published.replace("Z", "+00:00"))
        self._checks = [(self._col[name], value) for name, value in self.selection.items()]

    def _take(self, record: str) -> None:
        row = next(csv.reader([record]), [])
        col = self._col
        if len(row) != self._width:
            self.stats["malformed"] += 1
            return
        if row[col["Pre Installed S/W"]] not in self.software or any(
            row[i] != v for i, v in self._checks
        ):
            return
        instance_type = row[col["Instance Type"]]
        if self.families is not None and instance_type.split(".", 1)[0] not in self.families:
            return
        key = (row[col["SKU"]], row[col["OfferTermCode"]])
        try:
            price = float(row[col["PricePerUnit"]])
        except ValueError:
            self.stats["malformed"] += 1
            return
        unit = row[col["Unit"]]
        if unit == "Quantity":
            self._fees[key] = price
        elif unit == "Hrs":
            self._hourly[key] = (
                instance_type,
                row[col["Region Code"]],
                row[col["LeaseContractLength"]],
                row[col["PurchaseOption"]],
                row[col["OfferingClass"]],
                price,
            )
        else:
            self.stats["other_unit"] += 1

    def terms(self) -> list[Term]:
        """The terms seen; a term missing its fee row is skipped (`stats["incomplete"]`)."""
        out: list[Term] = []
        for key, (name, location, lease, option, klass, rate) in self._hourly.items():
            term, payment = AWS_LEASES.get(lease), AWS_PAYMENTS.get(option)
            if term is None or payment is None:
                self.stats["unknown_term"] += 1
                continue
            fee = self._fees.get(key)
            if payment != "none" and fee is None:
                self.stats["incomplete"] += 1
                continue
            try:
                out.append(
                    Term(
                        "aws",
                        name,
                        location,
                        term,
                        payment,
                        klass,
                        rate,
                        fee or 0.0,
                        self.source,
                        self.observed_at,
                    )  # fmt: skip
                )
            except ValueError:
                self.stats["malformed"] += 1
        self.stats["terms"] = len(out)
        return sorted(out, key=_order)


def parse_aws_reserved(
    lines: Iterable[str],
    *,
    source: str,
    observed_at: datetime | None = None,
    selection: Mapping[str, str] = AWS_SELECTION,
    software: tuple[str, ...] = _AWS_NO_SOFTWARE,
    stats: Counter[str] | None = None,
) -> list[Term]:
    """The reserved terms of the EC2 price list bulk CSV given as text lines (metadata first).

    `selection` and `software` say which rows count (by default what the on-demand collector
    keeps: Linux, Shared tenancy, no pre-installed software). `observed_at` defaults to the
    file's "Publication Date".
    """
    tap = AWSReservedTap(
        source=source, observed_at=observed_at, selection=selection, software=software
    )
    for _ in tap.watch(lines):
        pass
    if not tap._col:
        tap._start()  # a file shorter than its header: say which column is missing
    found = tap.terms()
    if stats is not None:
        stats.update(tap.stats)
    return found


def _order(term: Term) -> tuple[str, str, str, str, str, str]:
    return (
        term.instance_name,
        term.location,
        term.term,
        term.offering_class,
        term.payment,
        term.source,
    )


# ------------------------------------------------------------------------------------- Azure


def parse_azure_reservations(
    items: Iterable[Mapping[str, Any]],
    *,
    source: str,
    observed_at: datetime | None,
    stats: Counter[str] | None = None,
) -> list[Term]:
    """Terms from Retail Prices API items (other item types are skipped)."""
    stats = Counter() if stats is None else stats
    terms: dict[tuple[str, str, str], Term] = {}
    for item in items:
        if item.get("type") != "Reservation":
            continue
        term = AZURE_TERMS.get(str(item.get("reservationTerm")))
        size, region = item.get("armSkuName"), item.get("armRegionName")
        price = item.get("unitPrice")
        if (
            term is None
            or not size
            or not region
            or item.get("currencyCode") != "USD"
            or not isinstance(price, int | float)
            or isinstance(price, bool)
        ):
            stats["skipped"] += 1
            continue
        try:
            parsed = Term(
                provider="azure",
                instance_name=str(size),
                location=str(region),
                term=term,
                payment="all",
                offering_class="",
                hourly=0.0,
                upfront=float(price),
                source=source,
                observed_at=observed_at,
            )
        except ValueError:
            stats["malformed"] += 1
            continue
        key = (parsed.instance_name, parsed.location, term)
        # Primary and non-primary meters may both answer: the lower price is what one pays.
        if key not in terms or parsed.upfront < terms[key].upfront:
            terms[key] = parsed
    stats["terms"] += len(terms)
    return sorted(terms.values(), key=_order)


# --------------------------------------------------------------------------------------- GCP


@dataclass(frozen=True)
class ResourceCommitment:
    """A GCP committed-use rate for one resource (a vCPU, a GiB of RAM, a GPU) per hour."""

    region: str
    resource_group: str  # the SKU's category.resourceGroup: "CPU", "RAM", "GPU", ...
    description: str  # names the machine series or GPU model ("... Nvidia H100 80GB GPU ...")
    term: str
    hourly: float
    sku_id: str
    effective_time: str


def parse_gcp_commitments(
    skus: Iterable[Mapping[str, Any]], stats: Counter[str] | None = None
) -> list[ResourceCommitment]:
    """`Commit1Yr`/`Commit3Yr` SKUs of the billing catalog, one rate per serving region."""
    stats = Counter() if stats is None else stats
    out: list[ResourceCommitment] = []
    for sku in skus:
        category = sku.get("category") or {}
        term = GCP_TERMS.get(str(category.get("usageType")))
        if term is None:
            continue
        try:
            info = sku["pricingInfo"][0]
            expression = info["pricingExpression"]
            if expression["usageUnit"] != "h":
                stats["not_hourly"] += 1
                continue
            rate = expression["tieredRates"][-1]["unitPrice"]
            if rate.get("currencyCode", "USD") != "USD":
                stats["skipped"] += 1
                continue
            hourly = int(rate.get("units") or 0) + int(rate.get("nanos") or 0) / 1e9
            regions = list(sku["serviceRegions"])
        except (KeyError, IndexError, TypeError, ValueError):
            stats["malformed"] += 1
            continue
        out.extend(
            ResourceCommitment(
                region=str(region),
                resource_group=str(category.get("resourceGroup", "")),
                description=str(sku.get("description", "")),
                term=term,
                hourly=hourly,
                sku_id=str(sku.get("skuId", "")),
                effective_time=str(info.get("effectiveTime", "")),
            )
            for region in regions
        )
    return out
