"""The `gpuhunt` command: query the catalog, collect a provider, inspect the catalog state.

gpuhunt query --gpu "A100 80GB" --max-price 4 --location "us-*"
gpuhunt query --group-by gpu                             # cheapest per GPU model and count
python -m gpuhunt lambdalabs --output lambdalabs.csv     # collect (nightly build)
gpuhunt catalog status
gpuhunt history --gpu H100 --provider aws --since 2026-03-01 [--plot h100.png]
gpuhunt catalog diff 20261129-1 latest

One module per command (`query.py`, `catalog_build.py`, ...), each registering its `run` in the
command table (`commands.py`); this module builds one parser from the table and dispatches every
command the same way (`args.run`), under one exit-code rule (`_guard`). What commands print goes
through the renderer table of `render.py`.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import gc
import logging
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from gpuhunt._internal import registry
from gpuhunt._internal.cli import commands
from gpuhunt._internal.errors import (
    GPUHuntError,
    InputError,
    MissingCredsError,
    ProviderError,
    redact,
)
from gpuhunt._version import __version__

logger = logging.getLogger("gpuhunt")


def _main_help() -> str:
    offline = ", ".join(registry.OFFLINE_PROVIDERS)
    online = ", ".join(registry.ONLINE_PROVIDERS)
    return (
        "collect one provider's offers into a catalog CSV (what the nightly build runs):\n"
        "  python -m gpuhunt PROVIDER --output FILE [--no-filter]\n\n"
        f"providers in the catalog: {offline}\n"
        f"online providers (gpuhunt query --online): {online}\n"
        "`gpuhunt providers` lists them with the credentials each reads."
    )


def run() -> None:
    """The `gpuhunt` program: `main()`, then exit as soon as the answer is out.

    The process ends with `os._exit` once stdout and stderr are flushed, the log handlers
    closed and the `atexit` functions run: what that skips is the interpreter's teardown,
    which frees every object of the loaded catalog one by one (tens of milliseconds for
    memory the OS takes back at once), and the wait for threads doing work nobody waits for
    any more (a provider sleeping on `Retry-After`, a download going on in the background).
    It is safe because every command has closed what it writes before it returns (files are
    written whole and renamed into place; the disk cache's writes are waited for by the load
    that made them). Only the program does this: `main()`, which tests and callers run in
    their own process, returns normally.

    A query, which answers and exits, runs with the cyclic garbage collector off: its
    start-up (a few hundred modules imported, the catalog read back) makes many objects
    and few cycles, and the collections they would set off cost a tenth of a warm run; what
    is left is freed by the process's exit. Long-lived commands (`serve`, `mcp`) and those
    that build or collect keep it."""
    if sys.argv[1:2] == ["query"]:
        gc.disable()
    code = main()
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    logging.shutdown()
    atexit._run_exitfuncs()
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(
        level=logging.WARNING, format="%(levelname)s %(message)s", stream=sys.stderr
    )
    logging.getLogger("urllib3").setLevel(logging.ERROR)  # gpuhunt reports failures itself
    # Online failures are printed from the catalog's status, once, after the answer. Restored
    # after, for callers running the CLI in their own process (tests).
    with commands.logger_level(logging.getLogger("gpuhunt._internal.query.online"), logging.ERROR):
        return _main(argv)


def _main(argv: list[str]) -> int:
    # `python -m gpuhunt PROVIDER --output FILE` is the collector the nightly build runs: its
    # own command line, not a subcommand (its first word is a provider's name).
    if argv and argv[0] in registry.ALL_PROVIDERS:
        from gpuhunt._internal.cli import collect

        return _guard(lambda: collect.run(argv))
    table = commands.in_order(commands.load_for(argv))
    names = list(dict.fromkeys(path[0] for path in commands.PATHS))
    if argv and not argv[0].startswith("-") and argv[0] not in names:
        providers = ", ".join(registry.ALL_PROVIDERS)
        known = (
            f"providers: {providers}"
            if "--output" in argv
            else f"commands: {', '.join(names)}; providers to collect: {providers}"
        )
        what = "provider" if "--output" in argv else "command or provider"
        print(f"gpuhunt: error: unknown {what} {argv[0]!r} ({known})", file=sys.stderr)
        return BAD_INPUT
    parser, groups = _parser(table)
    args = parser.parse_args(argv)
    run = getattr(args, "run", None)
    if run is not None:
        return _guard(lambda: run(args))
    # A group alone (`gpuhunt catalog`): what it can do, not the top-level help.
    groups.get((args.command,), parser).print_help()
    return BAD_INPUT


def _parser(
    table: list[commands.Command],
) -> tuple[argparse.ArgumentParser, dict[tuple[str, ...], argparse.ArgumentParser]]:
    """The `gpuhunt` parser, one subparser per command of `table`, and the parsers of the
    command groups."""
    parser = commands.Parser(
        prog="gpuhunt",
        description="Cloud GPU and CPU offers with hourly prices (USD per hour).",
        epilog=_main_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"gpuhunt {__version__}")
    subs: dict[tuple[str, ...], Any] = {(): parser.add_subparsers(dest="command")}
    groups: dict[tuple[str, ...], argparse.ArgumentParser] = {}
    for cmd in table:
        parent = cmd.path[:-1]
        if parent not in subs:  # a group's parser, where its first command is listed
            group = subs[parent[:-1]].add_parser(parent[-1], help=commands.GROUPS[parent])
            groups[parent] = group
            subs[parent] = group.add_subparsers(dest=f"{'_'.join(parent)}_command")
        p = subs[parent].add_parser(cmd.path[-1], help=cmd.help, description=cmd.description)
        if cmd.arguments is not None:
            cmd.arguments(p)
        p.set_defaults(run=cmd.run)
    return parser, groups


# One exit-code rule for every command: 2 for input the user can fix (an unknown provider or
# GPU name, a value that cannot be read, a credential or package missing for a provider asked
# for by name, a path that does not exist or cannot be written), 1 for failures outside the
# user's control (the network, a provider's API, a broken catalog). argparse's own errors are
# 2 as well. A bad GPUHUNT_* value is never fatal: it is warned about and its default used.
BAD_INPUT = 2
FAILURE = 1
_USER_PATH_ERRORS = (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError)


def _guard(fn: Callable[[], int | None]) -> int:
    """Run a command; what went wrong is one line on stderr, never a traceback."""
    try:
        return int(fn() or 0)
    except (InputError, MissingCredsError) as e:
        print(f"gpuhunt: error: {redact(e)}", file=sys.stderr)
        return BAD_INPUT
    except ProviderError as e:
        print(f"gpuhunt: error: {redact(e)}", file=sys.stderr)
        return BAD_INPUT if _missing_package(e) else FAILURE
    except GPUHuntError as e:
        print(f"gpuhunt: error: {redact(e)}", file=sys.stderr)
        return FAILURE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `gpuhunt query | head`
        sys.stderr.close()
        return 0
    except OSError as e:  # e.g. `--output` into a folder that does not exist
        print(f"gpuhunt: error: {redact(e)}", file=sys.stderr)
        return BAD_INPUT if isinstance(e, _USER_PATH_ERRORS) else FAILURE


def _missing_package(e: ProviderError) -> bool:
    # registry.missing_package_error: the fix is `pip install 'gpuhunt[extra]'`.
    return isinstance(e.__cause__, ImportError)
