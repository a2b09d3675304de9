"""Price history of published catalogs (the I/O around `history.table`): fetching a version's
history (both layouts, over HTTP or from a folder, through the disk cache), the history a build
carries forward, and checking a published version's history. The nightly build, `catalog
verify` and the user-facing calls (`history.api`) all read history through here, so it is
checked against the catalog manifest the same way for each.

Published history (docs/catalog-format.md): `{base}/V/history.zip` beside `V/catalog.zip`, and
`{base}/{provider}/V/history.zip` beside each per-provider archive. Each holds `{provider}.csv`
(the history table) and its own manifest; the catalog's manifest gives each table's
`history_sha256` and `history_rows`. gpuhunt 0.1.x never asks for these objects.

Failure policy, as for loading: a network failure falls back to the history of the newest
catalog in the disk cache; a catalog without history, or no history anywhere, is a
`HistoryUnavailable` error with a message saying so.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from gpuhunt._internal import registry
from gpuhunt._internal.errors import (
    CatalogError,
    CatalogIntegrityError,
    HistoryUnavailable,
    HistoryUnreadable,
    UnknownCatalogError,
)
from gpuhunt._internal.formats import archive as storage
from gpuhunt._internal.history import table as history
from gpuhunt._internal.load import fetch, sources, urls
from gpuhunt._internal.load.cache import DiskCache
from gpuhunt._internal.load.context import Context

logger = logging.getLogger(__name__)

TIMEOUT = (10.0, 60.0)


@dataclass
class HistorySet:
    """The verified history tables of one published version."""

    version: str
    url: str
    source: str  # network, disk-cache, directory
    tables: dict[str, bytes]  # provider -> history table
    entries: dict[str, dict[str, Any]]  # provider -> its catalog manifest entry
    missing: list[str] = field(default_factory=list)  # providers published without history

    def spans(self) -> dict[str, list[history.Span]]:
        """Each table parsed; one that does not parse is corrupt (it matched its sha256, so
        it was published that way)."""
        out = {}
        for p, table in self.tables.items():
            try:
                out[p] = history.loads(table)
            except ValueError as e:
                raise CatalogIntegrityError(
                    f"{urls.safe_url(self.url)}: the {p} history of {self.version}: {e}"
                ) from None
        return out


def _read_tables(data: bytes, entries: dict[str, dict[str, Any]], where: str) -> dict[str, bytes]:
    """The tables of a `history.zip`, each checked against the catalog manifest's sha256."""
    archive = storage.read_archive(data, source=where)
    out = {}
    for p, entry in entries.items():
        table = archive.csvs.get(p)
        if table is None:
            raise CatalogIntegrityError(f"{where}: {p}.csv is missing")
        if storage.sha256(table) != entry.get("history_sha256"):
            raise CatalogIntegrityError(
                f"{where}: {p}.csv does not match history_sha256 in the catalog manifest"
            )
        out[p] = table
    return out


def _history_object(
    fetcher: fetch.Fetcher | None,
    cache: DiskCache | None,
    rel: str,
    cache_parts: tuple[str, ...],
    entries: dict[str, dict[str, Any]],
) -> dict[str, bytes]:
    where = f"{urls.safe_url(fetcher.base) if fetcher else 'cached'}/{rel}"
    cached = cache.get(*cache_parts) if cache else None
    if cached is not None:
        try:
            return _read_tables(cached, entries, f"cached {rel}")
        except CatalogIntegrityError as e:
            logger.debug("Ignoring the cached history: %s", e)
    if fetcher is None:
        raise HistoryUnavailable(f"Price history is unavailable: {rel} is not in the disk cache")
    data = fetcher.get(rel)
    tables = _read_tables(data, entries, where)
    if cache:
        cache.put(data, *cache_parts)
    return tables


def _no_history(url: str, version: str) -> HistoryUnavailable:
    return HistoryUnavailable(
        f"Catalog {version} at {urls.safe_url(url)} has no price history (it was built "
        "before `gpuhunt catalog build` kept one, or by gpuhunt 0.1.x)"
    )


