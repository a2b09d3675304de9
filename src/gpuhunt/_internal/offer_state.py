"""The CUDA version of an offer's host, read one way everywhere (pure): `matches`, the fast
path's column and the compatibility shim all read these functions.

The version is the offer's own field `CatalogItem.cuda_version` (`offer_spec`); catalogs from
before that field wrote it into `provider_data["cuda_version"]`, which `offer_cuda_version`
still reads for callers of the 0.1.x-era shim (`constraints.py`)."""

from __future__ import annotations

from typing import Any

from gpuhunt._internal.validate import parse_version

# The key under which older catalogs' `provider_data` said the host's newest CUDA version.
CUDA_KEY = "cuda_version"


def cuda_version_of(value: Any) -> tuple[int, int] | None:
    """A CUDA version text ("12.8") as (major, minor), or None when there is none or it is
    unreadable: such offers are kept by a `min_cuda` filter."""
    if value is None:
        return None
    try:
        return parse_version(value)
    except ValueError:
        return None


def offer_cuda_version(provider_data: Any) -> tuple[int, int] | None:
    """The CUDA version an older catalog's `provider_data` says, or None."""
    if not isinstance(provider_data, dict) or CUDA_KEY not in provider_data:
        return None
    return cuda_version_of(provider_data[CUDA_KEY])
