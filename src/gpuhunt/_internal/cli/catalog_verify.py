"""`gpuhunt catalog verify`: download a published version and check it against its
manifest (`publish.verify.verify`)."""

from __future__ import annotations

import argparse

from gpuhunt._internal.cli import render
from gpuhunt._internal.cli.commands import command


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("url", help="base URL or folder the catalog is published under")
    p.add_argument("--version", default=None, help="a version to check (default: the latest)")


@command(
    "catalog",
    "verify",
    help="download a published version and check it against its manifest",
    arguments=_arguments,
)
def run(args: argparse.Namespace) -> int:
    from gpuhunt._internal.load.settings import Settings
    from gpuhunt._internal.publish.verify import verify

    checked = verify(args.url, version=args.version, allow_http=Settings.from_env().allow_http)
    entries = checked.manifest["providers"]
    out = [
        f"{p:12} {e['status']:13} {e['rows']:7} offers  from {e.get('from_version')}"
        for p, e in sorted(entries.items())
    ]
    history_note = f", price history {checked.history_rows} rows" if checked.history_rows else ""
    out.append(
        f"OK: {args.url.rstrip('/')} version {checked.version}, {len(entries)} providers"
        + history_note
    )
    render.emit(render.text(*out))
    return 0
