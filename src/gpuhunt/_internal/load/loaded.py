"""`Loaded`: what a catalog serves, as its `Loader` installs it."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from gpuhunt._internal.query.table import Table


@dataclass(frozen=True)
class Loaded:
    """What a catalog serves: built off to the side, then swapped in by one assignment."""

    table: Table  # every offline provider's offers, by price
    version: str
    source: str
    url: str
    loaded_at: float  # monotonic
    loaded_wall: dt.datetime
    manifest: dict[str, Any] | None
    degraded: bool  # the disk cache or the bundled snapshot, served because a download failed
    cache_key: str | None = None  # which published catalog this is (`sources.cache_key`)
    # Taken from the disk cache without a request, because the network named it as the latest
    # less than the reload interval ago (in this process or another).
    unchecked: bool = False
