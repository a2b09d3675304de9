"""What the fault-injection modules share: a good catalog, its archive, publishing it on a
`FaultServer`, and running the `gpuhunt` CLI in a subprocess (test modules import this, never
each other)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from gpuhunt._internal.formats.archive import sha256, write_archive
from gpuhunt._internal.formats.csv import csv_bytes
from tests.faults.server import FaultServer, Reply
from tests.helpers import item

GOOD = csv_bytes([item(price=float(p), instance_name=f"i{p}") for p in range(1, 11)])

SRC = str(Path(__file__).resolve().parents[2] / "src")


def archive(csv: bytes = GOOD, version: str = "v1", manifest_sha: str | None = None) -> bytes:
    sha = manifest_sha or sha256(csv)
    return write_archive({"aws": csv}, {"version": version, "providers": {"aws": {"sha256": sha}}})


def publish(srv: FaultServer, version: str = "v1", data: bytes | None = None) -> None:
    srv.serve("/version", default=Reply(body=version.encode()))
    srv.serve(f"/{version}/catalog.zip", default=Reply(body=data or archive(version=version)))


def cli(args: list[str], env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": SRC, **env}
    return subprocess.run(
        [sys.executable, "-m", "gpuhunt", *args],
        env=full,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
