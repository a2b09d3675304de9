"""The `gpuhunt` command: query the catalog, collect a provider, inspect the catalog state.

gpuhunt query --gpu "A100 80GB" --max-price 4 --location "us-*"
gpuhunt query --group-by gpu                             # cheapest per GPU model and count
python -m gpuhunt lambdalabs --output lambdalabs.csv     # collect (nightly build)
gpuhunt catalog status
gpuhunt history --gpu H100 --provider aws --since 2026-03-01 [--plot h100.png]
gpuhunt catalog diff 20261129-1 latest
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
import threading
from collections.abc import Sequence
from typing import Any, NoReturn

from gpuhunt._internal import cli_format, cli_query, registry
from gpuhunt._internal.errors import GPUHuntError, InputError, MissingCredsError, ProviderError
from gpuhunt._version import __version__

logger = logging.getLogger("gpuhunt")

COMMANDS = ("query", "catalog", "providers", "history")


class _Parser(argparse.ArgumentParser):
    """argparse, but its errors are one line (`gpuhunt query: error: ...`), not the usage text
    followed by the error: the query usage alone is a screenful."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


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
    """The `gpuhunt` program: `main()`, then exit as soon as the answer is out. Online work
    nobody waits for any more (a provider sleeping on `Retry-After`, a catalog download going
    on in the background, a provider's own worker pool) is abandoned rather than waited for."""
    code = main()
    # Any thread still running (daemon or not) is abandoned work. Exit without waiting for it,
    # and without letting a daemon thread write to a stream the interpreter is tearing down.
    lingering = [t for t in threading.enumerate() if t is not threading.main_thread()]
    if lingering:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        logging.shutdown()
        os._exit(code)
    sys.exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(
        level=logging.WARNING, format="%(levelname)s %(message)s", stream=sys.stderr
    )
    logging.getLogger("urllib3").setLevel(logging.ERROR)  # gpuhunt reports failures itself
    # Online failures are printed from the catalog's status, once, after the answer. Restored
    # after, for callers running the CLI in their own process (tests).
    online_log = logging.getLogger("gpuhunt._internal.query.online")
    previous = online_log.level
    online_log.setLevel(logging.ERROR)
    try:
        return _main(argv)
    finally:
        online_log.setLevel(previous)


def _main(argv: list[str]) -> int:
    # `python -m gpuhunt PROVIDER --output FILE` is the collector the nightly build runs.
    if argv and argv[0] in registry.ALL_PROVIDERS:
        return _guard(lambda: _collect(argv))
    if argv and not argv[0].startswith("-") and argv[0] not in COMMANDS:
        providers = ", ".join(registry.ALL_PROVIDERS)
        known = (
            f"providers: {providers}"
            if "--output" in argv
            else f"commands: {', '.join(COMMANDS)}; providers to collect: {providers}"
        )
        what = "provider" if "--output" in argv else "command or provider"
        print(f"gpuhunt: error: unknown {what} {argv[0]!r} ({known})", file=sys.stderr)
        return BAD_INPUT
    parser = _Parser(
        prog="gpuhunt",
        description="Cloud GPU and CPU offers with hourly prices (USD per hour).",
        epilog=_main_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"gpuhunt {__version__}")
    sub = parser.add_subparsers(dest="command")
    cli_query.add_parser(sub)
    cat = sub.add_parser("catalog", help="inspect, build, publish and verify catalogs")
    cat_sub = cat.add_subparsers(dest="catalog_command")
    st = cat_sub.add_parser("status", help="load the catalog and show where it came from")
    st.add_argument("--json", action="store_true")
    # Imported here, not at the top: collectors (above) need none of the catalog machinery.
    from gpuhunt._internal.publish import commands as publish_commands

    publish_commands.register(cat_sub)
    from gpuhunt._internal.history import commands as history_commands

    history_commands.register_cli(sub, cat_sub)  # `gpuhunt history`, `gpuhunt catalog diff`
    from gpuhunt._internal.site import commands as site_commands

    site_commands.register(cat_sub)  # `gpuhunt catalog site`
    sub.add_parser("providers", help="list providers")
    args = parser.parse_args(argv)
    if args.command == "query":
        return _guard(lambda: cli_query.run(args))
    if args.command == "providers":
        return _guard(_list_providers)
    if args.command == "catalog" and args.catalog_command == "status":
        return _guard(lambda: _status(args))
    if args.command in ("catalog", "history") and getattr(args, "run", None):
        return _guard(lambda: args.run(args))
    # `gpuhunt catalog` alone: what `catalog` can do, not the top-level help.
    (cat if args.command == "catalog" else parser).print_help()
    return 2


def _list_providers() -> int:
    for spec in registry.PROVIDERS:
        kind = "online" if spec.online else "offline"
        extra = f"  (pip install 'gpuhunt[{spec.extra}]')" if spec.extra else ""
        print(f"{spec.name:14} {kind:8} {' '.join(spec.env)}{extra}")
    return 0


# One exit-code rule for every command: 2 for input the user can fix (an unknown provider or
# GPU name, a value that cannot be read, a credential or package missing for a provider asked
# for by name, a path that does not exist or cannot be written), 1 for failures outside the
# user's control (the network, a provider's API, a broken catalog). argparse's own errors are
# 2 as well. A bad GPUHUNT_* value is never fatal: it is warned about and its default used.
BAD_INPUT = 2
FAILURE = 1
_USER_PATH_ERRORS = (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError)


