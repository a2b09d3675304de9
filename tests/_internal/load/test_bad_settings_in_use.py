"""Bad `GPUHUNT_*` values never stop queries (issues #23 and #27): with each, a catalog served
over real HTTP on 127.0.0.1 is loaded and queried as with the default, after one warning; and a
`gpuhunt query` subprocess with a bad value answers and exits 0."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuhunt import Catalog
from gpuhunt._internal.formats.csv import csv_bytes
from tests.helpers import item, publish_archive, serve_directory

AWS = csv_bytes([item(price=1.0, instance_name="g5"), item(price=2.0, instance_name="p4d")])
SRC = str(Path(__file__).resolve().parents[3] / "src")


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("GPUHUNT_RELOAD_INTERVAL", "abc"),  # the issue: every query failed
        ("GPUHUNT_RELOAD_INTERVAL", "nan"),  # never reloaded
        ("GPUHUNT_LOAD_TIMEOUT", "inf"),  # "timestamp out of range", snapshot served
        ("GPUHUNT_LOAD_TIMEOUT", "nan"),  # deadline off
        ("GPUHUNT_LOAD_TIMEOUT", "-5"),
        ("GPUHUNT_MAX_DOWNLOAD_MB", "nan"),  # a traceback
        ("GPUHUNT_MAX_DOWNLOAD_MB", "inf"),
        ("GPUHUNT_MAX_DOWNLOAD_MB", "-3"),
        ("GPUHUNT_ONLINE_TIMEOUT", "soon"),
        ("GPUHUNT_CONNECT_TIMEOUT", "-1"),
        ("GPUHUNT_READ_TIMEOUT", "0"),
        ("GPUHUNT_LIVE_CACHE_TTL", "nan"),
        ("GPUHUNT_ALLOW_HTTP", "yes"),
    ],
)
def test_queries_answer_from_the_network_with_a_bad_value(
    tmp_path, monkeypatch, caplog, name, text
):
    publish_archive(tmp_path / "bucket", "v1", {"aws": AWS})
    monkeypatch.setenv(name, text)
    with serve_directory(tmp_path / "bucket") as (url, requests):
        with caplog.at_level(logging.WARNING, logger="gpuhunt._internal.load.settings"):
            c = Catalog(catalog_url=url)
            answers = [[o.instance_name for o in c.query()] for _ in range(3)]
        status = c.status()
    assert answers == [["g5", "p4d"]] * 3
    assert (status.source, status.version, status.last_error) == ("network", "v1", None)
    assert requests.count("/version") == 1  # the default 4 h reload interval
    [record] = caplog.records
    assert record.getMessage().startswith(f"{name}={text!r} ")
    assert "using the default" in record.getMessage()


def test_a_negative_reload_interval_does_not_ask_on_every_query(tmp_path, monkeypatch):
    # #27: -1 made one version request per query (294 in 4 s).
    publish_archive(tmp_path / "bucket", "v1", {"aws": AWS})
    monkeypatch.setenv("GPUHUNT_RELOAD_INTERVAL", "-1")
    with serve_directory(tmp_path / "bucket") as (url, requests):
        c = Catalog(catalog_url=url)
        for _ in range(50):
            c.query()
    assert c.reload_interval == 4 * 3600
    assert requests.count("/version") == 1


@pytest.mark.subprocess
def test_cli_query_with_a_bad_value_answers_and_warns_once(tmp_path):
    publish_archive(tmp_path / "bucket", "v1", {"aws": AWS})
    env = {
        **os.environ,
        "GPUHUNT_CATALOG_URL": str(tmp_path / "bucket"),
        "GPUHUNT_CACHE_DIR": str(tmp_path / "cache"),
        "GPUHUNT_RELOAD_INTERVAL": "abc",
        "GPUHUNT_MAX_DOWNLOAD_MB": "nan",
        "PYTHONPATH": SRC,
    }
    done = subprocess.run(
        [sys.executable, "-m", "gpuhunt", "query", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "g5" in done.stdout and "p4d" in done.stdout
    err = done.stderr
    assert err.count("GPUHUNT_RELOAD_INTERVAL='abc' is not a number; using the default 14400") == 1
    assert err.count("GPUHUNT_MAX_DOWNLOAD_MB='nan' is not a finite number") == 1
    assert "Traceback" not in err
