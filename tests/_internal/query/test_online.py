"""`query/online.py` on its own: asking online providers, their backoff on a test clock, the
check of what they answer. Requests are "sent" by a submit that runs them at once, so no
thread and no time is involved (through a real Catalog and its threads: tests/faults)."""

from __future__ import annotations

import logging
import threading
import time
from concurrent import futures
from concurrent.futures import Future
from typing import Any

import pytest

from gpuhunt import Catalog
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.load.settings import Settings
from gpuhunt._internal.load.threads import DaemonPool
from gpuhunt._internal.load.unreachable import Providers
from gpuhunt._internal.models import QueryFilter
from gpuhunt._internal.query import online
from gpuhunt.providers.base import AbstractProvider
from tests.helpers import item, publish_archive


class Provider(AbstractProvider):
    """Answers `offers`, or raises `error`; counts its calls."""

    def __init__(self, name: str, offers: Any = (), error: Exception | None = None) -> None:
        self.NAME = name
        self.offers = offers
        self.error = error
        self.calls = 0

    def get(self, query_filter=None, balance_resources=True):
        self.calls += 1
        if self.error is not None:
            raise self.error
        return self.offers


def run_now(fn: Any, *args: Any) -> Future[Any]:
    f: Future[Any] = Future()
    try:
        f.set_result(fn(*args))
    except Exception as e:  # noqa: BLE001 - a Future carries whatever the call raised
        f.set_exception(e)
    return f


def cancelled(*_: Any) -> Future[Any]:
    f: Future[Any] = Future()
    f.cancel()
    return f


# ------------------------------------------------------------------------------ Health


def test_backoff_doubles_from_30_s_up_to_15_minutes_and_success_forgets_it(caplog):
    clock = FakeClock()
    health = online.Health(clock)
    waits = []
    with caplog.at_level(logging.DEBUG, logger=online.__name__):
        for _ in range(7):
            health.failed("vastai", "HTTPError: 503")
            waits.append(health.retry_in("vastai"))
    assert waits == [30.0, 60.0, 120.0, 240.0, 480.0, 900.0, 900.0]
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert [r.getMessage() for r in warnings] == [
        "Online provider vastai left out (HTTPError: 503); not asked again for 30s"
    ]
    assert health.errors == {"vastai": "HTTPError: 503"} and health.backoffs() == {"vastai": 900.0}
    clock.now += 899.5
    assert health.retry_in("vastai") == 0.5
    health.succeeded("vastai")
    assert not health.failing("vastai") and health.errors == {} and health.backoffs() == {}
    assert health.retry_in("vastai") is None


def test_one_probe_at_a_time_and_only_once_the_backoff_is_over():
    clock = FakeClock()
    health = online.Health(clock)
    assert not health.start_probe("runpod")  # not failing: asked as usual, no probe
    health.failed("runpod", "timed out after 2s")
    assert not health.start_probe("runpod")
    clock.now += 30
    assert health.start_probe("runpod")
    assert not health.start_probe("runpod")  # one is running
    health.probe_cancelled("runpod")  # close() cancelled it before it ran
    assert health.start_probe("runpod")
    health.failed("runpod", "again")  # the probe failed: the next wait is longer
    assert health.retry_in("runpod") == 60.0 and not health.start_probe("runpod")


# ------------------------------------------------------------------------------ ask / answers


