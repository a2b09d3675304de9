"""`gpuhunt query`: its options, their checks, and the answer (offers or `--group-by gpu`
groups, through the renderer table of `render`; the footer)."""

from __future__ import annotations

import argparse
import logging
import sys
import textwrap
from collections.abc import Callable, Container, Sequence
from typing import TYPE_CHECKING, Any

from gpuhunt._internal import query_checks, registry
from gpuhunt._internal.cli import costs, layout, render
from gpuhunt._internal.cli import footer as footers
from gpuhunt._internal.cli import groups as grouping
from gpuhunt._internal.cli.commands import command
from gpuhunt._internal.collapse import CollapsedOffer, collapse_regions
from gpuhunt._internal.errors import QueryInputError, UsageError
from gpuhunt._internal.models import CatalogItem
from gpuhunt._internal.query import spec
from gpuhunt._internal.query.filters import make_filter
from gpuhunt._internal.query.order import sort_offers

if TYPE_CHECKING:
    from gpuhunt._internal.catalog import Catalog
    from gpuhunt._internal.catalog_status import CatalogStatus
    from gpuhunt._internal.query.table import Table
    from gpuhunt._internal.query.top import Top

logger = logging.getLogger("gpuhunt")


DEFAULT_LIMIT = 50  # table rows when --limit is not given


HELP = "search the catalog"
DESCRIPTION = (
    "Search the catalog of offers, cheapest first. Prices are USD per hour; "
    "memory and disk are GB, GPU memory GiB (as clouds market it: an 80GB A100 is 80). "
    "Ranges are inclusive."
)


def arguments(p: argparse.ArgumentParser) -> None:
    """The options of `gpuhunt query`: one per filter of the query spec (`query/spec.py`), in
    its order, then the views and what only a terminal needs."""
    for option in (*spec.FILTERS, *spec.COSTS, spec.VIEWS[0]):
        add_option(p, option)
    p.add_argument(
        "--group-by",
        choices=["gpu"],
        help="gpu: one row per GPU model and count, with the cheapest on-demand and spot price",
    )
    p.add_argument(
        "--explain",
        action="store_true",
        help="say how many offers each filter leaves, which filter removed the last, the "
        "cheapest offers failing one filter, and who lists a GPU no offer has (printed "
        "anyway when nothing matches)",
    )
    add_option(p, spec.VIEWS[1])
    p.add_argument(
        "--limit",
        type=int,
        help=f"rows to print (0: all); default {DEFAULT_LIMIT} in the table, every row with "
        "--json and --csv and every GPU model with --group-by gpu",
    )
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="JSON output (every offer field)")
    fmt.add_argument("--csv", action="store_true", help="CSV output (every offer field)")
    p.add_argument(
        "--catalog-url",
        help="where the catalog is published (default: GPUHUNT_CATALOG_URL or the public bucket)",
    )
    p.add_argument(
        "--online",
        action="store_true",
        help="also query online providers live (those without credentials are skipped)",
    )
    p.add_argument(
        "--refresh",
        action="store_true",
        help="ask the network for the latest catalog even if the disk cache was checked "
        "less than GPUHUNT_RELOAD_INTERVAL ago",
    )


def add_option(p: argparse.ArgumentParser, option: spec.Option) -> None:
    """`option` of the query spec as the option(s) of `p` setting `option.name`."""
    if option.switches:
        group: Any = p.add_mutually_exclusive_group() if len(option.switches) > 1 else p
        for switch in option.switches:
            group.add_argument(
                switch.flag,
                dest=option.name,
                action="store_const",
                const=switch.value,
                default=option.default,
                help=switch.doc,
            )
        return
    kw: dict[str, Any] = {"help": option.doc, "dest": option.name}
    if option.read is not None:
        kw["type"] = _argument_type(option.read)
    if option.metavar is not None:
        kw["metavar"] = option.metavar
    if option.choices is not None:
        kw["choices"] = list(option.choices)
    if option.default is not None:
        kw["default"] = option.default
    p.add_argument(option.option, action="append" if option.repeatable else "store", **kw)


