"""The build's step for the open dataset of observations (`history.observations`): each provider
published fresh gets its observations file, and its manifest entry an `availability` summary:

    "availability": {"observations": 56, "reported": 56, "available": 21,
                     "path": "observations/date=.../provider=.../part-V.parquet", "sha256": "..."}

A carried-over provider was not observed again: its entry keeps the summary of the collection
it carries (so the next fresh one is compared with what that collection reported). A provider
whose previous collection reported availability and whose fresh one reports none gets an
`availability_lost` note, which the build report shows.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from gpuhunt._internal.formats import archive
from gpuhunt._internal.history import observations

logger = logging.getLogger(__name__)


def observe(
    entries: dict[str, dict[str, Any]],
    csvs: Mapping[str, bytes],
    version: str,
    built_at: str,
    before: Mapping[str, Mapping[str, Any]],
) -> dict[str, bytes]:
    """Annotate `entries` (in place) and return the observation files to publish."""
    why_not = observations.have_writer()
    found = observations.for_build(entries, csvs, version, built_at)
    objects: dict[str, bytes] = {}
    for p, entry in entries.items():
        got = found.get(p)
        if got is None:
            kept = (before.get(p) or {}).get("availability")
            if isinstance(kept, dict):
                entry["availability"] = kept
            continue
        info: dict[str, Any] = {
            "observations": got.rows,
            "reported": got.reported,
            "available": got.available,
        }
        if why_not is None:
            data = observations.to_parquet(got)
            objects[got.path] = data
            info["path"] = got.path
            info["sha256"] = archive.sha256(data)
        else:
            info["not_written"] = why_not
        entry["availability"] = info
        note = observations.availability_note(p, got.reported, before.get(p))
        if note is not None:
            entry["availability_lost"] = note
            logger.warning("%s", note)
    if why_not is not None and found:
        logger.warning("Observations are not published with this build: %s", why_not)
    return objects


def files_of(manifest: Mapping[str, Any]) -> dict[str, str]:
    """The observation files a version's manifest lists as its own: path -> sha256."""
    version = manifest.get("version")
    out = {}
    for entry in (manifest.get("providers") or {}).values():
        info = entry.get("availability") if isinstance(entry, dict) else None
        if (
            isinstance(info, dict)
            and entry.get("from_version") == version
            and entry.get("status") == "fresh"
            and isinstance(info.get("path"), str)
            and isinstance(info.get("sha256"), str)
        ):
            out[info["path"]] = info["sha256"]
    return out
