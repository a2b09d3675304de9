"""Giving memory freed by a load back to the operating system.

A load allocates and frees tens of megabytes (downloaded archives, CSV text, the columns before
they are combined and sorted). glibc's allocator keeps freed heap memory for reuse rather than
returning it, so without help a server's resident memory stays at the load's peak: a third
more than what the catalog holds. `malloc_trim(0)` returns the free pages at the top of the
heap and, since glibc 2.8, free whole pages inside it. It frees only memory nobody uses and
changes no allocator setting, so it is no process-wide state in the sense the library avoids
(the garbage collector's, signal handlers); it is called once at the end of each load.
Elsewhere (musl, macOS, Windows, a libc without the symbol) it is a no-op.
"""

from __future__ import annotations

import logging
import sys
import threading
from typing import Any

logger = logging.getLogger(__name__)

_UNSET: Any = object()
_trim: Any = _UNSET
_lock = threading.Lock()


def _find_trim() -> Any:
    """glibc's `malloc_trim`, or None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # here: a load that frees nothing (a warm start) never needs it

    try:
        # The symbols the process already has: libc's, without `ctypes.util.find_library`,
        # which runs `ldconfig` in a subprocess (10 ms, a fifth of a warm start).
        trim = ctypes.CDLL(None, use_errno=True).malloc_trim  # AttributeError on musl
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def release_free_memory() -> bool:
    """Hand the allocator's free memory back to the OS where glibc can (True if it tried)."""
    global _trim
    if _trim is _UNSET:
        with _lock:
            if _trim is _UNSET:
                _trim = _find_trim()
    if _trim is None:
        return False
    try:
        _trim(0)
    except Exception:  # only memory is at stake, never the load
        logger.debug("malloc_trim failed", exc_info=True)
        return False
    return True
