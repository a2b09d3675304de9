"""`Context`: what one `Catalog` owns and hands down to everything it calls - its settings
(the environment, read once at the top), its HTTP transport, its clock and its threads. Code
below the catalog takes these from the context it is given and never reads the environment
or the process's own clock itself, so a test swaps any of them by building a `Context`."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuhunt._internal.load.settings import Settings
from gpuhunt._internal.load.threads import Owner

if TYPE_CHECKING:  # requests is imported when a session is made, not when a catalog is
    import requests
    from requests.adapters import BaseAdapter


@dataclass
class Context:
    settings: Settings = field(default_factory=Settings)
    # Sends every request of the catalog's sessions in place of requests' own adapter (which
    # retries with backoff): a `transport.MockTransport` in tests, or a caller's own adapter
    # (a proxy, a recorder). None: the network, with the retries `transport.new_session` sets.
    transport: BaseAdapter | None = None
    # Monotonic seconds: backoff, reload intervals, ages in `status()`, load deadlines.
    clock: Callable[[], float] = time.monotonic
    threads: Owner = field(default_factory=Owner)
    _session: requests.Session | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def session(self) -> requests.Session:
        """The session online providers added to the catalog share (made on first use)."""
        with self._lock:
            if self._session is None:
                self._session = self.new_session()
            return self._session

    def after_fork(self) -> None:
        """In a forked child: its own connections and locks, none of the parent's threads."""
        self._session = None
        self._lock = threading.Lock()
        self.threads.after_fork()

    def new_session(
        self,
        retries: int = 3,
        backoff_factor: float = 0.5,
        on_response: Callable[[], None] | None = None,
    ) -> requests.Session:
        """A session with the settings' timeouts, sending through `transport` if one is set;
        `on_response`: see `transport.new_session`."""
        from gpuhunt._internal.load import transport

        session = transport.new_session(
            retries=retries,
            backoff_factor=backoff_factor,
            timeout=self.settings.http_timeout,
            on_response=on_response,
        )
        if self.transport is not None:
            session.mount("http://", self.transport)
            session.mount("https://", self.transport)
        return session
