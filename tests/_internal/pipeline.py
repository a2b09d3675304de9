"""What the tests of the nightly pipeline, the price history and the site share: the bucket on
a moto S3 server and the `gpuhunt` commands that build and publish into it (the fixtures are in
tests/_internal/conftest.py; test modules import this, never each other)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuhunt._internal import cli


@dataclass
class Bucket:
    name: str
    client: Any
    endpoint: str
    prefix: str = "v3"

    @property
    def base(self) -> str:
        return f"{self.endpoint}/{self.name}/{self.prefix}"

    def get(self, rel: str) -> bytes:
        return self.client.get_object(Bucket=self.name, Key=f"{self.prefix}/{rel}")["Body"].read()

    def put(self, rel: str, data: bytes) -> None:
        self.client.put_object(Bucket=self.name, Key=f"{self.prefix}/{rel}", Body=data)

    def delete(self, rel: str) -> None:
        self.client.delete_object(Bucket=self.name, Key=f"{self.prefix}/{rel}")

    def object_keys(self) -> list[str]:
        listed = self.client.list_objects_v2(Bucket=self.name).get("Contents", [])
        return sorted(o["Key"] for o in listed)


def gpuhunt(*argv: Any) -> int:
    return cli.main([str(a) for a in argv])


def build(
    input_dir: Path, version: str, output: Path, *extra: Any, previous: str | None = None
) -> None:
    args: list[Any] = ["catalog", "build", "--input", input_dir, "--version", version]
    args += ["--output", output, *extra]
    if previous:
        args += ["--previous", previous]
    assert gpuhunt(*args) == 0


def publish(folder: Path, bucket: Bucket) -> None:
    # No --endpoint-url: publish must take it from GPUHUNT_S3_ENDPOINT_URL.
    assert gpuhunt("catalog", "publish", folder, "--bucket", bucket.name, "--prefix", "v3") == 0
