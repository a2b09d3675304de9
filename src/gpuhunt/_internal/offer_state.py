"""What an offer says about itself in `provider_data`, read one way everywhere (pure): the
CUDA version of its host, the provider's availability reading, when its price was observed and
whose machine a resale is. `CatalogItem`'s properties, `matches` and the fast path's columns
all read these functions (keys documented in docs/catalog-format.md)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from gpuhunt._internal.validate import parse_version

# The key under which an offer's `provider_data` says the newest CUDA version its host runs
# (RunPod: the `minCudaVersion` its prices were quoted for; Vast.ai: the host's `cuda_max_good`).
CUDA_KEY = "cuda_version"
AVAILABLE_KEY = "available"
OBSERVED_AT_KEY = "observed_at"
RESOLD_FROM_KEY = "resold_from"


def offer_cuda_version(provider_data: Any) -> tuple[int, int] | None:
    """The CUDA version an offer's host is known to run, or None when its provider does not say
    (or says something unreadable): such offers are kept by a `min_cuda` filter."""
    if not isinstance(provider_data, dict) or CUDA_KEY not in provider_data:
        return None
    try:
        return parse_version(provider_data[CUDA_KEY])
    except ValueError:
        return None


def offer_available(provider_data: Any) -> bool | None:
    """The provider's availability reading (`provider_data["available"]`); None when absent or
    not a bool."""
    if not isinstance(provider_data, dict):
        return None
    value = provider_data.get(AVAILABLE_KEY)
    return value if isinstance(value, bool) else None


def offer_resold_from(provider_data: Any) -> str | None:
    """Whose machine a marketplace resale is (`provider_data["resold_from"]`), or None."""
    if not isinstance(provider_data, dict):
        return None
    value = provider_data.get(RESOLD_FROM_KEY)
    return value if isinstance(value, str) and value else None


def offer_observed_at(provider_data: Any) -> dt.datetime | None:
    """When the offer's price was read (`provider_data["observed_at"]`, ISO-8601), timezone-aware
    UTC; None when absent or unreadable."""
    if not isinstance(provider_data, dict):
        return None
    return parse_observed_at(provider_data.get(OBSERVED_AT_KEY))


def parse_observed_at(value: Any) -> dt.datetime | None:
    """An ISO-8601 time (`2026-12-02T08:00:00Z`) as a timezone-aware UTC datetime (a time
    without a zone is read as UTC); None for anything else."""
    if not isinstance(value, str) or not value:
        return None
    try:
        # Python 3.10's fromisoformat does not read a trailing "Z".
        when = dt.datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith("Z") else value)
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return when.astimezone(dt.timezone.utc)
