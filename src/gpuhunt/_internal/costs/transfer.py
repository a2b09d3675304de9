"""Internet egress and storage prices per provider (and region where it differs), each with
its source and the date it was read, and a job's total: compute + egress + storage.

Unknown stays unknown: a provider (or region) without an entry has no price, and a total with
an unknown part is unknown (NaN), never a total that counts the part as free. A provider that
documents free egress has an entry saying so, with its source, like any other price.

Assumptions of the arithmetic (docs/costs.md says the same):
- egress is priced as one billing month's volume, with the provider's free allowance unused by
  anything else (AWS counts the allowance across all of an account's services);
- storage is provisioned for the job's hours and billed per GB-month prorated by the hour, a
  month being 730 hours (8760 / 12); the price band is chosen by the volume's size;
- tiers beyond the last documented one are unknown: an egress volume that reaches past them has
  an unknown cost.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt

HOURS_PER_MONTH = 730.0
INF = float("inf")


@dataclass(frozen=True)
class Source:
    url: str
    read_on: str  # ISO date the figure was read
    note: str = ""  # the page's own date, or how it was read


@dataclass(frozen=True)
class EgressPrice:
    """Internet egress per GB: `free_gb` a month free, then `tiers` of (up to GB, $/GB) in
    order; the last tier's bound is how far the source documents (inf: no bound)."""

    provider: str
    region: str | None  # None: every region of the provider without an entry of its own
    free_gb: float
    tiers: tuple[tuple[float, float], ...]
    source: Source


@dataclass(frozen=True)
class StoragePrice:
    """Block or network storage per GB-month for volumes of [min_gb, max_gb) GB."""

    provider: str
    region: str | None
    product: str
    per_gb_month: float
    source: Source
    min_gb: float = 0.0
    max_gb: float = INF


_AWS_DTO = Source(
    "https://wring.co/blog/aws-data-transfer-pricing-guide",
    "2026-12-07",
    "third-party summary citing 'AWS Data Transfer Pricing, 2026'; that tiers count all of an "
    "account's services: https://aws.amazon.com/about-aws/global-infrastructure/global-network/faqs",
)
_AWS_EBS = Source(
    "https://github.com/aws/agent-toolkit-for-aws/blob/main/skills/core-skills/"
    "aws-billing-and-cost-management/references/ebs-optimization.md",
    "2026-12-07",
    "AWS's own reference, 'us-east-1 approximate as of early 2026' (gp3 $0.08 vs gp2 $0.10)",
)
_GCP_DTO = Source(
    "https://cloud.google.com/vpc/network-pricing",
    "2026-12-07",
    "as transcribed on 2026-09-20 (api-evangelist/google-cloud-vpc plans): Premium Tier to "
    "North America, 0-1 GiB free, 1-1,024 GiB $0.12/GiB; higher tiers not read",
)
_GCP_PD = Source(
    "https://cloud.google.com/products/calculator",
    "2026-12-07",
    "a calculator estimate of 2023-05-18 for Iowa (us-central1): zonal balanced PD 30 GiB "
    "USD 3.00, zonal SSD PD 280 GiB USD 47.60 (developmentseed/bioacoustics-api files/11512854)",
)
_LAMBDA = Source(
    "https://docs.lambda.ai/public-cloud/billing",
    "2026-12-07",
    "'you are not charged for ingress or egress'; its filesystem rate is an example that "
    "'might not reflect current pricing', so storage is left unknown",
)
_RUNPOD_POD = Source(
    "https://docs.runpod.io/pods/pricing",
    "2026-12-07",
    "'no additional fees for data ingress or egress'",
)
_RUNPOD_VOLUME = Source(
    "https://docs.runpod.io/get-started/billing-information",
    "2026-12-07",
    "network volumes $0.07/GB/month below 1 TB, $0.05 above (read as the rate of the whole "
    "volume by its size)",
)
GIB = 1.073741824  # GB per GiB: GCP prices per GiB

