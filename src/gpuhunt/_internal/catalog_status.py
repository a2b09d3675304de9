"""What a catalog is serving and how its last load went (`Catalog.status()`): the record, and
reading it off the loader and the online providers' health."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from gpuhunt._internal import freshness
from gpuhunt._internal.errors import redact
from gpuhunt._internal.load import sources
from gpuhunt._internal.load.loader import Loader
from gpuhunt._internal.load.urls import safe_url
from gpuhunt._internal.query import online


@dataclass
class CatalogStatus:
    """What a catalog is serving and how its last load went."""

    version: str | None
    source: str | None  # network, disk-cache, bundled, directory, or None before any load
    url: str | None  # shown without user info or query string
    loaded_at: dt.datetime | None
    age_seconds: float | None
    offers: dict[str, int] = field(default_factory=dict)
    skipped_rows: dict[str, int] = field(default_factory=dict)
    last_error: str | None = None
    last_attempt: dt.datetime | None = None
    next_retry_in: float | None = None
    online_errors: dict[str, str] = field(default_factory=dict)
    online_retry_in: dict[str, float] = field(default_factory=dict)  # failed, not asked until then
    downloads: int = 0
    # Served from the disk cache without a request: the network named this version as the
    # latest `age_seconds` ago, within the reload interval.
    unchecked: bool = False
    data_age_days: int | None = None  # age of the oldest collection, when the manifest says
    # Served from the disk cache or the bundled snapshot because loading failed (`last_error`
    # says why); False when the network answered, even if the archive came from the disk cache
    # because the latest version was already there.
    fallback: bool = False
    # Per provider in the manifest: when its data was recorded (None: not known).
    recorded_at: dict[str, dt.datetime | None] = field(default_factory=dict)
    online_skipped: dict[str, int] = field(default_factory=dict)  # invalid offers, last answer
    # Per provider in the manifest: where its data came from (the manifest's `source`: `name`,
    # `label`, `date_basis`, ...), for the providers whose manifest entry says.
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Offers per offline provider whose location the geography table does not know: kept by
    # queries without `country`/`area`, left out by queries with them.
    unknown_locations: dict[str, int] = field(default_factory=dict)
    # The latest version pointer named an older version than before (loaded, and said once).
    version_went_back: str | None = None


def status_of(
    loader: Loader, health: online.Health, online_skipped: dict[str, int], now: float
) -> CatalogStatus:
    """The status of a catalog whose loads `loader` makes and whose online providers `health`
    tracks, at `now` (the catalog's clock)."""
    loaded = loader.loaded
    wait = loader.retry_at - now
    return CatalogStatus(
        version=loaded.version if loaded else None,
        source=loaded.source if loaded else None,
        # Never the user info or query string a URL may carry (a password, a signature).
        url=safe_url(loaded.url if loaded else loader.url),
        loaded_at=loaded.loaded_wall if loaded else None,
        age_seconds=(now - loaded.loaded_at) if loaded else None,
        unchecked=loaded.unchecked if loaded else False,
        offers=loaded.table.counts() if loaded else {},
        skipped_rows=dict(loaded.table.skipped) if loaded else {},
        # Never a URL's credentials (`errors.redact`), wherever the message came from.
        last_error=redact(loader.last_error) if loader.last_error else None,
        last_attempt=loader.last_attempt,
        next_retry_in=wait if wait > 0 else None,
        online_errors={k: redact(v) for k, v in health.errors.items()},
        online_retry_in=health.backoffs(),
        downloads=loader.downloads,
        data_age_days=sources.snapshot_age_days(loaded.manifest) if loaded else None,
        fallback=loaded.degraded if loaded else False,
        recorded_at={
            p: freshness.recorded_at(entry)
            for p, entry in freshness.entries(loaded.manifest if loaded else None).items()
        },
        online_skipped=dict(online_skipped),
        sources={
            p: dict(entry["source"])
            for p, entry in freshness.entries(loaded.manifest if loaded else None).items()
            if isinstance(entry, dict) and isinstance(entry.get("source"), dict)
        },
        unknown_locations=loaded.table.unknown_locations() if loaded else {},
        version_went_back=loader.went_back,
    )