def test_a_failing_provider_is_left_out_then_probed_in_the_background():
    clock = FakeClock()
    health = online.Health(clock)
    q = QueryFilter()
    down = Provider("runpod", error=ConnectionError("refused"))
    up = Provider("vastai", offers=[item("vastai", price=2.0)])

    found = online.answers(online.ask(run_now, [down, up], q, True, health), q, 5, health)
    assert [[i.price for i in f] for f in found] == [[2.0]]
    assert health.errors == {"runpod": "ConnectionError: refused"} and down.calls == 1

    # Within the backoff: not asked at all.
    assert [p.NAME for p, _ in online.ask(run_now, [down, up], q, True, health)] == ["vastai"]
    assert down.calls == 1 and "runpod" not in health.probes

    # After it: retried beside the query (not waited for), and forgiven once it answers.
    clock.now += 30
    down.error = None
    asked = online.ask(run_now, [down, up], q, True, health)
    assert [p.NAME for p, _ in asked] == ["vastai"] and down.calls == 2
    assert health.probes["runpod"].done() and not health.failing("runpod")
    assert [p.NAME for p, _ in online.ask(run_now, [down, up], q, True, health)] == [
        "runpod",
        "vastai",
    ]


def test_answers_filter_check_and_count_each_providers_offers():
    health = online.Health(FakeClock())
    q = QueryFilter(gpu_name=["H100"])
    mixed = Provider(
        "vastai",
        offers=[
            item("vastai", gpu_name="H100", price=3.0),
            item("vastai", gpu_name="A100", price=1.0),  # does not match
            item("vastai", gpu_name="H100", price=float("nan")),  # not served
            item("vastai", gpu_name="H100", price=-1.0),  # not served
        ],
    )
    skipped: dict[str, int] = {}
    answered: set[str] = set()
    found = online.answers(
        online.ask(run_now, [mixed], q, True, health), q, 5, health, skipped, answered
    )
    assert [[(i.gpu_name, i.price) for i in f] for f in found] == [[("H100", 3.0)]]
    assert skipped == {"vastai": 2} and answered == {"vastai"}


def test_providers_left_out_by_one_query_are_warned_about_in_one_line(caplog):
    health = online.Health(FakeClock())
    q = QueryFilter()
    down = [
        Provider(name, error=ConnectionError(f"{name}: GET https://{name} failed: ConnectionError"))
        for name in ("vultr", "lium", "cudo")
    ]
    with caplog.at_level(logging.WARNING, logger=ONLINE_LOG):
        assert online.answers(online.ask(run_now, down, q, True, health), q, 5, health) == []
    assert [r.getMessage() for r in caplog.records] == [
        "3 online providers left out (ConnectionError): cudo, lium, vultr; not asked again for "
        "30s (each error: Catalog.status().online_errors)"
    ]
    assert set(health.errors) == {"vultr", "lium", "cudo"}  # each error kept
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger=ONLINE_LOG):  # still failing: not again
        online.answers(online.ask(run_now, down, q, True, health), q, 5, health)
    assert caplog.records == []


def test_an_answer_that_is_not_offers_is_a_failure_not_an_error():
    health = online.Health(FakeClock())
    q = QueryFilter()
    odd = Provider("vastai", offers=42)
    assert online.answers(online.ask(run_now, [odd], q, True, health), q, 5, health) == []
    assert health.errors["vastai"].startswith("unusable answer: ")


def test_a_request_cancelled_by_close_is_sent_again_and_is_no_failure():
    health = online.Health(FakeClock())
    q = QueryFilter()
    p = Provider("vastai", offers=[item("vastai", price=1.5)])
    asked = online.ask(cancelled, [p], q, True, health)
    resent = []

    def resubmit(provider):
        resent.append(provider.NAME)
        return run_now(online.collect, provider, q, True)

    found = online.answers(asked, q, 5, health, resubmit=resubmit)
    assert resent == ["vastai"] and [[i.price for i in f] for f in found] == [[1.5]]
    # Without a way to resend it: left out, answered, not failed.
    answered: set[str] = set()
    asked = online.ask(cancelled, [p], q, True, health)
    assert online.answers(asked, q, 5, health, answered=answered) == []
    assert answered == {"vastai"} and not health.failing("vastai")


