"""`gpuhunt catalog site OUT [--catalog URL_OR_DIR]`: the argparse side of `site.build`."""

from __future__ import annotations

import argparse
from typing import Any

from gpuhunt._internal.load.settings import Settings


def register(cat_sub: Any) -> None:
    s = cat_sub.add_parser(
        "site",
        help="write a static web page of a catalog (index.html + offers.json)",
        description="Write a static web page of every offer of a catalog into OUT: index.html "
        "(no external requests; works from file:// and any static host) beside offers.js and "
        "offers.json.",
    )
    s.add_argument("out", help="folder to write the page into (created if missing)")
    s.add_argument(
        "--catalog",
        help="`bundled` (the snapshot in the package), a build folder, a published base URL, "
        "a folder of {provider}.csv or a catalog zip; default: the published catalog "
        "(GPUHUNT_CATALOG_URL)",
    )
    s.add_argument("--no-history", action="store_true", help="leave the price history chart out")
    s.set_defaults(run=_run)
    p = cat_sub.add_parser(
        "publish-site",
        help="upload a written site to S3 under PREFIX/site/ (index.html last)",
    )
    p.add_argument("site", help="the folder `gpuhunt catalog site` wrote")
    p.add_argument("--bucket", required=True)
    p.add_argument("--prefix", default="", help="the catalog's prefix, e.g. v3")
    p.add_argument(
        "--no-acl",
        action="store_true",
        help="upload without the public-read ACL (buckets with ACLs disabled)",
    )
    p.set_defaults(run=_publish)


def _run(args: argparse.Namespace) -> int:
    from gpuhunt._internal.site import build

    # A command's entry point: the environment is read here.
    raw = build.load_catalog(args.catalog, Settings.from_env())
    w = build.write_site(args.out, raw, with_history=not args.no_history)
    history = "with price history" if w.history else "no price history in this catalog"
    print(
        f"Wrote {w.out}/index.html: {w.offers} offers as {w.rows} distinct offers, catalog "
        f"{w.version} ({raw.source}), {history}; offers.json {w.bytes / 1e6:.1f} MB."
    )
    return 0


def _publish(args: argparse.Namespace) -> int:
    from gpuhunt._internal.publish.s3 import PUBLIC_READ
    from gpuhunt._internal.site.publish import publish_site

    keys = publish_site(
        args.site, args.bucket, args.prefix, acl=None if args.no_acl else PUBLIC_READ
    )
    print(f"Published {len(keys)} objects: {', '.join(keys)}")
    return 0
