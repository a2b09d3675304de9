"""Uploading a written site to S3 beside the catalog (`gpuhunt catalog publish-site`): the data
first, each read back and compared, then `index.html`, so that nobody is served a page whose
data is not in the bucket yet (the catalog's "pointers last" rule, with the page as pointer)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from gpuhunt._internal.errors import PipelineError
from gpuhunt._internal.formats import archive
from gpuhunt._internal.publish.s3 import POINTER_CACHE_CONTROL, PUBLIC_READ, s3_client

logger = logging.getLogger(__name__)

FILES = (
    ("offers.json", "application/json"),
    ("offers.js", "text/javascript; charset=utf-8"),
    ("index.html", "text/html; charset=utf-8"),  # last
)
# The page's data is replaced every hour under the same name: caches may keep it minutes.
DATA_CACHE_CONTROL = "public, max-age=300"


def publish_site(
    directory: str | Path,
    bucket: str,
    prefix: str = "",
    *,
    client: Any = None,
    endpoint_url: str | None = None,
    acl: str | None = PUBLIC_READ,
) -> list[str]:
    """Upload `directory` (what `write_site` wrote) under `{prefix}/site/`; the keys written.
    Each object gets `acl` (world-readable, as the catalog's objects; None for a bucket with
    ACLs disabled, which needs the bucket policy of docs/pipeline.md)."""
    folder = Path(directory)
    missing = [name for name, _ in FILES if not (folder / name).is_file()]
    if missing:
        raise PipelineError(f"{folder} is not a written site: {', '.join(missing)} missing")
    from botocore.exceptions import BotoCoreError, ClientError

    s3 = client if client is not None else s3_client(endpoint_url)
    base = "/".join(part for part in (prefix.strip("/"), "site") if part)
    keys = []
    for name, content_type in FILES:
        body = (folder / name).read_bytes()
        key = f"{base}/{name}"
        try:
            s3.put_object(
                Bucket=bucket,
                Key=key,
                Body=body,
                ContentType=content_type,
                CacheControl=POINTER_CACHE_CONTROL if name == "index.html" else DATA_CACHE_CONTROL,
                **({"ACL": acl} if acl else {}),
            )
            back = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        except (BotoCoreError, ClientError) as e:
            raise PipelineError(f"PUT s3://{bucket}/{key} failed: {e}") from None
        if archive.sha256(back) != archive.sha256(body):
            raise PipelineError(f"s3://{bucket}/{key} does not read back as written")
        keys.append(key)
        logger.info("uploaded s3://%s/%s (%d bytes)", bucket, key, len(body))
    return keys
