"""`Catalog.query_costs`: a query's answer priced for a usage, a commitment term or a job
(issue 49, docs/costs.md), and the loaded catalog's side files (terms, spot bands) that the
pricing and the `max_interruption` filter read. The offers are `Catalog.query`'s, unchanged;
the costs are records beside them (`costs.priced.OfferCosts`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuhunt._internal.costs.priced import OfferCosts, Usage, price
from gpuhunt._internal.load.loaded import Loaded
from gpuhunt._internal.load.sides import Sides, sides_of
from gpuhunt._internal.models import CatalogItem
from gpuhunt._internal.query import spec


@dataclass(frozen=True)
class PricedOffer:
    offer: CatalogItem
    costs: OfferCosts


def sides(loaded: Loaded | None, cache_dir: Path | None) -> Sides | None:
    """The loaded catalog's `Sides` (kept on its table), None when none is loaded."""
    return None if loaded is None else sides_of(loaded, cache_dir)


def split(arguments: dict[str, Any]) -> tuple[Usage, dict[str, Any]]:
    """(the usage, `query`'s filters) of `query_costs`' keywords; a keyword that is neither is
    a TypeError naming it."""
    usage = {k: arguments[k] for k in spec.COST_NAMES if arguments.get(k) is not None}
    filters = {k: v for k, v in arguments.items() if k not in spec.COST_NAMES}
    unknown = sorted(set(filters) - set(spec.NAMES))
    if unknown:
        raise TypeError(f"query_costs() got unexpected keyword arguments: {', '.join(unknown)}")
    u = Usage(**usage)
    u.check()
    return u, filters


def query_costs(
    query: Callable[..., list[CatalogItem]],
    current_sides: Callable[[], Sides | None],
    arguments: dict[str, Any],
) -> list[PricedOffer]:
    """`query(**filters)` priced (`costs.priced.price`), in the order of what one would pay;
    `offers=` prices an answer already in hand instead of querying again."""
    given = arguments.pop("offers", None)
    u, filters = split(arguments)
    if given is not None and filters:
        raise TypeError("query_costs() takes offers= or filters, not both")
    offers = list(given) if given is not None else query(**filters)
    found = current_sides()
    records, order = price(offers, u, found.terms if found else _none, found)
    return [PricedOffer(offers[i], records[i]) for i in order]


def _none(provider: str) -> None:
    return None


def providers_without_terms(found: Sides | None, providers: list[str]) -> list[str]:
    """Those of `providers` whose terms the loaded catalog does not carry (for `explain`)."""
    return [p for p in providers if found is None or found.terms(p) is None]
