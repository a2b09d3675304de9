"""`gpuhunt catalog site OUT [--catalog URL_OR_DIR]`: the argparse side of `site.build`."""

from __future__ import annotations

import argparse

from gpuhunt._internal.cli import render
from gpuhunt._internal.cli.commands import command


def _arguments(s: argparse.ArgumentParser) -> None:
    s.add_argument("out", help="folder to write the page into (created if missing)")
    s.add_argument(
        "--catalog",
        help="`bundled` (the snapshot in the package), a build folder, a published base URL, "
        "a folder of {provider}.csv or a catalog zip; default: the published catalog "
        "(GPUHUNT_CATALOG_URL)",
    )
    s.add_argument("--no-history", action="store_true", help="leave the price history chart out")


@command(
    "catalog",
    "site",
    help="write a static web page of a catalog (index.html + offers.json)",
    description="Write a static web page of every offer of a catalog into OUT: index.html "
    "(no external requests; works from file:// and any static host) beside offers.js and "
    "offers.json.",
    arguments=_arguments,
)
def run(args: argparse.Namespace) -> int:
    import os

    from gpuhunt._internal.errors import UsageError
    from gpuhunt._internal.load.settings import Settings
    from gpuhunt._internal.site import build

    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise UsageError(f"OUT {args.out} is a file, not a folder to write the page into")

    # A command's entry point: the environment is read here.
    raw = build.load_catalog(args.catalog, Settings.from_env())
    w = build.write_site(args.out, raw, with_history=not args.no_history)
    history = "with price history" if w.history else "no price history in this catalog"
    render.emit(
        render.text(
            f"Wrote {w.out}/index.html: {w.offers} offers as {w.rows} distinct offers, catalog "
            f"{w.version} ({raw.source}), {history}; offers.json {w.bytes / 1e6:.1f} MB."
        )
    )
    return 0
