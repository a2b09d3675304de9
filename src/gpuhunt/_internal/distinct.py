"""What tells apart offers that a table would show alike but for the price (pure): offers of
one provider, location and GPU that differ in spot, in their host's size (CPU, memory, disk),
in their instance name alone, or only in their flags or `provider_data`.

The offers table (`cli/render.offers_table`) adds a `DIFFERS` column naming, for such rows,
what its other columns do not show at the terminal's width. Four
`sapphire-rapids-h10… +1` rows at $1.82 to $2.17 otherwise read as one machine at four prices
(they are 2, 4, 12 and 24 vCPU hosts).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from gpuhunt._internal.models import CatalogItem

# Fields with a column of their own, in the order a row's differences are written.
MAIN_FIELDS = ("spot", "cpu", "memory", "disk_size")


def _key(i: CatalogItem) -> tuple[Any, ...]:
    return (i.provider, i.location, i.gpu_name, i.gpu_count, i.gpu_memory, i.cpu_arch)


def _extras(i: CatalogItem) -> dict[str, str]:
    """The flags and each `provider_data` key, as texts ("provider_data.KEY")."""
    out = {"flags": " ".join(sorted(i.flags))}
    for k, v in (i.provider_data or {}).items():
        out[f"provider_data.{k}"] = v if isinstance(v, str) else json.dumps(v, sort_keys=True)
    return out


def differences(rows: Sequence[CatalogItem]) -> dict[int, list[str]]:
    """Row index -> the fields that tell it from the other rows of its provider, location and
    GPU: of `MAIN_FIELDS`; else `instance_name` when only the names differ; and, among rows
    alike in all of those, "flags" or "provider_data.KEY". Rows without a look-alike, and
    rows identical but for the price, are left out."""
    groups: dict[tuple[Any, ...], list[int]] = defaultdict(list)
    for n, i in enumerate(rows):
        groups[_key(i)].append(n)
    found: dict[int, list[str]] = {}
    for members in groups.values():
        if len(members) < 2:
            continue
        main = [f for f in MAIN_FIELDS if len({getattr(rows[n], f) for n in members}) > 1]
        if not main and len({rows[n].instance_name for n in members}) > 1:
            main = ["instance_name"]
        alike: dict[tuple[Any, ...], list[int]] = defaultdict(list)
        for n in members:
            alike[tuple(getattr(rows[n], f) for f in [*MAIN_FIELDS, "instance_name"])].append(n)
        for twins in alike.values():
            extra: list[str] = []
            if len(twins) > 1:
                texts = [_extras(rows[n]) for n in twins]
                keys = sorted({k for t in texts for k in t})
                extra = [k for k in keys if len({t.get(k) for t in texts}) > 1]
            for n in twins:
                if main or extra:
                    found[n] = extra + main  # the rarer facts first: a cut cell keeps them
    return found


def describe(i: CatalogItem, fields: Sequence[str]) -> str:
    """`fields` of offer `i` as a short text: "4 vCPU 8GB RAM", "spot", "gcp-g4" (flags)."""
    parts = []
    extras = _extras(i)
    for f in fields:
        if f == "spot":
            parts.append("spot" if i.spot else "on-demand")
        elif f == "cpu":
            parts.append(f"{i.cpu} vCPU")
        elif f == "memory":
            parts.append(f"{i.memory:g}GB RAM")
        elif f == "disk_size":
            parts.append("disk ?" if i.disk_size is None else f"{i.disk_size:g}GB disk")
        elif f == "instance_name":
            parts.append(i.instance_name)
        elif f == "flags":
            parts.append(extras["flags"] or "no flags")
        else:
            name = f.removeprefix("provider_data.")
            parts.append(f"{name}={extras.get(f, '-')}")
    return " ".join(parts)
