"""The `gpuhunt history` and `gpuhunt catalog diff` commands (argparse and output); the data
comes from `history.api`."""

from __future__ import annotations

import argparse
import csv
import json
import sys
from typing import Any

from gpuhunt._internal.cli_format import fitted, render, terminal_width
from gpuhunt._internal.cli_format import price as _price
from gpuhunt._internal.errors import InputError
from gpuhunt._internal.gpu_names import canonical_gpu_name, closest_gpu_names
from gpuhunt._internal.history.api import catalog_history, catalog_url_of, diff
from gpuhunt._internal.history.daily import sparkline
from gpuhunt._internal.history.diff import Listed
from gpuhunt._internal.load import transport
from gpuhunt._internal.load.context import Context
from gpuhunt._internal.load.settings import Settings


def register_cli(sub: Any, cat_sub: Any) -> None:
    h = sub.add_parser(
        "history",
        help="cheapest price per day, per GPU model or instance, from the published history",
        description="The cheapest price on each day (per GPU per hour, or per instance per "
        "hour with --by instance) of the offers matching the filters, from the price history "
        "published with the catalog.",
    )
    h.add_argument("--gpu", action="append", dest="gpu_name", help="GPU name (repeatable)")
    h.add_argument("--provider", action="append", help="provider name (repeatable)")
    h.add_argument("--location", action="append", help="region or zone (repeatable)")
    spot = h.add_mutually_exclusive_group()
    spot.add_argument("--spot", dest="spot", action="store_true", default=None)
    spot.add_argument("--on-demand", dest="spot", action="store_false")
    h.add_argument("--since", help="first day to show, YYYY-MM-DD")
    h.add_argument("--by", choices=["gpu", "instance"], default="gpu")
    h.add_argument("--limit", type=int, default=30, help="lines to print (0: all; default 30)")
    h.add_argument("--daily", action="store_true", help="also print one row per day")
    fmt = h.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="JSON output")
    fmt.add_argument("--csv", action="store_true", help="CSV output: name,date,price,where")
    h.add_argument(
        "--plot", metavar="FILE", help="draw the lines to FILE.png or FILE.svg (matplotlib)"
    )
    h.add_argument("--catalog-url", help="where the catalog is published")
    h.add_argument("--version", help="read the history as of this version (default: the latest)")
    h.set_defaults(run=_cmd_history)

    d = cat_sub.add_parser(
        "diff",
        help="offers added, removed and repriced between two catalogs",
        description="Compare two catalogs: version names (or `latest`) at --catalog-url, base "
        "URLs, local build folders, folders of {provider}.csv, or catalog zips.",
    )
    d.add_argument("old")
    d.add_argument("new")
    d.add_argument("--catalog-url", help="where version names are looked up")
    d.add_argument("--limit", type=int, default=20, help="offers listed per section (0: all)")
    d.add_argument("--json", action="store_true", help="JSON output (everything)")
    d.set_defaults(run=_cmd_diff)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:+.1f}%"


def _table(rows: list[list[str]], right: set[int]) -> None:
    """Print rows[0] as the header over the rest, aligned as `gpuhunt query` aligns."""
    print(render(rows[0], rows[1:], right))


def _check_gpu_names(names: list[str] | None) -> None:
    for name in names or []:
        if canonical_gpu_name(name) is None:
            close = closest_gpu_names(name)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise InputError(f"Unknown GPU name {name!r}{hint}")


def _cmd_history(args: argparse.Namespace) -> int:
    _check_gpu_names(args.gpu_name)
    settings = Settings.from_env()  # a command's entry point: the environment is read here
    url = catalog_url_of(args.catalog_url, settings)
    got = catalog_history(
        url,
        context=Context(settings=settings),
        load_timeout=settings.load_timeout,
        gpu_name=args.gpu_name,
        provider=args.provider,
        location=args.location,
        spot=args.spot,
        since=args.since,
        by=args.by,
        version=args.version,
    )
    if args.plot:
        from gpuhunt._internal.history import plot

        fig = plot.save(got, args.plot)
        print(f"wrote {args.plot}: {len(fig.axes[0].get_lines())} lines", file=sys.stderr)
    if args.json:
        json.dump(got.to_dict(), sys.stdout, indent=2)
        print()
        return 0
    if args.csv:
        w = csv.writer(sys.stdout, lineterminator="\n")
        w.writerow(["name", "date", "price", "where"])
        w.writerows(got.rows())
        return 0
    shown = got.series if args.limit <= 0 else got.series[: args.limit]
    unit = "$/GPU/h" if got.by == "gpu" else "$/h"
    if not shown:
        print(f"No offers match in the price history of catalog {got.version}.")
    else:
        header = [
            "GPU" if got.by == "gpu" else "INSTANCE",
            "FIRST",
            "LAST",
            "MIN",
            "MAX",
            "CHANGE",
            "CHEAPEST PER DAY",
            "LAST AT",
        ]
        rows = [header]
        for s in shown:
            known = s.known()
            change = 100 * (known[-1] - known[0]) / known[0] if known[0] else None
            rows.append(
                [
                    s.name,
                    _price(known[0]),
                    _price(known[-1]),
                    _price(min(known)),
                    _price(max(known)),
                    _pct(change),
                    sparkline(s.prices),
                    next((w for w in reversed(s.where) if w), "-"),
                ]
            )
        _table(rows, {1, 2, 3, 4, 5})
        if args.daily:
            print()
            daily = [["DATE", *(s.name for s in shown)]]
            for i, d in enumerate(got.days):
                daily.append([d.isoformat(), *(_price(s.prices[i]) for s in shown)])
            _table(daily, set(range(1, len(daily[0]))))
        print(
            f"\n{len(shown)} of {len(got.series)} lines, {unit}, {got.days[0]} to {got.days[-1]}, "
            f"from the history of catalog {got.version} at {transport.safe_url(got.url or url)}."
        )
    if got.missing:
        print(f"gpuhunt: note: no price history for {', '.join(got.missing)}", file=sys.stderr)
    return 0


