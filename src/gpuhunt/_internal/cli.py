"""The `gpuhunt` command: query the catalog, collect a provider, inspect the catalog state.

gpuhunt query --gpu "A100 80GB" --max-price 4 --location "us-*"
gpuhunt query --group-by gpu                             # cheapest per GPU model and count
python -m gpuhunt lambdalabs --output lambdalabs.csv     # collect (nightly build)
gpuhunt catalog status
gpuhunt history --gpu H100 --provider aws --since 2026-03-01 [--plot h100.png]
gpuhunt catalog diff 20261129-1 latest
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import dataclasses
import datetime as dt
import json
import logging
import os
import re
import sys
import threading
from collections.abc import Container, Sequence
from typing import Any, NoReturn

from gpuhunt._internal import cli_format, freshness, registry
from gpuhunt._internal.errors import GPUHuntError
from gpuhunt._internal.models import CatalogItem, QueryFilter
from gpuhunt._internal.query.filters import make_filter
from gpuhunt._version import __version__

logger = logging.getLogger("gpuhunt")

COMMANDS = ("query", "catalog", "providers", "history")


class UsageError(Exception):
    """Input that cannot be meant as given; printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, but its errors are one line (`gpuhunt query: error: ...`), not the usage text
    followed by the error: the query usage alone is a screenful."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _query_parser(sub: Any) -> None:
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
        help='GPU name, any common spelling: H100, "RTX 4090"; a size in the name asks for it: '
        '"A100 80GB", a100-80g-pcie (repeatable)',
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
        help="CUDA version the host must run, e.g. 12.8 (RunPod and Vast.ai say; offers of "
        "providers that do not are kept)",
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
        choices=["price", "price-per-gpu", "gpu-memory"],
        default="price",
        help="price: USD/hour (default); price-per-gpu: USD/hour per GPU; gpu-memory: largest first",
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


def _main_help() -> str:
    offline = ", ".join(registry.OFFLINE_PROVIDERS)
    online = ", ".join(registry.ONLINE_PROVIDERS)
    return (
        "collect one provider's offers into a catalog CSV (what the nightly build runs):\n"
        "  python -m gpuhunt PROVIDER --output FILE [--no-filter]\n\n"
        f"providers in the catalog: {offline}\n"
        f"online providers (gpuhunt query --online): {online}\n"
        "`gpuhunt providers` lists them with the credentials each reads."
    )


def run() -> None:
    """The `gpuhunt` program: `main()`, then exit as soon as the answer is out. Online work
    nobody waits for any more (a provider sleeping on `Retry-After`, a catalog download going
    on in the background, a provider's own worker pool) is abandoned rather than waited for."""
    code = main()
    # Any thread still running (daemon or not) is abandoned work. Exit without waiting for it,
    # and without letting a daemon thread write to a stream the interpreter is tearing down.
    lingering = [t for t in threading.enumerate() if t is not threading.main_thread()]
    if lingering:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        logging.shutdown()
        os._exit(code)
    sys.exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(
        level=logging.WARNING, format="%(levelname)s %(message)s", stream=sys.stderr
    )
    logging.getLogger("urllib3").setLevel(logging.ERROR)  # gpuhunt reports failures itself
    # Online failures are printed from the catalog's status, once, after the answer. Restored
    # after, for callers running the CLI in their own process (tests).
    online_log = logging.getLogger("gpuhunt._internal.query.online")
    previous = online_log.level
    online_log.setLevel(logging.ERROR)
    try:
        return _main(argv)
    finally:
        online_log.setLevel(previous)


def _main(argv: list[str]) -> int:
    # `python -m gpuhunt PROVIDER --output FILE` is the collector the nightly build runs.
    if argv and argv[0] in registry.ALL_PROVIDERS:
        return _guard(lambda: _collect(argv))
    if argv and not argv[0].startswith("-") and argv[0] not in COMMANDS:
        providers = ", ".join(registry.ALL_PROVIDERS)
        known = (
            f"providers: {providers}"
            if "--output" in argv
            else f"commands: {', '.join(COMMANDS)}; providers to collect: {providers}"
        )
        what = "provider" if "--output" in argv else "command or provider"
        print(f"gpuhunt: error: unknown {what} {argv[0]!r} ({known})", file=sys.stderr)
        return 2
    parser = _Parser(
        prog="gpuhunt",
        description="Cloud GPU and CPU offers with hourly prices (USD per hour).",
        epilog=_main_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"gpuhunt {__version__}")
    sub = parser.add_subparsers(dest="command")
    _query_parser(sub)
    cat = sub.add_parser("catalog", help="inspect, build, publish and verify catalogs")
    cat_sub = cat.add_subparsers(dest="catalog_command")
    st = cat_sub.add_parser("status", help="load the catalog and show where it came from")
    st.add_argument("--json", action="store_true")
    # Imported here, not at the top: collectors (above) need none of the catalog machinery.
    from gpuhunt._internal.publish import commands as publish_commands

    publish_commands.register(cat_sub)
    from gpuhunt._internal.history import commands as history_commands

    history_commands.register_cli(sub, cat_sub)  # `gpuhunt history`, `gpuhunt catalog diff`
    sub.add_parser("providers", help="list providers")
    args = parser.parse_args(argv)
    if args.command == "query":
        return _guard(lambda: _query(args))
    if args.command == "providers":
        return _guard(_list_providers)
    if args.command == "catalog" and args.catalog_command == "status":
        return _guard(lambda: _status(args))
    if args.command in ("catalog", "history") and getattr(args, "run", None):
        return _guard(lambda: args.run(args))
    parser.print_help()
    return 2


