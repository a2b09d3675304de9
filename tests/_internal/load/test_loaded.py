"""`Loaded`: what a catalog serves, swapped in whole (frozen)."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from gpuhunt._internal.load.loaded import Loaded
from gpuhunt._internal.query.table import combine


def test_loaded_is_frozen():
    now = dt.datetime.now(dt.timezone.utc)
    loaded = Loaded(combine([]), "v", "network", "u", 0.0, now, None, degraded=False)
    assert loaded.cache_key is None and loaded.unchecked is False
    with pytest.raises(dataclasses.FrozenInstanceError):
        loaded.version = "w"  # type: ignore[misc]
