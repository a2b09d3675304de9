"""Fault injection, third round (issue 27): a server's whole life. A silent catalog server seen
by process after process, `close()` racing queries, a forked child, records that break a
parser, a disk cache over many versions, archives that contradict their pointer. Real sockets
on 127.0.0.1 and real processes; no assertion on timings (the figures are in docs/reliability.md
and the closing note of issue 27), only on what was asked and answered."""

from __future__ import annotations

import json
import logging
import os
import re
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gpuhunt import Catalog
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.load import transport, unreachable
from gpuhunt._internal.load.cache import DiskCache
from gpuhunt.providers.base import AbstractProvider
from tests.faults.common import SRC, archive, cli, publish
from tests.faults.server import FaultServer, Reply
from tests.helpers import item

# ------------------------------------------------ a failed check remembered across processes


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_silent_server_is_asked_once_then_not_again_within_the_window(tmp_path):
    """Default settings (10 s load limit). The first run falls back to the bundled snapshot
    when the server has not answered within the first-answer deadline; the second run, a new
    process, asks nothing and says when it will; `--refresh` asks at once."""
    with FaultServer() as srv:
        srv.serve("/version", default=Reply(hang=True))
        env = {"GPUHUNT_CATALOG_URL": srv.url, "GPUHUNT_CACHE_DIR": str(tmp_path / "cache")}
        args = ["query", "--gpu", "H100", "--limit", "3"]
        first = cli(args, env)
        assert first.returncode == 0, first.stderr[-2000:]
        assert "bundled" in first.stdout.lower()
        # The footer (at most three lines: the full wording, else the short one) says why,
        # when the next check is and how to ask now.
        said = " ".join(first.stdout.split())
        assert "did not answer within 3s" in said or "no answer" in said
        assert re.search(
            r"next check in 1min 0s(,| \()( --refresh now| --refresh checks now)", said
        )
        assert srv.hits["/version"] == 1

        second = cli(args, env)
        assert second.returncode == 0, second.stderr[-2000:]
        assert srv.hits["/version"] == 1  # no request at all
        footer = " ".join(second.stdout.strip().splitlines()[-3:])
        assert "bundled" in footer.lower()
        assert "got no answer" in footer or "no answer" in footer
        assert re.search(
            r"next check in (1min 0s|0min \d+s)(,| \()( --refresh now| --refresh checks now)",
            footer,
        )

        third = cli([*args, "--refresh"], env)
        assert third.returncode == 0, third.stderr[-2000:]
        assert srv.hits["/version"] == 2
        srv.release()


@pytest.mark.slow
def test_the_window_is_shown_in_status_and_load_asks_now():
    with FaultServer() as srv:
        srv.serve("/version", default=Reply(hang=True))
        first = Catalog(catalog_url=srv.url)
        assert first.query() and first.status().source == "bundled"
        assert srv.hits["/version"] == 1
        second = Catalog(catalog_url=srv.url)
        assert second.query()
        s = second.status()
        assert srv.hits["/version"] == 1
        assert s.source == "bundled" and s.fallback
        assert s.next_retry_in is not None and 0 < s.next_retry_in <= 60
        assert (s.last_error or "").startswith("not asked: the check ")
        srv.release()
        # The server is back: an explicit load asks at once, and the record is gone.
        publish(srv)
        second.load()
        assert second.status().source == "network" and len(second.query()) == 10
        hits = srv.hits["/version"]
        third = Catalog(catalog_url=srv.url, reload_interval=0)
        assert len(third.query()) == 10 and not third.status().fallback
        assert srv.hits["/version"] == hits + 1  # asked: the record is gone


@pytest.mark.slow
def test_a_silent_server_with_a_disk_cache_serves_the_cached_version(tmp_path):
    with FaultServer() as srv:
        publish(srv)
        Catalog(catalog_url=srv.url).load()
        srv.serve("/version", default=Reply(hang=True))
        # The last good check was yesterday: too old to serve the cache without asking.
        cache = DiskCache(srv.url, tmp_path / "cache")
        cache.put_json(
            {**cache.get_json("latest.json"), "checked_at": time.time() - 86400}, "latest.json"
        )
        first = Catalog(catalog_url=srv.url)
        assert len(first.query()) == 10
        assert first.status().source == "disk-cache" and first.status().fallback
        hits = srv.hits["/version"]
        second = Catalog(catalog_url=srv.url)
        assert len(second.query()) == 10 and second.status().source == "disk-cache"
        assert srv.hits["/version"] == hits
        srv.release()