def test_a_generator_that_breaks_off_contributes_nothing():
    def offers():
        yield item("vastai", price=1.0)
        yield item("vastai", price=2.0)
        raise OSError("connection reset")

    p = Provider("vastai", offers=offers())
    with pytest.raises(online.BrokenAnswer, match=r"after 2 offers \(OSError: connection reset\)"):
        online.collect(p, QueryFilter(), True)


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({}, None),
        ({"price": 0.0}, "price 0.0 is not a finite positive number"),
        ({"price": float("inf")}, "price inf is not a finite positive number"),
        ({"cpu": -1}, "cpu -1 is not a sane count"),
        ({"cpu": True}, "cpu True is not a sane count"),
        ({"gpu_count": 1025}, "gpu_count 1025 is not a sane count"),
        ({"memory": None}, "memory None is not a sane size"),
        ({"gpu_memory": None}, None),
        ({"disk_size": float("nan")}, "disk_size nan is not a sane size"),
    ],
)
def test_offer_problem(changes, problem):
    assert online.offer_problem(item("vastai", **changes)) == problem


def test_offer_problem_of_what_is_not_an_offer():
    assert online.offer_problem({"price": 1}) == "not an offer (dict)"


def test_a_background_retry_cancelled_by_close_is_started_again():
    health = online.Health()
    health.failed("vastai", "down")
    health._streaks["vastai"].retry_at = 0
    assert health.start_probe("vastai") and not health.start_probe("vastai")
    health.probe_cancelled("vastai")
    assert health.start_probe("vastai")


# ------------------------------------------------------------------ through a Catalog
# (moved from test_filters.py and test_round3.py: the online backoff as `Catalog.query` and
# `status()` show it)


@pytest.fixture
def catalog(tmp_path):
    publish_archive(tmp_path / "b", "v1", {"aws": csv_bytes([item(instance_name="a100")])})
    c = Catalog(catalog_url=str(tmp_path / "b"))
    yield c
    c.close()


def names(offers):
    return sorted(i.instance_name for i in offers)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Offline(AbstractProvider):
    NAME = "vastai"

    def __init__(self) -> None:
        self.calls = 0
        self.fail = True

    def get(self, query_filter=None, balance_resources=True, apply_filter=False):
        self.calls += 1
        if self.fail:
            raise ConnectionError("Name or service not known")
        return [item("vastai", price=0.3, instance_name="live")]


ONLINE_LOG = "gpuhunt._internal.query.online"


def query_and_wait_for_retries(catalog):
    """A query, then every background retry it started has finished (no sleeping)."""
    offers = catalog.query()
    futures.wait(list(catalog._online.probes.values()))
    return offers


def test_failing_online_provider_is_backed_off_and_warned_once_per_streak(catalog, caplog):
    clock = FakeClock()
    catalog._clock = clock
    provider = Offline()
    catalog.add_provider(provider)
    with caplog.at_level(logging.WARNING, logger=ONLINE_LOG):
        for _ in range(5):
            assert "live" not in names(query_and_wait_for_retries(catalog))
    assert provider.calls == 1  # the later queries did not ask (nor wait for) it
    s = catalog.status()
    assert "Name or service not known" in s.online_errors["vastai"]
    assert s.online_retry_in == {"vastai": 30.0}
    clock.now += 30
    query_and_wait_for_retries(catalog)  # retried in the background
    assert provider.calls == 2 and catalog.status().online_retry_in == {"vastai": 60.0}
    for wait in (60, 120, 240, 480, 900, 900):  # doubling up to the cap
        clock.now += wait - 1
        query_and_wait_for_retries(catalog)
        calls = provider.calls
        clock.now += 1
        query_and_wait_for_retries(catalog)
        assert provider.calls == calls + 1
    warned = [r for r in caplog.records if "vastai" in r.getMessage()]
    assert len(warned) == 1  # one warning for the whole streak
    provider.fail = False
    clock.now += 900
    assert "live" not in names(query_and_wait_for_retries(catalog))  # not waited for...
    assert catalog.status().online_errors == {} and catalog.status().online_retry_in == {}
    assert "live" in names(query_and_wait_for_retries(catalog))  # ...asked again once it answers
    provider.fail = True
    clock.now += 1
    with caplog.at_level(logging.WARNING, logger=ONLINE_LOG):
        query_and_wait_for_retries(catalog)
    assert len([r for r in caplog.records if "vastai" in r.getMessage()]) == 2  # a new streak
    assert catalog.status().online_retry_in == {"vastai": 30.0}


