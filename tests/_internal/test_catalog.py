import io
import json
import os
import subprocess
import sys
import threading
import zipfile

import numpy as np
import pytest
import requests
import urllib3

import gpuhunt
from gpuhunt import Catalog, CatalogError, UnknownProviderError
from gpuhunt._internal import default, schema
from gpuhunt._internal.errors import CatalogDownloadError
from gpuhunt._internal.formats import columns, csv_table
from gpuhunt._internal.formats.archive import sha256, write_archive
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.formats.csv_table import build_table
from gpuhunt._internal.load import unreachable
from gpuhunt._internal.load.cache import DiskCache
from gpuhunt._internal.load.transport import MockTransport, make_response
from gpuhunt._internal.publish.build import Collected, build_catalog
from gpuhunt._internal.publish.files import write_build
from tests.helpers import (
    folder_transport,
    item,
    publish_archive,
    publish_per_provider,
    serve_directory,
)

AWS = csv_bytes(
    [
        item(price=2.0, instance_name="p4d"),
        item(price=1.0, instance_name="g5", gpu_name="A10G", gpu_memory=24.0),
    ]
)
LAMBDA = csv_bytes(
    [
        item(
            "lambdalabs",
            price=1.5,
            instance_name="gpu_1x_rtx4090",
            gpu_name="RTX4090",
            gpu_memory=24.0,
        )
    ]
)


@pytest.mark.parametrize("layout", ["archive", "per-provider"])
def test_loads_both_layouts_over_http(tmp_path, layout):
    root = tmp_path / "bucket"
    (publish_archive if layout == "archive" else publish_per_provider)(
        root, "20261129-1", {"aws": AWS, "lambdalabs": LAMBDA}
    )
    with serve_directory(root) as (url, requests):
        c = Catalog(catalog_url=url)
        offers = c.query()
        assert [(i.provider, i.instance_name, i.price) for i in offers] == [
            ("aws", "g5", 1.0),
            ("lambdalabs", "gpu_1x_rtx4090", 1.5),
            ("aws", "p4d", 2.0),
        ]
        s = c.status()
        assert (
            s.source == "network"
            and s.version == "20261129-1"
            and s.offers == {"aws": 2, "lambdalabs": 1}
        )


def test_loads_from_file_url_and_directory(tmp_path, monkeypatch):
    publish_archive(tmp_path, "v1", {"aws": AWS})
    assert len(Catalog(catalog_url=f"file://{tmp_path}").query()) == 2
    assert len(Catalog(catalog_url=str(tmp_path)).query(provider="aws")) == 2
    csv_dir = tmp_path / "csvs"
    csv_dir.mkdir()
    (csv_dir / "lambdalabs.csv").write_bytes(LAMBDA)
    monkeypatch.setenv("GPUHUNT_CATALOG_DIR", str(csv_dir))
    offers = Catalog().query()
    assert [i.instance_name for i in offers] == ["gpu_1x_rtx4090"]


def test_reuses_loaded_catalog_until_reload_interval(tmp_path):
    root = tmp_path / "b"
    publish_archive(root, "v1", {"aws": AWS})
    with serve_directory(root) as (url, requests):
        c = Catalog(catalog_url=url)
        for _ in range(5):
            c.query()
        assert requests.count("/version") == 1 and requests.count("/v1/catalog.zip") == 1
        publish_archive(root, "v2", {"aws": csv_bytes([item(price=9.0)])})
        c.query()
        assert c.status().version == "v1"  # still fresh: 4 hours by default
        c.reload_interval = 0
        c.query()  # stale: reloads in the background, this query is served from v1
        for t in threading.enumerate():
            if t.name == "gpuhunt-reload":
                t.join(5)
        assert c.status().version == "v2" and [i.price for i in c.query()] == [9.0]


