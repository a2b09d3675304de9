"""The uvicorn server `gpuhunt serve` runs: loopback unless told, no Server header."""

from __future__ import annotations

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
