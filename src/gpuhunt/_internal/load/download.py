"""The latest catalog's download, on its own daemon thread (started by the catalog's thread
owner), that loads wait for only so long.

A load waits for the download up to its time limit and then falls back; the download goes on
(up to `BACKGROUND_FACTOR` times that limit) so that a slow but working network still brings
fresh data: when every load has given up waiting, what arrives is handed to `adopt` for the
next query. A later load joins the download in progress rather than starting another.

A load that has somewhere to fall back to may also give the server a shorter time to answer
at all (`answer_within`): a silent server is then given up on after a few seconds, not the
whole limit, while a server that answered but sends slowly still gets the whole limit.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from gpuhunt._internal.errors import CatalogDownloadError, DownloadStopped
from gpuhunt._internal.load.sources import RawCatalog

# A download the load stopped waiting for may go on this many times the load's time limit.
BACKGROUND_FACTOR = 6


class Download:
    """One download of the latest catalog and its outcome."""

    def __init__(self, stop: threading.Event | None = None) -> None:
        # The stop signal current when it started: `Catalog.close()` sets it for the work
        # running then, and gives later work a new one (`threads.Owner.close`).
        self.stop = stop
        self.done = threading.Event()
        self.answered = threading.Event()  # the server's first answer came (or it is done)
        self.raw: RawCatalog | None = None
        self.error: BaseException | None = None
        self.waiting = 0  # loads waiting for it now
        self.taken = False  # its outcome was handled (by a waiting load, or by `adopt`)


class Downloads:
    """A catalog's downloads of its latest version, at most one in progress.

    `fetch(deadline, answered)` downloads (a deadline on `clock`), calling `answered()`
    once the server first answers; `adopt(download)` is called on
    the download's thread with an outcome no load waited for (it must check that the download
    is still `current`: a newer one started meanwhile decides instead)."""

    def __init__(
        self,
        fetch: Callable[[float, Callable[[], None]], RawCatalog],
        adopt: Callable[[Download], None],
        *,
        start: Callable[[Callable[[], object], str], object],
        clock: Callable[[], float] = time.monotonic,
        stopping: Callable[[], threading.Event] | None = None,
    ) -> None:
        self._fetch = fetch
        self._adopt = adopt
        self._clock = clock  # the deadline handed to `fetch` is on this clock
        # Starts the download's thread: the catalog's `threads.Owner.start`, so that
        # `Catalog.close()` stops and waits for it.
        self._start = start
        # The stop signal of work starting now (the catalog's `threads.Owner.stopping`).
        self._stopping = stopping
        self._lock = threading.Lock()
        self.current: Download | None = None

    def wait(self, limit: float, answer_within: float | None = None) -> RawCatalog:
        """The latest catalog, waiting at most `limit` seconds for a download (a new one, or
        the one an earlier load gave up on), and at most `answer_within` seconds for the
        server's first answer; raises what the download raised, or `CatalogDownloadError`
        when it did not finish (or answer) in time. A download that `Catalog.close()` stopped
        says nothing about the server: a load that was waiting for it (a query racing
        `close()`) starts a new one, once, within what is left of its limit."""
        started = time.monotonic()
        now = self._stopping() if self._stopping is not None else None
        joined: list[Download] = []
        try:
            return self._wait(limit, answer_within, joined)
        except DownloadStopped:
            # Stopped by a close() that began before this load did: not this load's to give
            # up on.
            left = limit - (time.monotonic() - started)
            if left <= 0 or now is None or not joined or joined[0].stop is now:
                raise
            return self._wait(left, answer_within, [])

    def _wait(
        self, limit: float, answer_within: float | None, joined: list[Download]
    ) -> RawCatalog:
        with self._lock:
            job = self.current
            if job is None or job.taken:
                job = self.current = Download(
                    self._stopping() if self._stopping is not None else None
                )
                deadline = self._clock() + limit * BACKGROUND_FACTOR
                self._start(lambda: self._run(job, deadline), "gpuhunt-download")
            job.waiting += 1
            joined.append(job)
        started = time.monotonic()
        silent = False
        if answer_within is not None and answer_within < limit:
            silent = not job.answered.wait(answer_within)
        if not silent:
            job.done.wait(max(0.0, limit - (time.monotonic() - started)))
        with self._lock:
            job.waiting -= 1
            if not job.done.is_set():
                if silent:
                    raise CatalogDownloadError(
                        f"the catalog server did not answer within {answer_within:g}s; "
                        "the download goes on in the background"
                    )
                raise CatalogDownloadError(
                    f"the catalog download did not finish within {limit:g}s "
                    "(GPUHUNT_LOAD_TIMEOUT); it goes on in the background"
                )
            job.taken = True
            raw, error = job.raw, job.error
            if job.waiting == 0:
                # Handed over: the installed tables keep what they need of it, and holding the
                # downloaded bytes here would double a server's memory until the next reload.
                job.raw = None
        if error is not None:
            raise error
        assert raw is not None
        return raw

    def _run(self, job: Download, deadline: float) -> None:
        try:
            job.raw = self._fetch(deadline, job.answered.set)
        except BaseException as e:  # noqa: BLE001 - handed to the load that waits, or adopted
            job.error = e
        with self._lock:
            job.done.set()
            job.answered.set()
            adopt = job.waiting == 0 and not job.taken
            job.taken = True
        if adopt:  # every load gave up waiting: what arrived late is for the next query
            self._adopt(job)
            job.raw = None