@pytest.mark.subprocess
def test_disk_cache_serves_a_new_process_without_network(tmp_path):
    root = tmp_path / "b"
    publish_archive(root, "v7", {"aws": AWS})
    with serve_directory(root) as (url, _):
        Catalog(catalog_url=url).load()
    # The server is gone: a second process must start from the disk cache (after trying the
    # network: with no reload interval, the cache is never fresh enough to skip that).
    code = (
        f"import gpuhunt; c = gpuhunt.Catalog(catalog_url={url!r}, timeout=(1, 1));"
        "o = c.query(); s = c.status(); print(len(o), s.source, s.version, bool(s.last_error))"
    )
    env = {**os.environ, "GPUHUNT_RELOAD_INTERVAL": "0"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.stdout.split() == ["2", "disk-cache", "v7", "True"], out.stderr


def test_falls_back_to_bundled_snapshot(tmp_path, caplog):
    c = Catalog(catalog_url="http://127.0.0.1:9/nothing", timeout=(1, 1), retries=0)
    offers = c.query()
    s = c.status()
    assert s.source == "bundled" and len(offers) > 0 and s.last_error
    assert "bundled with gpuhunt" in caplog.text and "days ago" in caplog.text


def test_pinned_version_is_exact_or_an_error(tmp_path):
    root = tmp_path / "b"
    publish_archive(root, "v1", {"aws": AWS})
    publish_archive(root, "v2", {"aws": csv_bytes([item(price=5.0)])})
    with serve_directory(root) as (url, _):
        c = Catalog(catalog_url=url, auto_reload=False)
        c.load(version="v1")
        assert [i.price for i in c.query()] == [1.0, 2.0]
        with pytest.raises(CatalogError):
            c.load(version="v9")
        assert c.status().version == "v1"  # the failed pin changed nothing


def test_unknown_provider_is_a_clear_error():
    with pytest.raises(UnknownProviderError, match="Unknown provider: 'nosuch'"):
        Catalog(catalog_url="file:///nonexistent").query(provider="nosuch")
    assert issubclass(UnknownProviderError, ValueError)


def test_gpu_name_aliases_in_queries(tmp_path):
    publish_archive(tmp_path, "v1", {"aws": AWS, "lambdalabs": LAMBDA})
    c = Catalog(catalog_url=str(tmp_path))
    for spelling in ["RTX 4090", "NVIDIA GeForce RTX 4090", "4090", "rtx4090"]:
        assert [i.instance_name for i in c.query(gpu_name=spelling)] == ["gpu_1x_rtx4090"]
    assert len(c.query(gpu_name=["A10G", "A100-SXM4-80GB"])) == 2


def test_online_provider_merged_and_failures_isolated(tmp_path):
    from gpuhunt.providers.base import AbstractProvider

    class Good(AbstractProvider):
        NAME = "vastai"

        def get(self, query_filter=None, balance_resources=True, apply_filter=False):
            return [item("vastai", price=3.0), item("vastai", price=0.5)]  # score order kept

    class Broken(AbstractProvider):
        NAME = "vultr"

        def get(self, query_filter=None, balance_resources=True, apply_filter=False):
            raise RuntimeError("boom")

    publish_archive(tmp_path, "v1", {"aws": AWS})
    c = Catalog(catalog_url=str(tmp_path))
    c.add_provider(Good())
    c.add_provider(Broken())
    prices = [(i.provider, i.price) for i in c.query()]
    assert prices == [("aws", 1.0), ("aws", 2.0), ("vastai", 3.0), ("vastai", 0.5)]
    assert "boom" in c.status().online_errors["vultr"]


def test_default_catalog_and_query_honour_env(tmp_path, monkeypatch):
    publish_archive(tmp_path, "v1", {"aws": AWS})
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", str(tmp_path))
    monkeypatch.setattr(default, "_catalog", None)
    for var in ["VAST_API_KEY"]:
        monkeypatch.delenv(var, raising=False)
    try:
        c = gpuhunt.default_catalog()
        assert c is gpuhunt.default_catalog()
        offers = gpuhunt.query(provider="aws")
        assert [i.instance_name for i in offers] == ["g5", "p4d"]
    finally:
        default._catalog = None


def test_plain_http_refused_unless_loopback_or_allowed(monkeypatch):
    from gpuhunt._internal.load.settings import Settings
    from gpuhunt._internal.load.sources import check_url_allowed

    check_url_allowed("http://127.0.0.1:8000/x")
    with pytest.raises(CatalogError, match="GPUHUNT_ALLOW_HTTP"):
        check_url_allowed("http://example.com/catalog")
    monkeypatch.setenv("GPUHUNT_ALLOW_HTTP", "1")
    check_url_allowed("http://example.com/catalog", allow_http=Settings.from_env().allow_http)
    with pytest.raises(CatalogError, match="Refusing plain-http"):  # the catalog's own setting
        Catalog(catalog_url="http://example.com/c", settings=Settings()).load(version="v1")


def test_reload_of_an_unchanged_version_downloads_and_parses_nothing(tmp_path):
    root = tmp_path / "b"
    publish_archive(root, "v1", {"aws": AWS})
    with serve_directory(root) as (url, requests):
        c = Catalog(catalog_url=url)
        c.load()
        table = c._loaded.table
        c.load()
        assert requests.count("/version") == 2 and requests.count("/v1/catalog.zip") == 1
        assert c._loaded.table is table  # same structures, not rebuilt


def test_hanging_online_provider_is_cut_off_at_the_budget(tmp_path):
    import time

    from gpuhunt.providers.base import AbstractProvider

    release = threading.Event()

    class Hangs(AbstractProvider):
        NAME = "vultr"

        def get(self, query_filter=None, balance_resources=True, apply_filter=False):
            release.wait(30)
            return [item("vultr", price=0.01)]

    class Fine(AbstractProvider):
        NAME = "vastai"

        def get(self, query_filter=None, balance_resources=True, apply_filter=False):
            return [item("vastai", price=0.2)]

    publish_archive(tmp_path, "v1", {"aws": AWS})
    c = Catalog(catalog_url=str(tmp_path), online_timeout=0.5)
    c.add_provider(Hangs())
    c.add_provider(Fine())
    try:
        t = time.monotonic()
        offers = c.query()
        assert time.monotonic() - t < 2
        assert [i.provider for i in offers] == ["vastai", "aws", "aws"]
        assert "timed out" in c.status().online_errors["vultr"]
    finally:
        release.set()


def test_online_provider_asked_for_but_not_added_is_reported(tmp_path):
    publish_archive(tmp_path, "v1", {"aws": AWS})
    c = Catalog(catalog_url=str(tmp_path))
    assert [i.provider for i in c.query(provider=["aws", "vastai"])] == ["aws", "aws"]
    assert "not added" in c.status().online_errors["vastai"]


def _pipeline_bucket(root, csvs):
    collected = {p: Collected(d, "2026-11-29T00:00:00Z") for p, d in csvs.items()}
    build = build_catalog("20261129-1", collected, None, providers=list(csvs))
    write_build(build, root)


@pytest.mark.parametrize("layout", ["archive", "per-provider"])
def test_a_pipeline_built_catalog_loads_from_its_column_files(tmp_path, layout, monkeypatch):
    """Published column files are loaded as they are: no CSV is parsed."""
    root = tmp_path / "bucket"
    _pipeline_bucket(root, {"aws": AWS, "lambdalabs": LAMBDA})
    if layout == "per-provider":
        (root / "version").unlink()

    def no_parsing(*a, **kw):
        raise AssertionError("the CSV was parsed")

    monkeypatch.setattr(csv_table, "build_table", no_parsing)  # imported where a CSV is parsed
    with serve_directory(root) as (url, _):
        c = Catalog(catalog_url=url)
        assert [(i.provider, i.instance_name, i.price) for i in c.query()] == [
            ("aws", "g5", 1.0),
            ("lambdalabs", "gpu_1x_rtx4090", 1.5),
            ("aws", "p4d", 2.0),
        ]
        assert c.status().offers == {"aws": 2, "lambdalabs": 1}
        assert c.query(gpu_name="RTX 4090")[0].gpu_memory == 24.0


def test_a_column_file_that_does_not_fit_its_csv_is_not_used(tmp_path, caplog):
    """A column file built from other data (a publisher's bug) loses to the CSV it sits by."""
    root = tmp_path / "bucket"
    other = csv_bytes([item(price=9.0, instance_name="wrong")])
    wrong = columns.encode(build_table(other.decode(), provider="aws"), sha256(other))
    manifest = {
        "format_version": 1,
        "version": "v1",
        "providers": {"aws": {"sha256": sha256(AWS), "columns_sha256": sha256(wrong)}},
    }
    (root / "v1").mkdir(parents=True)
    (root / "v1" / "catalog.zip").write_bytes(write_archive({"aws": AWS}, manifest, {"aws": wrong}))
    (root / "version").write_text("v1")
    with serve_directory(root) as (url, _):
        c = Catalog(catalog_url=url)
        assert [i.instance_name for i in c.query()] == ["g5", "p4d"]
    assert "Not using the aws column file (it was built from another CSV)" in caplog.text


def test_a_parsed_csv_is_cached_as_a_column_file_for_the_next_process(tmp_path, monkeypatch):
    """CSV-only archives (as gpuhunt 0.1.x publishes) are parsed once per CSV, not per start."""
    root = tmp_path / "bucket"
    publish_per_provider(root, "v1", {"aws": AWS, "lambdalabs": LAMBDA})
    parsed = []
    real = build_table

    def counting(text, *, provider, **kw):
        parsed.append(provider)
        return real(text, provider=provider, **kw)

    monkeypatch.setattr(csv_table, "build_table", counting)
    from gpuhunt._internal.formats import csv_stream

    streamed = csv_stream.build_table_streamed

    def counting_streamed(pieces, *, provider, **kw):  # parsed as inflated (issue 50)
        parsed.append(provider)
        return streamed(pieces, provider=provider, **kw)

    monkeypatch.setattr(csv_stream, "build_table_streamed", counting_streamed)
    with serve_directory(root) as (url, _):
        first = Catalog(catalog_url=url)
        first.load()
        assert sorted(parsed) == ["aws", "lambdalabs"]
        again = Catalog(catalog_url=url)  # a new process would start like this
        again.load()
        assert sorted(parsed) == ["aws", "lambdalabs"]  # nothing parsed the second time
        assert list(again.query()) == list(first.query())
        parsed_dir = next((tmp_path / "cache").iterdir()) / "parsed"
        assert len(list(parsed_dir.iterdir())) == 2
        # A new version of one provider: its old table file is pruned, the other is reused.
        publish_per_provider(root, "v2", {"aws": csv_bytes([item(price=0.5)])})
        third = Catalog(catalog_url=url)
        third.load()
        assert sorted(parsed) == ["aws", "aws", "lambdalabs"]
        assert third.query()[0].price == 0.5
        assert len(list(parsed_dir.iterdir())) == 2
        # A damaged cached table is ignored and replaced.
        for f in parsed_dir.iterdir():
            f.write_bytes(b"GPUHUNT-COLUMNS\n garbage")
        fourth = Catalog(catalog_url=url)
        fourth.load()
        assert list(fourth.query()) == list(third.query())


def test_catalog_owns_its_online_threads_and_closes_them(tmp_path):
    from gpuhunt.providers.base import AbstractProvider

    class Live(AbstractProvider):
        NAME = "vastai"

        def get(self, query_filter=None, balance_resources=True, apply_filter=False):
            return [item("vastai", price=0.5)]

    publish_archive(tmp_path, "v1", {"aws": AWS})
    with Catalog(catalog_url=str(tmp_path)) as c:
        c.add_provider(Live())
        assert c.providers is c.online_providers  # the 0.1.x name still works
        assert [i.provider for i in c.query()] == ["vastai", "aws", "aws"]
        executor = c._executor
        assert executor is not None
    assert c._executor is None and executor._shutdown
    assert [i.provider for i in c.query()] == ["vastai", "aws", "aws"]  # usable after close()
    c.close()


def test_settings_are_read_once_when_the_catalog_is_made(tmp_path, monkeypatch):
    publish_archive(tmp_path / "a", "v1", {"aws": AWS})
    publish_archive(tmp_path / "b", "v1", {"lambdalabs": LAMBDA})
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", str(tmp_path / "a"))
    monkeypatch.setenv("GPUHUNT_RELOAD_INTERVAL", "60")
    c = Catalog()
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", str(tmp_path / "b"))
    assert c.catalog_url == str(tmp_path / "a") and c.reload_interval == 60.0
    assert c.status().url == str(tmp_path / "a")
    monkeypatch.setenv("GPUHUNT_RELOAD_INTERVAL", "soon")  # warned about, the default used
    assert Catalog().reload_interval == 4 * 3600


@pytest.mark.subprocess
def test_importing_reads_no_settings():
    """Settings are read when a catalog is made, never at `import`: a malformed one is not
    even warned about by importing."""
    code = (
        "import importlib, pkgutil, gpuhunt._internal as p\n"
        "for m in pkgutil.walk_packages(p.__path__, 'gpuhunt._internal.'):\n"
        "    importlib.import_module(m.name)\n"
    )
    env = {**__import__("os").environ, "GPUHUNT_RELOAD_INTERVAL": "x", "GPUHUNT_READ_TIMEOUT": "y"}
    env.update(GPUHUNT_ONLINE_TIMEOUT="z", GPUHUNT_LIVE_CACHE_TTL="t", GPUHUNT_CONNECT_TIMEOUT="c")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "GPUHUNT_" not in out.stderr


def test_a_provider_bug_is_not_skipped_as_a_missing_credential(monkeypatch):
    from gpuhunt._internal import registry

    class Buggy:
        @classmethod
        def from_env(cls):
            raise AttributeError("'NoneType' object has no attribute 'split'")

    real = registry.provider_class
    monkeypatch.setattr(registry, "provider_class", lambda n: Buggy if n == "vultr" else real(n))
    monkeypatch.setattr(default, "_catalog", None)
    try:
        with pytest.raises(AttributeError, match="split"):
            gpuhunt.default_catalog()
    finally:
        default._catalog = None


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize("layout", ["archive", "per-provider"])
def test_a_new_process_within_the_reload_interval_asks_nothing(tmp_path, layout, capsys):
    """The disk cache holds across processes for the reload interval: a CLI run seconds after
    another answers without a request, and `--refresh` asks anyway."""
    from gpuhunt._internal.cli import main

    root = tmp_path / "bucket"
    publish = publish_archive if layout == "archive" else publish_per_provider
    publish(root, "v1", {"aws": AWS, "lambdalabs": LAMBDA})
    with serve_directory(root) as (url, requests):
        first = Catalog(catalog_url=url)
        first.load()
        asked = len(requests)
        assert asked > 0
        second = Catalog(catalog_url=url)  # as a new process starts
        assert second.query() == first.query()
        s = second.status()
        assert (s.source, s.version, s.last_error) == ("disk-cache", "v1", None)
        assert len(requests) == asked
        # A CLI run in this process and one in a process of its own: no request either.
        assert main(["query", "--catalog-url", url, "--json"]) == 0
        assert len(json.loads(capsys.readouterr().out)) == 3
        out = subprocess.run(
            [sys.executable, "-m", "gpuhunt", "query", "--catalog-url", url],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
        assert "3 of 3 offers" in out.stdout and "--refresh" in out.stdout
        assert len(requests) == asked
        # A new version is not seen until the interval has passed, or with --refresh.
        publish(root, "v2", {"aws": csv_bytes([item(price=0.5)])})
        assert Catalog(catalog_url=url).query()[0].price == 1.0
        assert main(["query", "--catalog-url", url, "--refresh", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)[0]["price"] == 0.5
        assert len(requests) > asked
        asked = len(requests)
        # The refresh was a successful check too: the next process takes v2 from the cache.
        assert Catalog(catalog_url=url).query()[0].price == 0.5
        assert len(requests) == asked
        # Past the interval, or with an explicit load(), the network is asked again.
        Catalog(catalog_url=url, reload_interval=0).query()
        assert len(requests) > asked
        asked = len(requests)
        Catalog(catalog_url=url).load()
        assert len(requests) > asked


def test_a_catalog_from_a_fresh_cache_reloads_when_the_check_is_due(tmp_path, monkeypatch):
    """The reload interval counts from the network check, not from this process's start."""
    from gpuhunt._internal.load import sources

    root = tmp_path / "bucket"
    publish_archive(root, "v1", {"aws": AWS})
    with serve_directory(root) as (url, requests):
        Catalog(catalog_url=url).load()
        asked = len(requests)
        later = sources.time.time() + 3000
        monkeypatch.setattr(sources.time, "time", lambda: later)
        c = Catalog(catalog_url=url, reload_interval=3600)
        c.query()
        assert len(requests) == asked
        age = c.status().age_seconds
        assert age is not None and age >= 3000
        # A pinned version is not the latest: loading one marks nothing fresh.
        publish_archive(root, "v0", {"aws": csv_bytes([item(price=7.0)])}, latest=False)
        Catalog(catalog_url=url).load(version="v0")
        assert Catalog(catalog_url=url).query()[-1].price == 2.0  # still v1, from the cache


def test_a_fresh_cache_that_lost_its_archive_asks_the_network(tmp_path):
    root = tmp_path / "bucket"
    publish_archive(root, "v1", {"aws": AWS})
    with serve_directory(root) as (url, requests):
        Catalog(catalog_url=url).load()
        asked = len(requests)
        for f in (tmp_path / "cache").rglob("catalog.zip"):
            f.unlink()
        c = Catalog(catalog_url=url)
        assert len(c.query()) == 2 and c.status().source == "network"
        assert len(requests) > asked


@pytest.mark.parametrize("layout", ["archive", "per-provider"])
def test_a_load_keeps_no_downloaded_bytes(tmp_path, layout):
    """What a download fetched (every CSV and column file) is handed to the load and dropped:
    a server holding it until the next reload would carry the whole catalog twice."""
    root = tmp_path / "bucket"
    publish = publish_archive if layout == "archive" else publish_per_provider
    publish(root, "v1", {"aws": AWS, "lambdalabs": LAMBDA})
    with serve_directory(root) as (url, _requests):
        catalog = Catalog(catalog_url=url)
        assert len(catalog.query()) == 3
        job = catalog._loader.download.current
        assert job is not None and job.taken
        assert job.raw is None


# ------------------------------------------------- the context: transport, clock, errors


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_swapped_transport_carries_every_catalog_request(tmp_path):
    """`Catalog(transport=...)`: the load asks the transport, not the network (no server, no
    patched module global)."""
    publish_archive(tmp_path / "bucket", "20261129-1", {"aws": AWS})
    mock = folder_transport(tmp_path / "bucket")
    c = Catalog(catalog_url="https://catalog.test/v3", transport=mock)
    assert [o.instance_name for o in c.query()] == ["g5", "p4d"]
    assert mock.paths == ["/v3/version", "/v3/20261129-1/catalog.zip"]
    assert {r.headers["User-Agent"] for r in mock.requests} == {f"gpuhunt/{gpuhunt.__version__}"}
    assert c.status().source == "network"
    with pytest.raises(TypeError, match="transport must be a requests.adapters.BaseAdapter"):
        Catalog(transport=object())  # type: ignore[arg-type]


def test_download_errors_carry_the_request_and_the_response(tmp_path):
    def answer(request):
        return make_response(500 if request.path_url.endswith("catalog.zip") else 200, b"x")

    c = Catalog(catalog_url="https://catalog.test/v3", transport=MockTransport(answer))
    with pytest.raises(CatalogDownloadError) as got:
        c.load(version="20261129-1")
    assert got.value.response.status_code == 500
    assert got.value.request.url == "https://catalog.test/v3/20261129-1/catalog.zip"

    def down(request):
        raise requests.ConnectionError("refused")

    c = Catalog(catalog_url="https://catalog.test/v3", transport=MockTransport(down))
    with pytest.raises(CatalogDownloadError) as got:
        c.load(version="20261129-1")
    assert got.value.response is None  # no answer; the request is the one sent
    assert got.value.request.url == "https://catalog.test/v3/20261129-1/catalog.zip"


def test_the_loaders_backoff_runs_on_the_catalogs_clock(tmp_path):
    """After a load that got no answer the next try waits 60 s (the unreachable window, longer
    than the 30 s reload backoff), then 120 s: on the catalog's clock, so moving a fake clock
    is enough (no sleeping, no patched `time.monotonic`)."""
    publish_archive(tmp_path / "bucket", "20261129-1", {"aws": AWS})
    up = folder_transport(tmp_path / "bucket")
    state = {"up": False}

    def answer(request):
        if not state["up"]:
            raise requests.ConnectionError("down")
        return up.send(request)

    mock = MockTransport(answer)
    clock = _Clock()
    c = Catalog(
        catalog_url="https://catalog.test/v3", transport=mock, clock=clock, reload_interval=3600
    )
    assert [o.instance_name for o in c.query()] != []  # the bundled snapshot
    assert (c.status().fallback, c.status().next_retry_in) == (True, 60.0)
    asked = len(mock.requests)
    clock.now += 59
    c.query()
    assert len(mock.requests) == asked  # within the backoff: nothing asked
    assert c.status().next_retry_in == 1.0
    clock.now += 1
    c.load()  # a second failure: the wait doubles
    assert c.status().next_retry_in == 120.0
    state["up"] = True
    clock.now += 120
    c.load()
    s = c.status()
    assert (s.source, s.next_retry_in, s.age_seconds) == ("network", None, 0.0)
    clock.now += 125
    assert c.status().age_seconds == 125.0


def test_close_stops_a_download_in_progress_without_backing_off(tmp_path):
    """A catalog download dripping in one byte at a time: `close()` stops it at its next read
    (the load falls back, as it would for any failed download), waits for its thread, and
    counts no failure of the server (no backoff, nothing recorded for other processes)."""
    publish_archive(tmp_path / "bucket", "20261129-1", {"aws": AWS})
    zip_bytes = (tmp_path / "bucket" / "20261129-1" / "catalog.zip").read_bytes()
    dripping = threading.Event()

    class Drip(io.RawIOBase):
        def readable(self):
            return True

        def readinto(self, buffer):
            dripping.set()
            threading.Event().wait(0.01)  # one byte per read, far slower than a real server
            buffer[0] = zip_bytes[0]
            return 1

    def answer(request):
        if request.path_url.endswith("/version"):
            return make_response(200, b"20261129-1")
        response = make_response(200, b"", {"Content-Length": str(len(zip_bytes))})
        response.raw = urllib3.HTTPResponse(
            body=io.BufferedReader(Drip()), preload_content=False, status=200
        )
        return response

    c = Catalog(
        catalog_url="https://catalog.test/v3", transport=MockTransport(answer), load_timeout=600
    )
    loading = threading.Thread(target=c.load)
    loading.start()
    assert dripping.wait(60)
    c.close()
    loading.join(60)
    assert not loading.is_alive()
    assert [t.name for t in c._context.threads.alive()] == []
    s = c.status()
    assert "stopped (the catalog was closed)" in (s.last_error or "")
    assert (s.source, s.next_retry_in) == ("bundled", None)
    cache = DiskCache("https://catalog.test/v3", c._settings.cache_dir)
    assert unreachable.read(cache) is None


# ------------------------------------------------ provider_data is the provider's (issue 46)


def test_a_custom_online_providers_provider_data_comes_back_unchanged(tmp_path):
    # dstack's own online providers (a Vast.ai one returning its bid) copy provider_data into
    # their backend_data: the library adds nothing to it, and says when it read the offer in
    # the offer's own `observed_at`.
    from gpuhunt.providers.base import AbstractProvider

    data = {"min_bid": 0.45}

    class Custom(AbstractProvider):
        NAME = "vastai"

        def get(self, query_filter=None, balance_resources=True, apply_filter=False):
            return [item("vastai", price=0.5, provider_data=data)]

    publish_archive(tmp_path, "v1", {"aws": AWS})
    c = Catalog(catalog_url=str(tmp_path))
    c.add_provider(Custom())
    (got,) = c.query(provider="vastai")
    assert got.provider_data == {"min_bid": 0.45} and data == {"min_bid": 0.45}
    assert json.dumps(got.provider_data) == json.dumps(data)
    assert got.observed_at is not None


def test_a_built_catalog_reads_back_the_providers_provider_data(tmp_path):
    import datetime as dt

    from gpuhunt._internal.formats.csv import write_csv_file
    from tests._internal.pipeline import build

    folder = tmp_path / "in"
    folder.mkdir()
    write_csv_file([item("lambdalabs", provider_data={"k": 1})], str(folder / "lambdalabs.csv"))
    at = dt.datetime(2026, 11, 29, 5, tzinfo=dt.timezone.utc)
    os.utime(folder / "lambdalabs.csv", (at.timestamp(), at.timestamp()))
    build(folder, "20261129-1", tmp_path / "out")
    c = Catalog(catalog_url=str(tmp_path / "out"), auto_reload=False)
    c.load()
    (got,) = c.query(provider="lambdalabs")
    assert got.provider_data == {"k": 1}
    assert got.observed_at == at
    # The published CSV: 0.1.x's fourteen columns first, provider_data as the provider wrote it.
    with zipfile.ZipFile(tmp_path / "out" / "20261129-1" / "catalog.zip") as z:
        published = z.read("lambdalabs.csv").decode().splitlines()
    header = published[0].split(",")
    assert header[:14] == schema.CONTRACT_FIELDS and "observed_at" in header[14:]
    assert '"{""k"": 1}"' in published[1]


PROVIDER = "lambdalabs"  # an offline provider: a folder's CSV of it is read
OLD_ROW_DATA = {
    "vm_specs": {"cpu_cores": 13},
    "available": True,
    "observed_at": "2026-12-02T08:00:00Z",
    "currency": "EUR",
    "fx_rate": 1.17,
}


def _old_csv() -> bytes:
    """A catalog CSV as published before the own columns, with the library's keys inside."""
    cell = json.dumps(OLD_ROW_DATA, sort_keys=True).replace('"', '""')
    rows = [
        ",".join(schema.CONTRACT_FIELDS),
        f'vm-1,us-east,2.5,13,224.0,1,MI300X,192.0,False,,amd,,x86,"{cell}"',
        'vm-2,us-east,3.5,13,224.0,1,MI300X,192.0,False,,amd,,x86,"{""vm_specs"": {}}"',
    ]
    return ("\r\n".join(rows) + "\r\n").encode()


@pytest.mark.parametrize("reader", ["rows", "table", "catalog"])
def test_an_old_catalogs_keys_are_moved_out_of_provider_data(tmp_path, reader):
    import datetime as dt

    from gpuhunt._internal.formats.csv import load
    from gpuhunt._internal.query import answers

    data = _old_csv()
    if reader == "rows":
        got = list(load(io.StringIO(data.decode()), provider="hotaisle"))
    elif reader == "table":
        table = build_table(data, provider=PROVIDER)
        got = answers.items(table, np.arange(len(table)))
    else:
        (tmp_path / f"{PROVIDER}.csv").write_bytes(data)
        from gpuhunt._internal.load.settings import Settings

        c = Catalog(settings=Settings(catalog_dir=str(tmp_path)), auto_reload=False)
        c.load()
        got = c.query(provider=PROVIDER)
    first, second = sorted(got, key=lambda i: i.price)
    assert first.provider_data == {"vm_specs": {"cpu_cores": 13}}
    assert first.available is True and (first.currency, first.fx_rate) == ("EUR", 1.17)
    assert first.observed_at == dt.datetime(2026, 12, 2, 8, tzinfo=dt.timezone.utc)
    assert second.provider_data == {"vm_specs": {}} and second.available is None
