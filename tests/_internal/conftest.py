"""Fixtures of tests/_internal: the offline providers' replayed offers, a moto S3 server and a
fresh bucket on it (used by the pipeline, history and site tests)."""

from __future__ import annotations

import importlib
import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from gpuhunt._internal import registry
from gpuhunt._internal.formats.csv import write_csv_file
from gpuhunt._internal.models import CatalogItem
from gpuhunt._internal.publish.s3 import ENDPOINT_ENV
from tests._internal.pipeline import Bucket


@pytest.fixture(scope="session")
def replayed() -> dict[str, list[CatalogItem]]:
    """Each offline provider's offers as its real collector makes them from the recordings."""
    out = {}
    for name in registry.OFFLINE_PROVIDERS:
        module = f"scripts.replay.replay_{name}"
        try:
            replay = importlib.import_module(module)
        except ModuleNotFoundError as e:
            if e.name != module:
                raise
            continue
        out[name] = sorted(replay.collect(), key=lambda i: i.price)  # as `python -m gpuhunt` does
    assert "lambdalabs" in out and all(out.values())
    return out


@pytest.fixture
def collected(tmp_path, replayed) -> Path:
    """A folder of `{provider}.csv`, as the nightly matrix jobs leave them."""
    folder = tmp_path / "collected"
    folder.mkdir()
    for name, items in replayed.items():
        write_csv_file(items, str(folder / f"{name}.csv"))
    return folder


@pytest.fixture(scope="session")
def moto_url() -> Any:
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def bucket(moto_url, monkeypatch, tmp_path) -> Bucket:
    """A fresh bucket, publicly readable like the real one, and the environment `publish`
    runs with: dummy AWS credentials and `GPUHUNT_S3_ENDPOINT_URL`."""
    import boto3
    from botocore.config import Config

    for var in ["AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN"]:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv(ENDPOINT_ENV, moto_url)
    client = boto3.client(
        "s3", endpoint_url=moto_url, config=Config(s3={"addressing_style": "path"})
    )
    name = f"gpuhunt-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=name)
    policy = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": "*",
                "Action": "s3:GetObject",
                "Resource": f"arn:aws:s3:::{name}/*",
            }
        ],
    }
    client.put_bucket_policy(Bucket=name, Policy=json.dumps(policy))
    return Bucket(name, client, moto_url)
