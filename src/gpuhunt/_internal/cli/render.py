"""What every `gpuhunt` command prints: the renderer table (`RENDERERS`: table, JSON, CSV, one
entry each, that every command's `Answer` goes through), the table layout fitted to the
terminal, and the views of `gpuhunt query` (pure: offers and the catalog's status in, text or
JSON-ready values out): the offers table, the grouped view (`--group-by gpu`) and the footer
saying where the answer came from and how old each provider's data is.

Prices are USD per hour and shown with at least two decimals (`$1.70`, `$0.7345`); memory is
GB and GPU memory GiB, as in `CatalogItem`.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import sys
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TextIO

from gpuhunt._internal import form_factor, registry, rows
from gpuhunt._internal.cli.differs import show_what_differs
from gpuhunt._internal.cli.groups import GROUP_CSV_FIELDS, GpuGroup
from gpuhunt._internal.cli.layout import Column, _num, price, table
from gpuhunt._internal.collapse import CollapsedOffer
from gpuhunt._internal.models import CatalogItem
from gpuhunt._internal.rows import offer_row

if TYPE_CHECKING:
    from gpuhunt._internal.query.table import Table
    from gpuhunt._internal.query.top import Top


def gpu_text(i: CatalogItem) -> str:
    """`8xH100 80GB SXM`: count, model, memory and the form factor where known."""
    if not i.gpu_count:
        return "-"
    form = form_factor.label(i.form_factor)
    return f"{i.gpu_count}x{i.gpu_name} {_num(i.gpu_memory)}GB" + (f" {form}" if form else "")


def as_dict(i: CatalogItem) -> dict[str, Any]:
    """The offer's JSON row (`rows.offer_row`): what `--json` and `--csv` print."""
    return offer_row(i)


def converted_from(i: CatalogItem) -> str | None:
    """The currency an offer's price was converted from (`CatalogItem.currency`, when not
    USD), or None for a price the provider gave in dollars."""
    currency = i.currency
    return currency if isinstance(currency, str) and currency.upper() != "USD" else None


def price_text(i: CatalogItem) -> str:
    """The offer's price, marked `*` when converted from another currency (`footnotes`)."""
    return price(i.price) + ("*" if converted_from(i) else "")


def provider_text(i: CatalogItem) -> str:
    """The provider, with whose machine it resells: `shadeform (lambdalabs)`."""
    return f"{i.provider} ({i.resold_from})" if i.resold_from else i.provider


def availability_text(i: CatalogItem) -> str:
    reading = i.available
    return "-" if reading is None else ("yes" if reading else "no")


def footnotes(offers: Iterable[CatalogItem]) -> list[str]:
    """A line per currency and rate date of the converted prices among `offers`:
    `* converted from EUR at the ECB rate of 2026-12-01`."""
    seen: dict[tuple[str, str], None] = {}
    for i in offers:
        currency = converted_from(i)
        if currency is not None:
            date = i.fx_date
            seen[(currency, date if isinstance(date, str) else "an unrecorded date")] = None
    return [f"* converted from {c} at the ECB rate of {d}" for c, d in seen]


def csv_header() -> list[str]:
    """The columns of `--csv`: `as_dict`'s keys, also when no offer matched."""
    return rows.keys()


def _tflops_per_dollar_text(x: float | None) -> str:
    return "-" if x is None else (f"{x:.0f}" if x >= 10 else f"{x:.2g}")


def answer_notes(shown: Sequence[CatalogItem], sort: str, online: bool) -> list[str]:
    """What the rows shown do not say themselves: the order of offers without a TFLOPS figure
    (under `--sort tflops-per-dollar`). Online providers answered from a copy: `stand_in_note`."""
    notes = []
    unrated = sum(1 for i in shown if i.tflops_per_dollar is None)
    if sort == "tflops-per-dollar" and unrated:
        notes.append(
            f"{unrated} of these offers have no published TFLOPS figure for their GPU "
            "(gpuhunt.gpu_spec) and are listed last, by price."
        )
    # What kind of fact a row is, where it is not a listing of a machine one can rent: the
    # rows themselves do not say (--json and --csv do: location_source, momentary).
    enumerated = sorted({i.provider for i in shown if i.location_source == "enumerated"})
    if enumerated:
        notes.append(
            f"Locations of {', '.join(enumerated)}: a third-party catalog's enumeration, not a "
            "listing (location_source)."
        )
    momentary = sum(1 for i in shown if i.momentary)
    if momentary:
        notes.append(f"Momentary marketplace listings of a host: {momentary} of these rows.")
    return notes


