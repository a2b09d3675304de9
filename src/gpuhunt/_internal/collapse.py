"""One row per offer rather than per region (pure): what `gpuhunt query` shows by default and
what `gpuhunt.collapse_regions` gives callers (the web page among them).

An answer lists an instance type once per region it is sold in, and most providers price it
the same everywhere, so "the 123 H100 offers" are 13 things to choose from. Collapsing keeps
each distinct offer - (provider, instance type, spot or on-demand) - once, at its cheapest
location, and says where else it is sold.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from gpuhunt._internal.models import CatalogItem


@dataclass
class CollapsedOffer:
    """One distinct offer of an answer: `offer` is its cheapest location's `CatalogItem` (the
    first of equally cheap ones, in the answer's order); `locations` every location it is
    sold in, each once, cheapest first (ties in the answer's order); `max_price` the dearest
    of them."""

    offer: CatalogItem
    locations: list[str] = field(default_factory=list)
    max_price: float = 0.0

    @property
    def other_locations(self) -> int:
        """How many other locations sell it."""
        return len(self.locations) - 1

    @property
    def key(self) -> tuple[str, str, bool]:
        return (self.offer.provider, self.offer.instance_name, self.offer.spot)


def collapse_regions(items: Iterable[CatalogItem]) -> list[CollapsedOffer]:
    """The offers of `items` collapsed to one per (provider, instance type, spot), in the order
    each first appears (so a price-sorted answer stays price-sorted), each at its cheapest
    location. The items are not changed or copied; `items` may be any iterable of offers,
    e.g. the answer of `Catalog.query`."""
    groups: dict[tuple[str, str, bool], CollapsedOffer] = {}
    prices: dict[tuple[str, str, bool], dict[str, float]] = {}
    for i in items:
        key = (i.provider, i.instance_name, i.spot)
        group = groups.get(key)
        if group is None:
            groups[key] = CollapsedOffer(i, max_price=i.price)
            prices[key] = {i.location: i.price}
            continue
        if i.price < group.offer.price:
            group.offer = i
        group.max_price = max(group.max_price, i.price)
        seen = prices[key]
        if i.location not in seen or i.price < seen[i.location]:
            seen[i.location] = i.price
    for key, group in groups.items():
        by_price = prices[key]
        # sorted() is stable: equally cheap locations keep the answer's order
        group.locations = sorted(by_price, key=by_price.__getitem__)
    return list(groups.values())
