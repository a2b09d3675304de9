"""`gpuhunt serve`'s command line: where its catalog comes from, its checks, and the command
itself answering on loopback."""

from __future__ import annotations

import json
import os
import signal
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


def test_a_limit_that_is_not_positive_is_a_usage_error(capsys):
    assert cli.main(["serve", "--head-timeout", "0"]) == 2
    assert "head_timeout" in capsys.readouterr().err


def _start(published, tmp_path, *options: str) -> tuple[subprocess.Popen[str], int]:
    port = _free_port()
    env = dict(os.environ, GPUHUNT_CACHE_DIR=str(tmp_path / "cache"))
    command = [sys.executable, "-m", "gpuhunt", "serve", "--port", str(port)]
    proc = subprocess.Popen(
        [*command, "--catalog", str(published), *options],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            requests.get(f"http://127.0.0.1:{port}/v1/status", timeout=5)
            return proc, port
        except requests.ConnectionError:
            assert proc.poll() is None and time.monotonic() < deadline, "serve did not start"
            time.sleep(0.2)


@pytest.mark.slow
@pytest.mark.subprocess
def test_sigterm_finishes_the_answer_in_flight_and_exits_0(tmp_path):
    from benchmarks.bench_catalog import generate

    root = tmp_path / "big"
    publish_archive(root, "20261129-1", generate(24_000))
    proc, port = _start(root, tmp_path)
    try:
        with socket.socket() as s:
            # A small receive window, read slowly: the server cannot send a 10,000-offer
            # answer (megabytes) faster than this client takes it, so it is still in flight.
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.settimeout(60)
            s.connect(("127.0.0.1", port))
            s.sendall(b"GET /v1/offers?limit=10000 HTTP/1.1\r\nHost: x\r\n\r\n")
            data = s.recv(4096)
            assert data.startswith(b"HTTP/1.1 200")
            proc.send_signal(signal.SIGTERM)
            time.sleep(1)
            assert proc.poll() is None  # draining: waiting for this client
            while chunk := s.recv(65536):
                data += chunk
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)
    head, _, body = data.partition(b"\r\n\r\n")
    if b"transfer-encoding: chunked" in head.lower():
        body = _unchunk(body)
    answer = json.loads(body)
    assert answer["total"] == 24_000 and len(answer["offers"]) == 10_000


def _unchunk(body: bytes) -> bytes:
    out = b""
    while True:
        size, _, body = body.partition(b"\r\n")
        n = int(size, 16)
        if n == 0:
            return out
        out, body = out + body[:n], body[n + 2 :]