def _list_providers() -> int:
    for spec in registry.PROVIDERS:
        kind = "online" if spec.online else "offline"
        extra = f"  (pip install 'gpuhunt[{spec.extra}]')" if spec.extra else ""
        print(f"{spec.name:14} {kind:8} {' '.join(spec.env)}{extra}")
    return 0


def _guard(fn: Any) -> int:
    """Run a command; what the user got wrong is one line on stderr, never a traceback."""
    try:
        return int(fn() or 0)
    except UsageError as e:
        print(f"gpuhunt: error: {e}", file=sys.stderr)
        return 2
    except GPUHuntError as e:
        print(f"gpuhunt: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `gpuhunt query | head`
        sys.stderr.close()
        return 0
    except OSError as e:  # e.g. `--output` into a folder that does not exist
        print(f"gpuhunt: error: {e}", file=sys.stderr)
        return 1


def _collect(argv: list[str]) -> int:
    parser = _Parser(
        prog="python -m gpuhunt", description="Collect one provider's offers into a catalog CSV."
    )
    parser.add_argument("provider", choices=registry.ALL_PROVIDERS)
    parser.add_argument("--output", required=True)
    parser.add_argument(
        "--no-filter", action="store_true", help="keep offers the provider's filter() would drop"
    )
    args = parser.parse_args(argv)
    logging.getLogger().setLevel(logging.INFO)
    from gpuhunt._internal.formats import csv as catalog_csv

    cls = registry.provider_class(args.provider)
    provider = cls.from_env()
    offers = provider.get(apply_filter=not args.no_filter)
    if not args.no_filter and hasattr(cls, "filter"):
        offers = cls.filter(offers)
    offers = (
        sorted(offers, key=lambda i: i.price) if not registry.spec(args.provider).online else offers
    )
    # Write next to the target and rename, so a failed run never leaves a half-written CSV.
    tmp = f"{args.output}.tmp"
    n = catalog_csv.write_csv_file(offers, tmp)
    import os

    os.replace(tmp, args.output)
    logger.info("Wrote %d %s offers to %s", n, args.provider, args.output)
    return 0


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
        )
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


def _query(args: argparse.Namespace) -> int:
    from gpuhunt._internal.catalog import Catalog

    _check_query_args(args)
    live = _live_providers(args)
    # Online providers are opt-in here: a terminal query should answer in a second from the
    # catalog, offline included, not wait on marketplaces. Library callers get them by default.
    catalog = Catalog(catalog_url=args.catalog_url)
    for provider in live:
        catalog.add_provider(provider)
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
        header = list(cli_format.as_dict(shown[0]) if shown else ["provider"])
        w.writerow(header)
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
    return _describe_source(status, providers)


def _describe_source(status: Any, providers: Container[str] | None = None) -> str:
    """Where the catalog came from and why, then how old each provider's data is (of
    `providers`, default all): the footer of `gpuhunt query`."""
    text = _origin(status) + "."
    ages = _data_ages(status, providers)
    if ages:
        text += " Data age: " + ", ".join(f"{p} {age}" for p, age in ages.items()) + "."
    return text


def _origin(status: Any) -> str:
    v, url = status.version, status.url
    error = " ".join(str(status.last_error or "").split())
    why = f" ({error[:157] + '...' if len(error) > 160 else error})" if error else ""
    if status.source == "network":
        return f"Catalog {v} downloaded from {url}"
    if status.source == "disk-cache" and not status.fallback:
        return f"Catalog {v} from the disk cache: {url} lists it as the latest version"
    # After a failure the status's url is the fallback's; the error names what failed.
    if status.source == "disk-cache":
        return f"Catalog {v} from the disk cache, because the catalog could not be loaded{why}"
    if status.source == "bundled":
        return (
            f"The snapshot bundled with gpuhunt ({v}), because the catalog could not be "
            f"loaded{why} and no copy was cached"
        )
    if status.source == "directory":
        return f"Catalog from {url} (version {v})"
    return "No catalog loaded"


def _data_ages(status: Any, providers: Container[str] | None = None) -> dict[str, str]:
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


def _status(args: argparse.Namespace) -> int:
    from gpuhunt._internal.catalog import Catalog

    catalog = Catalog()
    catalog.query(provider=registry.OFFLINE_PROVIDERS[:1])  # loads (or falls back) as a query would
    s = catalog.status()
    info = {
        "version": s.version,
        "source": s.source,
        "why": _origin(s),
        "url": s.url,
        "loaded_at": s.loaded_at.isoformat() if s.loaded_at else None,
        "data_age_days": s.data_age_days,
        "data_age": _data_ages(s) or None,
        "recorded_at": {p: w.isoformat() if w else None for p, w in s.recorded_at.items()} or None,
        "offers": s.offers,
        "skipped_rows": s.skipped_rows,
        "last_error": s.last_error,
    }
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    per_provider = ("offers", "skipped_rows", "data_age", "recorded_at")
    for k, v in info.items():
        if k not in per_provider:
            print(f"{k:13} {v}")
    ages = _data_ages(s)
    names = sorted(set(s.offers) | set(s.recorded_at))
    if names:
        print(f"\n{'PROVIDER':13} {'OFFERS':>7}  {'AGE':>7}  RECORDED")
    for p in names:
        when = s.recorded_at.get(p)
        skipped = s.skipped_rows.get(p)
        note = f"  ({skipped} malformed rows skipped)" if skipped else ""
        print(
            f"{p:13} {s.offers.get(p, 0):>7}  {ages.get(p, 'unknown'):>7}  "
            f"{when.isoformat() if when else 'unknown'}{note}"
        )
    return 0
