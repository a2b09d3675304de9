"""`Loaded`: what a catalog serves, swapped in whole (frozen), importable from `load.loader`
where callers have always imported it."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from gpuhunt._internal.load import loader
from gpuhunt._internal.load.loaded import Loaded
from gpuhunt._internal.query.table import combine


def test_loaded_is_frozen_and_importable_from_the_loader():
    assert loader.Loaded is Loaded
    now = dt.datetime.now(dt.timezone.utc)
    loaded = Loaded(combine([]), "v", "network", "u", 0.0, now, None, degraded=False)
    assert loaded.cache_key is None and loaded.unchecked is False
    with pytest.raises(dataclasses.FrozenInstanceError):
        loaded.version = "w"  # type: ignore[misc]
