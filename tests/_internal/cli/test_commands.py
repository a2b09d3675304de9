"""The command table (`cli/commands.py`): each command module registers what it runs, once, under
a group that exists; `MODULES` lists every command module of the package and orders `--help`."""

from __future__ import annotations

import argparse
import pkgutil

import pytest

from gpuhunt._internal import cli
from gpuhunt._internal.cli import commands

# The table, the renderers (and their layout, grouped view, DIFFERS column and footer), the collector.
NOT_COMMANDS = {"commands", "render", "layout", "groups", "differs", "footer", "collect", "costs"}


def test_every_command_module_is_in_modules_and_registers_a_command():
    found = {m.name for m in pkgutil.iter_modules(cli.__path__)} - NOT_COMMANDS
    assert set(commands.MODULES) == found and len(commands.MODULES) == len(found)
    table = commands.load()
    registered = {c.run.__module__.rpartition(".")[2] for c in table.values()}
    assert registered == found


def test_paths_name_the_module_that_registers_each_command():
    table = commands.load()
    assert {p: c.run.__module__.rpartition(".")[2] for p, c in table.items()} == commands.PATHS


def test_load_for_gives_the_command_argv_names_and_every_command_otherwise():
    assert list(commands.load_for(["query", "--gpu", "H100"])) == [("query",)]
    assert list(commands.load_for(["catalog", "site", "out"])) == [("catalog", "site")]
    every = set(commands.PATHS)
    for argv in ([], ["--help"], ["catalog"], ["catalog", "nosuch"], ["nosuch"]):
        assert set(commands.load_for(argv)) == every


def test_the_table_holds_every_command_of_gpuhunt():
    paths = {" ".join(p) for p in commands.load()}
    assert paths == {
        "query",
        "providers",
        "history",
        "catalog status",
        "catalog build",
        "catalog publish",
        "catalog verify",
        "catalog report",
        "catalog diff",
        "catalog site",
        "catalog publish-site",
        "serve",
        "mcp",
    }


def test_in_order_follows_modules_whatever_was_imported_first():
    order = [c.path for c in commands.in_order(commands.load())]
    assert order[:2] == [("query",), ("catalog", "status")]
    assert order.index(("history",)) < order.index(("catalog", "diff"))
    assert order[-1] == ("providers",)


def test_a_command_registered_twice_or_outside_a_group_is_refused(monkeypatch):
    monkeypatch.setattr(commands, "TABLE", dict(commands.load()))

    def run(args: argparse.Namespace) -> int:
        return 0

    with pytest.raises(ValueError, match="gpuhunt query is registered twice"):
        commands.command("query", help="again")(run)
    with pytest.raises(ValueError, match="no command group"):
        commands.command("nosuch", "thing", help="x")(run)
    assert commands.command("catalog", "extra", help="x")(run) is run
    assert commands.TABLE[("catalog", "extra")].run is run


def test_every_command_dispatches_to_its_own_run(monkeypatch, capsys):
    # One dispatch for every command: `args.run`, set by the table. Each run is replaced by
    # one recording its path; argv gives the required arguments of each.
    argv = {
        ("catalog", "build"): ["--input", "i", "--version", "v", "--output", "o"],
        ("catalog", "publish"): ["d", "--bucket", "b"],
        ("catalog", "verify"): ["u"],
        ("catalog", "report"): ["s"],
        ("catalog", "diff"): ["a", "b"],
        ("catalog", "site"): ["out"],
        ("catalog", "publish-site"): ["site", "--bucket", "b"],
    }
    table = commands.load()
    ran: list[tuple[str, ...]] = []
    patched = {
        path: commands.Command(
            c.path, c.help, lambda args, p=path: ran.append(p) or 7, c.arguments, c.description
        )
        for path, c in table.items()
    }
    for path, c in table.items():
        # in_order sorts by the run's module: keep it.
        patched[path].run.__module__ = c.run.__module__  # type: ignore[attr-defined]
    monkeypatch.setattr(commands, "TABLE", patched)
    for path in table:
        assert cli.main([*path, *argv.get(path, [])]) == 7
    assert ran == list(table)
