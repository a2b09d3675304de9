"""A scriptable HTTP server on 127.0.0.1 for fault injection: each path answers from a queue of
behaviours (status/body/headers, or hang), falling back to a default."""

from __future__ import annotations

import contextlib
import http.server
import threading
from dataclasses import dataclass, field


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    hang: bool = False  # accept and never answer
    declared_length: int | None = None  # a Content-Length that lies (truncated body); -1: none
    drip: float = 0.0  # seconds between single bytes of the body (a server that trickles)


class FaultServer:
    def __init__(self) -> None:
        self.routes: dict[str, list[Reply]] = {}
        self.defaults: dict[str, Reply] = {}
        self.hits: dict[str, int] = {}
        self.headers: list[dict[str, str]] = []  # each request's headers, in arrival order
        self.lock = threading.Lock()
        self._release = threading.Event()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                with outer.lock:
                    outer.hits[self.path] = outer.hits.get(self.path, 0) + 1
                    outer.headers.append(dict(self.headers.items()))
                    queue = outer.routes.get(self.path)
                    reply = queue.pop(0) if queue else outer.defaults.get(self.path, Reply(404))
                if reply.hang:
                    outer._release.wait(30)
                    return
                self.send_response(reply.status)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                length = (
                    reply.declared_length if reply.declared_length is not None else len(reply.body)
                )
                if length >= 0:
                    self.send_header("Content-Length", str(length))
                else:  # the body runs until the connection closes
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()
                with contextlib.suppress(OSError):
                    if reply.drip:
                        for k in range(len(reply.body)):
                            if outer._release.wait(reply.drip):
                                return
                            self.wfile.write(reply.body[k : k + 1])
                            self.wfile.flush()
                    else:
                        self.wfile.write(reply.body)
                if reply.declared_length is not None:
                    self.close_connection = True

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                self.do_GET()

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler, False)
        self.httpd.request_queue_size = 128  # the default 5 drops parallel connects (1 s SYN retry)
        self.httpd.server_bind()
        self.httpd.server_activate()
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> FaultServer:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._release.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def release(self) -> None:
        """End every hanging or dripping answer now."""
        self._release.set()

    def serve(self, path: str, *replies: Reply, default: Reply | None = None) -> None:
        with self.lock:
            self.routes[path] = list(replies)
            if default is not None:
                self.defaults[path] = default