def stand_in_note(providers: set[str], asked_live: Container[str], short: bool = False) -> str:
    """The footer's note on online-capable providers whose offers in the answer came from the
    catalog or the bundled snapshot (a copy of unknown or old age, for a marketplace its
    medians) and not from asking them: `--online` asks them live. `short`: fewer words."""
    names = sorted(
        p
        for p in providers
        if p not in asked_live and p in registry.ALL_PROVIDERS and registry.spec(p).online
    )
    if not names:
        return ""
    listed = ", ".join(names)
    its, them = ("its", "it") if len(names) == 1 else ("their", "them")
    if short:
        return f" Copies, not asked live: {listed} (--online asks {them})."
    return (
        f" {listed}: a copy of {its} offers (data age above), not asked live; --online asks {them}."
    )


def csv_cell(value: Any) -> Any:
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True) if value else ""
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    # Spreadsheets run cells starting with these as formulas.
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@"):
        return "'" + value
    return value


def _location_text(row: CollapsedOffer | CatalogItem) -> str:
    if isinstance(row, CollapsedOffer):
        more = f" +{row.other_locations}" if row.other_locations else ""
        return row.offer.location + more
    return row.location


def row_offer(row: CollapsedOffer | CatalogItem) -> CatalogItem:
    """The offer a table row shows."""
    return row.offer if isinstance(row, CollapsedOffer) else row


_offer = row_offer


def offer_columns(
    per_gpu: bool, tflops: bool = False, availability: bool = False
) -> list[Column[Any]]:
    """The columns of the offers table, most important first within each priority. A column
    more is one entry (`priority` says when it goes on a narrow terminal)."""
    o = _offer
    columns: list[Column[Any]] = [
        Column("PROVIDER", lambda r: provider_text(o(r)), 1, min_width=8, required=True),
        Column("INSTANCE", lambda r: o(r).instance_name, 4, min_width=14, required=True),
        Column("LOCATION", _location_text, 4, min_width=10, required=True),
        Column("PRICE/H", lambda r: price_text(o(r)), 0, right=True, required=True),
    ]
    if per_gpu:
        columns.append(Column("$/GPU/H", lambda r: price(o(r).price_per_gpu), 6, right=True))
    if tflops:  # dense BF16 TFLOPS per USD/hour, where the GPU has a published figure
        columns.append(
            Column(
                "TFLOPS/$", lambda r: _tflops_per_dollar_text(o(r).tflops_per_dollar), 5, right=True
            )
        )
    columns += [
        Column("GPU", lambda r: gpu_text(o(r)), 2, min_width=10, required=True),
        Column("CPU", lambda r: str(o(r).cpu), 7, right=True),
        Column("MEMORY", lambda r: f"{_num(o(r).memory)}GB", 8, right=True),
        Column("SPOT", lambda r: "spot" if o(r).spot else "on-demand", 3),
        Column(
            "DISK",
            lambda r: f"{_num(o(r).disk_size)}GB" if o(r).disk_size is not None else "-",
            9,
            right=True,
        ),
    ]
    if availability:  # the provider's reading when the offer was observed
        columns.append(Column("AVAILABLE", lambda r: availability_text(o(r)), 5))
    return columns


def offers_table(
    offers: Sequence[CatalogItem | CollapsedOffer],
    per_gpu: bool = False,
    width: int | None = None,
    keep: Container[str] = (),
    extra: Sequence[Column[Any]] = (),
) -> str:
    """One row per offer, or per collapsed offer (its cheapest location, `+N` other
    locations). A `$/GPU/H` column is added when any offer has GPUs, or `per_gpu`; a
    `TFLOPS/$` column (dense BF16 TFLOPS per USD/hour) when any offer has a figure; an
    `AVAILABLE` column when any offer carries its provider's availability reading. A converted
    price is marked `*` and explained by a line under the table. Columns named in `keep`
    (`filtered_columns`) are never dropped on a narrow terminal; `extra` columns (the costs of
    `cli.costs`) come last."""
    per_gpu = per_gpu or any(_offer(i).gpu_count for i in offers)
    tflops = any(_offer(i).tflops_per_dollar is not None for i in offers)
    availability = any(_offer(i).available is not None for i in offers)
    columns = [
        dataclasses.replace(c, required=True) if c.header in keep else c
        for c in [*offer_columns(per_gpu, tflops, availability), *extra]
    ]
    columns = show_what_differs(columns, offers, width)
    text = table(columns, offers, width)
    notes = footnotes(_offer(i) for i in offers)
    return "\n".join([text, *notes])