def _guard(fn: Any) -> int:
    """Run a command; what went wrong is one line on stderr, never a traceback."""
    try:
        return int(fn() or 0)
    except (InputError, MissingCredsError) as e:
        print(f"gpuhunt: error: {e}", file=sys.stderr)
        return BAD_INPUT
    except ProviderError as e:
        print(f"gpuhunt: error: {e}", file=sys.stderr)
        return BAD_INPUT if _missing_package(e) else FAILURE
    except GPUHuntError as e:
        print(f"gpuhunt: error: {e}", file=sys.stderr)
        return FAILURE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `gpuhunt query | head`
        sys.stderr.close()
        return 0
    except OSError as e:  # e.g. `--output` into a folder that does not exist
        print(f"gpuhunt: error: {e}", file=sys.stderr)
        return BAD_INPUT if isinstance(e, _USER_PATH_ERRORS) else FAILURE


def _missing_package(e: ProviderError) -> bool:
    # registry.missing_package_error: the fix is `pip install 'gpuhunt[extra]'`.
    return isinstance(e.__cause__, ImportError)


def _collect(argv: list[str]) -> int:
    parser = _Parser(
        prog="python -m gpuhunt", description="Collect one provider's offers into a catalog CSV."
    )
    parser.add_argument("provider", choices=registry.ALL_PROVIDERS)
    parser.add_argument("--output", required=True)
    parser.add_argument(
        "--no-filter", action="store_true", help="keep offers the provider's filter() would drop"
    )
    args = parser.parse_args(argv)
    logging.getLogger().setLevel(logging.INFO)
    import datetime as dt

    from gpuhunt._internal.formats import csv as catalog_csv
    from gpuhunt._internal.publish.files import META_SUFFIX, collector_meta

    cls = registry.provider_class(args.provider)
    # The data is as of when the collector started asking (the build's `collected_at`), not
    # when the file was written, uploaded or downloaded.
    started_at = dt.datetime.now(dt.timezone.utc)
    from gpuhunt._internal.load.context import Context
    from gpuhunt._internal.load.settings import Settings

    # A command's entry point: the environment is read here, its timeouts given to the
    # provider's session.
    provider = cls.from_env().with_session(Context(settings=Settings.from_env()).new_session())
    offers = provider.get(apply_filter=not args.no_filter)
    if not args.no_filter and hasattr(cls, "filter"):
        offers = cls.filter(offers)
    offers = (
        sorted(offers, key=lambda i: i.price) if not registry.spec(args.provider).online else offers
    )
    # Write next to the target and rename, so a failed run never leaves a half-written CSV.
    tmp = f"{args.output}.tmp"
    n = catalog_csv.write_csv_file(offers, tmp)
    import os

    meta_tmp = f"{args.output}{META_SUFFIX}.tmp"
    with open(meta_tmp, "wb") as f:
        f.write(collector_meta(started_at, args.provider))
    os.replace(tmp, args.output)
    os.replace(meta_tmp, f"{args.output}{META_SUFFIX}")
    logger.info("Wrote %d %s offers to %s", n, args.provider, args.output)
    return 0


def _status(args: argparse.Namespace) -> int:
    from gpuhunt._internal.catalog import Catalog

    catalog = Catalog()
    catalog.query(provider=registry.OFFLINE_PROVIDERS[:1])  # loads (or falls back) as a query would
    s = catalog.status()
    info = {
        "version": s.version,
        "source": s.source,
        "why": cli_format.origin(s),
        "url": s.url,
        "loaded_at": s.loaded_at.isoformat() if s.loaded_at else None,
        "data_age_days": s.data_age_days,
        "data_age": cli_format.data_ages(s) or None,
        "recorded_at": {p: w.isoformat() if w else None for p, w in s.recorded_at.items()} or None,
        "sources": s.sources or None,
        "offers": s.offers,
        "skipped_rows": s.skipped_rows,
        "last_error": s.last_error,
        "next_check_in": round(s.next_retry_in, 1) if s.next_retry_in else None,
        "version_went_back": s.version_went_back,
    }
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    per_provider = ("offers", "skipped_rows", "data_age", "recorded_at", "sources")
    for k, v in info.items():
        if k not in per_provider:
            print(f"{k:13} {v}")
    ages = cli_format.data_ages(s)
    names = sorted(set(s.offers) | set(s.recorded_at))
    # Where each provider's data came from and how its date is known, when the manifest says.
    described = [p for p in names if s.sources.get(p, {}).get("name")]
    if described:
        print("\nSOURCE")
    for p in described:
        source = s.sources[p]
        print(f"{p:13} {source['name']}")
        if source.get("date_basis"):
            print(f"{'':13} date: {source['date_basis']}")
    if names:
        print(f"\n{'PROVIDER':13} {'OFFERS':>7}  {'AGE':>7}  RECORDED")
    for p in names:
        when = s.recorded_at.get(p)
        skipped = s.skipped_rows.get(p)
        note = f"  ({skipped} malformed rows skipped)" if skipped else ""
        # A date that only bounds the data ("2026-05-04 or later") says so.
        later = " or later" if s.sources.get(p, {}).get("date_is_lower_bound") else ""
        print(
            f"{p:13} {s.offers.get(p, 0):>7}  {ages.get(p, 'unknown'):>7}  "
            f"{when.isoformat() + later if when else 'unknown'}{note}"
        )
    return 0
