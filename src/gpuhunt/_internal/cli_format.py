"""What `gpuhunt query` prints (pure: lists of offers and the catalog's status in, text or
JSON-ready values out): the tables, the grouped view and the footer saying where the answer
came from and how old each provider's data is.

Prices are USD per hour and shown with at least two decimals (`$1.70`, `$0.7345`); memory is
GB and GPU memory GiB, as in `CatalogItem`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import math
from collections.abc import Container, Iterable
from dataclasses import dataclass, field
from typing import Any

from gpuhunt._internal import freshness
from gpuhunt._internal.models import CatalogItem


def price(x: float | None) -> str:
    """`$1.70`, `$64.00`, `$0.7345`: two decimals, up to four when they matter."""
    if x is None:
        return "-"
    text = f"{x:.4f}".rstrip("0")
    whole, _, decimals = text.partition(".")
    return f"${whole}.{decimals.ljust(2, '0')}"


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:g}"


def gpu_text(i: CatalogItem) -> str:
    return f"{i.gpu_count}x{i.gpu_name} {_num(i.gpu_memory)}GB" if i.gpu_count else "-"


def as_dict(i: CatalogItem) -> dict[str, Any]:
    """Every `CatalogItem` field, in field order, with `price_per_gpu` after `price`; enums as
    their values (what `--json` and `--csv` print)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(i):
        value = getattr(i, f.name)
        out[f.name] = value.value if isinstance(value, enum.Enum) else value
        if f.name == "price":
            out["price_per_gpu"] = round(i.price / i.gpu_count, 6) if i.gpu_count else None
    return out


def csv_header() -> list[str]:
    """The columns of `--csv`: `as_dict`'s keys, also when no offer matched."""
    names = [f.name for f in dataclasses.fields(CatalogItem)]
    return [*names[: names.index("price") + 1], "price_per_gpu", *names[names.index("price") + 1 :]]


def csv_cell(value: Any) -> Any:
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True) if value else ""
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    # Spreadsheets run cells starting with these as formulas.
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@"):
        return "'" + value
    return value


def render(header: list[str], rows: list[list[str]], right: set[int]) -> str:
    widths = [max(len(r[k]) for r in [header, *rows]) for k in range(len(header))]
    lines = [
        "  ".join(
            c.rjust(w) if k in right else c.ljust(w) for k, (c, w) in enumerate(zip(r, widths))
        ).rstrip()
        for r in [header, *rows]
    ]
    return "\n".join(lines)


def offers_table(offers: list[CatalogItem], per_gpu: bool = False) -> str:
    """One row per offer. A `$/GPU/H` column is added when any offer has GPUs, or `per_gpu`."""
    per_gpu = per_gpu or any(i.gpu_count for i in offers)
    header = ["PROVIDER", "INSTANCE", "LOCATION", "PRICE/H"]
    header += ["$/GPU/H"] if per_gpu else []
    header += ["GPU", "CPU", "MEMORY", "SPOT", "DISK"]
    rows = []
    for i in offers:
        row = [i.provider, i.instance_name, i.location, price(i.price)]
        row += [price(i.price_per_gpu)] if per_gpu else []
        row += [
            gpu_text(i),
            str(i.cpu),
            f"{_num(i.memory)}GB",
            "spot" if i.spot else "on-demand",
            f"{_num(i.disk_size)}GB" if i.disk_size is not None else "-",
        ]
        rows.append(row)
    right = {3, 4, 6, 7, 9} if per_gpu else {3, 5, 6, 8}
    return render(header, rows, right)


# ------------------------------------------------------------------ --group-by gpu


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
    """One group per GPU model and count, ordered by GPU name, memory and count; offers
    without GPUs are left out."""
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
        key=lambda g: (g.gpu_name.lower(), g.gpu_memory or 0.0, g.gpu_count),
    )


def groups_table(groups: list[GpuGroup]) -> str:
    header = [
        "GPU",
        "COUNT",
        "ON-DEMAND/H",
        "PROVIDER/REGION",
        "SPOT/H",
        "PROVIDER/REGION",
        "OFFERS",
        "PROVIDERS",
    ]

    def where(i: CatalogItem | None) -> str:
        return "-" if i is None else f"{i.provider} {i.location}".strip()

    rows = [
        [
            f"{g.gpu_name} {_num(g.gpu_memory)}GB",
            str(g.gpu_count),
            price(g.on_demand.price if g.on_demand else None),
            where(g.on_demand),
            price(g.spot.price if g.spot else None),
            where(g.spot),
            str(g.offers),
            str(len(g.providers)),
        ]
        for g in groups
    ]
    return render(header, rows, {1, 2, 4, 6, 7})


# The footer: where the catalog came from, why, and how old each provider's data is.


def describe_source(status: Any, providers: Container[str] | None = None) -> str:
    """Where the catalog came from and why, then how old each provider's data is (of
    `providers`, default all): the footer of `gpuhunt query`."""
    text = origin(status) + "."
    ages = data_ages(status, providers)
    if ages:
        text += " Data age: " + ", ".join(f"{p} {age}" for p, age in ages.items()) + "."
    return text


def origin(status: Any) -> str:
    v, url = status.version, status.url
    error = " ".join(str(status.last_error or "").split())
    why = f" ({error[:157] + '...' if len(error) > 160 else error})" if error else ""
    if status.source == "network":
        return f"Catalog {v} downloaded from {url}"
    if status.source == "disk-cache" and not status.fallback:
        if status.unchecked:
            return (
                f"Catalog {v} from the disk cache: {url} named it as the latest version "
                f"{_ago(status.age_seconds)} ago (--refresh checks now)"
            )
        return f"Catalog {v} from the disk cache: {url} lists it as the latest version"
    # After a failure the status's url is the fallback's; the error names what failed.
    wait = getattr(status, "next_retry_in", None)
    # Rounded up: "next check in 0min 0s" would read as "now".
    retry = f"; next check in {_ago(math.ceil(wait))} (--refresh checks now)" if wait else ""
    if status.source == "disk-cache":
        return (
            f"Catalog {v} from the disk cache, because the catalog could not be loaded{why}"
            f"{retry}"
        )
    if status.source == "bundled":
        return (
            f"The snapshot bundled with gpuhunt ({v}), because the catalog could not be "
            f"loaded{why} and no copy was cached{retry}"
        )
    if status.source == "directory":
        return f"Catalog from {url} (version {v})"
    return "No catalog loaded"


def _ago(seconds: float | None) -> str:
    s = int(seconds or 0)
    return f"{s // 3600}h {s % 3600 // 60}min" if s >= 3600 else f"{s // 60}min {s % 60}s"


def data_ages(status: Any, providers: Container[str] | None = None) -> dict[str, str]:
    """provider -> age of its data (`3h`, `314d`, `unknown`), from the manifest's recording
    dates; empty when the manifest has none (a bucket without manifests)."""
    if not any(status.recorded_at.values()):
        return {}
    recorded = {
        p: when for p, when in status.recorded_at.items() if providers is None or p in providers
    }
    now = dt.datetime.now(dt.timezone.utc)
    return {
        p: freshness.describe(None if when is None else max(now - when, dt.timedelta(0)))
        for p, when in sorted(recorded.items())
    }
