"""A transport that answers requests from a function instead of the network, as httpx's
`MockTransport` does (`Catalog(transport=MockTransport(handler))`), and `make_response` to build
its answers. Importable from `load.transport`, where callers found it."""

from __future__ import annotations

import io
import threading
from collections.abc import Callable, Mapping

import requests
import urllib3
from requests.adapters import BaseAdapter


class MockTransport(BaseAdapter):
    """A transport that answers every request with `handler(request)` instead of the network,
    as httpx's `MockTransport` does: `Catalog(transport=MockTransport(handler))`, or mounted on
    a provider's session. `handler` gets the `requests.PreparedRequest` and returns a
    `requests.Response` (`make_response` builds one) or raises a `requests.RequestException`
    (a `requests.ConnectionError` stands for a server that is down). `requests` lists what
    reached it, in order."""

    def __init__(self, handler: Callable[[requests.PreparedRequest], requests.Response]) -> None:
        super().__init__()
        self.handler = handler
        self.requests: list[requests.PreparedRequest] = []
        self._lock = threading.Lock()

    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: float | tuple[float, float] | tuple[float, None] | None = None,
        verify: bool | str = True,
        cert: bytes | str | tuple[bytes | str, bytes | str] | None = None,
        proxies: Mapping[str, str] | None = None,
    ) -> requests.Response:
        with self._lock:
            self.requests.append(request)
        try:
            response = self.handler(request)
        except requests.RequestException as e:
            if e.request is None:  # as requests' own adapter does: the error names its request
                e.request = request
            raise
        response.request = request
        if response.url is None:
            response.url = request.url or ""
        return response

    def close(self) -> None:
        pass


def make_response(
    status: int = 200,
    content: bytes | str = b"",
    headers: Mapping[str, str] | None = None,
    request: requests.PreparedRequest | None = None,
) -> requests.Response:
    """A `requests.Response` with `status`, `content` (bytes, or text sent as UTF-8) and
    `headers` (a Content-Length is added), readable streamed or whole like a real one."""
    body = content.encode() if isinstance(content, str) else content
    response = requests.Response()
    response.status_code = status
    response.headers.update(headers or {})
    response.headers.setdefault("Content-Length", str(len(body)))
    # What requests' own adapter puts there, so that streamed reads (`raw.read1`) work.
    response.raw = urllib3.HTTPResponse(
        body=io.BytesIO(body),
        headers=dict(response.headers),
        status=status,
        preload_content=False,
        decode_content=False,
    )
    response.reason = "OK" if status < 400 else "Error"
    if request is not None:
        response.request = request
        response.url = request.url or ""
    return response
