"""`gpuhunt serve`'s command line: where its catalog comes from, its checks, and the command
itself answering on loopback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest
import requests

from gpuhunt._internal import cli
from gpuhunt._internal.cli.serve import open_catalog
from gpuhunt._internal.errors import UsageError
from gpuhunt._internal.formats.csv import csv_bytes
from tests.helpers import item, publish_archive


@pytest.fixture
def published(tmp_path):
    root = tmp_path / "published"
    publish_archive(root, "20261129-1", {"aws": csv_bytes([item(price=2.0, instance_name="p4d")])})
    return root


def test_a_folder_of_csvs_is_read_as_gpuhunt_catalog_dir(tmp_path):
    (tmp_path / "aws.csv").write_bytes(csv_bytes([item(price=2.5, instance_name="p5")]))
    with open_catalog(str(tmp_path)) as c:
        assert [o.instance_name for o in c.query()] == ["p5"]
        assert c.status().source == "directory" and c.status().version == "local"


def test_a_published_folder_or_url_is_the_catalog_url(published):
    with open_catalog(str(published)) as c:
        assert c.catalog_url == str(published)
    with open_catalog("https://example.test/catalog") as c:
        assert c.catalog_url == "https://example.test/catalog"
    with pytest.raises(UsageError, match="no such folder"):
        open_catalog(str(published / "nothing-here"))


def test_a_port_out_of_range_is_a_usage_error(capsys):
    assert cli.main(["serve", "--port", "70000"]) == 2
    assert "--port 70000" in capsys.readouterr().err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
@pytest.mark.subprocess
def test_gpuhunt_serve_answers_on_loopback(published, tmp_path):
    port = _free_port()
    env = dict(os.environ, GPUHUNT_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gpuhunt",
            "serve",
            "--port",
            str(port),
            "--catalog",
            str(published),
        ],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                r = requests.get(f"http://127.0.0.1:{port}/v1/status", timeout=5)
                break
            except requests.ConnectionError:
                assert proc.poll() is None and time.monotonic() < deadline, "serve did not start"
                time.sleep(0.2)
        assert r.status_code == 200 and r.json()["version"] == "20261129-1"
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert f"http://127.0.0.1:{port}/v1/offers" in err
