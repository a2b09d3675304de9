"""`gpuhunt query`: its options, their checks, and the answer (offers or `--group-by gpu`
groups, through the renderer table of `render`; the footer)."""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import logging
import re
import sys
import textwrap
from collections.abc import Callable, Container
from typing import TYPE_CHECKING, Any, TypeVar

from gpuhunt._internal import geography, registry, validate
from gpuhunt._internal.cli import render
from gpuhunt._internal.cli.commands import command
from gpuhunt._internal.collapse import collapse_regions
from gpuhunt._internal.errors import GPUHuntError, UnknownProviderError
from gpuhunt._internal.errors import UsageError as UsageError  # importable from here, as before
from gpuhunt._internal.models import CatalogItem, QueryFilter
from gpuhunt._internal.query.filters import make_filter
from gpuhunt._internal.validate import parse_version

if TYPE_CHECKING:
    from gpuhunt._internal.catalog import Catalog, CatalogStatus

logger = logging.getLogger("gpuhunt")


T = TypeVar("T")

DEFAULT_LIMIT = 50  # table rows when --limit is not given


HELP = "search the catalog"
DESCRIPTION = (
    "Search the catalog of offers, cheapest first. Prices are USD per hour; "
    "memory and disk are GB, GPU memory GiB (as clouds market it: an 80GB A100 is 80). "
    "Ranges are inclusive."
)


def arguments(p: argparse.ArgumentParser) -> None:
    """The options of `gpuhunt query`."""
    p.add_argument("--provider", action="append", help="provider name (repeatable)")
    p.add_argument(
        "--gpu",
        action="append",
        dest="gpu_name",
        help='GPU name, any common spelling: H100, "RTX 4090"; a size or form factor in the '
        'name asks for it: "A100 80GB", "H100 SXM", a100-80g-pcie (offers of unknown form '
        "factor are kept); NAME:COUNT asks for exactly COUNT of them: A100:8 (repeatable)",
    )
    p.add_argument("--gpu-vendor", choices=["nvidia", "amd", "google", "intel", "tenstorrent"])
    p.add_argument("--cpu-arch", choices=["x86", "arm"])
    p.add_argument(
        "--location",
        action="append",
        help='region or zone, or a shell-style pattern: us-east-1, "europe-*" (repeatable)',
    )
    p.add_argument(
        "--country",
        action="append",
        metavar="CC",
        help="ISO 3166 country code of the offer's location: DE, US (repeatable)",
    )
    p.add_argument(
        "--area",
        action="append",
        choices=list(geography.AREAS),
        type=str.lower,
        help="area of the offer's location (repeatable); locations gpuhunt cannot place are "
        "left out when --country or --area is given",
    )
    for name, kind, unit in [
        ("cpu", int, "vCPUs"),
        ("memory", float, "RAM in GB"),
        ("gpu-count", int, "GPUs"),
        ("gpu-memory", float, "memory per GPU in GiB"),
        ("total-gpu-memory", float, "memory of all GPUs in GiB"),
        ("disk-size", int, "disk in GB (offers of unknown disk size are kept)"),
        ("price", float, "USD per hour"),
    ]:
        p.add_argument(f"--min-{name}", type=kind, metavar="N", help=f"minimum {unit}")
        p.add_argument(f"--max-{name}", type=kind, metavar="N", help=f"maximum {unit}")
    p.add_argument("--min-compute-capability", metavar="X.Y", help="NVIDIA only, e.g. 8.0 or 9")
    p.add_argument("--max-compute-capability", metavar="X.Y")
    p.add_argument(
        "--min-cuda",
        metavar="X.Y",
        help="CUDA version the host must run, e.g. 12.8: NVIDIA GPU offers only (RunPod and "
        "Vast.ai say their hosts' version; offers of providers that do not are kept)",
    )
    spot = p.add_mutually_exclusive_group()
    spot.add_argument(
        "--spot", dest="spot", action="store_true", default=None, help="spot offers only"
    )
    spot.add_argument(
        "--on-demand", dest="spot", action="store_false", help="on-demand offers only"
    )
    p.add_argument(
        "--allow-flag", action="append", dest="allowed_flags", help="hide offers with other flags"
    )
    p.add_argument(
        "--available",
        action="store_true",
        default=None,
        help="offers their provider read as available when they were observed only (offers "
        "whose provider does not say are left out)",
    )
    p.add_argument(
        "--max-age",
        type=_age,
        metavar="AGE",
        help="leave out offers observed longer ago than AGE, and offers of unknown age: a "
        "number and a unit, s, m, h or d (30d, 12h)",
    )
    p.add_argument(
        "--no-resales",
        dest="resale",
        action="store_false",
        default=None,
        help="leave out marketplace resales of another cloud's machine (Shadeform's Lambda "
        "offers, ...)",
    )
    p.add_argument(
        "--sort",
        choices=["price", "price-per-gpu", "gpu-memory", "tflops-per-dollar"],
        default="price",
        help="price: USD/hour (default); price-per-gpu: USD/hour per GPU; gpu-memory: largest "
        "first; tflops-per-dollar: most dense BF16 TFLOPS per USD/hour first (offers without a "
        "published figure last)",
    )
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
    p.add_argument(
        "--all-regions",
        action="store_true",
        help="one row per offer and region (default: each offer once, at its cheapest region, "
        "with the number of other regions selling it)",
    )
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


