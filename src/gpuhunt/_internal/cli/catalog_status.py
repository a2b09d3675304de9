"""`gpuhunt catalog status`: load the catalog as a query would and say where it came from, how
old each provider's data is and what the last load ran into."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from gpuhunt._internal import registry
from gpuhunt._internal.cli import footer, render
from gpuhunt._internal.cli.commands import command

if TYPE_CHECKING:
    from gpuhunt._internal.catalog_status import CatalogStatus


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true")


@command(
    "catalog", "status", help="load the catalog and show where it came from", arguments=_arguments
)
def run(args: argparse.Namespace) -> int:
    from gpuhunt._internal.catalog import Catalog

    catalog = Catalog()
    catalog.query(provider=registry.OFFLINE_PROVIDERS[:1])  # loads (or falls back) as a query would
    s = catalog.status()
    info: dict[str, Any] = {
        "version": s.version,
        "source": s.source,
        "why": footer.origin(s),
        "url": s.url,
        "loaded_at": s.loaded_at.isoformat() if s.loaded_at else None,
        "data_age_days": s.data_age_days,
        "data_age": footer.data_ages(s) or None,
        "recorded_at": {p: w.isoformat() if w else None for p, w in s.recorded_at.items()} or None,
        "sources": s.sources or None,
        "offers": s.offers,
        "skipped_rows": s.skipped_rows,
        "last_error": s.last_error,
        "next_check_in": round(s.next_retry_in, 1) if s.next_retry_in else None,
        "version_went_back": s.version_went_back,
    }
    render.emit(
        render.Answer(text=lambda: _table(s, info), json=lambda: info), render.format_of(args)
    )
    return 0


def _table(s: CatalogStatus, info: dict[str, Any]) -> str:
    out = []
    per_provider = ("offers", "skipped_rows", "data_age", "recorded_at", "sources")
    for k, v in info.items():
        if k not in per_provider:
            out.append(f"{k:13} {v}")
    ages = footer.data_ages(s)
    names = sorted(set(s.offers) | set(s.recorded_at))
    # Where each provider's data came from and how its date is known, when the manifest says.
    described = [p for p in names if s.sources.get(p, {}).get("name")]
    if described:
        out.append("\nSOURCE")
    for p in described:
        source = s.sources[p]
        out.append(f"{p:13} {source['name']}")
        if source.get("date_basis"):
            out.append(f"{'':13} date: {source['date_basis']}")
    if names:
        out.append(f"\n{'PROVIDER':13} {'OFFERS':>7}  {'AGE':>7}  RECORDED")
    for p in names:
        when = s.recorded_at.get(p)
        skipped = s.skipped_rows.get(p)
        note = f"  ({skipped} malformed rows skipped)" if skipped else ""
        # A date that only bounds the data ("2026-05-04 or later") says so.
        later = " or later" if s.sources.get(p, {}).get("date_is_lower_bound") else ""
        out.append(
            f"{p:13} {s.offers.get(p, 0):>7}  {ages.get(p, 'unknown'):>7}  "
            f"{when.isoformat() + later if when else 'unknown'}{note}"
        )
    return render.lines(*out)