# ------------------------------------------------------------------ the renderer table

Format = Literal["table", "json", "csv"]


@dataclass(frozen=True)
class Answer:
    """What a command prints, in each format it has: `text` the table (or plain lines) exactly
    as written, newlines included; `json` the JSON-ready value, or `json_pieces` its text
    (indented as `json.dump(value, indent=2)` writes it) in pieces; `csv` the header and the rows.
    Each is called only when its format is asked for (building every offer's dict for a table
    would be wasted). `csv_line_end`: `gpuhunt query` writes the csv module's default `\\r\\n`
    (RFC 4180), `gpuhunt history` `\\n`; both are what scripts already read."""

    text: Callable[[], str] | None = None
    json: Callable[[], Any] | None = None
    json_pieces: Callable[[], Iterable[str]] | None = None
    csv: Callable[[], tuple[Sequence[str], Iterable[Sequence[Any]]]] | None = None
    csv_line_end: str = "\r\n"


def _write_text(answer: Answer, out: TextIO) -> None:
    assert answer.text is not None
    out.write(answer.text())


def _write_json(answer: Answer, out: TextIO) -> None:
    if answer.json_pieces is not None:
        out.writelines(answer.json_pieces())
    else:
        assert answer.json is not None
        json.dump(answer.json(), out, indent=2)
    out.write("\n")


def _write_csv(answer: Answer, out: TextIO) -> None:
    assert answer.csv is not None
    header, rows = answer.csv()
    w = csv.writer(out, lineterminator=answer.csv_line_end)
    w.writerow(header)
    w.writerows(rows)


RENDERERS: dict[str, Callable[[Answer, TextIO], None]] = {
    "table": _write_text,
    "json": _write_json,
    "csv": _write_csv,
}


def format_of(args: argparse.Namespace) -> Format:
    """The format a command's `--json` / `--csv` options ask for (`table` without them)."""
    if getattr(args, "json", False):
        return "json"
    if getattr(args, "csv", False):
        return "csv"
    return "table"


def emit(answer: Answer, fmt: Format = "table", out: TextIO | None = None) -> None:
    """Print `answer` in `fmt` (to stdout unless `out`)."""
    RENDERERS[fmt](answer, sys.stdout if out is None else out)


def lines(*pieces: str) -> str:
    """`pieces` as `print` writes them, one after another: each followed by a newline."""
    return "".join(f"{p}\n" for p in pieces)


def text(*pieces: str) -> Answer:
    """An answer that is only text: the lines of a command without --json or --csv."""
    written = lines(*pieces)
    return Answer(text=lambda: written)


def offers_answer(rows: Sequence[CatalogItem], table_text: Callable[[], str]) -> Answer:
    """Offers: every field (`as_dict`) as JSON and CSV, `table_text` as the table."""
    return Answer(
        text=table_text,
        json=lambda: [as_dict(i) for i in rows],
        csv=lambda: (csv_header(), ([csv_cell(v) for v in as_dict(i).values()] for i in rows)),
    )


def _indented(value: Any) -> bytes:
    return json.dumps(value, indent=2).encode()


def offer_rows_answer(found: Top, table: Table) -> Answer:
    """The offers `found` on `table`'s columns, as `offers_answer` writes them as JSON and CSV:
    their JSON rows built a few at a time (`top.row_batches`) and each batch written as it is
    reached (`top.array_chunks`, the server's encoder), never every row at once."""
    from gpuhunt._internal.query import top  # numpy: loaded only by a query that has a table

    def batches() -> Iterator[list[dict[str, Any]]]:
        return top.row_batches(found, table)

    return Answer(
        json_pieces=lambda: (p.decode() for p in top.array_chunks(batches(), _indented)),
        csv=lambda: (
            csv_header(),
            ([csv_cell(v) for v in row.values()] for batch in batches() for row in batch),
        ),
    )


def groups_answer(groups: Sequence[GpuGroup], table_text: Callable[[], str]) -> Answer:
    """`--group-by gpu`: one record per GPU model and count (`GpuGroup.as_dict` as JSON, its
    `flat` columns as CSV), `table_text` as the table."""
    return Answer(
        text=table_text,
        json=lambda: [g.as_dict() for g in groups],
        csv=lambda: (
            GROUP_CSV_FIELDS,
            ([csv_cell(v) for v in g.flat().values()] for g in groups),
        ),
    )
