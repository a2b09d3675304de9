"""The uvicorn server `gpuhunt serve` runs: loopback unless told, no Server header."""

from __future__ import annotations

import socket
import time

import pytest
import requests

from gpuhunt._internal.catalog import Catalog
from gpuhunt._internal.load.settings import Settings
from gpuhunt._internal.serve import server
from gpuhunt._internal.serve.answers import Service
from tests._internal.serve.conftest import start


def test_loopback_by_default(tmp_path):
    with Catalog(settings=Settings(cache_dir=tmp_path)) as c:
        config = server.build(Service(c)).config
        assert config.host == "127.0.0.1" and config.port == 8000
        assert config.server_header is False and config.access_log is False


def test_it_serves_the_application(published, tmp_path):
    catalog = Catalog(catalog_url=str(published), settings=Settings(cache_dir=tmp_path))
    for running in start(catalog):
        r = requests.get(f"{running.url}/v1/offers?limit=1", timeout=30)
        assert r.status_code == 200 and "server" not in r.headers
        assert r.json()["total"] == 4000


# ------------------------------------------------------------------ connection discipline
# Real sockets on 127.0.0.1. Every wait is bounded by a socket timeout or a counted loop, so
# a server that never closes a connection fails the test instead of hanging it.

LIMITS = server.Limits(head_timeout=1, idle_timeout=1, keep_alive=30, max_connections=3)


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes `sock` (an EOF or a reset) before `seconds` pass."""
    sock.settimeout(seconds)
    try:
        return sock.recv(1024) == b""
    except ConnectionResetError:
        return True
    except (TimeoutError, BlockingIOError):
        return False


def _get(sock: socket.socket, path: str = "/v1/status") -> bytes:
    """One keep-alive GET on `sock`: the response's head."""
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    sock.settimeout(30)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, "closed before answering"
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = int(next(v for k, v in _headers(head) if k == "content-length"))
    while len(rest) < length:
        rest += sock.recv(65536)
    return head


def _headers(head: bytes) -> list[tuple[str, str]]:
    lines = head.decode("latin-1").split("\r\n")[1:]
    return [(k.strip().lower(), v.strip()) for k, _, v in (x.partition(":") for x in lines)]


@pytest.fixture(scope="module")
def strict(published, tmp_path_factory):
    cache = tmp_path_factory.mktemp("strict-cache")
    catalog = Catalog(catalog_url=str(published), settings=Settings(cache_dir=cache))
    yield from start(catalog, LIMITS)


def test_a_connection_that_sends_nothing_is_closed(strict):
    with socket.create_connection(("127.0.0.1", strict.port), timeout=30) as s:
        assert _closed_within(s, 30)  # the idle limit is 1 s


def test_a_head_trickled_a_byte_at_a_time_is_closed(strict):
    head = b"GET /v1/status HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 1000
    with socket.create_connection(("127.0.0.1", strict.port), timeout=30) as s:
        sent = 0
        for byte in head:  # never the blank line that ends a head
            try:
                s.sendall(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += 1
            if _closed_within(s, 0.25):
                break
        else:
            pytest.fail("a head trickled for 250 s was never closed")
    assert sent > 1  # closed for being slow, not at once


def test_a_keep_alive_connection_trickling_its_next_head_is_closed(strict):
    with socket.create_connection(("127.0.0.1", strict.port), timeout=30) as s:
        assert _get(s).startswith(b"HTTP/1.1 200")
        for byte in b"GET /v1/status HTTP/1.1\r\nX-Slow: " + b"a" * 1000:
            try:
                s.sendall(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                break
            if _closed_within(s, 0.25):
                break
        else:
            pytest.fail("the second head was never closed")


def test_beyond_the_cap_a_request_gets_503_with_retry_after(strict):
    held = [socket.create_connection(("127.0.0.1", strict.port), timeout=30) for _ in range(3)]
    try:
        for s in held:  # answered: the server holds all three
            assert _get(s).startswith(b"HTTP/1.1 200")
        with socket.create_connection(("127.0.0.1", strict.port), timeout=30) as extra:
            head = _get(extra)
            assert head.startswith(b"HTTP/1.1 503")
            headers = dict(_headers(head))
            assert headers["retry-after"] == "1" and headers["connection"] == "close"
            assert _closed_within(extra, 30)
    finally:
        for s in held:
            s.close()
    for _ in range(100):  # the server sees the three close, then answers again
        with socket.create_connection(("127.0.0.1", strict.port), timeout=30) as s:
            if _get(s).startswith(b"HTTP/1.1 200"):
                break
        time.sleep(0.1)
    else:
        pytest.fail("never answered again after the held connections closed")


def test_a_request_is_answered_while_200_connections_sit_idle(published, tmp_path):
    catalog = Catalog(catalog_url=str(published), settings=Settings(cache_dir=tmp_path))
    limits = server.Limits(idle_timeout=120, max_connections=300)
    for running in start(catalog, limits):
        idle = [
            socket.create_connection(("127.0.0.1", running.port), timeout=30) for _ in range(200)
        ]
        try:
            r = requests.get(f"{running.url}/v1/offers?limit=1", timeout=30)
            assert r.status_code == 200 and r.json()["total"] == 4000
            assert not any(_closed_within(s, 0.01) for s in idle[:5])  # still open, not shed
        finally:
            for s in idle:
                s.close()


def test_limits_are_checked():
    with pytest.raises(ValueError, match="head_timeout"):
        server.Limits(head_timeout=0).check()
    with pytest.raises(ValueError, match="max_connections"):
        server.Limits(max_connections=0).check()
