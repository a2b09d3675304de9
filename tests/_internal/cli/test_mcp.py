"""`gpuhunt mcp`'s command line (the server itself: tests/_internal/serve/test_mcp.py, through
the SDK's stdio client)."""

from __future__ import annotations

from gpuhunt._internal.cli import commands


def test_it_is_a_command_taking_the_catalog_option():
    cmd = commands.load()[("mcp",)]
    assert "MCP" in cmd.help
    parser = commands.Parser(prog="gpuhunt mcp")
    assert cmd.arguments is not None
    cmd.arguments(parser)
    assert parser.parse_args(["--catalog", "/some/dir"]).catalog == "/some/dir"
    assert parser.parse_args([]).catalog is None
