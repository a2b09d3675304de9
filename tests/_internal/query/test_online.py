"""`query/online.py`: online providers' backoff after failures."""

from __future__ import annotations

import logging
from concurrent import futures

import pytest

from gpuhunt import Catalog
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.query import online
from gpuhunt.providers.base import AbstractProvider
from tests.helpers import item, publish_archive


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