def fetch_history(
    base: str,
    *,
    version: str | None = None,
    cache: DiskCache | None = None,
    timeout: tuple[float, float] = TIMEOUT,
    retries: int = 1,
    providers: list[str] | None = None,
    context: Context | None = None,
    deadline: float | None = None,
) -> HistorySet:
    """The history published with a version (the latest, or `version`) under `base`, by the
    loader's rules: `context`'s settings (`allow_http`, the size cap), transport and clock, and
    `deadline` (on that clock) for the whole download."""
    providers = list(registry.OFFLINE_PROVIDERS if providers is None else providers)
    base = base.rstrip("/")
    context = context if context is not None else Context()
    settings = context.settings
    rules: dict[str, Any] = {
        "allow_http": settings.allow_http,
        "deadline": deadline,
        "max_bytes": settings.max_download_bytes,
        "context": context,
    }
    fetcher: fetch.Fetcher | None = fetch.Fetcher(base, timeout, retries, **rules)
    if sources.local_path(base) is not None:
        cache = None
    try:
        raw = fetch.fetch(
            base,
            providers,
            version=version,
            cache=cache,
            timeout=timeout,
            retries=retries,
            **rules,
        )
    except UnknownCatalogError:
        raise  # a path the user gave that cannot be used: theirs to fix (exit 2)
    except CatalogError as e:
        cached = sources.from_cache(base, cache) if cache and version is None else None
        if cached is None:
            raise CatalogError(f"Price history is unavailable: {e}") from e
        logger.warning(
            "Could not download the catalog (%s); using the history of version %s from the "
            "disk cache",
            e,
            cached.version,
        )
        raw, fetcher = cached, None
    if raw.manifest is not None:
        entries = {p: e for p, e in (raw.manifest.get("providers") or {}).items() if p in providers}
        kept = {p: e for p, e in entries.items() if e.get("history_sha256")}
        if not kept:
            raise _no_history(base, raw.version)
        v = raw.version
        if set(entries) == set(raw.manifest.get("providers") or {}):
            # The whole version's history in one object.
            tables = _history_object(
                fetcher, cache, f"{v}/{history.OBJECT}", ("archive", v, history.OBJECT), kept
            )
        else:
            # Some providers asked for: only theirs, from the per-provider copies.
            tables = {}
            for p, entry in kept.items():
                rel = f"{p}/{v}/{history.OBJECT}"
                tables.update(
                    _history_object(fetcher, cache, rel, (p, v, history.OBJECT), {p: entry})
                )
        missing = sorted(set(entries) - set(kept))
        return HistorySet(raw.version, base, raw.source, tables, kept, missing)
    # Per-provider layout: each provider's manifest is in its own archive.
    tables, kept, missing = {}, {}, []
    for p, v in sorted(raw.versions.items()):
        data = cache.get(p, v, "catalog.zip") if cache else None
        if data is None:
            if fetcher is None:
                missing.append(p)
                continue
            data = fetcher.get(f"{p}/{v}/catalog.zip")
        manifest = storage.read_archive(data, source=f"{p}/{v}/catalog.zip").manifest or {}
        entry = (manifest.get("providers") or {}).get(p) or {}
        if not entry.get("history_sha256"):
            missing.append(p)
            continue
        kept[p] = entry
        got = _history_object(
            fetcher, cache, f"{p}/{v}/{history.OBJECT}", (p, v, history.OBJECT), {p: entry}
        )
        tables.update(got)
    if not tables:
        raise _no_history(base, raw.version)
    return HistorySet(raw.version, base, raw.source, tables, kept, missing)


# --------------------------------------------------------------------------- build, verify


def previous_history(
    url: str, previous: sources.RawCatalog, timeout: tuple[float, float]
) -> dict[str, bytes]:
    """The history tables to carry forward from the catalog a build reads as `--previous`.
    Nothing when it has none yet; `HistoryUnreadable` when it has one that cannot be read, so
    the build says it starts the history again (never silently)."""
    if previous.manifest is None:
        # Read in the per-provider layout (no archive pointer): no manifest says which version
        # each table's rows end at, so the history cannot be extended.
        logger.warning("The previous catalog has no archive manifest; the history starts anew")
        return {}
    try:
        got = fetch_history(url, version=previous.version, timeout=timeout, retries=2)
        got.spans()  # every table must parse before the build extends it
    except HistoryUnavailable as e:
        logger.warning("%s; the history starts with this version", e)
        return {}
    except CatalogError as e:
        raise HistoryUnreadable(
            f"the price history of {previous.version} could not be read ({e})"
        ) from e
    return got.tables


@dataclass
class HistoryCheck:
    providers: int
    rows: int


def verify_history(
    base: str, version: str, entries: dict[str, dict[str, Any]], csvs: dict[str, bytes]
) -> HistoryCheck:
    """Check a published version's history: both layouts' objects match the manifest, each
    table parses, has the manifest's row count, and its current rows are exactly the offers
    of the CSV it was observed with (for a carried-over provider, that of `from_version`)."""
    kept = {p: e for p, e in entries.items() if e.get("history_sha256")}
    if not kept:
        return HistoryCheck(0, 0)
    fetcher = fetch.Fetcher(base, TIMEOUT, 2)
    where = f"{urls.safe_url(base)}/{version}/{history.OBJECT}"
    tables = _read_tables(fetcher.get(f"{version}/{history.OBJECT}"), kept, where)
    rows = 0
    for p, entry in kept.items():
        table = tables[p]
        try:
            spans = history.loads(table)
        except ValueError as e:
            raise CatalogIntegrityError(f"{where}: {p}.csv: {e}") from None
        if len(spans) != entry.get("history_rows"):
            raise CatalogIntegrityError(
                f"{where}: {p}.csv has {len(spans)} rows, the manifest says {entry.get('history_rows')}"
            )
        problem = history.check(
            spans, history.offers_of(csvs[p], p), str(entry.get("from_version"))
        )
        if problem:
            raise CatalogIntegrityError(f"{where}: {p}.csv: {problem}")
        rows += len(spans)
        rel = f"{p}/{version}/{history.OBJECT}"
        copy = _read_tables(fetcher.get(rel), {p: entry}, f"{urls.safe_url(base)}/{rel}")
        if copy[p] != table:
            raise CatalogIntegrityError(f"{urls.safe_url(base)}/{rel}: differs from {where}")
    return HistoryCheck(len(kept), rows)
