"""The plausibility gate of `gpuhunt catalog build`: is a fresh provider CSV believable next to
the one it would replace?

A CSV can be well formed and pass its integrity tests and still be a bad collection: a region
whose API timed out, an SDK that silently returns one page, prices parsed in cents. Such a CSV is
worse than yesterday's, so the build keeps yesterday's (carried over, with the reason) unless the
maintainer accepts the change explicitly (`--accept PROVIDER` / `--accept-all`, or the committed
accept file), or the next collections confirm it (`publish.build`: consecutive collections that
agree with each other publish a real change by the `confirmations`-th one). A change beyond the
hard limits (`hard_price_ratio`, `hard_offer_drop`) is a broken collection that confirmations
never publish.

Pure: bytes in, reasons out. The build decides what to do with them (`publish.build.build_catalog`);
the thresholds live in the provider registry (`ProviderSpec.gate`), documented in
docs/pipeline.md.
"""

from __future__ import annotations

import io
import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from gpuhunt._internal import registry
from gpuhunt._internal.formats.csv import iter_rows

# How many examples a reason names; the rest is a count.
EXAMPLES = 3


class _Every:
    """`accept=` value of `build.build_catalog` for `--accept-all`."""

    def __contains__(self, provider: object) -> bool:
        return True

    def __repr__(self) -> str:
        return "EVERY_PROVIDER"


EVERY_PROVIDER = _Every()


@dataclass(frozen=True)
class Thresholds:
    """When a fresh CSV is implausible next to the previous one.

    - `max_offer_drop`: the share of offers that may disappear (0.5: a CSV with fewer than half
      the previous offers is refused).
    - `max_price_ratio`: how far the median price of an instance type may move, either way
      (2.0: doubling or halving is refused). Compared per (instance type, spot), over the types
      both CSVs have, so a new type or a lost one never counts here.
    - `regions_may_vanish` / `gpus_may_vanish`: whether a region, or a GPU model, that the
      previous CSV had may be missing. Hyperscalers' price lists do not lose a region or a GPU
      overnight; marketplaces lose both whenever the last machine of a kind is rented out.
    """

    max_offer_drop: float = 0.5
    max_price_ratio: float = 2.0
    regions_may_vanish: bool = False
    gpus_may_vanish: bool = False
    hard_price_ratio: float = 10.0
    hard_offer_drop: float = 0.9

    def __post_init__(self) -> None:
        if not 0.0 <= self.max_offer_drop <= 1.0:
            raise ValueError(f"max_offer_drop must be within [0, 1], not {self.max_offer_drop}")
        if not self.max_price_ratio > 1.0:
            raise ValueError(f"max_price_ratio must be above 1, not {self.max_price_ratio}")
        if not self.hard_price_ratio > 1.0 or not 0.0 <= self.hard_offer_drop <= 1.0:
            raise ValueError(
                f"hard_price_ratio must be above 1 and hard_offer_drop within [0, 1], not "
                f"{self.hard_price_ratio}, {self.hard_offer_drop}"
            )


def limits(provider: str) -> Thresholds:
    """The provider's thresholds, from its registry entry."""
    s = registry.spec(provider)
    return Thresholds(
        max_offer_drop=s.max_offer_drop,
        max_price_ratio=s.max_price_ratio,
        regions_may_vanish=s.regions_may_vanish,
        gpus_may_vanish=s.gpus_may_vanish,
        hard_price_ratio=s.hard_price_ratio,
        hard_offer_drop=s.hard_offer_drop,
    )


@dataclass
class Summary:
    """What the gate compares of one CSV."""

    offers: int
    regions: set[str]
    gpus: set[str]
    median_price: dict[tuple[str, bool], float]  # (instance type, spot) -> median price


def summarize(csv: bytes, provider: str) -> Summary:
    """The gate's view of a CSV; malformed rows are ignored (the format check reports them)."""
    text = csv.decode("utf-8", "replace")
    prices: dict[tuple[str, bool], list[float]] = defaultdict(list)
    regions: set[str] = set()
    gpus: set[str] = set()
    offers = 0
    for row in iter_rows(io.StringIO(text, newline=""), provider=provider, quiet=True):
        offers += 1
        regions.add(row.location)
        if row.gpu_count and row.gpu_name:
            gpus.add(row.gpu_name)
        prices[(row.instance_name, row.spot)].append(row.price)
    median = {key: statistics.median(values) for key, values in prices.items()}
    return Summary(offers, regions, gpus, median)


