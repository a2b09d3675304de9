"""The answer to a query: a `list` of `CatalogItem`s in price order, and the merge of online
providers' offers into the offline ones (pure: no I/O)."""

from __future__ import annotations

import heapq
import operator

from gpuhunt._internal.models import CatalogItem

# The answer's type. gpuhunt 0.1.x returned a plain list, and so does this version again (an
# earlier development version returned a lazy sequence under this name).
Offers = list

_PRICE = operator.attrgetter("price")


def merge_online(
    offline: list[CatalogItem], online_lists: list[list[CatalogItem]]
) -> list[CatalogItem]:
    """Merge by price like `heapq.merge`: each list keeps its own order (Vast.ai's score order,
    say), and on equal prices offline offers come first, then online in provider order."""
    if not any(online_lists):
        return offline
    return list(heapq.merge(offline, *online_lists, key=_PRICE))