def test_backoff_is_per_provider():
    clock = FakeClock()
    health = online.Health(clock)
    health.failed("a", "boom")
    assert health.retry_in("a") == 30.0 and health.retry_in("b") is None
    clock.now += 30
    assert health.retry_in("a") is None and health.backoffs() == {}


# ------------------------------------------------- the default path is bounded (issue 37)


class Silent(AbstractProvider):
    """A provider whose request never answers until `release` is set (a proxy that swallows
    requests); counts its calls."""

    def __init__(self, name: str = "vastai") -> None:
        self.NAME = name
        self.release = threading.Event()
        self.calls = 0

    def get(self, query_filter=None, balance_resources=True):
        self.calls += 1
        self.release.wait(30)
        return [item(self.NAME, price=0.3, instance_name="late")]


def test_the_online_wait_counts_from_the_query_start_not_from_when_the_catalog_was_read():
    # The offline part took longer than the whole budget: nothing is left to wait for, though
    # the answer comes half a second later (a wait counted from now would get it).
    slow = Silent()
    pool = DaemonPool(2, "t")
    answer_soon = threading.Timer(0.5, slow.release.set)
    try:
        asked = online.Asked(started=time.monotonic() - 10.0)
        asked.append((slow, pool.submit(online.collect, slow, QueryFilter(), True)))
        answer_soon.start()
        health = online.Health()
        assert online.answers(asked, QueryFilter(), 5.0, health) == []
        assert health.errors == {"vastai": "timed out after 5s"}
    finally:
        answer_soon.cancel()
        slow.release.set()
        pool.shutdown()


def test_a_provider_that_got_no_answer_is_remembered_across_processes(tmp_path):
    first = online.Health(memory=Providers(tmp_path))
    first.failed("vastai", "ProviderError: vastai: POST https://console.vast.ai timed out")
    # Another process: a new Health and Memory on the same cache folder.
    later = online.Health(memory=Providers(tmp_path))
    p = Provider("vastai", [item("vastai")])
    asked = online.ask(run_now, [p], QueryFilter(), True, later)
    assert asked == [] and p.calls == 0
    assert later.errors["vastai"].startswith("not asked: it got no answer")
    assert "timed out" in later.errors["vastai"]
    # An answer in any process ends the record.
    first.succeeded("vastai")
    fresh = online.Health(memory=Providers(tmp_path))
    assert not fresh.failing("vastai")
    assert len(online.ask(run_now, [p], QueryFilter(), True, fresh)) == 1 and p.calls == 1


def test_default_query_waits_the_online_deadline_and_the_next_catalog_does_not_ask(tmp_path):
    publish_archive(tmp_path / "b", "v1", {"aws": csv_bytes([item(instance_name="a100")])})
    settings = Settings(online_deadline=0.2, online_timeout=60.0, cache_dir=tmp_path / "c")
    silent = Silent()
    try:
        with Catalog(catalog_url=str(tmp_path / "b"), settings=settings) as c:
            c.add_provider(silent)
            assert names(c.query()) == ["a100"]  # the deadline, not the 60 s timeout
            assert c.status().online_errors == {"vastai": "timed out after 0.2s"}
        again = Silent()
        with Catalog(catalog_url=str(tmp_path / "b"), settings=settings) as c:
            c.add_provider(again)
            assert names(c.query()) == ["a100"]
            assert again.calls == 0  # remembered: not asked at all
            assert "not asked" in c.status().online_errors["vastai"]
    finally:
        silent.release.set()
