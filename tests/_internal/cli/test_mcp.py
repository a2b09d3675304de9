"""`gpuhunt mcp`'s command line (the server itself: tests/_internal/serve/test_mcp.py, through
the SDK's stdio client)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from gpuhunt._internal.cli import commands
from gpuhunt._internal.formats.csv import csv_bytes
from tests.helpers import item, publish_archive


def test_it_is_a_command_taking_the_catalog_option():
    cmd = commands.load()[("mcp",)]
    assert "MCP" in cmd.help
    parser = commands.Parser(prog="gpuhunt mcp")
    assert cmd.arguments is not None
    cmd.arguments(parser)
    assert parser.parse_args(["--catalog", "/some/dir"]).catalog == "/some/dir"
    assert parser.parse_args([]).catalog is None


@pytest.mark.slow
@pytest.mark.subprocess
def test_it_exits_0_when_stdin_closes(tmp_path):
    root = tmp_path / "published"
    publish_archive(root, "20261129-1", {"aws": csv_bytes([item(price=2.0, instance_name="p4d")])})
    env = dict(os.environ, GPUHUNT_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run(
        [sys.executable, "-m", "gpuhunt", "mcp", "--catalog", str(root)],
        env=env,
        stdin=subprocess.DEVNULL,  # closed at once: the client went away
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
