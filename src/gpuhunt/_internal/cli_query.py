"""`gpuhunt query`: its options, their checks, and printing the answer (tables, --group-by gpu,
--json, --csv, the footer)."""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import logging
import re
import sys
from collections.abc import Container
from typing import Any

from gpuhunt._internal import cli_format, registry
from gpuhunt._internal.errors import GPUHuntError
from gpuhunt._internal.models import CatalogItem, QueryFilter
from gpuhunt._internal.query.filters import make_filter

logger = logging.getLogger("gpuhunt")


class UsageError(Exception):
    """Input that cannot be meant as given; printed as one line, exit status 2."""


def add_parser(sub: Any) -> None:
    """Add `query` to the `gpuhunt` subcommands."""
    p = sub.add_parser(
        "query",
        help="search the catalog",
        description="Search the catalog of offers, cheapest first. Prices are USD per hour; "
        "memory and disk are GB, GPU memory GiB (as clouds market it: an 80GB A100 is 80). "
        "Ranges are inclusive.",
    )
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
    p.add_argument("--limit", type=int, default=50, help="rows to print (0: all; default 50)")
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


_RANGES = [
    ("cpu", "--{}-cpu"),
    ("memory", "--{}-memory"),
    ("gpu_count", "--{}-gpu-count"),
    ("gpu_memory", "--{}-gpu-memory"),
    ("total_gpu_memory", "--{}-total-gpu-memory"),
    ("disk_size", "--{}-disk-size"),
    ("price", "--{}-price"),
    ("compute_capability", "--{}-compute-capability"),
]


def _check_query_args(args: argparse.Namespace) -> None:
    """A `UsageError` for a value that cannot be read or a range that no offer can match."""
    filters = {f.name: getattr(args, f.name) for f in dataclasses.fields(QueryFilter)}
    try:
        q = make_filter(**filters)
    except ValueError as e:
        # The library names the keyword ("Invalid min_cuda ..."); the CLI user typed the option.
        message = re.sub(
            r"\b(min|max)_(compute_capability|cuda)\b",
            lambda m: "--" + m.group(0).replace("_", "-"),
            str(e),
        ).replace("gpu_name", "--gpu")
        raise UsageError(message) from None
    for name, flag in _RANGES:
        low, high = getattr(q, f"min_{name}"), getattr(q, f"max_{name}")
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
    if args.limit < 0:
        raise UsageError(f"--limit {args.limit} is negative (0 prints every row)")


def _live_providers(args: argparse.Namespace) -> list[Any]:
    """The online providers a query asks: none without --online (and asking for one by name
    then is an error saying so); with it, those named or else every one whose credentials are
    set. A provider named but missing its credential or SDK is an error naming what is missing."""
    named = [registry.spec(p) for p in args.provider or []]  # raises on unknown names
    named_online = [s for s in named if s.online]
    if not args.online:
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
            if args.provider:
                raise GPUHuntError(f"{spec.name}: {e}") from None
            logger.debug("Skipping online provider %s: %s", spec.name, e)
    return live


def run(args: argparse.Namespace) -> int:
    """`gpuhunt query`: check the options, ask the catalog (and online providers), print."""
    from gpuhunt._internal.catalog import Catalog

    _check_query_args(args)
    live = _live_providers(args)
    # Online providers are opt-in here: a terminal query should answer in a second from the
    # catalog, offline included, not wait on marketplaces. Library callers get them by default.
    catalog = Catalog(catalog_url=args.catalog_url)
    for provider in live:
        catalog.add_provider(provider)
    if args.refresh:
        catalog.load()  # asks the network, whatever the disk cache holds
    if args.gpu_name:
        problems = catalog.gpu_name_problems(args.gpu_name)
        if problems:
            raise GPUHuntError("; ".join(problems))
    # Every QueryFilter field is a `query` option of the same name (tests/_internal/test_cli.py).
    filters = {f.name: getattr(args, f.name) for f in dataclasses.fields(QueryFilter)}
    offers: list[CatalogItem] = list(catalog.query(**filters))
    if args.sort == "price-per-gpu":
        offers.sort(key=lambda i: (i.price / i.gpu_count) if i.gpu_count else float("inf"))
    elif args.sort == "gpu-memory":
        offers.sort(key=lambda i: (-(i.gpu_memory or 0) * i.gpu_count, i.price))
    elif args.sort == "tflops-per-dollar":
        offers.sort(key=cli_format.tflops_per_dollar_order)
    status = catalog.status()
    if args.group_by == "gpu":
        _print_groups(args, offers, status)
    else:
        _print_offers(args, offers, status)
    for name, err in status.online_errors.items():
        print(f"gpuhunt: warning: {name} left out: {err}", file=sys.stderr)
    return 0


def _print_offers(args: argparse.Namespace, offers: list[CatalogItem], status: Any) -> None:
    shown = offers if args.limit == 0 else offers[: args.limit]
    if args.json:
        json.dump([cli_format.as_dict(i) for i in shown], sys.stdout, indent=2)
        print()
    elif args.csv:
        w = csv.writer(sys.stdout)
        w.writerow(cli_format.csv_header())
        for i in shown:
            w.writerow([cli_format.csv_cell(v) for v in cli_format.as_dict(i).values()])
    else:
        print(cli_format.offers_table(shown, per_gpu=args.sort == "price-per-gpu"))
        offline = {i.provider for i in shown} & set(registry.OFFLINE_PROVIDERS)
        print(f"\n{len(shown)} of {len(offers)} offers. {_footer(args, status, offline)}")


def _print_groups(args: argparse.Namespace, offers: list[CatalogItem], status: Any) -> None:
    groups = cli_format.group_by_gpu(offers)
    shown = groups if args.limit == 0 else groups[: args.limit]
    if args.json:
        json.dump([g.as_dict() for g in shown], sys.stdout, indent=2)
        print()
    elif args.csv:
        w = csv.DictWriter(sys.stdout, fieldnames=cli_format.GROUP_CSV_FIELDS)
        w.writeheader()
        for g in shown:
            w.writerow({k: cli_format.csv_cell(v) for k, v in g.flat().items()})
    else:
        print(cli_format.groups_table(shown))
        n = sum(g.offers for g in groups)
        print(
            f"\n{len(shown)} of {len(groups)} GPU models and counts, from {n} offers with GPUs. "
            f"{_footer(args, status)}"
        )


def _footer(args: argparse.Namespace, status: Any, providers: Container[str] | None = None) -> str:
    """The footer's source part. A query of online providers only never reads the catalog, so
    where the catalog came from is beside the point: it names whom it asked (and who failed)."""
    if args.provider and all(registry.spec(p).online for p in args.provider):
        failed = set(status.online_errors)
        asked = ", ".join(
            p + (" (failed, see below)" if p in failed else "") for p in args.provider
        )
        return f"Asked live: {asked}."
    return cli_format.describe_source(status, providers)
