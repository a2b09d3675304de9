"""One exit-code rule for the CLI (issue #23): 2 for every bad input (an unknown provider or GPU
name, a value that cannot be read, a credential or package missing for what was asked, a path
that does not exist), 1 for failures outside the user's control (the network, a provider, a
broken catalog), 0 otherwise; a bad GPUHUNT_* value is never fatal. Each command is tried.
Nothing here leaves 127.0.0.1: providers' answers come from `responses`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import responses

from gpuhunt._internal import cli
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.load import settings
from gpuhunt.providers.lium import NODES_URL
from tests.helpers import item, publish_archive

SRC = str(Path(__file__).resolve().parents[1] / "src")
UNREACHABLE = "http://127.0.0.1:9/nothing"  # the discard port: connection refused


@pytest.fixture(autouse=True)
def catalog(tmp_path, monkeypatch):
    root = tmp_path / "bucket"
    publish_archive(
        root,
        "20261129-1",
        {
            "aws": csv_bytes(
                [
                    item(price=2.0, instance_name="p5.48xlarge", gpu_name="H100", gpu_count=8),
                    item(price=0.5, instance_name="m5.large", gpu_count=0),
                ]
            )
        },
    )
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", str(root))
    for var in ("HOTAISLE_API_KEY", "HOTAISLE_TEAM", "LAMBDALABS_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    settings._warned.clear()
    return root


def run(*args: object) -> int:
    """`cli.main`'s exit status; argparse's errors exit through SystemExit (with 2), as the
    `gpuhunt` program does."""
    try:
        return cli.main([str(a) for a in args])
    except SystemExit as e:
        return int(e.code or 0)


def last_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    return err[-1] if err else ""


# ------------------------------------------------------------------------------------ query


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--provider", "nosuch"], "Unknown provider: 'nosuch'"),
        (["--gpu", "H1OO"], "did you mean H100"),
        (["--min-price", "-1"], "--min-price -1 is negative"),
        (["--min-gpu-count", "4", "--max-gpu-count", "2"], "--min-gpu-count 4 is above"),
        (["--max-price", "cheap"], "invalid float value: 'cheap'"),  # argparse's own
        (["--min-compute-capability", "abc"], "--min-compute-capability"),
        (["--provider", "vastai"], "queried live: add --online"),
        (["--provider", "hotaisle", "--online"], "HOTAISLE_API_KEY"),  # credential missing
    ],
)
def test_query_bad_input_exits_2(capsys, args, message):
    assert run("query", *args) == 2
    assert message in last_error(capsys)


@responses.activate
def test_query_every_named_online_provider_failing_exits_1(capsys):
    responses.get(NODES_URL, status=503)
    assert run("query", "--provider", "lium", "--online") == 1
    assert "No provider asked for answered (lium:" in last_error(capsys)


def test_query_catalog_unreachable_is_not_an_error(monkeypatch, capsys):
    # Served from the bundled snapshot, with a warning: the user gets an answer.
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", UNREACHABLE)
    assert run("query", "--max-price", "1") == 0


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("GPUHUNT_RELOAD_INTERVAL", "abc"),
        ("GPUHUNT_LOAD_TIMEOUT", "-1"),
        ("GPUHUNT_ALLOW_HTTP", "x"),
    ],
)
def test_query_with_a_bad_setting_answers(monkeypatch, capsys, caplog, name, value):
    # (In a real process the warning goes to stderr: tests/_internal/load/
    # test_bad_settings_in_use.py runs `gpuhunt query` so.)
    monkeypatch.setenv(name, value)
    assert run("query", "--max-price", "1") == 0
    assert "m5.large" in capsys.readouterr().out
    assert f"{name}={value!r}" in caplog.text


# ---------------------------------------------------------------------------------- catalog


def test_catalog_status(capsys):
    assert run("catalog", "status") == 0
    assert run("catalog", "status", "--bogus") == 2


def test_catalog_status_with_a_bad_setting(monkeypatch, capsys):
    monkeypatch.setenv("GPUHUNT_MAX_DOWNLOAD_MB", "nan")
    assert run("catalog", "status") == 0


def test_catalog_diff(catalog, capsys):
    assert run("catalog", "diff", catalog, catalog) == 0
    assert run("catalog", "diff", "nope!", "latest") == 2
    assert "'nope!' is not a folder, zip file, URL or catalog version" in last_error(capsys)
    assert run("catalog", "diff", "latest", "latest", "--catalog-url", UNREACHABLE) == 1


def test_catalog_build_and_verify(tmp_path, capsys):
    assert run("catalog", "build", "--input", tmp_path / "nope", "--version", "20261129-2",
               "--output", tmp_path / "o") == 2  # fmt: skip
    assert "Input folder" in last_error(capsys)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "aws.csv").write_bytes(csv_bytes([item(price=1.0)]))
    assert run("catalog", "build", "--input", tmp_path / "in", "--version", "not a version!",
               "--output", tmp_path / "o") == 2  # fmt: skip
    assert "Not a valid catalog version" in last_error(capsys)
    assert run("catalog", "build", "--input", tmp_path / "in", "--version", "20261129-2",
               "--output", tmp_path / "o", "--accept", "vastai") == 2  # fmt: skip
    assert "--accept vastai: not an offline provider" in last_error(capsys)
    assert run("catalog", "build", "--input", tmp_path / "in", "--version", "20261129-2",
               "--output", tmp_path / "o") == 0  # fmt: skip
    assert run("catalog", "verify", tmp_path / "o") == 0
    # A damaged build is not the user's input being wrong: 1.
    (tmp_path / "o" / "20261129-2" / "catalog.zip").write_bytes(b"not a zip")
    assert run("catalog", "verify", tmp_path / "o") == 1
    assert run("catalog", "bogus") == 2  # argparse


# ---------------------------------------------------------------------------------- history


def test_history(catalog, capsys):
    assert run("history", "--since", "yesterday") == 2
    assert "Not a date: 'yesterday'" in last_error(capsys)
    assert run("history", "--gpu", "H1OO") == 2
    assert "Unknown GPU name 'H1OO'" in last_error(capsys)
    assert run("history", "--provider", "nosuch") == 2
    assert run("history", "--by", "region") == 2  # argparse
    # A catalog without a price history, or none reachable: not the user's doing.
    assert run("history") == 1
    assert run("history", "--catalog-url", UNREACHABLE) == 1


# -------------------------------------------------------------------------------- providers


def test_providers(capsys):
    assert run("providers") == 0
    assert run("providers", "extra") == 2


# ---------------------------------------------------------------------- python -m gpuhunt X


def _python_m(tmp_path, *args: str, env: dict[str, str] | None = None):
    return subprocess.run(
        [sys.executable, "-m", "gpuhunt", *args],
        env={**os.environ, "PYTHONPATH": SRC, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )


@pytest.mark.subprocess
def test_collector_unknown_provider_exits_2(tmp_path):
    done = _python_m(tmp_path, "nosuch", "--output", "x.csv")
    assert done.returncode == 2
    assert "unknown provider 'nosuch'" in done.stderr


@pytest.mark.subprocess
def test_collector_missing_credential_exits_2(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "LAMBDALABS_TOKEN"}
    done = subprocess.run(
        [sys.executable, "-m", "gpuhunt", "lambdalabs", "--output", "x.csv"],
        env={**env, "PYTHONPATH": SRC},
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stderr[-1000:]
    assert "LAMBDALABS_TOKEN" in done.stderr and "Traceback" not in done.stderr


@responses.activate
def test_collector_provider_failing_exits_1(tmp_path, capsys):
    responses.get(NODES_URL, status=503)
    assert run("lium", "--output", tmp_path / "lium.csv") == 1
    assert "503" in last_error(capsys)
    assert not (tmp_path / "lium.csv").exists()


@responses.activate
def test_collector_output_folder_missing_exits_2(tmp_path, capsys):
    responses.get(NODES_URL, json={"nodes": []})
    assert run("lium", "--output", tmp_path / "no" / "such" / "lium.csv") == 2
    assert "No such file or directory" in last_error(capsys)


# ------------------------------------------------- paths the user gave that cannot be used


@pytest.mark.parametrize(
    "args",
    [
        ("catalog", "site", "{out}", "--catalog", "{missing}"),
        ("catalog", "site", "{file}", "--catalog", "bundled"),
        ("catalog", "verify", "{missing}"),
        ("catalog", "report", "{missing}"),
        ("history", "--catalog-url", "{missing}"),
    ],
)
def test_a_path_that_cannot_be_used_exits_2(tmp_path, capsys, args):
    (tmp_path / "a-file").write_text("not a folder")
    paths = {"out": tmp_path / "o", "missing": tmp_path / "nope", "file": tmp_path / "a-file"}
    assert run(*(a.format(**{k: str(v) for k, v in paths.items()}) for a in args)) == 2
    error = last_error(capsys)
    assert "nope" in error or "a-file" in error
