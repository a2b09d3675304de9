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
import datetime as dt
import enum
import json
import math
import sys
from collections.abc import Callable, Container, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TextIO

from gpuhunt._internal import form_factor, freshness, geography, registry
from gpuhunt._internal.cli.differs import show_what_differs

# The table layout and the grouped view live in modules of their own; their names stay
# importable from here, where every command found them.
from gpuhunt._internal.cli.groups import GROUP_COLUMNS as GROUP_COLUMNS
from gpuhunt._internal.cli.groups import GROUP_CSV_FIELDS as GROUP_CSV_FIELDS
from gpuhunt._internal.cli.groups import GpuGroup as GpuGroup
from gpuhunt._internal.cli.groups import group_by_gpu as group_by_gpu
from gpuhunt._internal.cli.groups import groups_table as groups_table
from gpuhunt._internal.cli.layout import ELLIPSIS as ELLIPSIS
from gpuhunt._internal.cli.layout import Column as Column
from gpuhunt._internal.cli.layout import _num
from gpuhunt._internal.cli.layout import fit as fit
from gpuhunt._internal.cli.layout import fitted as fitted
from gpuhunt._internal.cli.layout import price as price
from gpuhunt._internal.cli.layout import render as render
from gpuhunt._internal.cli.layout import table as table
from gpuhunt._internal.cli.layout import terminal_width as terminal_width
from gpuhunt._internal.cli.layout import wrap as wrap
from gpuhunt._internal.collapse import CollapsedOffer
from gpuhunt._internal.models import CatalogItem

if TYPE_CHECKING:
    from gpuhunt._internal.catalog import CatalogStatus


def gpu_text(i: CatalogItem) -> str:
    """`8xH100 80GB SXM`: count, model, memory and the form factor where known."""
    if not i.gpu_count:
        return "-"
    form = form_factor.label(i.form_factor)
    return f"{i.gpu_count}x{i.gpu_name} {_num(i.gpu_memory)}GB" + (f" {form}" if form else "")


# Derived per-offer values that `--json` and `--csv` add after the fields (None: unknown).
DERIVED = ("form_factor", "tflops_per_dollar", "observed_at", "available", "resold_from")


def as_dict(i: CatalogItem) -> dict[str, Any]:
    """Every `CatalogItem` field, in field order, with `country` and `area` (from the
    geography table; None when it does not place the location) after `location` and
    `price_per_gpu` after `price`, then `form_factor`, `tflops_per_dollar`, `observed_at`
    (ISO-8601 UTC, `Z`), `available` and `resold_from`; enums as their values (what `--json`
    and `--csv` print)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(i):
        value = getattr(i, f.name)
        out[f.name] = value.value if isinstance(value, enum.Enum) else value
        if f.name == "location":
            place = geography.locate(i.provider, i.location)
            out["country"] = place.country if place else None
            out["area"] = place.area if place else None
        if f.name == "price":
            out["price_per_gpu"] = round(i.price / i.gpu_count, 6) if i.gpu_count else None
    out["form_factor"] = i.form_factor
    tpd = i.tflops_per_dollar
    out["tflops_per_dollar"] = None if tpd is None else round(tpd, 3)
    seen = i.observed_at
    out["observed_at"] = None if seen is None else seen.strftime("%Y-%m-%dT%H:%M:%SZ")
    out["available"] = i.available
    out["resold_from"] = i.resold_from
    return out


def converted_from(i: CatalogItem) -> str | None:
    """The currency an offer's price was converted from (`provider_data["currency"]`, when
    not USD), or None for a price the provider gave in dollars."""
    currency = i.provider_data.get("currency") if isinstance(i.provider_data, dict) else None
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
            date = i.provider_data.get("fx_date")
            seen[(currency, date if isinstance(date, str) else "an unrecorded date")] = None
    return [f"* converted from {c} at the ECB rate of {d}" for c, d in seen]


def csv_header() -> list[str]:
    """The columns of `--csv`: `as_dict`'s keys, also when no offer matched."""
    out = []
    for name in (f.name for f in dataclasses.fields(CatalogItem)):
        out.append(name)
        out += {"location": ["country", "area"], "price": ["price_per_gpu"]}.get(name, [])
    return [*out, *DERIVED]


def tflops_per_dollar_order(i: CatalogItem) -> tuple[float, float]:
    """Sort key of `--sort tflops-per-dollar`: most TFLOPS per USD/hour first, offers without
    a published figure last (by price among themselves)."""
    tpd = i.tflops_per_dollar
    return (-tpd if tpd is not None else float("inf"), i.price)


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
    return notes


