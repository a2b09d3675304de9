"""`gpuhunt providers`: every provider, offline or online, and the credentials it reads."""

from __future__ import annotations

import argparse

from gpuhunt._internal import registry
from gpuhunt._internal.cli import render
from gpuhunt._internal.cli.commands import command


@command("providers", help="list providers")
def run(args: argparse.Namespace) -> int:
    rows = []
    for spec in registry.PROVIDERS:
        kind = "online" if spec.online else "offline"
        extra = f"  (pip install 'gpuhunt[{spec.extra}]')" if spec.extra else ""
        rows.append(f"{spec.name:14} {kind:8} {' '.join(spec.env)}{extra}")
    render.emit(render.text(*rows))
    return 0
