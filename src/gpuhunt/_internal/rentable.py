"""Offers a person cannot simply rent at the listed price: access-restricted regions, fractions
of a GPU, momentary marketplace listings, locations a third-party catalog enumerates, and spot
prices that are a price list's placeholder rather than a market price.

Restricted regions and fractions are `flags` (a consumer that passes `allowed_flags`, as
dstack does, skips them unless it lists the flag); a fraction's share, how a location is
known and whether an offer is a momentary listing are fields of the offer (`gpu_fraction`,
`location_source`, `momentary`). The query option `include` (`hidden_kind`) leaves out each
kind not asked for; `Catalog.query` without it leaves out nothing (0.1.x), the doors people
use (CLI, HTTP, MCP, the page) give it as "rentable only". Placeholder spot prices are not
offers at all: the collector and the snapshot build leave them out and count them
(`placeholder_spot`).

Pure: no I/O, no imports from above the first layer.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from gpuhunt._internal import registry

# Azure regions Microsoft marks "access restricted to support specific customer scenarios, such
# as in-country disaster recovery": a subscription has to ask for access before it can deploy.
# Source: MicrosoftDocs/azure-docs articles/reliability/regions-list.md @ 04495fc0 (ms.date
# 2025-03-21), the regions marked with `icon-region-restricted.svg`; read 2026-12-07.
AZURE_RESTRICTED_REGIONS_SOURCE = (
    "learn.microsoft.com/azure/reliability/regions-list (MicrosoftDocs/azure-docs "
    "articles/reliability/regions-list.md@04495fc0, ms.date 2025-03-21; read 2026-12-07)"
)
AZURE_RESTRICTED_REGIONS = frozenset(
    {
        "australiacentral2",
        "brazilsoutheast",
        "francesouth",
        "germanynorth",
        "koreasouth",
        "norwaywest",
        "southafricawest",
        "swedensouth",
        "switzerlandwest",
        "uaecentral",
    }
)
AZURE_RESTRICTED_FLAG = "azure-restricted-region"

FRACTIONAL_GPU_FLAG = "fractional-gpu"

# Sizes sold as a share of one GPU, written as one GPU (`gpu_count` 1, as 0.1.x writes them)
# with the share's memory. Keyed by provider and instance name (a full match).
# Azure NVadsA10 v5: NV6ads 1/6, NV12ads 1/3, NV18ads 1/2 of an A10 (NV36ads and up are whole
# GPUs); source: MicrosoftDocs/azure-docs articles/virtual-machines/nva10v5-series.md (ms.date
# 2022-02-01, read 2026-12-07): "starting at 1/6th of a GPU with 4-GiB frame buffer to a full
# A10 GPU with 24-GiB", GPU memory 4, 8, 12 and 24 GiB by size, the shares `providers/azure.py`
# gives memory by (`full_at`). Other sizes with a share of memory (Azure's retired-preview
# NC8ads_A10_v4, 12 GiB) are not here: no document of their share was read.
_FRACTIONS: dict[str, tuple[tuple[re.Pattern[str], Fraction], ...]] = {
    "azure": (
        (re.compile(r"Standard_NV6ads_A10_v5"), Fraction(1, 6)),
        (re.compile(r"Standard_NV12ads_A10_v5"), Fraction(1, 3)),
        (re.compile(r"Standard_NV18ads_A10_v5"), Fraction(1, 2)),
    ),
}


def gpu_fraction(provider: str, instance_name: str) -> Fraction | None:
    """The share of one GPU an instance is sold as (1/6 for Azure's NV6ads_A10_v5), or None
    when it is sold as whole GPUs (or gpuhunt knows no share for it)."""
    for pattern, share in _FRACTIONS.get(provider, ()):
        if pattern.fullmatch(instance_name):
            return share
    return None


def offer_gpu_fraction(item: Any) -> Fraction | None:
    """`gpu_fraction` of a CatalogItem-like object (`provider`, `instance_name`)."""
    return gpu_fraction(getattr(item, "provider", "") or "", item.instance_name)


def fraction_field(provider: str, instance_name: str) -> float | None:
    """`CatalogItem.gpu_fraction` of an instance: its share of one GPU as a float, or None."""
    share = gpu_fraction(provider, instance_name)
    return None if share is None else float(share)


def momentary_field(provider: str) -> bool | None:
    """`CatalogItem.momentary` of a provider's offers: True for a marketplace of other people's
    hosts (`registry.ProviderSpec.listing_cadence_hours`), else None (not said)."""
    try:
        return True if registry.spec(provider).momentary else None
    except ValueError:  # a provider the registry does not know (a caller's own)
        return None


def offer_facts(provider: str, instance_name: str) -> dict[str, Any]:
    """The fields this module gives an offer, as `CatalogItem` keywords (for collectors and
    the snapshot build): `gpu_fraction` and `momentary`."""
    return {
        "gpu_fraction": fraction_field(provider, instance_name),
        "momentary": momentary_field(provider),
    }


def listing_cadence(provider: str) -> dt.timedelta | None:
    """How long a momentary listing of `provider` stays meaningful (None: not a marketplace of
    hosts, or a provider the registry does not know: its listings never age out)."""
    try:
        hours = registry.spec(provider).listing_cadence_hours
    except ValueError:
        return None
    return None if hours is None else dt.timedelta(hours=hours)


# The kinds `include` names (`query.spec.INCLUDE_KINDS`), each a test of one offer's fields.
RESTRICTED_FLAGS = frozenset({AZURE_RESTRICTED_FLAG})


def is_restricted(flags: Iterable[str]) -> bool:
    return any(f in RESTRICTED_FLAGS for f in flags)


def is_fractional(gpu_fraction_value: float | None, flags: Iterable[str]) -> bool:
    # The flag too: a catalog written before the field carries only the flag.
    return gpu_fraction_value is not None or FRACTIONAL_GPU_FLAG in flags


def is_stale(
    provider: str, momentary: bool | None, observed_at: dt.datetime | None, now: dt.datetime
) -> bool:
    """A momentary listing older than its provider's cadence, or of unknown age."""
    if not momentary:
        return False
    cadence = listing_cadence(provider)
    if cadence is None:
        return False
    return observed_at is None or observed_at < now - cadence


def hidden_kind(item: Any, hidden: Iterable[str], now: dt.datetime | None = None) -> str | None:
    """The first kind of `hidden` (`query.spec.INCLUDE_KINDS`) that `item` is, or None."""
    for kind in hidden:
        if kind == "restricted" and is_restricted(item.flags):
            return kind
        if kind == "fractional" and is_fractional(item.gpu_fraction, item.flags):
            return kind
        if kind == "stale-listings" and is_stale(
            item.provider,
            item.momentary,
            item.observed_at,
            now or dt.datetime.now(dt.timezone.utc),
        ):
            return kind
        if kind == "enumerated" and item.location_source == "enumerated":
            return kind
    return None


def is_restricted_location(provider: str, location: str) -> bool:
    """Whether `location` of `provider` is one its provider restricts (Azure's list)."""
    return provider == "azure" and location in AZURE_RESTRICTED_REGIONS


def shape_kind(item: Any, now: dt.datetime) -> str:
    """The page's `hidden` of an offer's shape: the kind of `query.spec.INCLUDE_KINDS` it is
    but for its region ("fractional", "stale-listings", "enumerated"), or "" (restricted
    regions are the page's locations' own column, `is_restricted_location`)."""
    return hidden_kind(item, ("fractional", "stale-listings", "enumerated"), now) or ""


def offer_flags(provider: str, instance_name: str, location: str) -> list[str]:
    """The flags this module adds to an offer, for collectors and the snapshot build."""
    flags = []
    if provider == "azure" and location in AZURE_RESTRICTED_REGIONS:
        flags.append(AZURE_RESTRICTED_FLAG)
    if gpu_fraction(provider, instance_name) is not None:
        flags.append(FRACTIONAL_GPU_FLAG)
    return flags


# ---------------------------------------------------------------------------------------------
# Placeholder spot prices

# The rule (docs/decisions.md, "Placeholder spot prices"): in a provider whose spot prices are
# set per size, a region is a placeholder when at least PLACEHOLDER_MIN_PAIRS sizes are priced
# both spot and on demand there, at least PLACEHOLDER_SHARE of them have the same spot/on-demand
# ratio (to 3 decimals), and that ratio is not the provider's most common ratio over all its
# regions (a provider-wide fixed discount, as Azure's GPU spot meters have, is a price).
PLACEHOLDER_MIN_PAIRS = 10
PLACEHOLDER_SHARE = 0.9
# GCP is not here: it prices spot per resource (vCPU, memory, GPU) with one discount per region,
# so a fixed share across a region is how it prices, not a placeholder.
PER_SIZE_SPOT_PROVIDERS = frozenset({"aws", "azure"})
PLACEHOLDER_REASON = (
    "placeholder spot prices: the region's spot prices are one fixed share of on-demand "
    "across the board, unlike the provider's other regions (docs/decisions.md)"
)


@dataclass
class PlaceholderSpot:
    """What `drop_placeholder_spot` left out: per region, its ratio and how many spot offers."""

    regions: dict[str, float] = field(default_factory=dict)  # region -> the fixed ratio
    dropped: Counter[str] = field(default_factory=Counter)  # region -> spot offers left out

    @property
    def count(self) -> int:
        return sum(self.dropped.values())

    def manifest_entry(self) -> dict[str, Any]:
        """The manifest's `left_out.placeholder_spot` of a provider."""
        return {
            "count": self.count,
            "reason": PLACEHOLDER_REASON,
            "regions": {
                r: {"ratio": self.regions[r], "offers": self.dropped[r]}
                for r in sorted(self.regions)
            },
        }


def _ratio_key(item: Any) -> tuple[str, str, int]:
    return (item.instance_name, item.location, item.gpu_count)


def placeholder_regions(provider: str, items: Iterable[Any]) -> dict[str, float]:
    """Regions of `provider` whose spot prices are placeholders (the rule above), with the
    ratio of each; {} for a provider outside PER_SIZE_SPOT_PROVIDERS."""
    if provider not in PER_SIZE_SPOT_PROVIDERS:
        return {}
    prices: dict[tuple[str, str, int], dict[bool, float]] = defaultdict(dict)
    for i in items:
        if i.price and i.price > 0:
            seen = prices[_ratio_key(i)]
            seen[i.spot] = min(seen.get(i.spot, i.price), i.price)
    ratios: dict[str, Counter[float]] = defaultdict(Counter)
    for (_, region, _), both in prices.items():
        if True in both and False in both:
            ratios[region][round(both[True] / both[False], 3)] += 1
    overall: Counter[float] = Counter()
    for counts in ratios.values():
        overall.update(counts)
    if not overall:
        return {}
    usual = overall.most_common(1)[0][0]
    found = {}
    for region, counts in ratios.items():
        pairs = sum(counts.values())
        ratio, same = counts.most_common(1)[0]
        if pairs >= PLACEHOLDER_MIN_PAIRS and same >= PLACEHOLDER_SHARE * pairs and ratio != usual:
            found[region] = ratio
    return found


def drop_placeholder_spot(provider: str, items: list[Any]) -> tuple[list[Any], PlaceholderSpot]:
    """`items` without the spot offers of placeholder regions, and what was left out."""
    report = PlaceholderSpot(placeholder_regions(provider, items))
    kept = []
    for i in items:
        if i.spot and i.location in report.regions:
            report.dropped[i.location] += 1
        else:
            kept.append(i)
    return kept, report
