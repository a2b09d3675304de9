"""Daemon threads for work a caller may stop waiting for.

`concurrent.futures.ThreadPoolExecutor` joins its workers when the interpreter exits, so one
online provider sleeping on `Retry-After`, or a catalog download still dripping in, would keep
a finished CLI process alive. The work here runs on daemon threads instead: once the caller has
its answer, the process can exit and the abandoned work goes with it.

Every thread a `Catalog` starts (reloads, downloads, the online pool's workers) is started by
its `Owner`, which `Catalog.close()` asks to stop them and waits for, a bounded time (see
"Threads" in docs/design.md).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, TypeVar

T = TypeVar("T")


class Owner:
    """The threads one `Catalog` started, so that `close()` can end them: the `stopping` event
    of the work started before `close()` is set (a download takes the event current when it
    starts, checks it between reads and gives up), then each thread is waited for until a
    shared deadline. A thread still running then (a provider's `get()` stuck in a request) is
    a daemon, and ends with that request's timeout. Work started while `close()` waits gets a
    new, unset event: a query made meanwhile downloads as usual instead of being "stopped"
    and served the bundled snapshot."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self.stopping = threading.Event()

    def start(self, target: Callable[[], object], name: str) -> threading.Thread:
        """`target` on a new daemon thread named `name` (always `gpuhunt-...`)."""
        thread = threading.Thread(target=target, name=name, daemon=True)
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)
        thread.start()
        return thread

    def alive(self) -> list[threading.Thread]:
        with self._lock:
            return [t for t in self._threads if t.is_alive()]

    def close(self, timeout: float) -> list[threading.Thread]:
        """Ask every thread started so far to stop and wait for them, `timeout` seconds in all;
        the threads still alive after that. Work started meanwhile or afterwards is not
        refused, nor stopped: it sees the new `stopping` event, which this call never sets."""
        with self._lock:
            stopping, self.stopping = self.stopping, threading.Event()
            running = [t for t in self._threads if t.is_alive()]
        stopping.set()
        deadline = time.monotonic() + timeout
        me = threading.current_thread()
        for thread in running:
            if thread is not me:  # close() called from one of our own threads
                thread.join(max(0.0, deadline - time.monotonic()))
        return self.alive()

    def after_fork(self) -> None:
        """In a forked child: the parent's threads do not exist here."""
        self._lock = threading.Lock()
        self._threads = []
        self.stopping = threading.Event()


def run(fn: Callable[[], T], name: str, owner: Owner | None = None) -> Future[T]:
    """`fn` on a new daemon thread (started by `owner`, if given); its outcome in the returned
    future."""
    fut: Future[T] = Future()

    def target() -> None:
        if not fut.set_running_or_notify_cancel():
            return
        try:
            fut.set_result(fn())
        except BaseException as e:  # noqa: BLE001 - handed to whoever waits on the future
            fut.set_exception(e)

    if owner is not None:
        owner.start(target, name)
    else:
        threading.Thread(target=target, name=name, daemon=True).start()
    return fut


class DaemonPool(Executor):
    """A small executor (`submit`, `shutdown`) whose at most `max_workers` threads are daemons,
    started on demand; a thread idle for `IDLE_SECONDS` ends."""

    IDLE_SECONDS = 30.0

    def __init__(self, max_workers: int, name: str, owner: Owner | None = None) -> None:
        self._max = max_workers
        self._name = name
        self._owner = owner
        self._queue: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]] | None] = (
            queue.SimpleQueue()
        )
        self._lock = threading.Lock()
        self._workers = 0
        self._busy = 0
        self._pending = 0  # submitted, not yet taken by a worker
        self._shutdown = False

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        fut: Future[T] = Future()
        with self._lock:
            if self._shutdown:
                raise RuntimeError("cannot submit after shutdown")
            self._queue.put((fut, lambda: fn(*args, **kwargs)))
            self._pending += 1
            if self._workers < self._max and self._busy + self._pending > self._workers:
                self._workers += 1
                name = f"{self._name}-{self._workers}"
                if self._owner is not None:
                    self._owner.start(self._work, name)
                else:
                    threading.Thread(target=self._work, name=name, daemon=True).start()
        return fut

    def _work(self) -> None:
        while True:
            try:
                task = self._queue.get(timeout=self.IDLE_SECONDS)
            except queue.Empty:
                with self._lock:  # submit() counts under this lock: no task slips past
                    if self._pending:
                        continue
                    self._workers -= 1
                return
            if task is None:
                with self._lock:
                    self._workers -= 1
                return
            fut, fn = task
            with self._lock:
                self._pending -= 1
                self._busy += 1
            try:
                if fut.set_running_or_notify_cancel():
                    try:
                        fut.set_result(fn())
                    except BaseException as e:  # noqa: BLE001 - handed to whoever waits
                        fut.set_exception(e)
            finally:
                with self._lock:
                    self._busy -= 1
                # An idle worker must not keep its last job (a provider's CSV bytes, a table)
                # alive until the next one arrives.
                del task, fut, fn

    def shutdown(self, wait: bool = False, *, cancel_futures: bool = False) -> None:
        """Stop taking work (queued work is cancelled with `cancel_futures`); never joins."""
        with self._lock:
            self._shutdown = True
            if cancel_futures:
                while True:
                    try:
                        task = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if task is not None:
                        self._pending -= 1
                        task[0].cancel()
            for _ in range(self._workers):
                self._queue.put(None)

    def __enter__(self) -> DaemonPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
