"""`gpuhunt serve`: the catalog over HTTP as JSON (`/v1/offers`, `/v1/explain`, `/v1/history`,
`/v1/status`, `/openapi.json`), for schedulers, dashboards and scripts in any language. The application is
`gpuhunt._internal.serve`; this module is its command line."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from gpuhunt._internal.cli.commands import command

if TYPE_CHECKING:
    from gpuhunt._internal.catalog import Catalog

HELP = "serve the catalog over HTTP (JSON API)"
DESCRIPTION = (
    "Serve the catalog as a JSON API: GET /v1/offers (the parameters of `gpuhunt query`), "
    "/v1/explain, /v1/history, /v1/status, /openapi.json. Binds to loopback unless --host says otherwise; "
    "the catalog reloads every GPUHUNT_RELOAD_INTERVAL seconds, as the library's does. "
    "Needs: pip install 'gpuhunt[serve]'."
)


def catalog_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--catalog",
        metavar="URL_OR_DIR",
        help="where the catalog is published (a base URL or a folder in the published layout), "
        "or a folder of provider CSVs; default GPUHUNT_CATALOG_URL or the public bucket",
    )


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0: any free)")
    catalog_option(p)
    p.add_argument(
        "--cache-mb",
        type=int,
        default=64,
        metavar="MB",
        help="memory for answers kept encoded, by ETag (default 64; 0: compute every answer)",
    )
    # The defaults are serve.server.Limits' (docs/serve.md, "Connections"); not imported
    # here, so `gpuhunt --help` works without the serve extra.
    for flag, default, unit, why in (
        ("--head-timeout", 10.0, "S", "for a request's headers, from its first byte"),
        ("--idle-timeout", 10.0, "S", "for a new connection's first byte"),
        ("--keep-alive", 5.0, "S", "for an idle connection between requests"),
        ("--grace", 30.0, "S", "for answers in flight on SIGTERM/SIGINT, then exit 0"),
    ):
        p.add_argument(
            flag,
            type=float,
            default=default,
            metavar=unit,
            help=f"seconds {why} (default {default:g})",
        )
    p.add_argument(
        "--max-connections",
        type=int,
        default=2048,
        metavar="N",
        help="connections open at once; beyond them, 503 with Retry-After (default 2048)",
    )


def open_catalog(where: str | None) -> Catalog:
    """The catalog a server serves: a folder of `{provider}.csv` files is read as
    GPUHUNT_CATALOG_DIR is; anything else is where the catalog is published."""
    from gpuhunt._internal.catalog import Catalog
    from gpuhunt._internal.errors import UsageError
    from gpuhunt._internal.load.settings import Settings

    settings = Settings.from_env()
    if where is None:
        return Catalog(settings=settings)
    folder = Path(where)
    if "://" not in where and not folder.is_dir():
        raise UsageError(f"--catalog {where}: no such folder (or give a URL)")
    if folder.is_dir() and not (folder / "version").exists() and any(folder.glob("*.csv")):
        return Catalog(settings=dataclasses.replace(settings, catalog_dir=str(folder)))
    return Catalog(settings=settings, catalog_url=where)


def missing_serve_extra(e: ImportError) -> int:
    print(
        f"gpuhunt: error: {e.name or e} is not installed: pip install 'gpuhunt[serve]'",
        file=sys.stderr,
    )
    return 2


@command("serve", help=HELP, description=DESCRIPTION, arguments=arguments)
def run(args: argparse.Namespace) -> int:
    from gpuhunt._internal.errors import UsageError

    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port} is not a port number (0-65535)")
    if args.cache_mb < 0:
        raise UsageError(f"--cache-mb {args.cache_mb} is negative")
    try:
        from gpuhunt._internal.serve import server
        from gpuhunt._internal.serve.answers import Service
    except ImportError as e:
        return missing_serve_extra(e)
    limits = server.Limits(
        head_timeout=args.head_timeout,
        idle_timeout=args.idle_timeout,
        keep_alive=args.keep_alive,
        max_connections=args.max_connections,
        grace=args.grace,
    )
    try:
        limits.check()
    except ValueError as e:
        raise UsageError(f"gpuhunt serve: {e}") from None
    server.allow_open_files(limits)
    with open_catalog(args.catalog) as catalog:
        service = Service(catalog)
        service.ready()
        status = catalog.status()
        print(
            f"gpuhunt serve: catalog {status.version} ({status.source}, "
            f"{sum(status.offers.values())} offers); http://{args.host}:{args.port}/v1/offers",
            file=sys.stderr,
        )
        server.build(service, args.host, args.port, args.cache_mb << 20, limits).run()
    return 0