def stand_in_note(providers: set[str], asked_live: Container[str]) -> str:
    """The footer's note on online-capable providers whose offers in the answer came from the
    catalog or the bundled snapshot (a copy of unknown or old age, for a marketplace its
    medians) and not from asking them: `--online` asks them live."""
    names = sorted(
        p
        for p in providers
        if p not in asked_live and p in registry.ALL_PROVIDERS and registry.spec(p).online
    )
    if not names:
        return ""
    listed = ", ".join(names)
    its, them = ("its", "it") if len(names) == 1 else ("their", "them")
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
    offers: Sequence[CatalogItem | CollapsedOffer], per_gpu: bool = False, width: int | None = None
) -> str:
    """One row per offer, or per collapsed offer (its cheapest location, `+N` other
    locations). A `$/GPU/H` column is added when any offer has GPUs, or `per_gpu`; a
    `TFLOPS/$` column (dense BF16 TFLOPS per USD/hour) when any offer has a figure; an
    `AVAILABLE` column when any offer carries its provider's availability reading. A converted
    price is marked `*` and explained by a line under the table."""
    per_gpu = per_gpu or any(_offer(i).gpu_count for i in offers)
    tflops = any(_offer(i).tflops_per_dollar is not None for i in offers)
    availability = any(_offer(i).available is not None for i in offers)
    columns = show_what_differs(offer_columns(per_gpu, tflops, availability), offers, width)
    text = table(columns, offers, width)
    notes = footnotes(_offer(i) for i in offers)
    return "\n".join([text, *notes])


# ------------------------------------------------------------------ --group-by gpu


# The footer: where the catalog came from, why, and how old each provider's data is.


def describe_source(status: CatalogStatus, providers: Container[str] | None = None) -> str:
    """Where the catalog came from and why, then how old each provider's data is (of
    `providers`, default all): the footer of `gpuhunt query`."""
    text = origin(status) + "."
    ages = data_ages(status, providers)
    if ages:
        labels = source_labels(status)
        text += (
            " Data age: "
            + ", ".join(
                f"{p} {age}" + (f" ({labels[p]})" if p in labels else "") for p, age in ages.items()
            )
            + "."
        )
    return text


def source_labels(status: CatalogStatus) -> dict[str, str]:
    """provider -> the short name of where its data came from ("SkyPilot"), for the
    providers whose manifest gives one (the bundled snapshot's does)."""
    sources = status.sources or {}
    return {
        p: str(s["label"]) for p, s in sources.items() if isinstance(s, dict) and s.get("label")
    }


def origin(status: CatalogStatus) -> str:
    v, url = status.version, status.url
    error = " ".join(str(status.last_error or "").split())
    why = f" ({error[:157] + '...' if len(error) > 160 else error})" if error else ""
    if status.source == "network":
        return f"Catalog {v} downloaded from {url}"
    if status.source == "disk-cache" and not status.fallback:
        if status.unchecked:
            return (
                f"Catalog {v} from the disk cache: {url} named it as the latest version "
                f"{_ago(status.age_seconds)} ago (--refresh checks now)"
            )
        return f"Catalog {v} from the disk cache: {url} lists it as the latest version"
    # After a failure the status's url is the fallback's; the error names what failed.
    wait = status.next_retry_in
    # Rounded up: "next check in 0min 0s" would read as "now".
    retry = f"; next check in {_ago(math.ceil(wait))} (--refresh checks now)" if wait else ""
    if status.source == "disk-cache":
        return (
            f"Catalog {v} from the disk cache, because the catalog could not be loaded{why}{retry}"
        )
    if status.source == "bundled":
        return (
            f"The snapshot bundled with gpuhunt ({v}), because the catalog could not be "
            f"loaded{why} and no copy was cached{retry}"
        )
    if status.source == "directory":
        return f"Catalog from {url} (version {v})"
    return "No catalog loaded"


def _ago(seconds: float | None) -> str:
    s = int(seconds or 0)
    return f"{s // 3600}h {s % 3600 // 60}min" if s >= 3600 else f"{s // 60}min {s % 60}s"


def data_ages(status: CatalogStatus, providers: Container[str] | None = None) -> dict[str, str]:
    """provider -> age of its data (`3h`, `314d`, `unknown`), from the manifest's recording
    dates; empty when the manifest has none (a bucket without manifests)."""
    if not any(status.recorded_at.values()):
        return {}
    recorded = {
        p: when for p, when in status.recorded_at.items() if providers is None or p in providers
    }
    now = dt.datetime.now(dt.timezone.utc)
    return {p: freshness.describe_at(when, now) for p, when in sorted(recorded.items())}


# ------------------------------------------------------------------ the renderer table

Format = Literal["table", "json", "csv"]


@dataclass(frozen=True)
class Answer:
    """What a command prints, in each format it has: `text` the table (or plain lines) exactly
    as written, newlines included; `json` the JSON-ready value; `csv` the header and the rows.
    Each is called only when its format is asked for (building every offer's dict for a table
    would be wasted). `csv_line_end`: `gpuhunt query` writes the csv module's default `\\r\\n`
    (RFC 4180), `gpuhunt history` `\\n`; both are what scripts already read."""

    text: Callable[[], str] | None = None
    json: Callable[[], Any] | None = None
    csv: Callable[[], tuple[Sequence[str], Iterable[Sequence[Any]]]] | None = None
    csv_line_end: str = "\r\n"


def _write_text(answer: Answer, out: TextIO) -> None:
    assert answer.text is not None
    out.write(answer.text())


def _write_json(answer: Answer, out: TextIO) -> None:
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


def sort_offers(offers: list[CatalogItem], how: str) -> None:
    """`--sort`, in place: the answer is already by price."""
    if how == "price-per-gpu":
        offers.sort(key=lambda i: (i.price / i.gpu_count) if i.gpu_count else float("inf"))
    elif how == "gpu-memory":
        offers.sort(key=lambda i: (-(i.gpu_memory or 0) * i.gpu_count, i.price))
    elif how == "tflops-per-dollar":
        offers.sort(key=tflops_per_dollar_order)
