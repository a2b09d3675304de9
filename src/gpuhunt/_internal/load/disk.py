"""What a load leaves in and takes from the disk cache besides downloading into it: keeping the
cache bounded after a load (`tidy`), and the catalog served when the network fails
(`last_resort`: the newest cached catalog, else the snapshot bundled in the package), which
`gpuhunt catalog site` falls back to as `gpuhunt query` does."""

from __future__ import annotations

import logging

from gpuhunt._internal import registry
from gpuhunt._internal.load import sources
from gpuhunt._internal.load.cache import DiskCache

# The catalog's records, so that its log messages keep the logger name they always had.
logger = logging.getLogger("gpuhunt._internal.catalog")


def tidy(cache: DiskCache, raw: sources.RawCatalog) -> None:
    """Keep the disk cache bounded (see `load.cache`): after a successful load, only the
    loaded version and the one before it, and no temp file of a killed writer."""
    try:
        # What `latest.json` names stays too: a pinned load is not the latest.
        latest = cache.get_json("latest.json")
        latest = latest if isinstance(latest, dict) else {}
        if raw.versions:
            named = latest.get("versions")
            named = named if isinstance(named, dict) else {}
            for provider, version in raw.versions.items():
                cache.keep_versions(provider, {version, str(named.get(provider))})
        else:
            names = {raw.version, str(latest.get("version"))}
            cache.keep_versions("archive", names)
            # Per-provider copies of this layout's objects (price history) are kept by
            # the archive's version too.
            for provider in registry.OFFLINE_PROVIDERS:
                cache.keep_versions(provider, names)
        cache.remove_orphans()
    except Exception:  # tidying costs disk space at worst, never a load
        logger.debug("Tidying the disk cache failed", exc_info=True)


def last_resort(url: str, cache: DiskCache | None, error: Exception) -> sources.RawCatalog:
    """The newest catalog in the disk cache (of a network `url`), else the snapshot bundled in
    the package; a warning says which and why."""
    if cache is not None and sources.local_path(url) is None:
        cached = sources.from_cache(url, cache)
        if cached is not None:
            logger.warning(
                "Could not download the catalog (%s); using version %s from the disk cache",
                error,
                cached.version,
            )
            return cached
    snapshot = sources.bundled()
    age = sources.snapshot_age_days(snapshot.manifest)
    logger.warning(
        "Could not load the catalog (%s); using the snapshot bundled with gpuhunt%s. "
        "Prices and availability may be out of date.",
        error,
        f", its oldest data recorded {age} days ago" if age is not None else "",
    )
    return snapshot
