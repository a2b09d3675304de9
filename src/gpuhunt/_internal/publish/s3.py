"""Publishing a build to S3: every version object uploaded and checked in the bucket, then the
`version` pointers (boto3, from the `aws` extra, is imported only here)."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from gpuhunt._internal.errors import PipelineError
from gpuhunt._internal.formats import archive

logger = logging.getLogger(__name__)
_T = TypeVar("_T")

ENDPOINT_ENV = "GPUHUNT_S3_ENDPOINT_URL"
# Pointers must never be served stale by a cache in front of the bucket; versions never change.
POINTER_CACHE_CONTROL = "no-cache, max-age=0"
VERSION_CACHE_CONTROL = "public, max-age=31536000, immutable"
# Every object is uploaded world-readable, as the reference workflow does (`--acl public-read`),
# so a client reads a fresh bucket without a bucket policy. Buckets with ACLs disabled (S3
# Object Ownership "bucket owner enforced") refuse any ACL: publish with `acl=None`
# (`--no-acl`) and give the bucket the policy in docs/pipeline.md instead.
PUBLIC_READ = "public-read"


def s3_client(endpoint_url: str | None = None) -> Any:
    try:
        import boto3
        from botocore.config import Config
    except ImportError as e:
        raise PipelineError(
            f"Publishing needs boto3, which is not installed ({e.name}): pip install 'gpuhunt[aws]'"
        ) from e
    endpoint_url = endpoint_url or os.getenv(ENDPOINT_ENV) or None
    config = Config(
        connect_timeout=10,
        read_timeout=120,
        retries={"max_attempts": 5, "mode": "standard"},
        # A custom endpoint (moto, MinIO, ...) rarely resolves bucket subdomains.
        s3={"addressing_style": "path"} if endpoint_url else {},
    )
    return boto3.client("s3", endpoint_url=endpoint_url, config=config)


def _s3_errors() -> tuple[type[Exception], ...]:
    from botocore.exceptions import BotoCoreError, ClientError

    return (BotoCoreError, ClientError)


def _error_code(e: Exception) -> str:
    response = getattr(e, "response", None) or {}
    err = response.get("Error") or {}
    return str(err.get("Code") or type(e).__name__)


class _Bucket:
    """The few S3 calls publishing needs, each turned into a `PipelineError` naming the key."""

    def __init__(self, client: Any, bucket: str, prefix: str, acl: str | None = None) -> None:
        self.client = client
        self.acl = acl
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self.errors = _s3_errors()

    def key(self, rel: str) -> str:
        return f"{self.prefix}/{rel}" if self.prefix else rel

    def url(self, rel: str) -> str:
        return f"s3://{self.bucket}/{self.key(rel)}"

    def _call(self, what: str, rel: str, fn: Callable[[], _T]) -> _T:
        try:
            return fn()
        except self.errors as e:
            raise PipelineError(f"{what} {self.url(rel)} failed: {_error_code(e)}: {e}") from None

    def size(self, rel: str) -> int | None:
        try:
            head = self.client.head_object(Bucket=self.bucket, Key=self.key(rel))
        except self.errors as e:
            if _error_code(e) in ("404", "NoSuchKey", "NotFound"):
                return None
            raise PipelineError(f"HEAD {self.url(rel)} failed: {_error_code(e)}: {e}") from None
        return int(head["ContentLength"])

    def get(self, rel: str) -> bytes:
        def read() -> bytes:
            body = self.client.get_object(Bucket=self.bucket, Key=self.key(rel))["Body"]
            try:
                return bytes(body.read())
            finally:
                body.close()

        return self._call("GET", rel, read)

    def put(self, rel: str, data: bytes, *, pointer: bool) -> None:
        extra = {"ACL": self.acl} if self.acl else {}
        self._call(
            "PUT",
            rel,
            lambda: self.client.put_object(
                Bucket=self.bucket,
                Key=self.key(rel),
                Body=data,
                ContentType="text/plain" if pointer else "application/zip",
                CacheControl=POINTER_CACHE_CONTROL if pointer else VERSION_CACHE_CONTROL,
                **extra,
            ),
        )

    def check(self, rel: str, data: bytes) -> None:
        size = self.size(rel)
        if size != len(data):
            raise PipelineError(
                f"{self.url(rel)} is {size} bytes in the bucket, expected {len(data)}"
            )
        if archive.sha256(self.get(rel)) != archive.sha256(data):
            raise PipelineError(f"{self.url(rel)} does not match the built file (sha256)")


@dataclass
class Published:
    version: str
    uploaded: list[str]
    skipped: list[str]  # already in the bucket, identical
    pointers: list[str]


def publish(
    directory: str | Path,
    bucket: str,
    prefix: str = "",
    *,
    client: Any = None,
    endpoint_url: str | None = None,
    overwrite: bool = False,
    acl: str | None = PUBLIC_READ,
) -> Published:
    """Upload a build: version objects, each checked in the bucket, then the pointers. Each
    object gets `acl` (None: no ACL, for buckets with ACLs disabled)."""
    # Here, not at the top: `gpuhunt` reads ENDPOINT_ENV for `catalog publish --help`, and every
    # command would otherwise load the verifier (and the build and fetch code it imports).
    from gpuhunt._internal.publish.verify import read_build

    build = read_build(directory)
    s3 = _Bucket(client if client is not None else s3_client(endpoint_url), bucket, prefix, acl)
    uploaded: list[str] = []
    skipped: list[str] = []
    for rel, data in build.objects.items():
        size = s3.size(rel)
        if size is not None:
            same = size == len(data) and archive.sha256(s3.get(rel)) == archive.sha256(data)
            if same:
                skipped.append(rel)
                continue
            if not overwrite:
                raise PipelineError(
                    f"{s3.url(rel)} already exists with different content; published versions "
                    "never change (build a new version, or pass --overwrite)"
                )
        s3.put(rel, data, pointer=False)
        uploaded.append(rel)
        logger.info("uploaded %s (%d bytes)", s3.url(rel), len(data))
    # Nothing points at the new version until every one of its objects is known good.
    for rel, data in build.objects.items():
        s3.check(rel, data)
    for rel, data in build.pointers.items():
        s3.put(rel, data, pointer=True)
        if s3.get(rel) != data:
            raise PipelineError(f"{s3.url(rel)} does not read back as {build.version}")
    return Published(build.version, uploaded, skipped, list(build.pointers))
