"""What `gpuhunt query` shows of issue 49 (docs/costs.md): the options of the cost spec
(`spec.COSTS`), the costs of the answer's offers (`Catalog.query_costs(offers=...)`), their
table columns and their `--json` / `--csv` keys. The spot interruption band is a column
whenever a shown spot offer has one, and a key when a usage, a term, a job or
`--max-interruption` is asked; the usage, term and job columns and keys when asked."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from gpuhunt._internal.cli import render
from gpuhunt._internal.cli.layout import Column, price
from gpuhunt._internal.cli.render import row_offer
from gpuhunt._internal.costs.priced import OfferCosts, TermCost, Usage
from gpuhunt._internal.models import CatalogItem
from gpuhunt._internal.query import spec

if TYPE_CHECKING:
    from gpuhunt._internal.catalog import Catalog

# `--json` / `--csv` keys after the offer's own: always the band; the rest when asked.
BAND_KEYS = ("interruption",)
USAGE_KEYS = ("pay", "effective_hourly", "monthly_cost", "break_even_hours", "payback_month")
TERM_KEYS = ("terms",)
JOB_KEYS = ("compute", "egress", "storage", "total")


def usage_of(args: Any) -> dict[str, Any]:
    """The `query_costs` keywords given on the command line."""
    return {n: v for n in spec.COST_NAMES if (v := getattr(args, n, None)) is not None}


def asked(args: Any) -> bool:
    """Whether a usage, a term or a job is asked (`--months` alone prices nothing)."""
    return any(n != "months" for n in usage_of(args))


class Priced:
    """The costs of an answer's offers, by offer."""

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
        return self.records.get(id(row_offer(row)))

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
            best = _best_term(c)
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

    def columns(self, rows: Sequence[Any]) -> list[Column[Any]]:
        cols: list[Column[Any]] = []
        if any((c := self.of(r)) is not None and c.interruption for r in rows):
            cols.append(Column("INTERRUPT", lambda r: self._band(r), 5))
        if self.usage:
            cols += [
                Column("PAY", lambda r: self._text(r, "pay"), 1, required=True),
                Column("MONTHLY", lambda r: self._money(r, "monthly_cost"), 0, right=True),
                Column("EFF/H", lambda r: self._money(r, "effective_hourly"), 2, right=True),
                Column("BREAK-EVEN", self._break_even, 3, right=True),
            ]
        if self.job:
            cols += [
                Column("TOTAL", lambda r: self._money(r, "total"), 0, right=True, required=True),
                Column("COMPUTE", lambda r: self._money(r, "compute"), 4, right=True),
                Column("EGRESS", lambda r: self._money(r, "egress"), 4, right=True),
                Column("STORAGE", lambda r: self._money(r, "storage"), 4, right=True),
            ]
        return cols

    def _band(self, row: Any) -> str:
        c = self.of(row)
        if c is None or not row_offer(row).spot:
            return ""
        return c.interruption or "unknown"

    def _text(self, row: Any, name: str) -> str:
        c = self.of(row)
        value = None if c is None else getattr(c, name)
        return "unknown" if value is None else str(value)

    def _money(self, row: Any, name: str) -> str:
        c = self.of(row)
        value = None if c is None else getattr(c, name)
        return "unknown" if value is None else price(value)

    def _break_even(self, row: Any) -> str:
        c = self.of(row)
        best = _best_term(c) if c is not None else None
        if best is None or best.break_even_hours is None:
            return "-"
        return f"{best.break_even_hours:.0f}h/mo ({best.label})"


def _best_term(c: OfferCosts | None) -> TermCost | None:
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
    catalog: Catalog, args: Any, offers: list[CatalogItem]
) -> tuple[list[CatalogItem], Priced | None]:
    """(the offers to show, in the order to show them, and their costs). Without a usage, a
    term or a job the offers are unchanged, and priced only when some are spot (their band)."""
    usage = usage_of(args)
    if not asked(args) and not any(o.spot for o in offers):
        return offers, None
    found = catalog.query_costs(offers=offers, **usage)
    records = {id(p.offer): p.costs for p in found}
    shown = [p.offer for p in found] if asked(args) else offers
    return shown, Priced(records, args, {id(p.offer): p.offer.provider for p in found})


def check(args: Any) -> None:
    """A ValueError in the command line's words for a usage that cannot be priced."""
    try:
        Usage(**usage_of(args)).check()
    except ValueError as e:
        text = str(e)
        for o in spec.COSTS:
            text = text.replace(o.name, o.option)
        raise ValueError(text) from None


def offers_answer(
    rows: Sequence[CatalogItem],
    table_text: Callable[[], str],
    priced: Priced | None,
    args: Any,
) -> render.Answer:
    """`render.offers_answer` with the costs' keys after the offer's (the band always)."""
    if priced is None:
        priced = Priced({}, args)

    def row(i: CatalogItem) -> dict[str, Any]:
        return {**render.as_dict(i), **priced.values(i)}

    def cell(v: Any) -> Any:
        return json.dumps(v) if isinstance(v, list) and v and isinstance(v[0], dict) else v

    return render.Answer(
        text=table_text,
        json=lambda: [row(i) for i in rows],
        csv=lambda: (
            [*render.csv_header(), *priced.keys()],
            ([render.csv_cell(cell(v)) for v in row(i).values()] for i in rows),
        ),
    )


def terms_note(priced: Priced | None) -> str | None:
    """For `--explain`: the providers of the answer whose commitment terms the catalog does
    not carry (a usage or a term was asked)."""
    if priced is None or not priced.usage:
        return None
    missing = sorted({o for o, c in priced.providers() if c.terms_published is False})
    if not missing:
        return None
    return (
        "No commitment terms in this catalog for: "
        + ", ".join(missing)
        + " (their offers are priced on demand or spot only; docs/costs.md)."
    )
