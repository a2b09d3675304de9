"""The catalog page's filter controls, from the query spec (pure, no I/O): which filters the
page reads, under their wire names (the HTTP API's parameter names, which the page's URL
carries), and the per-shape quantities of the range filters given as one
(`match.QUANTITIES`). `site.data` writes them into the page's document; the page builds its
form from them, so a new filter of the spec with a quantity needs no page code."""

from __future__ import annotations

import re
from typing import Any

from gpuhunt._internal.models import CatalogItem
from gpuhunt._internal.query import spec
from gpuhunt._internal.query.match import QUANTITIES

# The query spec's filters the page has a control for, in the spec's order, by how the page
# reads them: a number compared with a per-shape column (`count`, `memory`, `gpu_memory`; a
# range filter of `match.QUANTITIES`, with no entry here, with the column of its quantity), the
# offer's price, or the page's own ways (GPU spellings, places, spot, availability readings).
PAGE_READS = {
    "provider": "provider",
    "gpu_name": "gpu",
    "country": "country",
    "area": "area",
    "min_memory": "memory",
    "min_gpu_count": "count",
    "max_gpu_count": "count",
    "min_gpu_memory": "gpu_memory",
    "max_price": "price",
    "spot": "spot",
    "available": "available",
}


def page_filters() -> list[dict[str, Any]]:
    """The page's filter controls, from the query spec: each filter's wire name (the page's
    URL uses the HTTP API's parameter names), its label and documentation, what the page
    compares it with (`PAGE_READS`) and, for a number, whether it is a minimum or a maximum;
    for on/off switches, their values and labels. The page builds its form from these."""
    out = []
    for option in spec.FILTERS:
        reads = PAGE_READS.get(option.name) or (
            "q_" + option.name if option.name in QUANTITIES else None
        )
        if reads is None:
            continue
        doc = option.doc or option.name.replace("_", " ")
        entry: dict[str, Any] = {
            "name": option.wire,
            "label": re.split(r":|,| \(", doc)[0],
            "doc": doc,
            "reads": reads,
        }
        if option.read in (int, float):
            entry["bound"] = "min" if option.name.startswith("min_") else "max"
        if option.switches:
            entry["values"] = [[str(s.value).lower(), s.flag.lstrip("-")] for s in option.switches]
        out.append(entry)
    return out


def quantities(item: CatalogItem) -> tuple[float | None, ...]:
    """The offer's value of each range filter of `match.QUANTITIES`, in the spec's order (the
    page's shape columns `QUANTITY_COLUMNS`)."""
    return tuple(QUANTITIES[o.name](item) for o in spec.FILTERS if o.name in QUANTITIES)


QUANTITY_COLUMNS = tuple("q_" + o.name for o in spec.FILTERS if o.name in QUANTITIES)
