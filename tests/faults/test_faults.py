"""Fault injection with real sockets on 127.0.0.1: the catalog never hangs, never loses data it
has, and degrades to the disk cache or the bundled snapshot. Counts are summed in
docs/reliability.md."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from gpuhunt import Catalog, CatalogError
from gpuhunt._internal.formats.archive import write_archive
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.query import online
from gpuhunt.providers.base import AbstractProvider
from tests.faults.common import GOOD, archive, publish
from tests.faults.server import FaultServer, Reply
from tests.helpers import item


def test_server_that_never_answers():
    with FaultServer() as srv:
        srv.serve("/version", default=Reply(hang=True))
        c = Catalog(catalog_url=srv.url, timeout=(1, 1), retries=0)
        t = time.monotonic()
        offers = c.query()
        first = time.monotonic() - t
        assert first < 5 and len(offers) > 0 and c.status().source == "bundled"
        c.query()
        # The failure is remembered: the second query asks nothing, so it cannot wait on the
        # silent server (a wall-clock bound here measured the collector, not the library).
        assert srv.hits["/version"] == 1


def test_connection_refused_uses_disk_cache(tmp_path):
    with FaultServer() as srv:
        publish(srv)
        url = srv.url
        Catalog(catalog_url=url).load()
    # The server is gone now. (reload_interval=0: the cache checked moments ago would
    # otherwise be used without asking the network at all.)
    c = Catalog(catalog_url=url, timeout=(1, 1), retries=0, reload_interval=0)
    assert [i.price for i in c.query()][:2] == [1.0, 2.0]
    assert c.status().source == "disk-cache" and c.status().last_error


def test_500_then_200_is_retried():
    with FaultServer() as srv:
        publish(srv)
        srv.serve("/version", Reply(500), Reply(503), default=Reply(body=b"v1"))
        c = Catalog(catalog_url=srv.url, retries=2)
        assert len(c.query()) == 10 and c.status().source == "network"
        assert srv.hits["/version"] == 3


def test_429_with_retry_after_is_honoured(monkeypatch):
    from gpuhunt._internal.load import transport

    monkeypatch.setattr(transport, "MAX_RETRY_AFTER", 5.0)  # the suite's conftest sets 0
    with FaultServer() as srv:
        publish(srv)
        srv.serve("/version", Reply(429, headers={"Retry-After": "1"}), default=Reply(body=b"v1"))
        c = Catalog(catalog_url=srv.url, retries=2)
        t = time.monotonic()
        assert len(c.query()) == 10
        assert time.monotonic() - t >= 0.9


@pytest.mark.parametrize(
    "bad, reason",
    [
        (lambda: archive()[:200], "truncated"),
        (lambda: archive(manifest_sha="0" * 64), "sha256"),
        (lambda: write_archive({"aws": b"0" * 20_000_000}, {}), "bomb"),
    ],
)
def test_corrupt_archives_keep_the_good_catalog(bad, reason, caplog):
    with FaultServer() as srv:
        publish(srv)
        c = Catalog(catalog_url=srv.url)
        assert len(c.query()) == 10
        publish(srv, "v2", bad())
        c.reload_interval = 0
        c.load()  # explicit reload of the latest: fails, keeps v1
        s = c.status()
        assert s.version == "v1" and len(c.query()) == 10, reason
        assert s.last_error and "v2/catalog.zip" in s.last_error


def test_pinned_corrupt_version_is_an_error_naming_the_file():
    with FaultServer() as srv:
        publish(srv, "v3", archive(manifest_sha="0" * 64))
        with pytest.raises(CatalogError, match="aws.csv does not match"):
            Catalog(catalog_url=srv.url).load(version="v3")


def test_csv_with_garbage_rows_serves_every_good_row():
    lines = GOOD.decode().splitlines()
    garbage = [lines[0]] + [
        x
        for k, line in enumerate(lines[1:])
        for x in ([line, "=cmd|' /C calc'!A0,x,y"] if k == 0 else [line])
    ]
    data = "\n".join(garbage).encode()
    with FaultServer() as srv:
        publish(srv, "v1", archive(data))
        c = Catalog(catalog_url=srv.url)
        assert len(c.query()) == 10
        assert c.status().skipped_rows == {"aws": 1}


def test_reload_failure_keeps_answering_and_backs_off():
    with FaultServer() as srv:
        publish(srv)
        c = Catalog(catalog_url=srv.url, timeout=(1, 1), retries=0)
        assert len(c.query()) == 10
        srv.serve("/version", default=Reply(500))
        c.reload_interval = 0
        for _ in range(20):
            assert len(c.query()) == 10
        _join_reloads()
        hits = srv.hits["/version"]
        for _ in range(20):
            assert len(c.query()) == 10
        _join_reloads()
        s = c.status()
        assert s.version == "v1" and "HTTP 500" in (s.last_error or "") and s.next_retry_in
        assert (
            srv.hits["/version"] == hits == 2
        )  # one initial load + one failed reload, then backoff


def _join_reloads() -> None:
    for t in threading.enumerate():
        if t.name == "gpuhunt-reload":
            t.join(10)


class FlakyProvider(AbstractProvider):
    NAME = "vastai"

    def __init__(self) -> None:
        self.calls = 0
        self.lock = threading.Lock()

    def get(self, query_filter=None, balance_resources=True, apply_filter=False):
        with self.lock:
            self.calls += 1
            fail = self.calls % 2 == 0
        if fail:
            raise RuntimeError("marketplace down")
        return [item("vastai", price=0.1, instance_name="vast")]


@pytest.mark.slow
def test_threads_queries_reloads_and_a_flaky_online_provider(monkeypatch):
    # No backoff: the provider is retried (in the background) as soon as it has failed, so the
    # threads keep going through both the asked and the retried path.
    monkeypatch.setattr(online, "RETRY_AFTER_FAILURE", (0.0, 0.0))
    with FaultServer() as srv:
        versions = [f"v{k}" for k in range(21)]
        for v in versions:
            srv.serve(f"/{v}/catalog.zip", default=Reply(body=archive(version=v)))
        srv.serve("/version", default=Reply(body=b"v0"))
        c = Catalog(catalog_url=srv.url)
        flaky = FlakyProvider()
        c.add_provider(flaky)
        c.load()
        errors: list[BaseException] = []
        served = [0]
        lock = threading.Lock()

        def worker():
            for _ in range(200):
                try:
                    offers = c.query(max_price=5)
                    prices = [i.price for i in offers]
                    assert prices == sorted(prices)
                    aws = [p for i, p in zip(offers, prices) if i.provider == "aws"]
                    assert aws == [1.0, 2.0, 3.0, 4.0, 5.0]
                    with lock:
                        served[0] += 1
                except BaseException as e:  # noqa: BLE001 - the test counts every failure
                    errors.append(e)

        threads = [threading.Thread(target=worker) for _ in range(32)]
        for t in threads:
            t.start()
        for v in versions[1:]:
            srv.serve("/version", default=Reply(body=v.encode()))
            c.load()
        for t in threads:
            t.join()
        assert not errors, errors[:3]
        assert served[0] == 32 * 200
        assert c.status().version == "v20"
        assert flaky.calls > 32  # asked again and again, not once and then backed off for good
        # One download of each version's archive, however many threads were querying.
        assert all(srv.hits.get(f"/{v}/catalog.zip") == 1 for v in versions)


def test_queries_never_wait_for_a_reload_in_progress():
    """16 threads query while a background reload is stuck downloading: every query is answered
    from the loaded catalog before the reload ends (no lock the reload holds is ever taken)."""
    with FaultServer() as srv:
        publish(srv)
        c = Catalog(catalog_url=srv.url, timeout=(2, 60), retries=0)
        assert len(c.query()) == 10
        srv.serve("/version", default=Reply(body=b"v2"))
        srv.serve("/v2/catalog.zip", default=Reply(hang=True))
        c.reload_interval = 0
        c.query()  # starts the background reload, which hangs in its download
        for _ in range(200):
            if srv.hits.get("/v2/catalog.zip"):
                break
            time.sleep(0.05)
        assert srv.hits.get("/v2/catalog.zip") == 1
        answers: list[int] = []
        lock = threading.Lock()

        def worker() -> None:
            for _ in range(50):
                n = len(c.query(max_price=5))
                with lock:
                    answers.append(n)

        threads = [threading.Thread(target=worker) for _ in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert not any(t.is_alive() for t in threads)
        assert answers == [5] * (16 * 50)
        # All of that happened while the reload was still waiting for its download.
        assert c._loader.reloading and srv.hits["/v2/catalog.zip"] == 1
        assert c.status().version == "v1"


SECRET = "sk-PLANTED-0123456789abcdef"


def test_secrets_never_reach_logs_or_errors(caplog, monkeypatch):
    import responses

    from gpuhunt._internal.errors import GPUHuntError
    from gpuhunt._internal.load import transport

    caplog.set_level(logging.DEBUG)
    texts: list[str] = []
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, "https://api.example.com/v1/x", status=401)
        rsps.add(responses.GET, "https://api.example.com/v1/y", status=500)
        rsps.add(responses.GET, "https://api.example.com/v1/z", body="not json")
        for path in ("x", "y", "z"):
            try:
                transport.request_json(
                    "GET",
                    f"https://api.example.com/v1/{path}?api_key={SECRET}",
                    provider="p",
                    credential="P_API_KEY",
                    headers={"Authorization": f"Bearer {SECRET}"},
                )
            except GPUHuntError as e:
                texts += [str(e), repr(e)]
    # Every provider built from a planted credential keeps it out of its repr.
    from gpuhunt._internal import registry

    for spec in registry.PROVIDERS:
        for var in spec.env:
            secret = any(word in var for word in ("KEY", "TOKEN", "SECRET"))
            monkeypatch.setenv(var, SECRET if secret else "not-a-secret")
        try:
            provider = registry.provider_class(spec.name).from_env()
        except Exception as e:  # noqa: BLE001 - providers not built here are checked elsewhere
            texts.append(str(e))
            continue
        texts.append(repr(provider))
    texts.append(caplog.text)
    assert texts and not [t for t in texts if SECRET in t]
    assert any("check P_API_KEY" in t for t in texts)


def test_per_provider_layout_keeps_a_provider_whose_new_object_is_corrupt():
    lam = csv_bytes([item("lambdalabs", price=1.5, instance_name="gpu_1x_h100")])
    with FaultServer() as srv:
        for provider, data in (("aws", GOOD), ("lambdalabs", lam)):
            srv.serve(f"/{provider}/version", default=Reply(body=b"v1"))
            srv.serve(
                f"/{provider}/v1/catalog.zip",
                default=Reply(body=write_archive({provider: data}, {})),
            )
        c = Catalog(catalog_url=srv.url)
        assert len(c.query()) == 11
        srv.serve("/lambdalabs/version", default=Reply(body=b"v2"))
        srv.serve("/lambdalabs/v2/catalog.zip", default=Reply(body=b"PK\x03\x04 truncated"))
        srv.serve("/aws/version", default=Reply(body=b"v2"))
        srv.serve(
            "/aws/v2/catalog.zip",
            default=Reply(body=write_archive({"aws": GOOD[:-30]}, {})),
        )
        c.load()
        offers = c.query()
        assert [i.instance_name for i in offers if i.provider == "lambdalabs"] == ["gpu_1x_h100"]
        assert "lambdalabs/v2/catalog.zip" in (c.status().last_error or "")


def test_gzip_encoded_responses_are_not_mistaken_for_truncation():
    import gzip

    with FaultServer() as srv:
        body = gzip.compress(archive())
        srv.serve("/version", default=Reply(body=b"v1"))
        srv.serve("/v1/catalog.zip", default=Reply(body=body, headers={"Content-Encoding": "gzip"}))
        c = Catalog(catalog_url=srv.url)
        assert len(c.query()) == 10 and c.status().source == "network"