EGRESS: tuple[EgressPrice, ...] = (
    EgressPrice(
        "aws",
        "us-east-1",
        100.0,
        ((10_240.0, 0.09), (51_200.0, 0.085), (153_600.0, 0.07), (INF, 0.05)),
        _AWS_DTO,
    ),
    EgressPrice("gcp", None, 1.0 * GIB, ((1024.0 * GIB, 0.12 / GIB),), _GCP_DTO),
    EgressPrice("lambdalabs", None, 0.0, ((INF, 0.0),), _LAMBDA),
    EgressPrice("runpod", None, 0.0, ((INF, 0.0),), _RUNPOD_POD),
)
STORAGE: tuple[StoragePrice, ...] = (
    StoragePrice("aws", "us-east-1", "EBS gp3", 0.08, _AWS_EBS),
    StoragePrice("gcp", "us-central1", "zonal balanced PD", 0.10 / GIB, _GCP_PD),
    StoragePrice("runpod", None, "network volume", 0.07, _RUNPOD_VOLUME, max_gb=1000.0),
    StoragePrice("runpod", None, "network volume", 0.05, _RUNPOD_VOLUME, min_gb=1000.0),
)


def egress_price(provider: str, region: str) -> EgressPrice | None:
    """The region's own entry, else the provider's, else None (unknown)."""
    return _pick(EGRESS, provider, region)


def storage_price(provider: str, region: str, size_gb: float) -> StoragePrice | None:
    sized = tuple(p for p in STORAGE if p.min_gb <= size_gb < p.max_gb)
    return _pick(sized, provider, region)


P = TypeVar("P", EgressPrice, StoragePrice)


def _pick(table: tuple[P, ...], provider: str, region: str) -> P | None:
    own = [p for p in table if p.provider == provider and p.region == region]
    anywhere = [p for p in table if p.provider == provider and p.region is None]
    found = own or anywhere
    return found[0] if found else None


def egress_cost(price: EgressPrice | None, gb: float) -> float:
    """The month's egress bill for `gb` GB; NaN if unknown (no price, or past the tiers)."""
    if gb < 0:
        raise ValueError(f"egress must be 0 GB or more, got {gb!r}")
    if price is None:
        return float("nan")
    left, total, floor = gb - price.free_gb, 0.0, price.free_gb
    for bound, per_gb in price.tiers:
        if left <= 0:
            return total
        span = min(left, bound - floor)
        total += span * per_gb
        left -= span
        floor = bound
    return total if left <= 0 else float("nan")


@dataclass(frozen=True)
class JobCosts:
    """Per offer; NaN where a part is unknown (and then in `total` too)."""

    compute: npt.NDArray[np.float64]
    egress: npt.NDArray[np.float64]
    storage: npt.NDArray[np.float64]
    total: npt.NDArray[np.float64]


def job_costs(
    providers: npt.ArrayLike,
    regions: npt.ArrayLike,
    hourly_prices: npt.ArrayLike,
    *,
    job_hours: float,
    egress_gb: float = 0.0,
    storage_gb: float = 0.0,
) -> JobCosts:
    """compute (price x job_hours) + egress (tiered) + storage (GB-month over the job's hours).

    Prices are looked up once per distinct (provider, region), not per offer. A part asked
    for as 0 GB costs 0 whatever the provider documents."""
    if not job_hours > 0:
        raise ValueError(f"job_hours must be more than 0, got {job_hours!r}")
    if egress_gb < 0 or storage_gb < 0:
        raise ValueError(
            f"egress_gb and storage_gb must be 0 or more, got {egress_gb}, {storage_gb}"
        )
    prices = np.asarray(hourly_prices, dtype=np.float64)
    keys = np.char.add(
        np.char.add(np.asarray(providers, dtype=str), "\x1f"), np.asarray(regions, dtype=str)
    )
    if keys.shape != prices.shape:
        raise ValueError(
            f"providers, regions and prices differ in length: {keys.shape}, {prices.shape}"
        )
    unique, inverse = np.unique(keys, return_inverse=True)
    egress_by_key = np.empty(len(unique))
    storage_by_key = np.empty(len(unique))
    for i, key in enumerate(unique):  # distinct (provider, region) pairs: a few dozen
        provider, region = str(key).split("\x1f", 1)
        egress_by_key[i] = (
            egress_cost(egress_price(provider, region), egress_gb) if egress_gb else 0.0
        )
        stored = storage_price(provider, region, storage_gb)
        storage_by_key[i] = (
            0.0
            if not storage_gb
            else float("nan")
            if stored is None
            else storage_gb * stored.per_gb_month * job_hours / HOURS_PER_MONTH
        )
    compute = prices * job_hours
    egress = egress_by_key[inverse].reshape(prices.shape)
    storage = storage_by_key[inverse].reshape(prices.shape)
    return JobCosts(compute, egress, storage, compute + egress + storage)
