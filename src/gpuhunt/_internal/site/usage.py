"""What the page needs to price a usage or a job (issue 49, docs/costs.md) in its own script:
the commitment terms of the machines it shows, and each provider's egress and storage price
tables (`costs.transfer`). The page's arithmetic is `costs.usage.cheapest` and
`costs.transfer.job_costs` written in JavaScript (tested to agree with `Catalog.query_costs`).

Layout of `doc["costs"]`:

- `terms`: "provider|instance|location" -> [[term, payment, hourly, upfront], ...] in the terms
  file's order (the order `usage.align_terms` keeps); only machines the page shows, and only
  where the catalog carries the provider's terms file, so a catalog without terms adds nothing;
- `egress`: [[provider, region or null, free GB, [[up to GB or null (no bound), $/GB], ...]]];
- `storage`: [[provider, region or null, $/GB-month, min GB, max GB or null]];
- `hours_per_month`: the month the arithmetic uses (730 h).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from gpuhunt._internal.costs import transfer, usage
from gpuhunt._internal.costs.terms import Term


def _bound(x: float) -> float | None:
    return None if math.isinf(x) else x


def page_costs(
    doc: Mapping[str, Any], terms_of: Callable[[str], list[Term] | None]
) -> dict[str, Any]:
    """`doc["costs"]` for a page document (`site.data`); `terms_of(provider)` as `Sides.terms`."""
    providers: list[str] = list(doc["providers"])
    shapes = doc["shapes"]
    machines = {(providers[p], i) for p, i in zip(shapes["provider"], shapes["instance"])}
    locations = {
        (providers[p], n) for p, n in zip(doc["locations"]["provider"], doc["locations"]["name"])
    }
    terms: dict[str, list[list[Any]]] = {}
    for provider in providers:
        for t in terms_of(provider) or ():
            if (provider, t.instance_name) in machines and (provider, t.location) in locations:
                key = f"{provider}|{t.instance_name}|{t.location}"
                terms.setdefault(key, []).append([t.term, t.payment, t.hourly, t.upfront])
    shown = set(providers)
    return {
        "hours_per_month": usage.HOURS_PER_MONTH,
        "terms": terms,
        "egress": [
            [e.provider, e.region, e.free_gb, [[_bound(b), p] for b, p in e.tiers]]
            for e in transfer.EGRESS
            if e.provider in shown
        ],
        "storage": [
            [s.provider, s.region, s.per_gb_month, s.min_gb, _bound(s.max_gb)]
            for s in transfer.STORAGE
            if s.provider in shown
        ],
    }
