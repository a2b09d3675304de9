"""`gpuhunt catalog publish`: upload a build to S3 (`publish.s3.publish`), the version
pointers last."""

from __future__ import annotations

import argparse

from gpuhunt._internal.cli import render
from gpuhunt._internal.cli.commands import command
from gpuhunt._internal.publish.s3 import ENDPOINT_ENV


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("directory", help="a folder written by `gpuhunt catalog build`")
    p.add_argument("--bucket", required=True)
    p.add_argument("--prefix", default="", help="key prefix inside the bucket, e.g. v3")
    p.add_argument(
        "--endpoint-url",
        default=None,
        help=f"S3 endpoint (default: ${ENDPOINT_ENV}, else AWS)",
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace version objects that exist with different content",
    )
    p.add_argument(
        "--no-acl",
        action="store_true",
        help="upload without the public-read ACL (for buckets with ACLs disabled, which then "
        "need the public-read bucket policy of docs/pipeline.md)",
    )


@command(
    "catalog",
    "publish",
    help="upload a build to S3; the version pointers are written last",
    description="Upload a build to S3: every version object first, each checked in the "
    "bucket (size and sha256), then the `version` pointers. Needs boto3 "
    "(pip install 'gpuhunt[aws]') and AWS credentials from the environment.",
    arguments=_arguments,
)
def run(args: argparse.Namespace) -> int:
    from gpuhunt._internal.publish.s3 import PUBLIC_READ, publish

    result = publish(
        args.directory,
        args.bucket,
        args.prefix,
        endpoint_url=args.endpoint_url,
        overwrite=args.overwrite,
        acl=None if args.no_acl else PUBLIC_READ,
    )
    where = f"s3://{args.bucket}/{args.prefix.strip('/')}".rstrip("/")
    render.emit(
        render.text(
            f"published {result.version} to {where}: {len(result.uploaded)} uploaded, "
            f"{len(result.skipped)} already there, {len(result.pointers)} pointers"
        )
    )
    return 0
