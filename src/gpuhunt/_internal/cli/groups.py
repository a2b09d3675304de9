"""`gpuhunt query --group-by gpu` (pure): one row per GPU model and count with its cheapest
on-demand and spot offers; groups ordered by their cheapest price, so the GPUs people look for
are not cut off by the alphabet."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from gpuhunt._internal.cli.layout import Column, _num, price, table
from gpuhunt._internal.models import CatalogItem


@dataclass
class GpuGroup:
    """Offers of one GPU model (name and memory) in one count."""

    gpu_name: str
    gpu_memory: float | None
    gpu_count: int
    offers: int = 0
    providers: set[str] = field(default_factory=set)
    on_demand: CatalogItem | None = None  # the cheapest
    spot: CatalogItem | None = None  # the cheapest

    def add(self, i: CatalogItem) -> None:
        self.offers += 1
        self.providers.add(i.provider)
        if i.spot:
            if self.spot is None or i.price < self.spot.price:
                self.spot = i
        elif self.on_demand is None or i.price < self.on_demand.price:
            self.on_demand = i

    @property
    def cheapest(self) -> float:
        """The lower of its cheapest on-demand and spot prices."""
        return min(i.price for i in (self.on_demand, self.spot) if i is not None)

    def as_dict(self) -> dict[str, Any]:
        def cheapest(i: CatalogItem | None) -> dict[str, Any] | None:
            if i is None:
                return None
            return {"price": i.price, "provider": i.provider, "location": i.location}

        return {
            "gpu_name": self.gpu_name,
            "gpu_memory": self.gpu_memory,
            "gpu_count": self.gpu_count,
            "on_demand": cheapest(self.on_demand),
            "spot": cheapest(self.spot),
            "offers": self.offers,
            "providers": len(self.providers),
        }

    def flat(self) -> dict[str, Any]:
        """`as_dict` with the cheapest offers spread into columns (for CSV)."""
        d = self.as_dict()
        out = {k: d[k] for k in ("gpu_name", "gpu_memory", "gpu_count")}
        for kind in ("on_demand", "spot"):
            for k in ("price", "provider", "location"):
                out[f"{kind}_{k}"] = (d[kind] or {}).get(k)
        out["offers"], out["providers"] = d["offers"], d["providers"]
        return out


GROUP_CSV_FIELDS = [
    "gpu_name",
    "gpu_memory",
    "gpu_count",
    *(f"{kind}_{k}" for kind in ("on_demand", "spot") for k in ("price", "provider", "location")),
    "offers",
    "providers",
]


def group_by_gpu(offers: Iterable[CatalogItem]) -> list[GpuGroup]:
    """One group per GPU model and count, cheapest first (the cheaper of its on-demand and spot
    prices; ties by GPU name, memory and count); offers without GPUs are left out. Ordered by
    price, not by name: a table cut at `--limit` rows then shows the cheapest of every kind
    rather than the models early in the alphabet (issue 37: H100 was cut off)."""
    groups: dict[tuple[str, float | None, int], GpuGroup] = {}
    for i in offers:
        if not i.gpu_count or not i.gpu_name:
            continue
        key = (i.gpu_name, i.gpu_memory, i.gpu_count)
        group = groups.get(key)
        if group is None:
            group = groups[key] = GpuGroup(i.gpu_name, i.gpu_memory, i.gpu_count)
        group.add(i)
    return sorted(
        groups.values(),
        key=lambda g: (g.cheapest, g.gpu_name.lower(), g.gpu_memory or 0.0, g.gpu_count),
    )


def _where(i: CatalogItem | None) -> str:
    return "-" if i is None else f"{i.provider} {i.location}".strip()


GROUP_COLUMNS: list[Column[GpuGroup]] = [
    Column("GPU", lambda g: f"{g.gpu_name} {_num(g.gpu_memory)}GB", 1, min_width=10, required=True),
    Column("COUNT", lambda g: str(g.gpu_count), 0, right=True, required=True),
    Column(
        "ON-DEMAND/H",
        lambda g: price(g.on_demand.price if g.on_demand else None),
        0,
        right=True,
        required=True,
    ),
    Column("PROVIDER/REGION", lambda g: _where(g.on_demand), 2, min_width=15, required=True),
    Column("SPOT/H", lambda g: price(g.spot.price if g.spot else None), 3, right=True),
    Column("PROVIDER/REGION", lambda g: _where(g.spot), 4, min_width=15),
    Column("OFFERS", lambda g: str(g.offers), 5, right=True),
    Column("PROVIDERS", lambda g: str(len(g.providers)), 6, right=True),
]


def groups_table(groups: list[GpuGroup], width: int | None = None) -> str:
    return table(GROUP_COLUMNS, groups, width)
