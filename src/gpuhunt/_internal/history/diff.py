"""What changed between two catalogs (pure: provider CSVs in, a `CatalogDiff` out).

Offers are matched by key (provider, instance, location, spot), each at its cheapest price
in its CSV. An offer only in the new catalog is added, only in the old one removed, in both at
another price changed. Changes are listed largest (by percent) first; the summary counts them
per provider and GPU model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpuhunt._internal.history.daily import norm_gpu
from gpuhunt._internal.history.table import Offer, offers_of


@dataclass(frozen=True)
class Listed:
    """An offer as the diff reports it."""

    provider: str
    instance_name: str
    location: str
    spot: bool
    gpu_name: str | None
    gpu_count: int
    price: float

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class PriceChange:
    offer: Listed  # at the new price
    old_price: float

    @property
    def new_price(self) -> float:
        return self.offer.price

    @property
    def change(self) -> float:
        return round(self.new_price - self.old_price, 6)

    @property
    def percent(self) -> float | None:
        if not self.old_price:
            return None
        return round(100 * (self.new_price - self.old_price) / self.old_price, 2)

    def to_dict(self) -> dict[str, Any]:
        d = self.offer.to_dict()
        price = d.pop("price")
        d.update(old_price=self.old_price, new_price=price, change=self.change)
        d["percent"] = self.percent
        return d


@dataclass
class GroupSummary:
    provider: str
    gpu: str  # GPU model, "-" for offers without GPUs
    added: int = 0
    removed: int = 0
    increased: int = 0
    decreased: int = 0
    largest: PriceChange | None = None  # by |percent|

    @property
    def changed(self) -> int:
        return self.increased + self.decreased

    def to_dict(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "gpu": self.gpu,
            "added": self.added,
            "removed": self.removed,
            "increased": self.increased,
            "decreased": self.decreased,
            "largest_change_percent": self.largest.percent if self.largest else None,
        }


@dataclass
class CatalogDiff:
    old: str  # what was compared: a version, folder, zip or URL
    new: str
    added: list[Listed] = field(default_factory=list)
    removed: list[Listed] = field(default_factory=list)
    changed: list[PriceChange] = field(default_factory=list)  # largest |percent| first
    summary: list[GroupSummary] = field(default_factory=list)
    old_providers: list[str] = field(default_factory=list)
    new_providers: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "old": self.old,
            "new": self.new,
            "old_providers": self.old_providers,
            "new_providers": self.new_providers,
            "added": [o.to_dict() for o in self.added],
            "removed": [o.to_dict() for o in self.removed],
            "changed": [c.to_dict() for c in self.changed],
            "summary": [g.to_dict() for g in self.summary],
        }


def _listed(provider: str, o: Offer) -> Listed:
    return Listed(provider, o.instance_name, o.location, o.spot, o.gpu_name, o.gpu_count, o.price)


def _magnitude(c: PriceChange) -> tuple[float, float]:
    pct = c.percent
    return (abs(pct) if pct is not None else float("inf"), abs(c.change))


def compare(
    old: dict[str, bytes], new: dict[str, bytes], *, old_name: str, new_name: str
) -> CatalogDiff:
    """Compare two catalogs given as provider -> catalog CSV."""
    result = CatalogDiff(old_name, new_name, old_providers=sorted(old), new_providers=sorted(new))
    groups: dict[tuple[str, str], GroupSummary] = {}

    def group(o: Listed) -> GroupSummary:
        gpu = norm_gpu(o.gpu_name) if o.gpu_count else None
        k = (o.provider, gpu or "-")
        if k not in groups:
            groups[k] = GroupSummary(*k)
        return groups[k]

    for provider in sorted(set(old) | set(new)):
        before = offers_of(old[provider], provider) if provider in old else {}
        after = offers_of(new[provider], provider) if provider in new else {}
        for key, o in after.items():
            was = before.get(key)
            if was is None:
                result.added.append(_listed(provider, o))
                group(result.added[-1]).added += 1
            elif was.price != o.price:
                c = PriceChange(_listed(provider, o), was.price)
                result.changed.append(c)
                g = group(c.offer)
                if c.change > 0:
                    g.increased += 1
                else:
                    g.decreased += 1
                if g.largest is None or _magnitude(c) > _magnitude(g.largest):
                    g.largest = c
        for key, o in before.items():
            if key not in after:
                result.removed.append(_listed(provider, o))
                group(result.removed[-1]).removed += 1
    result.changed.sort(key=lambda c: (tuple(-x for x in _magnitude(c)), _order(c.offer)))
    result.added.sort(key=_order)
    result.removed.sort(key=_order)
    result.summary = sorted(
        groups.values(),
        key=lambda g: (
            tuple(-x for x in _magnitude(g.largest)) if g.largest else (0.0, 0.0),
            -(g.added + g.removed),
            g.provider,
            g.gpu,
        ),
    )
    return result


def _order(o: Listed) -> tuple[Any, ...]:
    return (o.provider, o.instance_name, o.location, o.spot)
