"""The uvicorn server `gpuhunt serve` runs (tests and the benchmark run the same one), with the
connection discipline a server bound beyond loopback needs (docs/serve.md, "Connections"):

- a connection that sends nothing is closed after `idle_timeout` seconds, and a request head
  (request line and headers) must arrive whole within `head_timeout` seconds of its first byte;
  uvicorn itself starts its keep-alive timer only after a response, so without these a client
  that never finishes its first request holds a socket and a task for as long as it likes;
- beyond `max_connections` open connections, a request is answered 503 with `Retry-After`
  and its connection closed (uvicorn's own `limit_concurrency` answers 503 without it);
- SIGTERM and SIGINT drain: stop accepting, finish the answers in flight within `grace`
  seconds, and return, so the process exits 0 (uvicorn re-raises the signal once drained,
  and the process then dies by it). Handlers are installed only while `run()` runs, on the
  main thread: the library itself never installs one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import resource
import signal
import threading
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, ClassVar

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from gpuhunt._internal.serve.answers import Service
from gpuhunt._internal.serve.app import create_app


@dataclass(frozen=True)
class Limits:
    """What a connection may take (seconds, counts); the defaults are `gpuhunt serve`'s."""

    head_timeout: float = 10.0  # from a request's first byte to the end of its headers
    idle_timeout: float = 10.0  # from the connection to its first byte
    keep_alive: float = 5.0  # between requests (uvicorn's own default)
    max_connections: int = 2048  # open at once; beyond it, 503 with Retry-After
    retry_after: int = 1  # seconds, in the 503's Retry-After
    grace: float = 30.0  # for the answers in flight on SIGTERM/SIGINT

    def check(self) -> None:
        """Raises ValueError naming the first limit that is not a positive number."""
        for name in ("head_timeout", "idle_timeout", "keep_alive", "grace"):
            value = getattr(self, name)
            if not value > 0:
                raise ValueError(f"{name} must be a positive number of seconds, not {value}")
        if self.max_connections < 1:
            raise ValueError(f"max_connections must be at least 1, not {self.max_connections}")
        if self.retry_after < 0:
            raise ValueError(f"retry_after must not be negative, not {self.retry_after}")


def _shed_app(retry_after: int) -> Any:
    body = json.dumps(
        {
            "error": {
                "status": 503,
                "parameter": None,
                "message": "too many open connections; retry later",
            }
        },
        separators=(",", ":"),
    ).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"retry-after", str(retry_after).encode()),
        (b"connection", b"close"),
    ]

    async def shed(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 503, "headers": headers})
        await send({"type": "http.response.body", "body": body, "more_body": False})

    return shed


class _Disciplined(H11Protocol):
    """uvicorn's h11 protocol with a timer on the way to each request's end of headers."""

    limits: ClassVar[Limits] = Limits()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._timer: asyncio.TimerHandle | None = None
        self._in_head = False
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections:
            # Its request is still read (within the same limits), so the client gets an
            # answer to the request it sent rather than a reset.
            self.app = _shed_app(self.limits.retry_after)
        self._arm(self.limits.idle_timeout)

    def _arm(self, seconds: float) -> None:
        self._disarm()
        self._timer = self.loop.call_later(seconds, self._too_slow)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _too_slow(self) -> None:
        self._timer = None
        if not self.transport.is_closing():
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        before = self.cycle
        if not self._in_head and (before is None or before.response_complete):
            self._in_head = True  # the first byte of a head: the head's time starts
            self._arm(self.limits.head_timeout)
        super().data_received(data)
        if self.cycle is not before:  # a whole head was read: its request is being answered
            self._in_head = False
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)


class Server(uvicorn.Server):
    """uvicorn's server, which returns from `run()` once drained instead of re-raising the
    signal that stopped it."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        stop = (signal.SIGINT, signal.SIGTERM)
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in stop}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def allow_open_files(limits: Limits) -> None:
    """Raise this process's soft limit on open files to what `limits` may hold open (a
    connection is a file), as far as the hard limit allows."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = limits.max_connections + 256  # the catalog's files, the thread pool, logs
    if soft != resource.RLIM_INFINITY and soft < wanted:
        ceiling = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (ceiling, hard))


def build(
    service: Service,
    host: str = "127.0.0.1",
    port: int = 8000,
    cache_bytes: int = 64 << 20,
    limits: Limits | None = None,
) -> Server:
    """A uvicorn server of the application over `service`; `.run()` serves until stopped
    (`should_exit = True`, or SIGINT/SIGTERM when run on the main thread, which drain)."""
    limits = limits or Limits()
    limits.check()
    protocol = type("Protocol", (_Disciplined,), {"limits": limits})
    config = uvicorn.Config(
        create_app(service, cache_bytes),
        host=host,
        port=port,
        http=protocol,
        log_level="warning",
        access_log=False,
        server_header=False,  # which server answers is nobody's business
        # Only the loopback proxy's X-Forwarded-* headers are believed (uvicorn's default),
        # so a client cannot claim another address; see docs/serve.md for a reverse proxy.
        forwarded_allow_ips="127.0.0.1",
        lifespan="off",
        timeout_keep_alive=max(1, round(limits.keep_alive)),
        timeout_graceful_shutdown=max(1, round(limits.grace)),
        backlog=max(2048, limits.max_connections),
    )
    return Server(config)
