"""`Catalog.query_costs`: a query's answer priced for a usage, a commitment term or a job
(issue 49, docs/costs.md), and the loaded catalog's side files (terms, spot bands) that the
pricing and the `max_interruption` filter read. The offers are `Catalog.query`'s, unchanged;
the costs are records beside them (`costs.priced.OfferCosts`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuhunt._internal.collapse import CollapsedOffer
from gpuhunt._internal.costs.priced import OfferCosts, TermCost, Usage, price
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


# `--json` / `--csv` keys after the offer's own: always the band; the rest when asked.
BAND_KEYS = ("interruption",)
USAGE_KEYS = ("pay", "effective_hourly", "monthly_cost", "break_even_hours", "payback_month")
TERM_KEYS = ("terms",)
JOB_KEYS = ("compute", "egress", "storage", "total")


def usage_of(args: Any) -> dict[str, Any]:
    """The `query_costs` keywords given on the command line."""
    return {n: v for n in spec.COST_NAMES if (v := getattr(args, n, None)) is not None}


def wanted(args: Any) -> bool:
    """Whether an answer needs the catalog's side files: costs or `max_interruption` asked."""
    return asked(args) or getattr(args, "max_interruption", None) is not None


def asked(args: Any) -> bool:
    """Whether a usage, a term or a job is asked (`--months` alone prices nothing)."""
    return any(n != "months" for n in usage_of(args))


class AnswerCosts:
    """The costs of an answer's offers, by offer, and their keys in a `--json` row (the CLI's
    and the servers'), after the offer's own."""

    def __init__(
        self,
        records: dict[int, OfferCosts],
        args: Any,
        provider_of: dict[int, str] | None = None,
    ) -> None:
        self.records = records
        self.provider_of = provider_of or {}
        # The band's key when the question is about costs or risk: a plain query's --json and
        # --csv stay byte for byte what scripts read before.
        self.band = asked(args) or getattr(args, "max_interruption", None) is not None
        self.usage = args.hours_per_month is not None or args.term is not None
        self.job = args.job_hours is not None

    def providers(self) -> list[tuple[str, OfferCosts]]:
        return [(self.provider_of[k], c) for k, c in self.records.items()]

    def of(self, row: Any) -> OfferCosts | None:
        return self.records.get(id(row.offer if isinstance(row, CollapsedOffer) else row))

    def keys(self) -> tuple[str, ...]:
        return (
            (BAND_KEYS if self.band else ())
            + (USAGE_KEYS + TERM_KEYS if self.usage else ())
            + (JOB_KEYS if self.job else ())
        )

    def values(self, offer: CatalogItem) -> dict[str, Any]:
        c = self.records.get(id(offer))
        out: dict[str, Any] = {k: None for k in self.keys()}
        if c is None:
            return out
        if self.band:
            out["interruption"] = c.interruption
        if self.usage:
            best = best_term(c)
            out.update(
                pay=c.pay,
                effective_hourly=_round(c.effective_hourly),
                monthly_cost=_round(c.monthly_cost),
                break_even_hours=_round(best.break_even_hours) if best else None,
                payback_month=_json_number(best.payback_month) if best else None,
                terms=[_term_dict(t) for t in c.terms],
            )
        if self.job:
            out.update(
                compute=_round(c.compute),
                egress=_round(c.egress),
                storage=_round(c.storage),
                total=_round(c.total),
            )
        return out


def best_term(c: OfferCosts | None) -> TermCost | None:
    """The term that breaks even soonest (fewest hours a month), or None."""
    known = [(t.break_even_hours, k, t) for k, t in enumerate(c.terms if c else ())
             if t.break_even_hours is not None]  # fmt: skip
    return min(known)[2] if known else None


def _term_dict(t: Any) -> dict[str, Any]:
    return {
        "term": t.term,
        "payment": t.payment,
        "offering_class": t.offering_class,
        "hourly": t.hourly,
        "upfront": t.upfront,
        "monthly_cost": _round(t.monthly_cost),
        "break_even_hours": _round(t.break_even_hours),
        "payback_month": _json_number(t.payback_month),
        "source": t.source,
    }


def _round(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else round(x, 6)


def _json_number(x: float | None) -> float | str | None:
    """JSON has no infinity: a payback that never comes is "never"."""
    if x is None:
        return None
    return "never" if math.isinf(x) else x


def price_answer(
    catalog: Any, args: Any, offers: list[CatalogItem]
) -> tuple[list[CatalogItem], AnswerCosts | None]:
    """(the offers to show, in the order to show them, and their costs). Without a usage, a
    term or a job the offers are unchanged; they are priced (for their spot bands) only when
    spot offers are asked for (`spot=True`, `max_interruption`): a plain query reads no side
    file, so its speed and its output are what they were."""
    usage = usage_of(args)
    spot_asked = getattr(args, "spot", None) is True or wanted(args)
    if not asked(args) and not (spot_asked and any(o.spot for o in offers)):
        return offers, None
    found = catalog.query_costs(offers=offers, **usage)
    records = {id(p.offer): p.costs for p in found}
    shown = [p.offer for p in found] if asked(args) else offers
    return shown, AnswerCosts(records, args, {id(p.offer): p.offer.provider for p in found})
