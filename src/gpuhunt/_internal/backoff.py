"""The one backoff rule: after the n-th failure in a row, wait `first * 2**(n-1)` seconds, at
most `cap`. Catalog reloads (`load.loader`) and online providers (`query.online`) both use it,
each with its own (first, cap) and its owner's clock, so a test moves time with a fake clock
instead of sleeping."""

from __future__ import annotations

from collections.abc import Callable

# Seconds: the first wait after a failure, and the longest one.
DEFAULT = (30.0, 15 * 60.0)


def delay(failures: int, policy: tuple[float, float] = DEFAULT) -> float:
    """Seconds to wait after `failures` failures in a row (0 after none)."""
    if failures <= 0:
        return 0.0
    first, cap = policy
    # 2**n overflows a float past ~1024 failures; the cap is reached long before.
    return min(cap, first * 2.0 ** min(failures - 1, 64))


def retry_at(
    failures: int, clock: Callable[[], float], policy: tuple[float, float] = DEFAULT
) -> float:
    """When (on `clock`) the next try is due after `failures` failures in a row."""
    return clock() + delay(failures, policy)
