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
import os
import re
import shutil
import sys
import textwrap
from collections.abc import Callable, Container, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TextIO, TypeVar

from gpuhunt._internal import form_factor, freshness, geography
from gpuhunt._internal.collapse import CollapsedOffer
from gpuhunt._internal.models import CatalogItem

if TYPE_CHECKING:
    from gpuhunt._internal.catalog import CatalogStatus


def price(x: float | None) -> str:
    """`$1.70`, `$64.00`, `$0.7345`: two decimals, up to four when they matter."""
    if x is None:
        return "-"
    text = f"{x:.4f}".rstrip("0")
    whole, _, decimals = text.partition(".")
    return f"${whole}.{decimals.ljust(2, '0')}"


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:g}"


def gpu_text(i: CatalogItem) -> str:
    """`8xH100 80GB SXM`: count, model, memory and the form factor where known."""
    if not i.gpu_count:
        return "-"
    form = form_factor.label(i.form_factor)
    return f"{i.gpu_count}x{i.gpu_name} {_num(i.gpu_memory)}GB" + (f" {form}" if form else "")


# Derived per-offer values that `--json` and `--csv` add after the fields (None: unknown).
DERIVED = ("form_factor", "tflops_per_dollar")


def as_dict(i: CatalogItem) -> dict[str, Any]:
    """Every `CatalogItem` field, in field order, with `country` and `area` (from the
    geography table; None when it does not place the location) after `location` and
    `price_per_gpu` after `price`, then `form_factor` and `tflops_per_dollar`; enums as their
    values (what `--json` and `--csv` print)."""
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
    return out


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


def csv_cell(value: Any) -> Any:
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True) if value else ""
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    # Spreadsheets run cells starting with these as formulas.
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@"):
        return "'" + value
    return value


def terminal_width(stream: Any = None) -> int | None:
    """The width output to `stream` (default stdout) must fit: `COLUMNS` when set to a
    number, else the terminal's width when `stream` is a terminal, else None - a pipe or a file
    gets every column in full, so what scripts read does not depend on who ran them."""
    text = os.environ.get("COLUMNS", "").strip()
    if text.isdigit() and int(text) > 0:
        return int(text)
    stream = sys.stdout if stream is None else stream
    try:
        if not stream.isatty():
            return None
    except (AttributeError, ValueError):  # closed or not a real stream
        return None
    return shutil.get_terminal_size().columns


T = TypeVar("T")
ELLIPSIS = "…"


@dataclass(frozen=True)
class Column(Generic[T]):
    """One column of a table: its header, how a row's cell is written, and what may be done
    to it when the table is wider than the terminal. Columns of higher `priority` (less
    important) go first: shortened (down to `min_width`, cells cut with an ellipsis) when that
    is enough, else dropped - or, if `required`, shortened as far as `min_width` allows."""

    header: str
    cell: Callable[[T], str]
    priority: int
    right: bool = False
    min_width: int | None = None
    required: bool = False


def table(columns: Sequence[Column[T]], rows: Iterable[T], width: int | None = None) -> str:
    """`rows` under `columns`, two spaces apart, fitted to `width` (None: no limit)."""
    cells = [[c.cell(r) for c in columns] for r in rows]
    specs = [(c.priority, c.min_width, c.required) for c in columns]
    right = {k for k, c in enumerate(columns) if c.right}
    return fitted([c.header for c in columns], cells, right, specs, width)


def fitted(
    header: list[str],
    rows: list[list[str]],
    right: set[int],
    specs: Sequence[tuple[int, int | None, bool]],
    width: int | None,
) -> str:
    """`render` of the columns that fit `width`; `specs` gives each column's (priority,
    min_width, required), as `Column` does."""
    widths = [max([len(h), *(len(row[k]) for row in rows)]) for k, h in enumerate(header)]
    keep = fit([(w, *spec) for w, spec in zip(widths, specs)], width)
    return render(
        [header[k] for k, _ in keep],
        [[row[k] for k, _ in keep] for row in rows],
        {n for n, (k, _) in enumerate(keep) if k in right},
        [w for _, w in keep],
    )