def _age(text: str) -> dt.timedelta:
    """`--max-age` (`validate.parse_age`); argparse makes the error a usage error."""
    try:
        return validate.parse_age(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


# The ranges are the library's (`validate.RANGES`); each is the options `--min-X`/`--max-X`.
_RANGES = [(name, "--{}-" + name.replace("_", "-")) for name in validate.RANGES]


def _check_query_args(args: argparse.Namespace) -> None:
    """A `UsageError` for a value that cannot be read or a range that no offer can match, in
    the options the user typed (the library's own check, `make_filter`, comes after)."""
    filters = {f.name: getattr(args, f.name) for f in dataclasses.fields(QueryFilter)}
    for name, flag in _RANGES:
        low, high = filters[f"min_{name}"], filters[f"max_{name}"]
        if name == "compute_capability":
            low = _cli_value(lambda: parse_version(filters["min_compute_capability"], "min_cc"))
            high = _cli_value(lambda: parse_version(filters["max_compute_capability"], "max_cc"))
        for bound, which in ((low, "min"), (high, "max")):
            if isinstance(bound, (int, float)) and bound < 0:
                raise UsageError(f"{flag.format(which)} {bound:g} is negative")
        if low is not None and high is not None and low > high:
            shown = [
                ".".join(map(str, v)) if isinstance(v, tuple) else f"{v:g}" for v in (low, high)
            ]
            raise UsageError(
                f"{flag.format('min')} {shown[0]} is above {flag.format('max')} {shown[1]}: "
                "no offer can match"
            )
    _cli_value(lambda: make_filter(**filters))
    if args.limit is not None and args.limit < 0:
        raise UsageError(f"--limit {args.limit} is negative (0 prints every row)")


_OPTION = {
    "min_cc": "min_compute_capability",
    "max_cc": "max_compute_capability",
    "gpu_name": "gpu",
}


def _cli_value(read: Callable[[], T]) -> T:
    """`read()`, its TypeError/ValueError a `UsageError` naming the option, not the keyword
    ("Invalid min_cuda ..." becomes "Invalid --min-cuda ...")."""
    try:
        return read()
    except UnknownProviderError as e:  # names no keyword; "did you mean" as it is
        raise UsageError(str(e)) from None
    except (TypeError, ValueError) as e:
        message = re.sub(
            r"\b((min|max)_[a-z_]+|gpu_name|gpu_vendor|cpu_arch|location|provider|spot)\b",
            lambda m: "--" + _OPTION.get(m.group(0), m.group(0)).replace("_", "-"),
            str(e),
        )
        raise UsageError(message) from None


def _live_providers(args: argparse.Namespace) -> list[Any]:
    """The online providers a query asks: none without --online (and asking for one by name
    then is an error saying so); with it, those named or else every one whose credentials are
    set. A provider named but missing its credential or SDK is an error naming what is missing."""
    named = [registry.spec(p) for p in args.provider or []]  # raises on unknown names
    named_online = [s for s in named if s.online]
    if not args.online:
        if not named_online:  # nothing to check: the bundled snapshot is not even opened
            return []
        # Those the bundled snapshot holds are answered from it while the catalog cannot be
        # loaded (`_check_stand_ins` after the query); the others need --online.
        from gpuhunt._internal.load import sources  # lazy for start-up time: only needed here

        held = sources.bundled_providers()
        named_online = [s for s in named_online if s.name not in held]
        if named_online:
            names = ", ".join(s.name for s in named_online)
            what = "is an online provider" if len(named_online) == 1 else "are online providers"
            raise UsageError(f"{names} {what}, queried live: add --online")
        return []
    wanted = named_online if args.provider else [s for s in registry.PROVIDERS if s.online]
    live = []
    for spec in wanted:
        try:
            live.append(registry.provider_class(spec.name).from_env())
        except GPUHuntError as e:  # MissingCredsError or a missing SDK
            if args.provider:  # asked for by name: the user's setup to fix, exit 2
                raise UsageError(f"{spec.name}: {e}") from None
            logger.debug("Skipping online provider %s: %s", spec.name, e)
    return live


def _check_stand_ins(args: argparse.Namespace, status: CatalogStatus) -> None:
    """Online providers named without --online are answered only by a catalog holding their
    offers (the bundled snapshot); from any other catalog the answer would be an empty list
    that says nothing, so it is the usage error it was."""
    if args.online:
        return
    named = [registry.spec(p) for p in args.provider or []]
    missing = [s.name for s in named if s.online and s.name not in status.offers]
    if missing:
        names = ", ".join(missing)
        raise UsageError(
            f"{names} queried live: add --online (the bundled snapshot answers for it only "
            "while the catalog cannot be loaded)"
        )


def query_filters(args: argparse.Namespace) -> dict[str, Any]:
    """The `Catalog.query` keywords of parsed `query` options (`gpuhunt serve` and `gpuhunt mcp`
    build the same namespace from their parameters and ask through this too)."""
    # Every QueryFilter field is a `query` option of the same name (tests/_internal/test_cli.py).
    return {f.name: getattr(args, f.name) for f in dataclasses.fields(QueryFilter)}


@command("query", help=HELP, description=DESCRIPTION, arguments=arguments)
def run(args: argparse.Namespace) -> int:
    """`gpuhunt query`: check the options, ask the catalog (and online providers), print."""
    # Lazy for start-up time: the catalog brings numpy and requests, which `gpuhunt --help`
    # and a bad option's usage error do not need.
    from gpuhunt._internal.catalog import Catalog

    _check_query_args(args)
    live = _live_providers(args)
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
    offers: list[CatalogItem] = list(catalog.query(**filters))
    status = catalog.status()
    _check_stand_ins(args, status)
    render.sort_offers(offers, args.sort)
    asked_live = {p.NAME for p in live}
    answer = (
        _groups(args, offers, status, asked_live)
        if args.group_by == "gpu"
        else _offers(args, offers, status, asked_live)
    )
    render.emit(answer, render.format_of(args))
    # An online-only query never read the catalog: explaining the catalog would not help.
    online_only = bool(args.provider) and all(registry.spec(p).online for p in args.provider)
    if args.explain or (not offers and not online_only):
        _print_explanation(args, catalog, filters)
    for name, err in status.online_errors.items():
        print(f"gpuhunt: warning: {name} left out: {err}", file=sys.stderr)
    return 0


def _print_explanation(args: argparse.Namespace, catalog: Catalog, filters: dict[str, Any]) -> None:
    """`Catalog.explain` of the query, after the table (to stderr after --json/--csv, which
    stay machine-readable). Filters are listed in `QueryFilter`'s order."""
    given = {k: v for k, v in filters.items() if v is not None}
    machine = bool(args.json or args.csv)
    out = sys.stderr if machine else sys.stdout
    width = render.terminal_width(out)
    text = catalog.explain(**given).lines()
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
) -> render.Answer:
    machine = render.format_of(args) != "table"

    def table() -> str:
        width = render.terminal_width()
        rows: list[Any] = offers if args.all_regions else collapse_regions(offers)
        cut = _cut(args, rows, machine=False)
        providers = {render.row_offer(r).provider for r in cut}
        # The bundled snapshot's online providers (standing in for a live answer) have a
        # source too.
        offline = providers & (set(registry.OFFLINE_PROVIDERS) | set(status.sources or {}))
        count = f"{len(cut)} of {len(rows)} offers{_cut_note(args, len(cut), len(rows))}"
        if len(rows) < len(offers):
            count += (
                f", each at its cheapest region ({len(offers)} with every region: --all-regions)"
            )
        count += "."
        shown = [render.row_offer(r) for r in cut]
        notes = "".join(" " + n for n in render.answer_notes(shown, args.sort, args.online))
        stand_ins = tuple(render.stand_in_note(providers, asked_live, s) for s in (False, True))
        full, short = (
            render.query_footer_lines(count + notes, args, status, offline, stand_ins, s)
            for s in (0, 1)
        )
        footer = render.footer(full, short, width)
        if not cut:  # an empty answer is its footer and its explanation
            return render.lines(footer)
        per_gpu = args.sort == "price-per-gpu"
        keep = render.filtered_columns(args)
        return render.lines(render.offers_table(cut, per_gpu, width, keep), "", footer)

    return render.offers_answer(_cut(args, offers, machine=True) if machine else [], table)


def _groups(
    args: argparse.Namespace,
    offers: list[CatalogItem],
    status: CatalogStatus,
    asked_live: Container[str] = (),
) -> render.Answer:
    groups = render.group_by_gpu(offers)
    # Every group by default, in every format: the grouped view is the menu of GPU models a
    # person picks from, in name order so a model is found where expected; cutting it at
    # DEFAULT_LIMIT in name order hid every model after "B" (H100 included). --limit N cuts it.
    shown = _cut(args, groups, machine=True)

    def table() -> str:
        width = render.terminal_width()
        n = sum(g.offers for g in groups)
        count = (
            f"{len(shown)} of {len(groups)} GPU models and counts"
            f"{_cut_note(args, len(shown), len(groups))}, cheapest first, from {n} offers with "
            "GPUs."
        )
        online = {i.provider for i in offers if i.gpu_count}
        stand_ins = tuple(render.stand_in_note(online, asked_live, s) for s in (False, True))
        full, short = (
            render.query_footer_lines(count, args, status, None, stand_ins, s) for s in (0, 1)
        )
        footer = render.footer(full, short, width)
        return render.lines(render.groups_table(shown, width), "\n" + footer)

    return render.groups_answer(shown, table)
