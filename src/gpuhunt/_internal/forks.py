"""Fork safety: what a child process made by `os.fork()` must not inherit as it is.

A pre-fork server (gunicorn and the like) loads the catalog, then forks its workers. The child
gets copies of the parent's pools and locks but none of its threads: a thread pool that
believes its 16 workers exist starts no new one (every online query would time out), a lock a
parent thread held at the fork is held forever, an HTTP connection kept alive is shared by two
processes. So, in the child, right after the fork (`os.register_at_fork`, one hook for the
library), every registered object drops its pools, locks and in-flight work and starts afresh;
what was loaded (the catalog's tables, the live cache's answers) stays and keeps serving.

The hook runs only in children of `os.fork()` (and of `multiprocessing`'s fork start method);
it changes nothing in the parent and nothing process-wide beyond gpuhunt's own objects.
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from collections.abc import Callable
from typing import Protocol

logger = logging.getLogger(__name__)


class _Forkable(Protocol):
    def _after_fork(self) -> None: ...


_objects: weakref.WeakSet[_Forkable] = weakref.WeakSet()
_functions: list[Callable[[], None]] = []
_lock = threading.Lock()


def register(obj: _Forkable) -> None:
    """Call `obj._after_fork()` in every child forked while `obj` is alive."""
    with _lock:
        _objects.add(obj)


def on_fork(fn: Callable[[], None]) -> None:
    """Call `fn()` in every child forked from now on (module-level state)."""
    with _lock:
        _functions.append(fn)


def _in_child() -> None:
    global _lock
    _lock = threading.Lock()  # a parent thread may have held it at the fork
    for fn in list(_functions):
        try:
            fn()
        except Exception:  # one object's reset must not stop the others'
            logger.exception("gpuhunt: resetting %r after fork failed", fn)
    for obj in list(_objects):
        try:
            obj._after_fork()
        except Exception:
            logger.exception("gpuhunt: resetting %r after fork failed", obj)


if hasattr(os, "register_at_fork"):  # not on Windows, which has no fork
    os.register_at_fork(after_in_child=_in_child)
