"""A generated catalog published in a folder, and `gpuhunt serve`'s server on 127.0.0.1 over
it (a real socket: uvicorn on a thread, on a free port)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from benchmarks.bench_catalog import generate

from gpuhunt._internal.catalog import Catalog
from gpuhunt._internal.load.settings import Settings
from tests.helpers import publish_archive

VERSION = "20261129-1"
OFFERS = 4000  # generated offers: every provider, GPU and region of the benchmark's mix


@pytest.fixture(scope="session")
def published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A catalog in the published archive layout (`{root}/version`, `{root}/V/catalog.zip`)."""
    root = tmp_path_factory.mktemp("published")
    publish_archive(root, VERSION, generate(OFFERS))
    return root


class Running:
    def __init__(self, url: str, catalog: Catalog, port: int = 0) -> None:
        self.url = url
        self.catalog = catalog
        self.port = port


def start(catalog: Catalog, limits: Any = None) -> Iterator[Running]:
    """The server over `catalog` on a free port (`limits`: a `server.Limits`)."""
    from gpuhunt._internal.serve import server
    from gpuhunt._internal.serve.answers import Service

    service = Service(catalog)
    service.ready()
    srv = server.build(service, "127.0.0.1", 0, limits=limits)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not srv.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    port = srv.servers[0].sockets[0].getsockname()[1]
    try:
        yield Running(f"http://127.0.0.1:{port}", catalog, port)
    finally:
        srv.should_exit = True
        thread.join(10)
        catalog.close()


@pytest.fixture(scope="module")
def served(published: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    """The server over `published`; its catalog's settings are given, not read from the
    environment (the module's tests share it)."""
    cache = tmp_path_factory.mktemp("serve-cache")
    catalog = Catalog(catalog_url=str(published), settings=Settings(cache_dir=cache))
    yield from start(catalog)


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated catalog as the nightly build publishes it, price history included."""
    from gpuhunt._internal.publish.build import Collected, build_catalog
    from gpuhunt._internal.publish.files import write_build

    root = tmp_path_factory.mktemp("built") / "catalog"
    csvs = generate(2000)
    collected = {p: Collected(d, "2026-11-29T00:00:00+00:00") for p, d in csvs.items()}
    write_build(build_catalog(VERSION, collected, None, providers=list(csvs)), root)
    return root


@pytest.fixture(scope="module")
def served_built(built: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    cache = tmp_path_factory.mktemp("serve-built-cache")
    catalog = Catalog(catalog_url=str(built), settings=Settings(cache_dir=cache))
    yield from start(catalog)
