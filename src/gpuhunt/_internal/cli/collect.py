"""`python -m gpuhunt PROVIDER --output FILE [--no-filter]`: collect one provider's offers into
a catalog CSV, what the nightly build runs per provider. Not a subcommand: its first word is the
provider's name, so `gpuhunt` looks for it before the command table."""

from __future__ import annotations

import argparse
import datetime as dt
import logging
import os

from gpuhunt._internal import registry
from gpuhunt._internal.cli.commands import Parser, logger_level

logger = logging.getLogger("gpuhunt")


def run(argv: list[str]) -> int:
    parser = Parser(
        prog="python -m gpuhunt", description="Collect one provider's offers into a catalog CSV."
    )
    parser.add_argument("provider", choices=registry.ALL_PROVIDERS)
    parser.add_argument("--output", required=True)
    parser.add_argument(
        "--no-filter", action="store_true", help="keep offers the provider's filter() would drop"
    )
    args = parser.parse_args(argv)
    # The collector's progress is gpuhunt's own INFO lines; the root logger (and with it every
    # other library's INFO chatter) is left as the caller set it, and ours restored after.
    with logger_level(logger, logging.INFO):
        return _collect(args)


def _collect(args: argparse.Namespace) -> int:
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
    meta_tmp = f"{args.output}{META_SUFFIX}.tmp"
    with open(meta_tmp, "wb") as f:
        f.write(collector_meta(started_at, args.provider))
    os.replace(tmp, args.output)
    os.replace(meta_tmp, f"{args.output}{META_SUFFIX}")
    logger.info("Wrote %d %s offers to %s", n, args.provider, args.output)
    _write_extra_tables(provider, args.output)
    return 0


def _write_extra_tables(provider: object, output: str) -> None:
    """Tables a provider publishes beside its offers (commitment terms, interruption bands;
    see docs/costs.md), each a file of its own: `aws.csv` -> `aws.terms`, `aws.interruption`.
    The catalog CSV is written the same whether or not a provider has any."""
    extra = getattr(provider, "extra_tables", None)
    if not callable(extra):
        return
    base = output[: -len(".csv")] if output.endswith(".csv") else output
    for suffix, data in extra().items():
        path = base + suffix
        with open(f"{path}.tmp", "wb") as f:
            f.write(data)
        os.replace(f"{path}.tmp", path)
        logger.info("Wrote %s", path)
