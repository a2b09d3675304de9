"""The uvicorn server `gpuhunt serve` runs (tests and the benchmark run the same one)."""

from __future__ import annotations

import uvicorn

from gpuhunt._internal.serve.answers import Service
from gpuhunt._internal.serve.app import create_app


def build(
    service: Service, host: str = "127.0.0.1", port: int = 8000, cache_bytes: int = 64 << 20
) -> uvicorn.Server:
    """A uvicorn server of the application over `service`; `.run()` serves until stopped
    (`should_exit = True`, or SIGINT/SIGTERM when run on the main thread)."""
    config = uvicorn.Config(
        create_app(service, cache_bytes),
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        server_header=False,  # which server answers is nobody's business
        # Only the loopback proxy's X-Forwarded-* headers are believed (uvicorn's default),
        # so a client cannot claim another address; see docs/serve.md for a reverse proxy.
        forwarded_allow_ips="127.0.0.1",
        lifespan="off",
    )
    return uvicorn.Server(config)