# (priority, min_width, required) of the diff tables' columns, by header: on a narrow terminal
# the least important (highest) go first, as in `gpuhunt query` (cli_format.fit).
_DIFF_SPECS: dict[str, tuple[int, int | None, bool]] = {
    "PROVIDER": (1, 8, True),
    "INSTANCE": (4, 14, True),
    "LOCATION": (5, 10, True),
    "SPOT": (6, None, False),
    "GPU": (3, 8, True),
    "OLD": (7, None, False),
    "NEW": (0, None, True),
    "CHANGE": (8, None, False),
    "%": (0, None, True),
    "PRICE": (0, None, True),
    "ADDED": (6, None, False),
    "REMOVED": (6, None, False),
    "UP": (7, None, False),
    "DOWN": (7, None, False),
    "LARGEST": (0, None, True),
}


def _fitted_table(rows: list[list[str]], right: set[int]) -> None:
    specs = [_DIFF_SPECS.get(h, (0, None, True)) for h in rows[0]]
    print(fitted(rows[0], rows[1:], right, specs, terminal_width()))


def _offer_cells(o: Listed) -> list[str]:
    gpu = f"{o.gpu_count}x{o.gpu_name}" if o.gpu_count else "-"
    return [o.provider, o.instance_name, o.location, "spot" if o.spot else "on-demand", gpu]


def _cmd_diff(args: argparse.Namespace) -> int:
    result = diff(args.old, args.new, catalog_url=args.catalog_url)
    if args.json:
        json.dump(result.to_dict(), sys.stdout, indent=2)
        print()
        return 0

    def cut(items: list[Any]) -> list[Any]:
        return items if args.limit <= 0 else items[: args.limit]

    print(
        f"{result.old} -> {result.new}: {len(result.added)} added, {len(result.removed)} "
        f"removed, {len(result.changed)} price change{'' if len(result.changed) == 1 else 's'}"
    )
    for p in sorted(set(result.new_providers) - set(result.old_providers)):
        print(f"  new provider: {p}")
    for p in sorted(set(result.old_providers) - set(result.new_providers)):
        print(f"  provider gone: {p}")
    if result.summary:
        print()
        rows = [["PROVIDER", "GPU", "ADDED", "REMOVED", "UP", "DOWN", "LARGEST"]]
        for g in cut(result.summary):
            rows.append(
                [
                    g.provider,
                    g.gpu,
                    str(g.added),
                    str(g.removed),
                    str(g.increased),
                    str(g.decreased),
                    _pct(g.largest.percent) if g.largest else "-",
                ]
            )
        _fitted_table(rows, {2, 3, 4, 5, 6})
    if result.changed:
        print("\nPrice changes, largest first:")
        rows = [["PROVIDER", "INSTANCE", "LOCATION", "SPOT", "GPU", "OLD", "NEW", "CHANGE", "%"]]
        for c in cut(result.changed):
            sign = "+" if c.change > 0 else "-"
            rows.append(
                [
                    *_offer_cells(c.offer),
                    _price(c.old_price),
                    _price(c.new_price),
                    sign + _price(abs(c.change)),
                    _pct(c.percent),
                ]
            )
        _fitted_table(rows, {5, 6, 7, 8})
    for title, offers in (("Added", result.added), ("Removed", result.removed)):
        if offers:
            print(f"\n{title}:")
            rows = [["PROVIDER", "INSTANCE", "LOCATION", "SPOT", "GPU", "PRICE"]]
            rows += [[*_offer_cells(o), _price(o.price)] for o in cut(offers)]
            _fitted_table(rows, {5})
    return 0
