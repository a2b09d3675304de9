"""The footer of `gpuhunt query`: how many offers, where the catalog came from and why, how
old each provider's data is; at most three lines, the catalog named once. And which columns a
query filters or sorts on, which a narrowed table keeps."""

from __future__ import annotations

import argparse
import datetime as dt
import math
import textwrap
from collections.abc import Container, Sequence
from typing import TYPE_CHECKING

from gpuhunt._internal import freshness, registry

if TYPE_CHECKING:
    from gpuhunt._internal.catalog_status import CatalogStatus


# The footer: where the catalog came from, why, and how old each provider's data is.


def describe_source(
    status: CatalogStatus, providers: Container[str] | None = None, short: bool = False
) -> list[str]:
    """Where the catalog came from and why, then how old each provider's data is (of
    `providers`, default all): the footer of `gpuhunt query`, as two lines (the second empty
    when the manifest gives no ages). `short`: without the error's URL and the data's
    sources, for a footer that must fit three lines."""
    text = origin(status, short) + "."
    ages = data_ages(status, providers)
    if not ages:
        return [text, ""]
    if short:
        dated = [f"{p} {age}" for p, age in ages.items() if age != "unknown"]
        unknown = len(ages) - len(dated)
        parts = [", ".join(dated)] if dated else []
        if unknown:
            parts.append(f"{unknown} unknown" if dated else "unknown")
        return [text, "Data age: " + "; ".join(parts) + "."]
    labels = source_labels(status)
    return [
        text,
        "Data age: "
        + ", ".join(
            f"{p} {age}" + (f" ({labels[p]})" if p in labels else "") for p, age in ages.items()
        )
        + ".",
    ]


# The footer is at most this many lines; piped, its lines wrap at PIPED_WIDTH (the table above
# it keeps every column whole, at its content's width).
FOOTER_LINES = 3
PIPED_WIDTH = 100


def footer(full: Sequence[str], short: Sequence[str], width: int | None) -> str:
    """The footer's lines (`full`, else the `short` wording when `full` wraps to more than
    FOOTER_LINES at `width`), each wrapped; else the short wording as one paragraph, cut at
    FOOTER_LINES lines (`gpuhunt catalog status` says the rest)."""
    w = PIPED_WIDTH if width is None else max(width, 20)
    for lines in (full, short):
        wrapped = [
            row for line in lines if line for row in textwrap.wrap(line, w, break_on_hyphens=False)
        ]
        if len(wrapped) <= FOOTER_LINES:
            return "\n".join(wrapped)
    paragraph = " ".join(line for line in short if line)
    return "\n".join(
        textwrap.wrap(
            paragraph, w, max_lines=FOOTER_LINES, placeholder=" ...", break_on_hyphens=False
        )
    )


# Filters and sort orders, and the column that shows what they are on: never dropped when the
# table is narrowed (a `--min-memory` answer without its MEMORY column cannot be checked).
FILTERED_COLUMNS = {
    "min_memory": "MEMORY",
    "max_memory": "MEMORY",
    "min_cpu": "CPU",
    "max_cpu": "CPU",
    "min_disk_size": "DISK",
    "max_disk_size": "DISK",
}
SORTED_COLUMNS = {"price-per-gpu": "$/GPU/H", "tflops-per-dollar": "TFLOPS/$"}


def filtered_columns(args: argparse.Namespace) -> frozenset[str]:
    """The headers of the columns `args` filters or sorts on."""
    kept = {h for name, h in FILTERED_COLUMNS.items() if getattr(args, name, None) is not None}
    sort = SORTED_COLUMNS.get(getattr(args, "sort", "") or "")
    return frozenset(kept | ({sort} if sort else set()))


def source_labels(status: CatalogStatus) -> dict[str, str]:
    """provider -> the short name of where its data came from ("SkyPilot"), for the
    providers whose manifest gives one (the bundled snapshot's does)."""
    sources = status.sources or {}
    return {
        p: str(s["label"]) for p, s in sources.items() if isinstance(s, dict) and s.get("label")
    }


def origin(status: CatalogStatus, short: bool = False) -> str:
    v, url = status.version, status.url
    error = " ".join(str(status.last_error or "").split())
    if short and error:  # "not asked: ... (https://host/v3/version: ConnectionError)" -> the cause
        error = error.rsplit(": ", 1)[-1].strip("()") or error
    why = f" ({error[:157] + '...' if len(error) > 160 else error})" if error else ""
    if status.source == "network":
        return f"Catalog {v} downloaded from {url}"
    if status.source == "disk-cache" and not status.fallback:
        if status.unchecked:
            return (
                f"Catalog {v} from the disk cache: {url} named it as the latest version "
                f"{_ago(status.age_seconds)} ago (--refresh checks now)"
            )
        return f"Catalog {v} from the disk cache: {url} lists it as the latest version"
    # After a failure the status's url is the fallback's; the error names what failed.
    wait = status.next_retry_in
    # Rounded up: "next check in 0min 0s" would read as "now".
    retry = f"; next check in {_ago(math.ceil(wait))} (--refresh checks now)" if wait else ""
    if short and status.source in ("disk-cache", "bundled"):
        where = "Cached catalog" if status.source == "disk-cache" else "Bundled snapshot"
        again = f"; next check in {_ago(math.ceil(wait))}, --refresh now" if wait else ""
        return f"{where} {v} (catalog not loaded: {error or 'no answer'}{again})"
    if status.source == "disk-cache":
        return (
            f"Catalog {v} from the disk cache, because the catalog could not be loaded{why}{retry}"
        )
    if status.source == "bundled":
        return (
            f"The snapshot bundled with gpuhunt ({v}), because the catalog could not be "
            f"loaded{why} and no copy was cached{retry}"
        )
    if status.source == "directory":
        return f"Catalog from {url} (version {v})"
    return "No catalog loaded"


def _ago(seconds: float | None) -> str:
    s = int(seconds or 0)
    return f"{s // 3600}h {s % 3600 // 60}min" if s >= 3600 else f"{s // 60}min {s % 60}s"


def data_ages(status: CatalogStatus, providers: Container[str] | None = None) -> dict[str, str]:
    """provider -> age of its data (`3h`, `314d`, `unknown`), from the manifest's recording
    dates; empty when the manifest has none (a bucket without manifests)."""
    if not any(status.recorded_at.values()):
        return {}
    recorded = {
        p: when for p, when in status.recorded_at.items() if providers is None or p in providers
    }
    now = dt.datetime.now(dt.timezone.utc)
    return {p: freshness.describe_at(when, now) for p, when in sorted(recorded.items())}


def query_footer_lines(
    count: str,
    args: argparse.Namespace,
    status: CatalogStatus,
    providers: Container[str] | None,
    stand_ins: tuple[str, ...],
    short: int,
) -> list[str]:
    """The footer's lines (`render.footer`): the count, where the catalog came from, the data's
    ages and which online providers were not asked live. A query of online providers only
    never reads the catalog, so where the catalog came from is beside the point: it names whom
    it asked (and who failed)."""
    if args.provider and all(registry.spec(p).online for p in args.provider) and not providers:
        failed = set(status.online_errors)
        asked = ", ".join(
            p + (" (failed, see below)" if p in failed else "") for p in args.provider
        )
        return [count, f"Asked live: {asked}.", stand_ins[short].strip()]
    source, ages = describe_source(status, providers, short=bool(short))
    return [count, source, f"{ages}{stand_ins[short]}".strip()]
