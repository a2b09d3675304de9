"""What `gpuhunt query` shows of issue 49 (docs/costs.md): the options of the cost spec
(`spec.COSTS`), the costs of the answer's offers (`Catalog.query_costs(offers=...)`), their
table columns and their `--json` / `--csv` keys. The spot interruption band is a column when
spot offers are asked for (`--spot`, `--max-interruption`, or a usage) and a shown one has a
band, and a key when a usage, a term, a job or `--max-interruption` is asked; the usage, term
and job columns and keys when asked. A plain query reads no side file."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from gpuhunt._internal.cli import render
from gpuhunt._internal.cli.layout import Column, price
from gpuhunt._internal.cli.render import row_offer
from gpuhunt._internal.models import CatalogItem
from gpuhunt._internal.query import spec

# The pricing (catalog_costs, numpy) is imported when an answer is priced: `gpuhunt --help`
# and a usage error import no engine.
if TYPE_CHECKING:
    from gpuhunt._internal.catalog import Catalog
    from gpuhunt._internal.catalog_costs import AnswerCosts
    from gpuhunt._internal.costs.priced import OfferCosts


def given(args: Any) -> dict[str, Any]:
    """The cost options given (`catalog_costs.usage_of`, without importing it)."""
    return {n: v for n in spec.COST_NAMES if (v := getattr(args, n, None)) is not None}


class Priced:
    """An answer's costs (`catalog_costs.AnswerCosts`) and their table columns."""

    def __init__(self, found: AnswerCosts) -> None:
        self.found = found
        self.usage, self.job = found.usage, found.job

    def of(self, row: Any) -> OfferCosts | None:
        return self.found.of(row)

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
        from gpuhunt._internal.catalog_costs import best_term

        c = self.of(row)
        best = best_term(c) if c is not None else None
        if best is None or best.break_even_hours is None:
            return "-"
        return f"{best.break_even_hours:.0f}h/mo ({best.label})"


def check(args: Any) -> None:
    """A ValueError in the command line's words for a usage that cannot be priced."""
    usage = given(args)
    if not usage:
        return
    from gpuhunt._internal.costs.priced import Usage

    try:
        Usage(**usage).check()
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
    """`render.offers_answer` with the costs' keys after the offer's, when asked."""
    if priced is None and not given(args) and getattr(args, "max_interruption", None) is None:
        return render.offers_answer(rows, table_text)
    from gpuhunt._internal.catalog_costs import AnswerCosts

    found = priced.found if priced is not None else AnswerCosts({}, args)

    def row(i: CatalogItem) -> dict[str, Any]:
        return {**render.as_dict(i), **found.values(i)}

    def cell(v: Any) -> Any:
        return json.dumps(v) if isinstance(v, list) and v and isinstance(v[0], dict) else v

    return render.Answer(
        text=table_text,
        json=lambda: [row(i) for i in rows],
        csv=lambda: (
            [*render.csv_header(), *found.keys()],
            ([render.csv_cell(cell(v)) for v in row(i).values()] for i in rows),
        ),
    )


def terms_note(priced: Priced | None) -> str | None:
    """For `--explain`: the providers of the answer whose commitment terms the catalog does
    not carry (a usage or a term was asked)."""
    if priced is None or not priced.usage:
        return None
    missing = sorted({o for o, c in priced.found.providers() if c.terms_published is False})
    if not missing:
        return None
    return (
        "No commitment terms in this catalog for: "
        + ", ".join(missing)
        + " (their offers are priced on demand or spot only; docs/costs.md)."
    )


def price_answer(
    catalog: Catalog, args: Any, offers: list[CatalogItem]
) -> tuple[list[CatalogItem], Priced | None]:
    """`catalog_costs.price_answer`, its costs with their table columns."""
    from gpuhunt._internal import catalog_costs

    shown, found = catalog_costs.price_answer(catalog, args, offers)
    return shown, None if found is None else Priced(found)