def compare(previous: Summary, fresh: Summary, limits: Thresholds) -> list[str]:
    """Why `fresh` is not believable next to `previous` (empty: it is)."""
    reasons: list[str] = []
    if previous.offers:
        drop = 1.0 - fresh.offers / previous.offers
        if drop > limits.max_offer_drop:
            reasons.append(
                f"offers dropped by {drop:.0%} ({previous.offers} -> {fresh.offers}; "
                f"the limit is {limits.max_offer_drop:.0%})"
            )
    if not limits.regions_may_vanish:
        gone = previous.regions - fresh.regions
        if gone:
            reasons.append(f"{_count(gone, 'region')} vanished: {_examples(gone)}")
    if not limits.gpus_may_vanish:
        gone = previous.gpus - fresh.gpus
        if gone:
            reasons.append(f"{_count(gone, 'GPU model')} vanished: {_examples(gone)}")
    moved: list[tuple[float, str]] = []
    for key, old in previous.median_price.items():
        new = fresh.median_price.get(key)
        if new is None or old <= 0 or new <= 0:
            continue
        ratio = new / old
        if ratio > limits.max_price_ratio or ratio < 1.0 / limits.max_price_ratio:
            name, spot = key
            label = f"{name}{' (spot)' if spot else ''} {old:g} -> {new:g}"
            moved.append((max(ratio, 1.0 / ratio), label))
    if moved:
        moved.sort(reverse=True)
        shown = ", ".join(label for _, label in moved[:EXAMPLES])
        more = f" and {len(moved) - EXAMPLES} more" if len(moved) > EXAMPLES else ""
        reasons.append(
            f"median price of {_count(moved, 'instance type')} moved beyond "
            f"x{limits.max_price_ratio:g}: {shown}{more}"
        )
    return reasons


def broken(previous: Summary, fresh: Summary, limits: Thresholds) -> list[str]:
    """Why `fresh` is a broken collection next to `previous`, beyond any real change: the hard
    limits. Agreeing collections never publish such a CSV; only an operator's accept does."""
    # Never stricter than the soft limits: what those let through is not broken.
    hard = Thresholds(
        max_offer_drop=max(limits.hard_offer_drop, limits.max_offer_drop),
        max_price_ratio=max(limits.hard_price_ratio, limits.max_price_ratio),
        regions_may_vanish=True,
        gpus_may_vanish=True,
        hard_price_ratio=limits.hard_price_ratio,
        hard_offer_drop=limits.hard_offer_drop,
    )
    return compare(previous, fresh, hard)


@dataclass
class Verdict:
    """The gate's view of a fresh CSV next to a reference one: `reason` (None: plausible) and,
    when it is beyond the hard limits, `broken` (why it can never be confirmed)."""

    reason: str | None
    broken: str | None = None


def judge(
    provider: str,
    reference: bytes | None,
    fresh: bytes,
    thresholds: Thresholds | None = None,
    *,
    against: str = "the previous CSV",
) -> Verdict:
    if reference is None:
        return Verdict(None)
    thresholds = thresholds if thresholds is not None else limits(provider)
    before, now = summarize(reference, provider), summarize(fresh, provider)
    reasons = compare(before, now, thresholds)
    if not reasons:
        return Verdict(None)
    hard = broken(before, now, thresholds)
    return Verdict(
        f"implausible next to {against}: " + "; ".join(reasons),
        "; ".join(hard) if hard else None,
    )


def review(
    provider: str, previous: bytes | None, fresh: bytes, thresholds: Thresholds | None = None
) -> str | None:
    """Why the build should keep `previous` instead of `fresh`, or None. Without a previous CSV
    (a new provider, the first build) there is nothing to compare with."""
    if previous is None:
        return None
    thresholds = thresholds if thresholds is not None else limits(provider)
    reasons = compare(summarize(previous, provider), summarize(fresh, provider), thresholds)
    if not reasons:
        return None
    return "implausible next to the previous CSV: " + "; ".join(reasons)


def _count(things: Iterable[object], noun: str) -> str:
    n = len(list(things))
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _examples(names: set[str]) -> str:
    shown = sorted(names)[:EXAMPLES]
    more = f" and {len(names) - EXAMPLES} more" if len(names) > EXAMPLES else ""
    return ", ".join(shown) + more