def test_the_window_grows_while_failures_go_on_and_is_capped(tmp_path):
    cache = DiskCache("https://example.invalid/v3", tmp_path)
    windows = []
    for _ in range(8):
        r = unreachable.note(cache, "timed out", reload_interval=4 * 3600)
        windows.append(round(r.retry_at - r.failed_at))
    assert windows == [60, 120, 240, 480, 900, 900, 900, 900]
    # A short reload interval caps the window at a quarter of it.
    assert unreachable.window(5, reload_interval=600) == 150
    unreachable.clear(cache)
    assert unreachable.read(cache) is None
    assert round(unreachable.note(cache, "x", 4 * 3600).retry_at - time.time()) == 60


def test_an_old_or_odd_record_is_not_obeyed(tmp_path):
    cache = DiskCache("https://example.invalid/v3", tmp_path)
    now = time.time()
    for record in (
        {"failures": 1, "failed_at": now - 120, "retry_at": now - 60, "error": ""},  # over
        {"failures": 1, "failed_at": now + 3600, "retry_at": now + 3660, "error": ""},  # future
        {"failures": 1, "failed_at": now, "retry_at": now + 10**9, "error": ""},  # too long
        {"failures": "x", "failed_at": now, "retry_at": now + 60},
    ):
        cache.put_json(record, unreachable.RECORD)
        found = unreachable.read(cache)
        assert found is None or not found.active(), record
    # A streak whose window ended long ago starts again at the first window.
    cache.put_json(
        {"failures": 4, "failed_at": now - 7200, "retry_at": now - 6720, "error": ""},
        unreachable.RECORD,
    )
    again = unreachable.note(cache, "timed out", 4 * 3600)
    assert again.failures == 1
    assert (
        json.loads((cache.dir / unreachable.RECORD).read_bytes().split(b"\n#")[0])["failures"] == 1
    )
    assert not os.path.exists(cache.dir / ".tmp-")


# ------------------------------------------------------------------ close() racing queries


class HttpProvider(AbstractProvider):
    """An online provider whose every answer is a real request to 127.0.0.1."""

    NAME = "vastai"

    def __init__(self, url: str) -> None:
        self.url = url

    def get(self, query_filter=None, balance_resources=True, apply_filter=False):
        data = transport.request_json("GET", f"{self.url}/offers", provider=self.NAME)
        return [item("vastai", price=float(p), instance_name=f"vast{p}") for p in data]


@pytest.mark.slow
def test_close_racing_twenty_querying_threads():
    """20 threads query (offline offers and an online provider over HTTP) while another calls
    `close()` every few milliseconds: no query raises, every answer is whole, and no provider
    is ever reported failing or backed off for a cancellation."""
    with FaultServer() as srv:
        publish(srv)
        srv.serve("/offers", default=Reply(body=b"[0.5, 0.25]"))
        c = Catalog(catalog_url=srv.url)
        c.add_provider(HttpProvider(srv.url))
        assert len(c.query()) == 12
        stop = threading.Event()
        errors: list[BaseException] = []
        seen_errors: list[dict[str, str]] = []
        sizes: list[int] = []
        closes = 0

        def query() -> None:
            # At least 40 queries each, and on until close() was called 100 times (on a fast
            # machine 40 queries could end before close() got going).
            done = 0
            while (done < 40 or closes < 100) and done < 5000:
                done += 1
                try:
                    sizes.append(len(c.query()))
                    s = c.status()
                    if s.online_errors or s.online_retry_in:
                        seen_errors.append(dict(s.online_errors))
                except BaseException as e:  # noqa: BLE001 - what the test counts
                    errors.append(e)

        def closer() -> None:
            nonlocal closes
            while not stop.is_set():
                c.close()
                closes += 1
                time.sleep(0.002)

        workers = [threading.Thread(target=query) for _ in range(20)]
        shutter = threading.Thread(target=closer)
        shutter.start()
        for t in workers:
            t.start()
        for t in workers:
            t.join(120)
        stop.set()
        shutter.join(10)
    assert errors == []
    assert seen_errors == []
    assert len(sizes) >= 800 and set(sizes) == {12}
    assert closes >= 100
    c.close()


