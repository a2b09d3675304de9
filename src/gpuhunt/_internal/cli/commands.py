"""The command table: every `gpuhunt` command, registered by the module that implements it.

A command module calls `command(...)` on its `run` function at import; `load()` imports the
modules of `MODULES`, in the order `gpuhunt --help` lists their commands, and the parser is built
from the table alone. A run of one command imports only that command's module (`load_for`,
through `PATHS`): `gpuhunt query` never pays for the build pipeline's or the site's imports. A command module imports only what its arguments need at the top (argparse,
the registry); what running it needs (the catalog, boto3, matplotlib, the build pipeline) is
imported inside `run`, so `gpuhunt --help` and one command never pay for the others.

A new command is a module here with a `command(...)` call, its name in `MODULES` and its path in
`PATHS` (a test checks both against what the modules register).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NoReturn

Run = Callable[[argparse.Namespace], int]
Arguments = Callable[[argparse.ArgumentParser], None]

# The command modules, in the order `gpuhunt --help` and `gpuhunt catalog --help` list them.
MODULES = (
    "query",
    "catalog_status",
    "catalog_build",
    "catalog_publish",
    "catalog_verify",
    "catalog_report",
    "history",
    "catalog_diff",
    "catalog_site",
    "catalog_publish_site",
    "serve",
    "mcp",
    "providers",
)

# Where each command is registered, so that a run imports its module alone (`load_for`).
PATHS: dict[tuple[str, ...], str] = {
    ("query",): "query",
    ("catalog", "status"): "catalog_status",
    ("catalog", "build"): "catalog_build",
    ("catalog", "publish"): "catalog_publish",
    ("catalog", "verify"): "catalog_verify",
    ("catalog", "report"): "catalog_report",
    ("history",): "history",
    ("catalog", "diff"): "catalog_diff",
    ("catalog", "site"): "catalog_site",
    ("catalog", "publish-site"): "catalog_publish_site",
    ("providers",): "providers",
    ("serve",): "serve",
    ("mcp",): "mcp",
}

# Commands that only hold others: `gpuhunt catalog` alone prints what it can do.
GROUPS: dict[tuple[str, ...], str] = {
    ("catalog",): "inspect, build, publish and verify catalogs",
}


class Parser(argparse.ArgumentParser):
    """argparse, but its errors are one line (`gpuhunt query: error: ...`), not the usage text
    followed by the error: the query usage alone is a screenful."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


@dataclass(frozen=True)
class Command:
    """One command: where it sits (`("catalog", "build")`), its help, its options and what runs
    it (returning the exit status)."""

    path: tuple[str, ...]
    help: str
    run: Run
    arguments: Arguments | None = None
    description: str | None = None


TABLE: dict[tuple[str, ...], Command] = {}


def command(
    *path: str, help: str, description: str | None = None, arguments: Arguments | None = None
) -> Callable[[Run], Run]:
    """Register the decorated function as the command `path` (`command("catalog", "diff",
    ...)`); the function is returned unchanged."""

    def register(run: Run) -> Run:
        if path in TABLE:
            raise ValueError(f"gpuhunt {' '.join(path)} is registered twice")
        if len(path) > 1 and path[:-1] not in GROUPS:
            raise ValueError(f"gpuhunt {' '.join(path)}: no command group {path[:-1]!r}")
        TABLE[path] = Command(path, help, run, arguments, description)
        return run

    return register


def load() -> dict[tuple[str, ...], Command]:
    """The table, every command module imported."""
    for name in MODULES:
        importlib.import_module(f"{__package__}.{name}")
    return TABLE


def load_for(argv: list[str]) -> dict[tuple[str, ...], Command]:
    """The table as far as `argv` needs it: the one command `argv` names (its module alone
    imported), or every command when `argv` names none (help, a group alone, a mistake), so
    that what argparse prints is the same either way."""
    for path, module in PATHS.items():
        if tuple(argv[: len(path)]) == path:
            importlib.import_module(f"{__package__}.{module}")
            return {path: TABLE[path]}
    return load()


def in_order(table: dict[tuple[str, ...], Command]) -> list[Command]:
    """The commands in `MODULES` order (the order of the table is the order of imports, which
    a test or a caller importing one command module first would change)."""
    order = {name: n for n, name in enumerate(MODULES)}
    return sorted(table.values(), key=lambda c: order[c.run.__module__.rpartition(".")[2]])


@contextlib.contextmanager
def logger_level(logger: logging.Logger, level: int) -> Iterator[None]:
    """`logger` at `level` for the block, then as the caller had it: a command run in the
    caller's own process (tests, `main()`) leaves logging as it found it."""
    previous = logger.level
    logger.setLevel(level)
    try:
        yield
    finally:
        logger.setLevel(previous)
