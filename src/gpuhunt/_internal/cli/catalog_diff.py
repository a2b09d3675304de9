"""`gpuhunt catalog diff OLD NEW`: offers added, removed and repriced between two catalogs
(argparse and output; the comparison is `history.api.diff`, imported when the command runs)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from gpuhunt._internal.cli import layout, render
from gpuhunt._internal.cli.commands import command
from gpuhunt._internal.cli.layout import price as _price

if TYPE_CHECKING:
    from gpuhunt._internal.history.diff import CatalogDiff, Listed


def _arguments(d: argparse.ArgumentParser) -> None:
    d.add_argument("old")
    d.add_argument("new")
    d.add_argument("--catalog-url", help="where version names are looked up")
    d.add_argument("--limit", type=int, default=20, help="offers listed per section (0: all)")
    d.add_argument("--json", action="store_true", help="JSON output (everything)")


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:+.1f}%"


# (priority, min_width, required) of the diff tables' columns, by header: on a narrow terminal
# the least important (highest) go first, as in `gpuhunt query` (layout.fit).
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


def _fitted_table(rows: list[list[str]], right: set[int]) -> str:
    specs = [_DIFF_SPECS.get(h, (0, None, True)) for h in rows[0]]
    return layout.fitted(rows[0], rows[1:], right, specs, layout.terminal_width())


def _offer_cells(o: Listed) -> list[str]:
    gpu = f"{o.gpu_count}x{o.gpu_name}" if o.gpu_count else "-"
    return [o.provider, o.instance_name, o.location, "spot" if o.spot else "on-demand", gpu]


@command(
    "catalog",
    "diff",
    help="offers added, removed and repriced between two catalogs",
    description="Compare two catalogs: version names (or `latest`) at --catalog-url, base "
    "URLs, local build folders, folders of {provider}.csv, or catalog zips.",
    arguments=_arguments,
)
def run(args: argparse.Namespace) -> int:
    from gpuhunt._internal.history.api import diff

    result = diff(args.old, args.new, catalog_url=args.catalog_url)
    answer = render.Answer(text=lambda: _text(result, args.limit), json=result.to_dict)
    render.emit(answer, render.format_of(args))
    return 0


def _text(result: CatalogDiff, limit: int) -> str:
    out: list[str] = []

    def cut(items: list[Any]) -> list[Any]:
        return items if limit <= 0 else items[:limit]

    out.append(
        f"{result.old} -> {result.new}: {len(result.added)} added, {len(result.removed)} "
        f"removed, {len(result.changed)} price change{'' if len(result.changed) == 1 else 's'}"
    )
    for p in sorted(set(result.new_providers) - set(result.old_providers)):
        out.append(f"  new provider: {p}")
    for p in sorted(set(result.old_providers) - set(result.new_providers)):
        out.append(f"  provider gone: {p}")
    if result.summary:
        out.append("")
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
        out.append(_fitted_table(rows, {2, 3, 4, 5, 6}))
    if result.changed:
        out.append("\nPrice changes, largest first:")
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
        out.append(_fitted_table(rows, {5, 6, 7, 8}))
    for title, offers in (("Added", result.added), ("Removed", result.removed)):
        if offers:
            out.append(f"\n{title}:")
            rows = [["PROVIDER", "INSTANCE", "LOCATION", "SPOT", "GPU", "PRICE"]]
            rows += [[*_offer_cells(o), _price(o.price)] for o in cut(offers)]
            out.append(_fitted_table(rows, {5}))
    return render.lines(*out)