class HalfAnswer(AbstractProvider):
    """A `get()` that is a generator: two offers, then an exception."""

    NAME = "vastai"

    def get(self, query_filter=None, balance_resources=True, apply_filter=False):
        yield item("vastai", price=0.1, instance_name="vast-a")
        yield item("vastai", price=0.2, instance_name="vast-b")
        raise KeyError("gpu_name")


def test_a_get_that_raises_midway_contributes_nothing_and_is_reported():
    with FaultServer() as srv:
        publish(srv)
        c = Catalog(catalog_url=srv.url)
        c.add_provider(HalfAnswer())
        offers = c.query()
        assert [o.instance_name for o in offers] == [f"i{p}" for p in range(1, 11)]
        s = c.status()
        assert s.online_errors == {
            "vastai": "BrokenAnswer: its answer broke off after 2 offers "
            "(KeyError: 'gpu_name'); none of them is used"
        }
        assert "vastai" in s.online_retry_in
        c.close()


# ------------------------------------------------------------------------------ fork


def _in_forked_child(work) -> dict:
    """Run `work()` in a child made by `os.fork()`; its JSON answer, sent through a pipe."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never back into pytest
        code = 0
        try:
            os.close(read_end)
            try:
                answer = work()
            except BaseException as e:  # noqa: BLE001 - reported to the parent
                answer = {"raised": f"{type(e).__name__}: {e}"}
            os.write(write_end, json.dumps(answer).encode())
        except BaseException:  # noqa: BLE001
            code = 1
        finally:
            os._exit(code)
    os.close(write_end)
    chunks = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([read_end], [], [], 1)
        if ready:
            chunk = os.read(read_end, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    os.close(read_end)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return json.loads(b"".join(chunks))


@pytest.mark.subprocess
@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")
def test_a_forked_child_queries_online_and_offline_providers():
    """A pre-fork server: the parent loads and queries (its pool has threads, its session a
    kept-alive connection), then forks. The child's online provider, served on 127.0.0.1,
    answers at once, as do the offline offers; the parent goes on answering too."""
    with FaultServer() as srv:
        publish(srv)
        srv.serve("/offers", default=Reply(body=b"[0.5, 0.25]"))
        c = Catalog(catalog_url=srv.url, online_timeout=10)
        c.add_provider(HttpProvider(srv.url))
        assert len(c.query()) == 12 and c.status().online_errors == {}
        before = srv.hits["/offers"]

        def child() -> dict:
            offers = c.query()
            again = c.query(provider="vastai")
            s = c.status()
            return {
                "offers": [o.instance_name for o in offers],
                "again": len(again),
                "errors": s.online_errors,
                "version": s.version,
            }

        answer = _in_forked_child(child)
        assert answer == {
            "offers": ["vast0.5", "vast0.25", *[f"i{p}" for p in range(1, 11)]],
            "again": 2,
            "errors": {},
            "version": "v1",
        }
        assert srv.hits["/offers"] == before + 2  # the child asked the server itself
        assert len(c.query()) == 12 and c.status().online_errors == {}
        c.close()


# ------------------------------------------------------------------ a bounded disk cache


@pytest.mark.slow
def test_thirty_versions_leave_two_archives_and_an_offline_start_works(tmp_path):
    with FaultServer() as srv:
        url = srv.url
        c = Catalog(catalog_url=url)
        for n in range(1, 31):
            publish(srv, f"v{n}")
            c.load()
            assert c.status().version == f"v{n}"
        cache = DiskCache(url, tmp_path / "cache")
        assert sorted(p.name for p in (cache.dir / "archive").iterdir()) == ["v29", "v30"]
        assert srv.hits["/v30/catalog.zip"] == 1
    # The server is gone: a new process starts from what the cache kept.
    offline = Catalog(catalog_url=url, reload_interval=0)
    assert len(offline.query()) == 10
    s = offline.status()
    assert (s.version, s.source, s.fallback) == ("v30", "disk-cache", True)


KILLED_WRITER = """
import os, sys, time
from pathlib import Path
from gpuhunt._internal.load import cache as cache_module

def stuck(src, dst):
    print("written", flush=True)  # the temp file is complete, the rename never comes
    time.sleep(600)

