"""The library leaves the garbage collector as its caller set it: enabled or not, with the
caller's frozen objects frozen, through a load, offline and online queries, a reload, the
history functions and the CLI's in-process paths; and another thread never sees the collector
disabled while answers are built. (Earlier versions paused it process-wide while building
offers and froze what was allocated meanwhile, the host's own objects included.)"""

from __future__ import annotations

import datetime as dt
import gc
import sys
import threading
from collections.abc import Callable, Iterator

import pytest

from gpuhunt._internal import cli
from gpuhunt._internal.catalog import Catalog
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.history import daily
from gpuhunt._internal.history import table as history
from gpuhunt._internal.history.table import Offer
from gpuhunt.providers.base import AbstractProvider
from tests.helpers import item, publish_archive

# Enough offers that building an answer spans many thread switches (see `watch`).
AWS = [
    item(price=1.0 + k / 1000, instance_name=f"t{k % 50}", location=f"r{k % 7}")
    for k in range(3000)
]
DAY = dt.date(2026, 11, 29)


class Online(AbstractProvider):
    NAME = "vastai"

    def get(self, query_filter=None, balance_resources=True, apply_filter=False):
        return [item("vastai", price=0.5), item("vastai", price=9.0)]


@pytest.fixture
def catalog_url(tmp_path, monkeypatch) -> str:
    publish_archive(tmp_path, "v1", {"aws": csv_bytes(AWS)})
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", str(tmp_path))
    return str(tmp_path)


@pytest.fixture(params=["enabled", "disabled", "enabled+frozen", "disabled+frozen"])
def gc_state(request) -> Iterator[str]:
    """The caller's collector state (set by the test), restored afterwards."""
    was_enabled = gc.isenabled()
    try:
        yield request.param
    finally:
        gc.unfreeze()
        (gc.enable if was_enabled else gc.disable)()


def _set(state: str) -> tuple[bool, int]:
    """As a host might have it: collector on or off, and (+frozen) its objects frozen, as a
    pre-fork server does."""
    gc.collect()
    if "frozen" in state:
        gc.freeze()
    (gc.disable if state.startswith("disabled") else gc.enable)()
    return gc.isenabled(), gc.get_freeze_count()


def _load_and_query(url: str) -> None:
    c = Catalog(catalog_url=url, auto_reload=False, balance_resources=False)
    c.load()
    assert len(c.query()) == len(AWS)
    assert len(c.query(max_price=1.5, provider="aws")) == 501


def _online(url: str) -> None:
    c = Catalog(catalog_url=url, auto_reload=False, balance_resources=False)
    c.add_provider(Online())
    c.load()
    got = c.query()
    assert (got[0].provider, got[-1].provider, len(got)) == ("vastai", "vastai", len(AWS) + 2)


def _reload(url: str) -> None:
    c = Catalog(catalog_url=url, auto_reload=False, balance_resources=False)
    c.load()
    c.query()
    c.load()
    assert len(c.query()) == len(AWS)


def _history(url: str) -> None:
    offers = {
        (f"t{k}", "us-east-1", False): Offer(f"t{k}", "us-east-1", False, "H100", 1, 2.0 + k)
        for k in range(200)
    }
    spans = history.observe([], None, offers, "v1", DAY)
    spans = history.loads(history.dumps(spans))
    assert len(spans) == 200
    assert daily.query({"lambdalabs": spans}).series[0].prices == [2.0]


def _cli(url: str) -> None:
    assert cli.main(["query", "--json"]) == 0
    assert cli.main(["query", "--gpu", "A100", "--limit", "3"]) == 0


PATHS: dict[str, Callable[[str], None]] = {
    "load and query": _load_and_query,
    "online provider": _online,
    "reload": _reload,
    "history": _history,
    "cli": _cli,
}


@pytest.mark.slow
@pytest.mark.parametrize("path", list(PATHS))
def test_collector_state_is_left_as_found(path, gc_state, catalog_url, capsys):
    enabled, frozen = _set(gc_state)
    PATHS[path](catalog_url)
    assert gc.isenabled() == enabled
    if frozen:
        # Nothing frozen by the library, nothing unfrozen (which would empty it). The count
        # can fall a little: a frozen object that is freed leaves it (objects of earlier
        # tests, released by threads finishing meanwhile).
        assert 0.9 * frozen < gc.get_freeze_count() <= frozen
    else:
        assert gc.get_freeze_count() == 0
    capsys.readouterr()


@pytest.fixture
def watch() -> Iterator[list[bool]]:
    """What another thread sees of `gc.isenabled()` while the test runs, polled as often as
    the interpreter switches threads (made frequent for the test)."""
    seen: list[bool] = []
    stop = threading.Event()
    started = threading.Event()

    def poll() -> None:
        started.set()
        while not stop.is_set():
            seen.append(gc.isenabled())

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    started.wait()
    try:
        yield seen
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)


def test_another_thread_never_sees_the_collector_disabled(catalog_url, watch):
    assert gc.isenabled()
    c = Catalog(catalog_url=catalog_url, auto_reload=False, balance_resources=False)
    c.load()
    for _ in range(20):
        assert len(c.query()) == len(AWS)
    c.load()
    polls = len(watch)
    assert polls > 0 and all(watch), f"{watch.count(False)} of {polls} polls saw it disabled"
