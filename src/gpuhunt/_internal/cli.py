"""The `gpuhunt` command: query the catalog, collect a provider, inspect the catalog state.

gpuhunt query --gpu H100 --max-price 4
python -m gpuhunt lambdalabs --output lambdalabs.csv     # collect (nightly build)
gpuhunt catalog status
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import difflib
import json
import logging
import sys
from collections.abc import Sequence
from typing import Any

from gpuhunt._internal import registry
from gpuhunt._internal.accelerators import KNOWN_ACCELERATORS, canonical_gpu_name
from gpuhunt._internal.errors import GPUHuntError
from gpuhunt._internal.models import CatalogItem, QueryFilter
from gpuhunt._internal.publish.commands import register as register_publish_commands

logger = logging.getLogger("gpuhunt")

COLUMNS = [
    "provider",
    "instance_name",
    "location",
    "price",
    "gpu",
    "cpu",
    "memory",
    "spot",
    "disk_size",
]


def _query_parser(sub: Any) -> None:
    p = sub.add_parser(
        "query",
        help="search the catalog",
        description="Search the catalog of offers, cheapest first.",
    )
    p.add_argument("--provider", action="append", help="provider name (repeatable)")
    p.add_argument(
        "--gpu",
        action="append",
        dest="gpu_name",
        help='GPU name, any common spelling: H100, "RTX 4090" (repeatable)',
    )
    p.add_argument("--gpu-vendor", choices=["nvidia", "amd", "google", "intel", "tenstorrent"])
    p.add_argument("--cpu-arch", choices=["x86", "arm"])
    for name, kind in [
        ("cpu", int),
        ("memory", float),
        ("gpu-count", int),
        ("gpu-memory", float),
        ("total-gpu-memory", float),
        ("disk-size", int),
        ("price", float),
    ]:
        p.add_argument(f"--min-{name}", type=kind)
        p.add_argument(f"--max-{name}", type=kind)
    p.add_argument("--min-compute-capability", help="e.g. 8.0")
    p.add_argument("--max-compute-capability")
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
    p.add_argument("--sort", choices=["price", "price-per-gpu", "gpu-memory"], default="price")
    p.add_argument("--limit", type=int, default=50, help="rows to print (0: all; default 50)")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="JSON output")
    fmt.add_argument("--csv", action="store_true", help="CSV output")
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


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(
        level=logging.WARNING, format="%(levelname)s %(message)s", stream=sys.stderr
    )
    logging.getLogger("urllib3").setLevel(logging.ERROR)  # gpuhunt reports failures itself
    # `python -m gpuhunt PROVIDER --output FILE` is the collector the nightly build runs.
    if argv and argv[0] in registry.ALL_PROVIDERS:
        return _guard(lambda: _collect(argv))
    parser = argparse.ArgumentParser(
        prog="gpuhunt", description="Cloud GPU and CPU offers with hourly prices."
    )
    sub = parser.add_subparsers(dest="command")
    _query_parser(sub)
    cat = sub.add_parser("catalog", help="inspect, build, publish and verify catalogs")
    cat_sub = cat.add_subparsers(dest="catalog_command")
    st = cat_sub.add_parser("status", help="load the catalog and show where it came from")
    st.add_argument("--json", action="store_true")
    register_publish_commands(cat_sub)
    sub.add_parser("providers", help="list providers")
    args = parser.parse_args(argv)
    if args.command == "query":
        return _guard(lambda: _query(args))
    if args.command == "providers":
        return _guard(_list_providers)
    if args.command == "catalog" and args.catalog_command == "status":
        return _guard(lambda: _status(args))
    if args.command == "catalog" and getattr(args, "run", None):
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
    try:
        return int(fn() or 0)
    except GPUHuntError as e:
        print(f"gpuhunt: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `gpuhunt query | head`
        sys.stderr.close()
        return 0


def _collect(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
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


def _check_gpu_names(names: list[str] | None) -> None:
    for name in names or []:
        if canonical_gpu_name(name) is None:
            known = sorted({a.name for a in KNOWN_ACCELERATORS})
            close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise GPUHuntError(f"Unknown GPU name {name!r}{hint}")


def _query(args: argparse.Namespace) -> int:
    from gpuhunt._internal.catalog import Catalog
    from gpuhunt._internal.default import default_catalog

    _check_gpu_names(args.gpu_name)
    for p in args.provider or []:
        registry.spec(p)
    # Online providers are opt-in here: a terminal query should answer in a second from the
    # catalog, offline included, not wait on marketplaces. Library callers get them by default.
    catalog = (
        default_catalog()
        if args.online and not args.catalog_url
        else Catalog(catalog_url=args.catalog_url)
    )
    if args.refresh:
        catalog.load()  # asks the network, whatever the disk cache holds
    # Every QueryFilter field is a `query` option of the same name (tests/_internal/test_cli.py).
    filters = {f.name: getattr(args, f.name) for f in dataclasses.fields(QueryFilter)}
    offers: list[CatalogItem] = list(catalog.query(**filters))
    if args.sort == "price-per-gpu":
        offers.sort(key=lambda i: (i.price / i.gpu_count) if i.gpu_count else float("inf"))
    elif args.sort == "gpu-memory":
        offers.sort(key=lambda i: (-(i.gpu_memory or 0) * i.gpu_count, i.price))
    total = len(offers)
    shown = offers if args.limit <= 0 else offers[: args.limit]
    status = catalog.status()
    if args.json:
        json.dump([_as_dict(i) for i in shown], sys.stdout, indent=2)
        print()
    elif args.csv:
        w = csv.writer(sys.stdout)
        w.writerow(list(_as_dict(shown[0]).keys()) if shown else ["provider"])
        for i in shown:
            w.writerow([_csv_safe(v) for v in _as_dict(i).values()])
    else:
        _print_table(shown)
        print(f"\n{len(shown)} of {total} offers. {_describe_source(status)}")
    for name, err in status.online_errors.items():
        print(f"gpuhunt: warning: {name} left out: {err}", file=sys.stderr)
    return 0


def _describe_source(status: Any) -> str:
    where = {
        "network": f"Catalog {status.version} downloaded from {status.url}",
        "disk-cache": f"Catalog {status.version} from the disk cache "
        + (
            "(network unavailable)"
            if status.last_error
            else f"(checked {_age(status.age_seconds)} ago; --refresh checks now)"
        ),
        "bundled": f"Catalog snapshot {status.version} bundled with gpuhunt (network unavailable; may be out of date)",
        "directory": f"Catalog from {status.url}",
    }
    return where.get(status.source or "", "No catalog loaded") + "."


def _age(seconds: float | None) -> str:
    s = int(seconds or 0)
    return f"{s // 3600} h {s % 3600 // 60} min" if s >= 3600 else f"{s // 60} min {s % 60} s"


def _as_dict(i: CatalogItem) -> dict[str, Any]:
    return {
        "provider": i.provider,
        "instance_name": i.instance_name,
        "location": i.location,
        "price": i.price,
        "price_per_gpu": round(i.price / i.gpu_count, 6) if i.gpu_count else None,
        "cpu": i.cpu,
        "cpu_arch": i.cpu_arch.value,
        "memory": i.memory,
        "gpu_count": i.gpu_count,
        "gpu_name": i.gpu_name,
        "gpu_memory": i.gpu_memory,
        "gpu_vendor": i.gpu_vendor.value if i.gpu_vendor else None,
        "spot": i.spot,
        "disk_size": i.disk_size,
        "flags": i.flags,
    }


def _csv_safe(value: Any) -> Any:
    # Spreadsheets run cells starting with these as formulas.
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@"):
        return "'" + value
    if isinstance(value, list):
        return " ".join(value)
    return value


def _fmt_num(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:g}"


def _print_table(offers: list[CatalogItem]) -> None:
    rows = [
        [
            i.provider,
            i.instance_name,
            i.location,
            f"${i.price:.4f}".rstrip("0").rstrip("."),
            f"{i.gpu_count}x{i.gpu_name} {_fmt_num(i.gpu_memory)}GB" if i.gpu_count else "-",
            str(i.cpu),
            f"{_fmt_num(i.memory)}GB",
            "spot" if i.spot else "on-demand",
            f"{_fmt_num(i.disk_size)}GB" if i.disk_size is not None else "-",
        ]
        for i in offers
    ]
    header = ["PROVIDER", "INSTANCE", "LOCATION", "PRICE/H", "GPU", "CPU", "MEMORY", "SPOT", "DISK"]
    widths = [max(len(r[k]) for r in [header, *rows]) for k in range(len(header))]
    right = {3, 5, 6, 8}
    for r in [header, *rows]:
        print(
            "  ".join(
                c.rjust(w) if k in right else c.ljust(w) for k, (c, w) in enumerate(zip(r, widths))
            ).rstrip()
        )


def _status(args: argparse.Namespace) -> int:
    from gpuhunt._internal.catalog import Catalog

    catalog = Catalog()
    catalog.query(provider=registry.OFFLINE_PROVIDERS[:1])  # loads (or falls back) as a query would
    s = catalog.status()
    info = {
        "version": s.version,
        "source": s.source,
        "url": s.url,
        "loaded_at": s.loaded_at.isoformat() if s.loaded_at else None,
        "data_age_days": s.data_age_days,
        "offers": s.offers,
        "skipped_rows": s.skipped_rows,
        "last_error": s.last_error,
    }
    if args.json:
        print(json.dumps(info, indent=2))
    else:
        for k, v in info.items():
            print(f"{k:13} {v}")
    return 0
