"""`gpuhunt serve`'s application through a real socket (uvicorn on 127.0.0.1, `requests`), over a
generated catalog: the offers equal `gpuhunt query --json`'s for the same options; explain,
status and the OpenAPI document; bad input answered 4xx with the server still up; ETag and 304;
405 for other methods."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from urllib.parse import urlencode

import pytest
import requests

from gpuhunt._internal import cli, observed
from gpuhunt._internal.serve import parameters

# (query string pairs, the same options on gpuhunt query's command line)
OPTION_SETS = [
    ([], []),
    ([("gpu", "H100")], ["--gpu", "H100"]),
    ([("gpu", "A100 80GB"), ("max_price", "20")], ["--gpu", "A100 80GB", "--max-price", "20"]),
    (
        [("provider", "aws"), ("provider", "gcp"), ("min_gpu_count", "2"), ("spot", "false")],
        ["--provider", "aws", "--provider", "gcp", "--min-gpu-count", "2", "--on-demand"],
    ),
    ([("country", "DE"), ("area", "europe")], ["--country", "DE", "--area", "europe"]),
    ([("location", "us-*"), ("spot", "true")], ["--location", "us-*", "--spot"]),
    (
        [("min_compute_capability", "8.0"), ("sort", "price-per-gpu")],
        ["--min-compute-capability", "8.0", "--sort", "price-per-gpu"],
    ),
    (
        [("min_gpu_memory", "40"), ("sort", "gpu-memory")],
        ["--min-gpu-memory", "40", "--sort", "gpu-memory"],
    ),
    ([("gpu_vendor", "amd")], ["--gpu-vendor", "amd"]),
    ([("sort", "tflops-per-dollar")], ["--sort", "tflops-per-dollar"]),
    ([("max_gpu_count", "0"), ("min_cpu", "32")], ["--max-gpu-count", "0", "--min-cpu", "32"]),
]


def cli_json(served, options: list[str]) -> list[dict]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = cli.main(["query", "--catalog-url", served.catalog.catalog_url, "--json", *options])
    assert code == 0
    return json.loads(out.getvalue())


def get(served, path: str, pairs=(), **kw) -> requests.Response:
    return requests.get(f"{served.url}{path}?{urlencode(list(pairs))}", timeout=30, **kw)


@pytest.mark.parametrize(("pairs", "options"), OPTION_SETS)
def test_offers_are_gpuhunt_query_json_rows(served, pairs, options):
    expected = cli_json(served, options)
    r = get(served, "/v1/offers", [*pairs, ("limit", "10000")])
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["offers"] == expected
    assert body["total"] == len(expected)
    assert body["catalog"] == {"version": "20261129-1", "source": "directory"}
    # The default limit: the first 100 of the same answer; total counts every match.
    first = get(served, "/v1/offers", pairs).json()
    assert first["offers"] == expected[:100] and first["total"] == len(expected)
    if pairs == []:
        assert len(expected) > 100


def test_a_big_answer_is_streamed_and_equal_to_the_built_one(served):
    from gpuhunt._internal.serve.answers import Service
    from gpuhunt._internal.serve.app import dumps

    for pairs in ([("limit", "5000")], [("limit", "5000"), ("all_regions", "false")]):
        r = get(served, "/v1/offers", pairs)
        assert r.headers.get("transfer-encoding") == "chunked" and "content-length" not in r.headers
        built = Service(served.catalog)._built_offers(parameters.parse(pairs))
        assert r.content == dumps(built.body) and r.headers["ETag"] == built.etag
        assert (
            get(served, "/v1/offers", pairs, headers={"If-None-Match": built.etag}).status_code
            == 304
        )
    small = get(served, "/v1/offers", [("limit", "100")])
    assert small.headers["content-length"] == str(len(small.content))


def test_all_regions_false_is_the_table_one_row_per_offer(served):
    from gpuhunt import collapse_regions

    every = cli_json(served, ["--gpu", "H100"])
    body = get(
        served, "/v1/offers", [("gpu", "H100"), ("all_regions", "false"), ("limit", "10000")]
    ).json()
    with served.catalog as c:
        collapsed = collapse_regions(c.query(gpu_name="H100"))
    assert body["total"] == len(collapsed) < len(every)
    rows = body["offers"]
    assert [(o["provider"], o["instance_name"], o["location"], o["price"]) for o in rows] == [
        (c.offer.provider, c.offer.instance_name, c.offer.location, c.offer.price)
        for c in collapsed
    ]
    assert [o["locations"] for o in rows] == [c.locations for c in collapsed]
    keys = set(every[0])
    assert all(set(o) == keys | {"locations"} for o in rows)


def test_explain_status_and_the_openapi_document(served):
    r = get(served, "/v1/explain", [("gpu", "H100"), ("max_price", "1")])
    assert r.status_code == 200
    e = r.json()["explanation"]
    assert e["offers"] == 4000
    assert [s["filter"] for s in e["steps"]] == ["gpu_name", "max_price", "include"]
    assert e["emptied_by"]["filter"] == "max_price" and e["left"] == 0
    assert e["near_misses"] and set(e["near_misses"][0]["offer"]) >= {"provider", "price"}
    with served.catalog as c:
        assert e["lines"] == c.explain(gpu_name=["H100"], max_price=1.0, include=[]).lines()

    status = get(served, "/v1/status").json()
    assert status["version"] == "20261129-1"
    assert sum(status["offers"].values()) == 4000
    assert r.headers["ETag"] and get(served, "/v1/status").headers["ETag"]

    doc = get(served, "/openapi.json").json()
    assert doc["openapi"].startswith("3.")
    assert set(doc["paths"]) == {
        "/v1/offers",
        "/v1/explain",
        "/v1/history",
        "/v1/status",
        "/openapi.json",
    }
    history = {p["name"] for p in doc["paths"]["/v1/history"]["get"]["parameters"]}
    assert history == set(parameters.history_table())
    assert set(doc["components"]["parameters"]) == set(parameters.table())
    offer = doc["components"]["schemas"]["Offer"]["properties"]
    assert set(cli_json(served, ["--gpu", "H100"])[0]) | {"locations"} == set(offer)


BAD = [
    # (pairs, status, the parameter the error names)
    ([("min_gpu_count", "-1")], 422, "min_gpu_count"),
    ([("min_gpu_count", "two")], 400, "min_gpu_count"),
    ([("max_price", "cheap")], 400, "max_price"),
    ([("max_price", "nan")], 422, "max_price"),
    ([("spot", "maybe")], 400, "spot"),
    ([("colour", "red")], 400, "colour"),
    ([("limit", "10001")], 422, "limit"),
    ([("limit", "0")], 422, "limit"),
    ([("gpu", "H100\x00")], 400, "gpu"),
    ([("location", "x" * 1001)], 400, "location"),
    ([("gpu", "<script>alert(1)</script>")], 400, "gpu"),
    ([("gpu", "NoSuchGPU")], 422, "gpu"),
    ([("provider", "nosuchcloud")], 422, "provider"),
    ([("min_price", "5"), ("max_price", "1")], 422, "min_price"),
    ([("min_cuda", "twelve")], 422, "min_cuda"),
    ([("sort", "cheapest")], 400, "sort"),
    ([("max_price", "1"), ("max_price", "2")], 400, "max_price"),
    ([("gpu", "")], 400, "gpu"),
    ([("provider", "vastai")], 422, "provider"),  # online: this server answers from the catalog
]


@pytest.mark.parametrize(("pairs", "status", "parameter"), BAD)
def test_bad_parameters_are_4xx_json_naming_the_parameter(served, pairs, status, parameter):
    for path in ("/v1/offers", "/v1/explain"):
        r = get(served, path, pairs)
        if path == "/v1/explain" and parameter == "gpu" and status == 422:
            assert r.status_code == 200  # explaining an unknown GPU name is what explain is for
            continue
        if path == "/v1/explain" and parameter == "provider" and pairs[0][1] == "vastai":
            continue
        assert r.status_code == status, (path, r.text)
        assert r.headers["content-type"] == "application/json"
        error = r.json()["error"]
        assert error["parameter"] == parameter and error["status"] == status
        assert parameter in error["message"]
        assert "Traceback" not in r.text and "<" not in r.text
    assert get(served, "/v1/offers", [("gpu", "H100")]).status_code == 200  # still up


def test_raw_bytes_a_query_string_cannot_hold_are_400(served):
    for raw in ("gpu=%ff", "gpu=%C0%80", "a" * 17_000):
        r = requests.get(f"{served.url}/v1/offers?{raw}", timeout=30)
        assert r.status_code in (400, 414, 431), raw
    r = get(served, "/v1/status", [("verbose", "1")])
    assert r.status_code == 400 and r.json()["error"]["parameter"] == "verbose"
    assert get(served, "/v1/status").status_code == 200


def test_etag_if_none_match_304_and_cache_control(served):
    pairs = [("gpu", "H100"), ("max_price", "20")]
    r = get(served, "/v1/offers", pairs)
    tag = r.headers["ETag"]
    max_age = int(r.headers["Cache-Control"].split("max-age=")[1])
    assert 0 < max_age <= served.catalog.reload_interval
    again = get(served, "/v1/offers", pairs, headers={"If-None-Match": tag})
    assert again.status_code == 304 and again.content == b"" and again.headers["ETag"] == tag
    # The same query written differently is the same answer, the same tag.
    same = get(served, "/v1/offers", [("max_price", "20.0"), ("gpu", "H100")])
    assert same.headers["ETag"] == tag
    other = get(served, "/v1/offers", [("gpu", "H100"), ("max_price", "21")])
    assert other.headers["ETag"] != tag
    stale = get(served, "/v1/offers", pairs, headers={"If-None-Match": '"other", W/' + tag})
    assert stale.status_code == 304
    assert get(served, "/v1/offers", pairs, headers={"If-None-Match": '"x"'}).status_code == 200
    for path in ("/v1/explain", "/v1/status", "/openapi.json"):
        tag = get(served, path).headers["ETag"]
        assert get(served, path, headers={"If-None-Match": tag}).status_code == 304, path


def test_methods_other_than_get_are_405_and_head_is_get_without_a_body(served):
    for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS"):
        r = requests.request(method, f"{served.url}/v1/offers", timeout=30)
        assert r.status_code == 405, method
        assert r.headers["Allow"] == "GET, HEAD" and r.json()["error"]["status"] == 405
    head = requests.head(f"{served.url}/v1/offers?gpu=H100", timeout=30)
    assert head.status_code == 200 and head.headers["ETag"]
    missing = requests.get(f"{served.url}/v2/offers", timeout=30)
    assert missing.status_code == 404 and missing.json()["error"]["status"] == 404


def test_a_new_version_is_served_after_the_reload_interval_cache_and_all(tmp_path):
    """The cached answer and the 304 path check the catalog's age as a query does, so a
    version published meanwhile is picked up, and the old answer is not served again."""
    import shutil
    import time

    from gpuhunt._internal.catalog import Catalog
    from gpuhunt._internal.formats.csv import csv_bytes
    from gpuhunt._internal.load.settings import Settings
    from tests._internal.serve.conftest import start
    from tests.helpers import item, publish_archive

    root = tmp_path / "published"
    publish_archive(root, "20261129-1", {"aws": csv_bytes([item(price=2.0, instance_name="a")])})
    catalog = Catalog(
        catalog_url=str(root), settings=Settings(cache_dir=tmp_path / "cache"), reload_interval=0.2
    )
    for running in start(catalog):
        url = f"{running.url}/v1/offers?gpu=A100"
        first = requests.get(url, timeout=30)
        assert first.json()["offers"][0]["instance_name"] == "a"
        assert requests.get(url, timeout=30).headers["ETag"] == first.headers["ETag"]  # cached
        publish_archive(
            root, "20261129-2", {"aws": csv_bytes([item(price=2.0, instance_name="b")])}
        )
        deadline = time.monotonic() + 30
        while True:
            body = requests.get(url, timeout=30).json()
            if body["catalog"]["version"] == "20261129-2":
                break
            assert time.monotonic() < deadline, "the new version was never served"
            time.sleep(0.1)
        assert [o["instance_name"] for o in body["offers"]] == ["b"]
        again = requests.get(url, timeout=30, headers={"If-None-Match": first.headers["ETag"]})
        assert again.status_code == 200 and again.headers["ETag"] != first.headers["ETag"]
    shutil.rmtree(root)


def test_the_answer_cache_keeps_what_fits_least_recently_used_out_first():
    from gpuhunt._internal.serve.app import AnswerCache

    cache = AnswerCache(max_bytes=40)
    cache.put('"a"', b"x" * 10)
    cache.put('"b"', b"x" * 10)
    cache.put('"huge"', b"x" * 11)  # over a quarter of the whole: not kept
    assert cache.get('"huge"') is None
    assert cache.get('"a"') == b"x" * 10  # a used last: b goes first
    cache.put('"c"', b"x" * 10)
    cache.put('"d"', b"x" * 10)
    cache.put('"e"', b"x" * 10)
    assert cache.get('"b"') is None and cache.get('"a"') is not None


@pytest.mark.parametrize(
    ("pairs", "options"),
    [
        ([("gpu", "H100")], ["--gpu", "H100"]),
        (
            [("by", "instance"), ("provider", "aws"), ("spot", "false")],
            ["--by", "instance", "--provider", "aws", "--on-demand"],
        ),
    ],
)
def test_history_is_gpuhunt_history_json(served_built, pairs, options):
    out = io.StringIO()
    with redirect_stdout(out):
        code = cli.main(
            ["history", "--catalog-url", served_built.catalog.catalog_url, "--json", *options]
        )
    assert code == 0
    r = get(served_built, "/v1/history", pairs)
    assert r.status_code == 200, r.text
    assert r.json() == json.loads(out.getvalue()) and r.json()["series"]
    tag = r.headers["ETag"]
    assert (
        get(served_built, "/v1/history", pairs, headers={"If-None-Match": tag}).status_code == 304
    )


def test_history_errors(served_built, served):
    for pairs, status, parameter in [
        ([("gpu", "NoSuchGPU")], 422, "gpu"),
        ([("by", "region")], 400, "by"),
        ([("since", "yesterday")], 422, "since"),
        ([("limit", "5")], 400, "limit"),
    ]:
        r = get(served_built, "/v1/history", pairs)
        assert r.status_code == status, (pairs, r.text)
        assert r.json()["error"]["parameter"] == parameter
    r = get(served, "/v1/history", [("gpu", "H100")])  # a catalog published without history
    assert r.status_code == 404 and "history" in r.json()["error"]["message"]


def test_clients_asking_the_same_new_query_at_once_wait_for_one_computation(
    published, tmp_path, monkeypatch
):
    import threading
    import time

    from gpuhunt._internal.catalog import Catalog
    from gpuhunt._internal.load.settings import Settings
    from gpuhunt._internal.serve.answers import Service
    from tests._internal.serve.conftest import start

    real = Service.offers_encoded
    computed = []

    def slow(self, request, dumps):
        computed.append(request.key)
        time.sleep(0.5)  # long enough for every client to arrive meanwhile
        return real(self, request, dumps)

    monkeypatch.setattr(Service, "offers_encoded", slow)
    catalog = Catalog(catalog_url=str(published), settings=Settings(cache_dir=tmp_path))
    for running in start(catalog):
        url = f"{running.url}/v1/offers?gpu=H100&max_price=30"
        got: list[requests.Response] = []

        def ask(url: str = url, got: list[requests.Response] = got) -> None:
            got.append(requests.get(url, timeout=30))

        clients = [threading.Thread(target=ask) for _ in range(8)]
        for c in clients:
            c.start()
        for c in clients:
            c.join()
        assert [r.status_code for r in got] == [200] * 8
        assert len({r.content for r in got}) == 1 and len({r.headers["ETag"] for r in got}) == 1
        assert len(computed) == 1
        bad = [requests.get(f"{running.url}/v1/offers?gpu=NoSuch", timeout=30) for _ in range(2)]
        assert [r.status_code for r in bad] == [422, 422]


def test_an_answer_carries_each_listed_provider_s_data_age(served):
    body = get(served, "/v1/offers", [("limit", "5000")]).json()
    listed = {o["provider"] for o in body["offers"]}
    assert set(body["providers"]) == listed and len(listed) > 1
    loaded = served.catalog.current()
    for name, age in body["providers"].items():
        assert set(age) == {"collected_at", "age_seconds", "source"}
        when = observed.parse(age["collected_at"])
        assert when is not None and age["collected_at"] == observed.collected_at(
            loaded.manifest, name
        )
        assert age["age_seconds"] == int((loaded.loaded_wall - when).total_seconds()) >= 0
    # The streamed answer and the built one agree, ages included.
    few = get(served, "/v1/offers", [("gpu", "H100"), ("limit", "3")]).json()
    assert set(few["providers"]) == {o["provider"] for o in few["offers"]}