cache_module.os.replace = stuck
cache_module.DiskCache(sys.argv[1], Path(sys.argv[2])).put(
    b"x" * 1_000_000, "archive", "v7", "catalog.zip"
)
"""


def _killed_writer(url: str, root) -> set:
    """A real writer process killed by SIGKILL after writing its temp file, before the rename;
    the temp files in its folder afterwards."""
    env = {**os.environ, "PYTHONPATH": SRC}
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, url, str(root)],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "written"
    finally:
        proc.kill()
        proc.wait(30)
    assert proc.returncode == -signal.SIGKILL
    left = set((DiskCache(url, root).dir / "archive" / "v7").glob(".tmp-*"))
    assert left and all(f.stat().st_size == 1_000_000 + 81 for f in left)  # data and seal
    return left


@pytest.mark.subprocess
def test_temp_files_of_killed_writers_are_removed_at_load_in_any_cache_folder(tmp_path):
    """Two writers killed mid-write under another catalog URL's folder, never written again:
    the one older than the orphan age is removed by the next successful load of any catalog,
    the fresh one (a writer that may still be alive) is kept."""
    root = tmp_path / "cache"
    (old,) = _killed_writer("https://other.example/v3", root)
    fresh = _killed_writer("https://other.example/v3", root) - {old}
    assert len(fresh) == 1
    two_hours_ago = time.time() - 2 * 3600
    os.utime(old, (two_hours_ago, two_hours_ago))
    with FaultServer() as srv:
        publish(srv)
        Catalog(catalog_url=srv.url).load()
    assert not old.exists()
    assert all(f.exists() for f in fresh)


# ------------------------------------------------------------------ consistency on load

CHEAP = csv_bytes([item(price=0.01, instance_name="cheap")])


def test_an_archive_whose_manifest_names_another_version_is_refused(caplog):
    """Pointer v2, manifest v3: refused as `gpuhunt catalog verify` refuses it; v1 keeps
    serving, and nothing is cached as v2."""
    with FaultServer() as srv:
        publish(srv)
        c = Catalog(catalog_url=srv.url)
        assert len(c.query()) == 10
        srv.serve("/version", default=Reply(body=b"v2"))
        srv.serve("/v2/catalog.zip", default=Reply(body=archive(CHEAP, version="v3")))
        c.load()
        s = c.status()
        assert s.version == "v1" and len(c.query()) == 10
        assert "manifest names version 'v3', not 'v2'" in (s.last_error or "")
        cache = DiskCache(srv.url, Path(os.environ["GPUHUNT_CACHE_DIR"]))
        assert not (cache.dir / "archive" / "v2").exists()
        # A new process without the network starts from v1, the last good version.
        srv.serve("/version", default=Reply(500))
        offline = Catalog(catalog_url=srv.url, reload_interval=0)
        assert offline.status().version is None and len(offline.query()) == 10
        assert offline.status().version == "v1"


def test_a_pointer_going_backwards_is_followed_warned_once_and_shown(caplog):
    with FaultServer() as srv:
        publish(srv, "v2")
        c = Catalog(catalog_url=srv.url)
        assert len(c.query()) == 10 and c.status().version_went_back is None
        publish(srv, "v1")
        with caplog.at_level(logging.WARNING):
            c.load()
            c.load()  # unchanged since: no second warning
        s = c.status()
        assert s.version == "v1"
        assert s.version_went_back == "the latest version pointer went back from v2 to v1"
        said = [r.getMessage() for r in caplog.records if "went back" in r.getMessage()]
        assert said == ["Catalog: the latest version pointer went back from v2 to v1; loading v1"]
        # Another process sees it through the disk cache's record of the last pointer, once.
        other = Catalog(catalog_url=srv.url, reload_interval=0)
        assert other.query() and other.status().version_went_back is None  # already v1 there
        publish(srv, "v3")
        c.load()
        assert c.status().version == "v3" and c.status().version_went_back is None


def test_a_pointer_going_backwards_is_seen_by_the_next_process(caplog):
    with FaultServer() as srv:
        publish(srv, "v10")
        Catalog(catalog_url=srv.url).load()
        publish(srv, "v9")  # "v9" sorts after "v10" as text; as a version it is older
        nxt = Catalog(catalog_url=srv.url, reload_interval=0)
        assert len(nxt.query()) == 10
        s = nxt.status()
        assert s.version == "v9"
        assert s.version_went_back == "the latest version pointer went back from v10 to v9"
