"""`gpuhunt catalog publish-site SITE --bucket B`: the argparse side of `site.publish`."""

from __future__ import annotations

import argparse

from gpuhunt._internal.cli import render
from gpuhunt._internal.cli.commands import command


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("site", help="the folder `gpuhunt catalog site` wrote")
    p.add_argument("--bucket", required=True)
    p.add_argument("--prefix", default="", help="the catalog's prefix, e.g. v3")
    p.add_argument(
        "--no-acl",
        action="store_true",
        help="upload without the public-read ACL (buckets with ACLs disabled)",
    )


@command(
    "catalog",
    "publish-site",
    help="upload a written site to S3 under PREFIX/site/ (index.html last)",
    arguments=_arguments,
)
def run(args: argparse.Namespace) -> int:
    from gpuhunt._internal.publish.s3 import PUBLIC_READ
    from gpuhunt._internal.site.publish import publish_site

    keys = publish_site(
        args.site, args.bucket, args.prefix, acl=None if args.no_acl else PUBLIC_READ
    )
    render.emit(render.text(f"Published {len(keys)} objects: {', '.join(keys)}"))
    return 0