def fit(
    columns: Sequence[tuple[int, int, int | None, bool]], width: int | None
) -> list[tuple[int, int]]:
    """Which columns (width, priority, min_width, required) to keep and how wide, as (index,
    width): the least important first are shortened when that suffices, else dropped (or,
    when required, shortened as far as they go), until the line fits `width`. A table that
    cannot fit keeps its required columns at their least widths."""
    widths = {k: w for k, (w, _, _, _) in enumerate(columns)}

    def total() -> int:
        return sum(widths.values()) + 2 * (len(widths) - 1)

    if width is None:
        return list(widths.items())
    # Columns of one priority are shortened together, each by its share of what they can give.
    for priority in sorted({c[1] for c in columns}, reverse=True):
        over = total() - width
        if over <= 0:
            break
        group = [k for k, c in enumerate(columns) if c[1] == priority and k in widths]
        slack = {k: max(widths[k] - (columns[k][2] or widths[k]), 0) for k in group}
        if slack and sum(slack.values()) >= over:
            _share(widths, slack, over)
            break
        for k in group:
            if columns[k][3]:  # required: as short as it may be
                widths[k] -= slack[k]
            else:
                del widths[k]
    return sorted(widths.items())


def _share(widths: dict[int, int], slack: dict[int, int], over: int) -> None:
    """Take `over` characters from the columns in `slack`, in proportion to what each can give
    (the remainder from the largest)."""
    total = sum(slack.values())
    cuts = {k: over * s // total for k, s in slack.items()}
    for k in sorted(slack, key=lambda k: -slack[k]):
        if sum(cuts.values()) >= over:
            break
        if cuts[k] < slack[k]:
            cuts[k] += 1
    for k, cut in cuts.items():
        widths[k] -= cut


_MORE = re.compile(r" \+\d+$")


def _cut(text: str, width: int) -> str:
    """`text` in `width` characters, cut with an ellipsis; a trailing count (" +8", other
    regions) is kept whole."""
    if len(text) <= width:
        return text
    more = _MORE.search(text)
    tail = more.group(0) if more and len(more.group(0)) < width - 1 else ""
    head = text[: len(text) - len(tail)]
    return head[: max(width - len(tail) - 1, 0)] + ELLIPSIS + tail


def render(
    header: list[str], rows: list[list[str]], right: set[int], widths: list[int] | None = None
) -> str:
    if widths is None:
        widths = [max(len(r[k]) for r in [header, *rows]) for k in range(len(header))]
    lines = [
        "  ".join(
            _cut(c, w).rjust(w) if k in right else _cut(c, w).ljust(w)
            for k, (c, w) in enumerate(zip(r, widths))
        ).rstrip()
        for r in [header, *rows]
    ]
    return "\n".join(lines)


def wrap(text: str, width: int | None) -> str:
    """A paragraph (the footer) wrapped to `width`; one line when there is no limit."""
    return text if width is None else textwrap.fill(text, width, break_on_hyphens=False)


def _location_text(row: CollapsedOffer | CatalogItem) -> str:
    if isinstance(row, CollapsedOffer):
        more = f" +{row.other_locations}" if row.other_locations else ""
        return row.offer.location + more
    return row.location


def row_offer(row: CollapsedOffer | CatalogItem) -> CatalogItem:
    """The offer a table row shows."""
    return row.offer if isinstance(row, CollapsedOffer) else row


_offer = row_offer


def offer_columns(per_gpu: bool, tflops: bool = False) -> list[Column[Any]]:
    """The columns of the offers table, most important first within each priority. A column
    more is one entry (`priority` says when it goes on a narrow terminal)."""
    o = _offer
    columns: list[Column[Any]] = [
        Column("PROVIDER", lambda r: o(r).provider, 1, min_width=8, required=True),
        Column("INSTANCE", lambda r: o(r).instance_name, 4, min_width=14, required=True),
        Column("LOCATION", _location_text, 4, min_width=10, required=True),
        Column("PRICE/H", lambda r: price(o(r).price), 0, right=True, required=True),
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
    return columns


def offers_table(
    offers: Sequence[CatalogItem | CollapsedOffer], per_gpu: bool = False, width: int | None = None
) -> str:
    """One row per offer, or per collapsed offer (its cheapest location, `+N` other
    locations). A `$/GPU/H` column is added when any offer has GPUs, or `per_gpu`; a
    `TFLOPS/$` column (dense BF16 TFLOPS per USD/hour) when any offer has a figure."""
    per_gpu = per_gpu or any(_offer(i).gpu_count for i in offers)
    tflops = any(_offer(i).tflops_per_dollar is not None for i in offers)
    columns = show_what_differs(offer_columns(per_gpu, tflops), offers, width)
    return table(columns, offers, width)


# The columns showing each of `distinct.MAIN_FIELDS`.
_FIELD_HEADERS = {"spot": "SPOT", "cpu": "CPU", "memory": "MEMORY", "disk_size": "DISK"}


def show_what_differs(
    columns: list[Column[Any]],
    offers: Sequence[CatalogItem | CollapsedOffer],
    width: int | None,
) -> list[Column[Any]]:
    """`columns`, with a `DIFFERS` column for rows that the table at `width` would show alike
    but for the price: for each, what tells it from its look-alikes (`distinct.differences`)
    that the columns kept at that width do not show - a dropped CPU or MEMORY column, an
    instance name cut short, a flag or a `provider_data` value. Where spot and on-demand
    offers are look-alikes the SPOT column is kept (required), since every row's price reads
    differently by it."""
    from gpuhunt._internal import distinct

    found = distinct.differences([_offer(i) for i in offers])
    if not found:
        return columns
    if any("spot" in fields for fields in found.values()):
        columns = [
            dataclasses.replace(c, required=True) if c.header == "SPOT" else c for c in columns
        ]
    extra: list[Column[Any]] = []
    texts: dict[int, str] = {}  # id(row) -> its DIFFERS cell, refilled each round
    column: Column[Any] = Column(
        "DIFFERS", lambda r: texts.get(id(r), ""), 2, min_width=8, required=True
    )
    longest = max(len(_offer(offers[n]).instance_name) for n in found)
    # Each column's full width, measured once (the DIFFERS column's per round, from its texts).
    full = [max([len(c.header), *(len(c.cell(r)) for r in offers)]) for c in columns]
    for _ in range(3):  # the column changes what fits; settle in a few rounds
        widths = full + [max([len("DIFFERS"), *map(len, texts.values())])] * len(extra)
        shown = _shown_widths([*columns, *extra], widths, width)
        hidden = {f for f, h in _FIELD_HEADERS.items() if h not in shown}
        if shown.get("INSTANCE", 0) < longest:
            hidden.add("instance_name")
        texts.clear()
        for n, fields in found.items():
            told = [f for f in fields if f in hidden or "." in f or f == "flags"]
            texts[id(offers[n])] = distinct.describe(_offer(offers[n]), told)
        want = [column] if any(texts.values()) else []
        if len(want) == len(extra):
            break
        extra = want
    return columns + extra


def _shown_widths(
    columns: Sequence[Column[Any]], widths: Sequence[int], width: int | None
) -> dict[str, int]:
    """Header -> width of the columns (of full `widths`) that `table` keeps at `width`."""
    kept = fit([(w, c.priority, c.min_width, c.required) for w, c in zip(widths, columns)], width)
    return {columns[k].header: w for k, w in kept}


# ------------------------------------------------------------------ --group-by gpu


@dataclass
class GpuGroup:
    """Offers of one GPU model (name and memory) in one count."""

    gpu_name: str
    gpu_memory: float | None
    gpu_count: int
    offers: int = 0
    providers: set[str] = field(default_factory=set)
    on_demand: CatalogItem | None = None  # the cheapest
    spot: CatalogItem | None = None  # the cheapest

    def add(self, i: CatalogItem) -> None:
        self.offers += 1
        self.providers.add(i.provider)
        if i.spot:
            if self.spot is None or i.price < self.spot.price:
                self.spot = i
        elif self.on_demand is None or i.price < self.on_demand.price:
            self.on_demand = i

    def as_dict(self) -> dict[str, Any]:
        def cheapest(i: CatalogItem | None) -> dict[str, Any] | None:
            if i is None:
                return None
            return {"price": i.price, "provider": i.provider, "location": i.location}

        return {
            "gpu_name": self.gpu_name,
            "gpu_memory": self.gpu_memory,
            "gpu_count": self.gpu_count,
            "on_demand": cheapest(self.on_demand),
            "spot": cheapest(self.spot),
            "offers": self.offers,
            "providers": len(self.providers),
        }

    def flat(self) -> dict[str, Any]:
        """`as_dict` with the cheapest offers spread into columns (for CSV)."""
        d = self.as_dict()
        out = {k: d[k] for k in ("gpu_name", "gpu_memory", "gpu_count")}
        for kind in ("on_demand", "spot"):
            for k in ("price", "provider", "location"):
                out[f"{kind}_{k}"] = (d[kind] or {}).get(k)
        out["offers"], out["providers"] = d["offers"], d["providers"]
        return out


GROUP_CSV_FIELDS = [
    "gpu_name",
    "gpu_memory",
    "gpu_count",
    *(f"{kind}_{k}" for kind in ("on_demand", "spot") for k in ("price", "provider", "location")),
    "offers",
    "providers",
]


def group_by_gpu(offers: Iterable[CatalogItem]) -> list[GpuGroup]:
    """One group per GPU model and count, ordered by GPU name, memory and count; offers
    without GPUs are left out."""
    groups: dict[tuple[str, float | None, int], GpuGroup] = {}
    for i in offers:
        if not i.gpu_count or not i.gpu_name:
            continue
        key = (i.gpu_name, i.gpu_memory, i.gpu_count)
        group = groups.get(key)
        if group is None:
            group = groups[key] = GpuGroup(i.gpu_name, i.gpu_memory, i.gpu_count)
        group.add(i)
    return sorted(
        groups.values(),
        key=lambda g: (g.gpu_name.lower(), g.gpu_memory or 0.0, g.gpu_count),
    )


def _where(i: CatalogItem | None) -> str:
    return "-" if i is None else f"{i.provider} {i.location}".strip()


GROUP_COLUMNS: list[Column[GpuGroup]] = [
    Column("GPU", lambda g: f"{g.gpu_name} {_num(g.gpu_memory)}GB", 1, min_width=10, required=True),
    Column("COUNT", lambda g: str(g.gpu_count), 0, right=True, required=True),
    Column(
        "ON-DEMAND/H",
        lambda g: price(g.on_demand.price if g.on_demand else None),
        0,
        right=True,
        required=True,
    ),
    Column("PROVIDER/REGION", lambda g: _where(g.on_demand), 2, min_width=15, required=True),
    Column("SPOT/H", lambda g: price(g.spot.price if g.spot else None), 3, right=True),
    Column("PROVIDER/REGION", lambda g: _where(g.spot), 4, min_width=15),
    Column("OFFERS", lambda g: str(g.offers), 5, right=True),
    Column("PROVIDERS", lambda g: str(len(g.providers)), 6, right=True),
]


def groups_table(groups: list[GpuGroup], width: int | None = None) -> str:
    return table(GROUP_COLUMNS, groups, width)


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
    return {
        p: freshness.describe(None if when is None else max(now - when, dt.timedelta(0)))
        for p, when in sorted(recorded.items())
    }


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