def _argument_type(read: Callable[[str], Any]) -> Callable[[str], Any]:
    """`read` for argparse: its ValueError a usage error with its own message, as argparse
    shows it (a number's type is argparse's own, for its "invalid int value" message)."""
    if read in (int, float, str.lower):
        return read

    def typed(text: str) -> Any:
        try:
            return read(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    typed.__name__ = getattr(read, "__name__", "value")
    return typed


def usage_error(e: QueryInputError) -> UsageError:
    """A check's error in the command line's words: each filter as its option, and `--online`
    as the way to ask an online provider."""
    message = e.text(lambda name: spec.BY_NAME[name].labels[0])
    if e.online:
        message += ": add --online" + (f" {e.note}" if e.note else "")
    return UsageError(message)


def _check_query_args(args: argparse.Namespace) -> None:
    """A `UsageError` for a value that cannot be read or a range that no offer can match, in
    the options the user typed (`query_checks.check_query`)."""
    try:
        query_checks.check_query(query_filters(args))
    except QueryInputError as e:
        raise usage_error(e) from None
    if args.limit is not None and args.limit < 0:
        raise UsageError(f"--limit {args.limit} is negative (0 prints every row)")
    try:
        costs.check(args)
    except ValueError as e:
        raise UsageError(str(e)) from None


def query_filters(args: argparse.Namespace) -> dict[str, Any]:
    """The `Catalog.query` keywords of parsed `query` options: one per filter of the spec."""
    return {name: getattr(args, name) for name in spec.NAMES}


@command("query", help=HELP, description=DESCRIPTION, arguments=arguments)
def run(args: argparse.Namespace) -> int:
    """`gpuhunt query`: check the options, ask the catalog (and online providers), print."""
    # Lazy for start-up time: the catalog brings numpy and requests, which `gpuhunt --help`
    # and a bad option's usage error do not need.
    from gpuhunt._internal.catalog import Catalog

    _check_query_args(args)
    try:
        live = query_checks.live_providers(args.provider, args.online)
    except QueryInputError as e:
        raise usage_error(e) from None
    # Online providers are opt-in here: a terminal query should answer in a second from the
    # catalog, offline included, not wait on marketplaces. Library callers get them by default.
    catalog = Catalog(catalog_url=args.catalog_url)
    for provider in live:
        catalog.add_provider(provider)
    if args.refresh:
        catalog.load(refresh=True)  # asks the network, whatever the disk cache holds
    if args.gpu_name:
        problems = catalog.gpu_name_problems(args.gpu_name)
        if problems:
            raise UsageError("; ".join(problems))
    filters = query_filters(args)
    fmt = render.format_of(args)
    # An answer of the catalog's offers alone is chosen on its columns, as the server's
    # answers are (`top.choose`); the rest (online providers, --group-by) is built whole by
    # `Catalog.query`.
    # A priced answer (a usage, a term, a job, `--max-interruption`; the table of spot offers,
    # with its INTERRUPT column) is built from `Catalog.query`'s offers: its order is what one
    # would pay. Spot offers' --json and --csv rows carry no band unless asked (docs/costs.md).
    priced_view = (
        bool(costs.given(args))
        or args.max_interruption is not None
        or (args.spot is True and fmt == "table")
    )
    plain = args.group_by != "gpu" and not live and not priced_view
    chosen = _chosen(catalog, filters, args) if plain else None
    offers: list[CatalogItem] = [] if chosen is not None else list(catalog.query(**filters))
    status = catalog.status()
    try:
        query_checks.check_stand_ins(args.provider, args.online, lambda: status.offers)
    except QueryInputError as e:
        raise usage_error(e) from None
    priced = None
    if chosen is not None:
        found, table = chosen
        answer = (
            render.offer_rows_answer(found, table)
            if fmt != "table"
            else render.Answer(text=lambda: _chosen_table(args, found, table, status))
        )
        matched = found.matched
    else:
        sort_offers(offers, args.sort)
        asked_live = {p.NAME for p in live}
        if args.group_by != "gpu":  # a usage orders the offers by what one would pay
            offers, priced = costs.price_answer(catalog, args, offers)
        answer = (
            _groups(args, offers, status, asked_live)
            if args.group_by == "gpu"
            else _offers(args, offers, status, asked_live, priced)
        )
        matched = len(offers)
    render.emit(answer, fmt)
    # An online-only query never read the catalog: explaining the catalog would not help.
    online_only = bool(args.provider) and all(registry.spec(p).online for p in args.provider)
    if args.explain or (not matched and not online_only):
        _print_explanation(args, catalog, filters, costs.terms_note(priced))
    for name, err in status.online_errors.items():
        print(f"gpuhunt: warning: {name} left out: {err}", file=sys.stderr)
    return 0


def _chosen(
    catalog: Catalog, filters: dict[str, Any], args: argparse.Namespace
) -> tuple[Top, Table] | None:
    """The answer's rows chosen on the loaded table's columns (`top.choose`: the rows
    printed, every region a row for --json and --csv), and that table; None where only
    `Catalog.query` answers."""
    from gpuhunt._internal.query import top  # numpy: not for `gpuhunt --help` (see run)

    loaded = catalog.current()
    if loaded is None:
        return None
    machine = render.format_of(args) != "table"
    limit = args.limit if args.limit is not None else (0 if machine else DEFAULT_LIMIT)
    q = make_filter(**filters)
    sort = args.sort or "price"
    found = top.choose(loaded.table, q, sort, limit or None, machine or bool(args.all_regions))
    return None if found is None else (found, loaded.table)


def _chosen_table(args: argparse.Namespace, found: Top, table: Table, status: CatalogStatus) -> str:
    from gpuhunt._internal.query import top

    return _table_text(args, top.offers_of(found, table), found.total, found.matched, status, ())


def _print_explanation(
    args: argparse.Namespace, catalog: Catalog, filters: dict[str, Any], note: str | None = None
) -> None:
    """`Catalog.explain` of the query, after the table (to stderr after --json/--csv, which
    stay machine-readable). Filters are listed in `QueryFilter`'s order."""
    given = {k: v for k, v in filters.items() if v is not None}
    machine = bool(args.json or args.csv)
    out = sys.stderr if machine else sys.stdout
    width = layout.terminal_width(out)
    text = catalog.explain(**given).lines() + ([note] if note else [])
    if not machine:
        print(file=out)
    for line in text:
        indent = " " * (len(line) - len(line.lstrip()))
        if width is None:
            print(line, file=out)
            continue
        wrapped = textwrap.fill(
            line.strip(),
            width,
            initial_indent=indent,
            subsequent_indent=indent + "  ",
            break_on_hyphens=False,
        )
        print(wrapped, file=out)


def _cut(args: argparse.Namespace, rows: list[Any], machine: bool) -> list[Any]:
    """The rows to print: `--limit` of them; without it, all for --json/--csv (a script gets
    the whole answer) and `DEFAULT_LIMIT` for the table."""
    limit = args.limit if args.limit is not None else (0 if machine else DEFAULT_LIMIT)
    return rows if limit == 0 else rows[:limit]


def _cut_note(args: argparse.Namespace, shown: int, total: int) -> str:
    if args.limit is None and shown < total:
        return f" (--limit 0 shows all {total})"
    return ""


def _offers(
    args: argparse.Namespace,
    offers: list[CatalogItem],
    status: CatalogStatus,
    asked_live: Container[str] = (),
    priced: costs.Priced | None = None,
) -> render.Answer:
    machine = render.format_of(args) != "table"
    # Priced for a usage, each offer is a way to pay in its own region: none is collapsed.
    every_region = args.all_regions or any(n != "months" for n in costs.given(args))

    def table() -> str:
        rows: list[Any] = offers if every_region else collapse_regions(offers)
        cut = _cut(args, rows, machine=False)
        extra = priced.columns(cut) if priced is not None and cut else []
        return _table_text(args, cut, len(rows), len(offers), status, asked_live, extra)

    rows = _cut(args, offers, machine=True) if machine else []
    return costs.offers_answer(rows, table, priced, args)


def _table_text(
    args: argparse.Namespace,
    cut: Sequence[CatalogItem | CollapsedOffer],
    n_rows: int,
    n_offers: int,
    status: CatalogStatus,
    asked_live: Container[str],
    extra: Sequence[Any] = (),
) -> str:
    """The offers table of `cut`, the rows shown of `n_rows` (distinct offers, or every
    region's with --all-regions) of the `n_offers` matched, and its footer; `extra`: the
    columns of a priced answer after the offer's own."""
    width = layout.terminal_width()
    providers = {render.row_offer(r).provider for r in cut}
    # The bundled snapshot's online providers (standing in for a live answer) have a source too.
    offline = providers & (set(registry.OFFLINE_PROVIDERS) | set(status.sources or {}))
    count = f"{len(cut)} of {n_rows} offers{_cut_note(args, len(cut), n_rows)}"
    if n_rows < n_offers:
        count += f", each at its cheapest region ({n_offers} with every region: --all-regions)"
    count += "."
    shown = [render.row_offer(r) for r in cut]
    notes = "".join(" " + n for n in render.answer_notes(shown, args.sort, args.online))
    stand_ins = tuple(render.stand_in_note(providers, asked_live, s) for s in (False, True))
    full, short = (
        footers.query_footer_lines(count + notes, args, status, offline, stand_ins, s)
        for s in (0, 1)
    )
    footer = footers.footer(full, short, width)
    if not cut:  # an empty answer is its footer and its explanation
        return render.lines(footer)
    per_gpu = args.sort == "price-per-gpu"
    keep = footers.filtered_columns(args)
    return render.lines(render.offers_table(cut, per_gpu, width, keep, list(extra)), "", footer)


def _groups(
    args: argparse.Namespace,
    offers: list[CatalogItem],
    status: CatalogStatus,
    asked_live: Container[str] = (),
) -> render.Answer:
    groups = grouping.group_by_gpu(offers)
    # Every group by default, in every format: the grouped view is the menu of GPU models a
    # person picks from, in name order so a model is found where expected; cutting it at
    # DEFAULT_LIMIT in name order hid every model after "B" (H100 included). --limit N cuts it.
    shown = _cut(args, groups, machine=True)

    def table() -> str:
        width = layout.terminal_width()
        n = sum(g.offers for g in groups)
        count = (
            f"{len(shown)} of {len(groups)} GPU models and counts"
            f"{_cut_note(args, len(shown), len(groups))}, cheapest first, from {n} offers with "
            "GPUs."
        )
        online = {i.provider for i in offers if i.gpu_count}
        stand_ins = tuple(render.stand_in_note(online, asked_live, s) for s in (False, True))
        full, short = (
            footers.query_footer_lines(count, args, status, None, stand_ins, s) for s in (0, 1)
        )
        footer = footers.footer(full, short, width)
        return render.lines(grouping.groups_table(shown, width), "\n" + footer)

    return render.groups_answer(shown, table)
