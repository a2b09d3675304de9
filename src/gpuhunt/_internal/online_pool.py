"""A catalog's pool of threads for online providers (made on first use, shut down by
`Catalog.close()`, replaced when a query races a close)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from gpuhunt._internal.load import threads


class OnlinePool:
    """The pool `Catalog` submits online providers' requests to: `workers` daemon threads
    owned by `owner` (the catalog's thread owner)."""

    def __init__(self, workers: int, owner: threads.Owner) -> None:
        self.workers = workers
        self.owner = owner
        self.executor: threads.DaemonPool | None = None
        self._lock = threading.Lock()

    def after_fork(self) -> None:
        """In a child of `os.fork()`: the pool's threads stayed in the parent."""
        self.executor = None
        self._lock = threading.Lock()

    def shut_down(self) -> None:
        """Stop the pool (requests not started are cancelled); the next submit makes another."""
        with self._lock:
            executor, self.executor = self.executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        """`fn` on the pool; a pool `shut_down` meanwhile is replaced."""
        for _ in range(3):
            executor = self._executor()
            try:
                return executor.submit(fn, *args, **kwargs)
            except RuntimeError:  # shut down between the two lines above
                with self._lock:
                    if self.executor is executor:
                        self.executor = None
        # shut_down() called in a tight loop: a thread of its own rather than no answer.
        return threads.run(lambda: fn(*args, **kwargs), "gpuhunt-online", self.owner)

    def _executor(self) -> threads.DaemonPool:
        # Daemon threads: a provider still retrying when the answer is out never keeps the
        # process alive.
        with self._lock:
            if self.executor is None:
                self.executor = threads.DaemonPool(self.workers, "gpuhunt-online", self.owner)
            return self.executor
