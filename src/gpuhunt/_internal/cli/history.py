"""`gpuhunt history`: the cheapest price per day from the published price history (argparse and
output; the data comes from `history.api`, imported when the command runs)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from gpuhunt._internal.cli import layout, render
from gpuhunt._internal.cli.commands import command
from gpuhunt._internal.cli.layout import price as _price
from gpuhunt._internal.cli.query import add_option
from gpuhunt._internal.errors import InputError
from gpuhunt._internal.query import spec
from gpuhunt._internal.query_checks import check_gpu_names

if TYPE_CHECKING:
    from gpuhunt._internal.history.availability import AvailabilityHistory
    from gpuhunt._internal.history.daily import PriceHistory


def _arguments(h: argparse.ArgumentParser) -> None:
    for option in spec.HISTORY[: spec.HISTORY_LEAD]:
        add_option(h, option)
    h.add_argument("--limit", type=int, default=30, help="lines to print (0: all; default 30)")
    h.add_argument("--daily", action="store_true", help="also print one row per day")
    fmt = h.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="JSON output")
    fmt.add_argument("--csv", action="store_true", help="CSV output: name,date,price,where")
    h.add_argument(
        "--plot", metavar="FILE", help="draw the lines to FILE.png or FILE.svg (matplotlib)"
    )
    h.add_argument("--catalog-url", help="where the catalog is published")
    for option in spec.HISTORY[spec.HISTORY_LEAD :]:
        add_option(h, option)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:+.1f}%"


def _table(rows: list[list[str]], right: set[int]) -> str:
    """rows[0] as the header over the rest, aligned as `gpuhunt query` aligns."""
    return layout.render(rows[0], rows[1:], right)


@command(
    "history",
    help="cheapest price per day, per GPU model or instance, from the published history",
    description="The cheapest price on each day (per GPU per hour, or per instance per "
    "hour with --by instance) of the offers matching the filters, from the price history "
    "published with the catalog.",
    arguments=_arguments,
)
def run(args: argparse.Namespace) -> int:
    from gpuhunt._internal.history.api import catalog_history, catalog_url_of
    from gpuhunt._internal.load.context import Context
    from gpuhunt._internal.load.settings import Settings

    check_gpu_names(args.gpu_name)
    settings = Settings.from_env()  # a command's entry point: the environment is read here
    url = catalog_url_of(args.catalog_url, settings)
    if args.availability:
        from gpuhunt._internal.publish.s3 import ENDPOINT_ENV

        # A bucket at a custom endpoint (MinIO, moto) is named as `catalog publish` names it;
        # requests are signed when the environment has AWS credentials, anonymous otherwise.
        endpoint = os.environ.get(ENDPOINT_ENV) or None
        signed = bool(os.environ.get("AWS_ACCESS_KEY_ID") or os.environ.get("AWS_PROFILE"))
        return _availability(args, url, endpoint, not signed)
    got = catalog_history(
        url,
        spec.history_filters(args),
        context=Context(settings=settings),
        load_timeout=settings.load_timeout,
        version=args.version,
    )
    if args.plot:
        from gpuhunt._internal.history import plot

        fig = plot.save(got, args.plot)
        print(f"wrote {args.plot}: {len(fig.axes[0].get_lines())} lines", file=sys.stderr)
    answer = render.Answer(
        text=lambda: _text(got, url, args),
        json=got.to_dict,
        csv=lambda: (["name", "date", "price", "where"], got.rows()),
        csv_line_end="\n",
    )
    render.emit(answer, render.format_of(args))
    if got.missing and render.format_of(args) == "table":
        print(f"gpuhunt: note: no price history for {', '.join(got.missing)}", file=sys.stderr)
    return 0


AVAILABILITY_CSV = [
    "provider",
    "instance_name",
    "location",
    "spot",
    "gpu_name",
    "gpu_count",
    "observations",
    "reported",
    "available_share",
    "first_observed",
    "last_observed",
    "last_available",
    "last_price",
]


def _availability(
    args: argparse.Namespace, url: str, s3_endpoint: str | None, anonymous: bool
) -> int:
    from gpuhunt._internal.history.api import availability_history

    if args.version or args.plot or args.daily:
        raise InputError("--availability reads every observation: no --version, --plot, --daily")
    filters = {k: v for k, v in spec.history_filters(args).items() if k != "by"}
    got = availability_history(
        url,
        filters,
        s3_endpoint=s3_endpoint,
        anonymous=anonymous,
    )
    answer = render.Answer(
        text=lambda: _availability_text(got, args),
        json=got.to_dict,
        csv=lambda: (
            AVAILABILITY_CSV,
            [[getattr(r, k) for k in AVAILABILITY_CSV] for r in got.rows],
        ),
        csv_line_end="\n",
    )
    render.emit(answer, render.format_of(args))
    return 0


def _share(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def _availability_text(got: AvailabilityHistory, args: argparse.Namespace) -> str:
    from gpuhunt._internal.load import urls

    shown = got.rows if args.limit <= 0 else got.rows[: args.limit]
    if not shown:
        return render.lines("No offers match in the observations.")
    header = ["PROVIDER", "INSTANCE", "LOCATION", "SPOT", "GPU", "SEEN", "AVAILABLE", "NOW"]
    rows = [header]
    for r in shown:
        gpu = f"{r.gpu_count}x{r.gpu_name}" if r.gpu_count and r.gpu_name else "-"
        now = "-" if r.last_available is None else ("yes" if r.last_available else "no")
        rows.append(
            [
                r.provider,
                r.instance_name,
                r.location,
                "spot" if r.spot else "on-demand",
                gpu,
                str(r.observations),
                _share(r.available_share),
                now,
            ]
        )
    window = f"since {got.since}" if got.since else "over every observation"
    return render.lines(
        _table(rows, {5, 6}),
        f"\n{len(shown)} of {len(got.rows)} offers, {window}, {got.files} observation files "
        f"at {urls.safe_url(got.url)}. AVAILABLE: the share of the observations that "
        "reported it available.",
    )


def _text(got: PriceHistory, url: str, args: argparse.Namespace) -> str:
    from gpuhunt._internal.history.daily import sparkline
    from gpuhunt._internal.load import urls

    out = []
    shown = got.series if args.limit <= 0 else got.series[: args.limit]
    unit = "$/GPU/h" if got.by == "gpu" else "$/h"
    if not shown:
        out.append(f"No offers match in the price history of catalog {got.version}.")
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
        out.append(_table(rows, {1, 2, 3, 4, 5}))
        if args.daily:
            out.append("")
            daily = [["DATE", *(s.name for s in shown)]]
            for i, d in enumerate(got.days):
                daily.append([d.isoformat(), *(_price(s.prices[i]) for s in shown)])
            out.append(_table(daily, set(range(1, len(daily[0])))))
        out.append(
            f"\n{len(shown)} of {len(got.series)} lines, {unit}, {got.days[0]} to {got.days[-1]}, "
            f"from the history of catalog {got.version} at {urls.safe_url(got.url or url)}."
        )
    return render.lines(*out)
