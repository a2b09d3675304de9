"""`load/transport.py` on its own: the one HTTP layer, against a real server on 127.0.0.1
(tests/faults/server.py). Retries, the size cap, errors that name what failed without the query
string, redirects that keep credentials at home (more of those: tests/faults/test_redirects.py)."""

from __future__ import annotations

import json

import pytest

from gpuhunt._internal.errors import ProviderError
from gpuhunt._internal.load import transport, urls
from tests.faults.server import FaultServer, Reply


@pytest.fixture
def http():
    """A session with the real retry policy that does not sleep between tries."""
    s = transport.new_session(retries=2, backoff_factor=0, timeout=(2.0, 2.0))
    yield s
    s.close()


def test_5xx_and_429_are_retried_up_to_the_limit(http):
    with FaultServer() as srv:
        srv.serve("/a", Reply(503), Reply(429), default=Reply(body=b'{"ok": 1}'))
        got = transport.request_json("GET", f"{srv.url}/a", provider="p", http=http)
        assert got == {"ok": 1} and srv.hits["/a"] == 3
        srv.serve("/b", default=Reply(500))
        with pytest.raises(
            ProviderError, match=r"^p: GET http://127\.0\.0\.1:\d+/b returned HTTP 500$"
        ):
            transport.request("GET", f"{srv.url}/b", provider="p", http=http)
        assert srv.hits["/b"] == 3  # the first try and two retries


def test_a_refusal_names_the_credential_and_no_query_string(http):
    with FaultServer() as srv:
        srv.serve("/prices?api_key=s3cret", default=Reply(401))  # routed by path and query
        with pytest.raises(ProviderError) as e:
            transport.request(
                "GET",
                f"{srv.url}/prices?api_key=s3cret",
                provider="p",
                credential="P_KEY",
                http=http,
            )
        assert str(e.value) == f"p: GET {srv.url}/prices was refused with HTTP 401; check P_KEY"
        assert srv.hits == {"/prices?api_key=s3cret": 1}  # a 401 is not retried


def test_invalid_json_is_a_provider_error(http):
    with FaultServer() as srv:
        srv.serve("/j", default=Reply(body=b"<html>"))
        with pytest.raises(ProviderError, match=r"/j returned invalid JSON$"):
            transport.request_json("GET", f"{srv.url}/j", provider="p", http=http)
        deep = b"[" * 100_000 + b"]" * 100_000
        srv.serve("/deep", default=Reply(body=deep))
        with pytest.raises(ProviderError, match=r"/deep returned invalid JSON$"):
            transport.request_json("GET", f"{srv.url}/deep", provider="p", http=http)


def test_a_body_over_the_cap_is_refused_by_its_length_or_as_it_arrives(http, monkeypatch):
    monkeypatch.setattr(transport, "MAX_RESPONSE_BYTES", 1000)
    body = json.dumps(["x" * 100] * 20).encode()
    with FaultServer() as srv:
        srv.serve("/declared", default=Reply(body=body))
        with pytest.raises(
            ProviderError, match=rf"announced {len(body)} bytes, over the 1000-byte cap"
        ):
            transport.request("GET", f"{srv.url}/declared", provider="p", http=http)
        srv.serve("/undeclared", default=Reply(body=body, declared_length=-1))
        with pytest.raises(ProviderError, match=r"sent more than the 1000-byte cap"):
            transport.request("GET", f"{srv.url}/undeclared", provider="p", http=http)
        srv.serve("/small", default=Reply(body=b"[1]"))
        assert transport.request_json("GET", f"{srv.url}/small", provider="p", http=http) == [1]


def test_every_request_says_who_asks(http):
    with FaultServer() as srv:
        srv.serve("/ua", default=Reply(body=b"{}"))
        transport.request("GET", f"{srv.url}/ua", provider="p", http=http)
    assert srv.headers[-1]["User-Agent"] == transport.USER_AGENT
    assert transport.USER_AGENT.startswith("gpuhunt/")


@pytest.mark.parametrize(
    ("url", "safe"),
    [
        ("https://api.example.com/v1/offers?key=s3cret#x", "https://api.example.com/v1/offers"),
        ("https://user:pw@api.example.com:8443/p", "https://api.example.com:8443/p"),
        ("http://[::1]:8080/v?token=t", "http://[::1]:8080/v"),
        ("/local/catalog?x=1", "/local/catalog"),
        ("http://[::1", "<unparseable URL>"),
    ],
)
def test_safe_url(url, safe):
    assert urls.safe_url(url) == safe


def test_require_fields_names_the_first_bad_field():
    transport.require_fields(
        {"id": "a", "price": 1.0}, {"id": str, "price": (int, float)}, where="w"
    )
    with pytest.raises(ProviderError, match=r"^w: expected an object, got list$"):
        transport.require_fields([], {"id": str}, where="w")
    with pytest.raises(ProviderError, match=r"^w: field 'price' is missing$"):
        transport.require_fields({"id": "a"}, {"id": str, "price": float}, where="w")
    with pytest.raises(ProviderError, match=r"^w: field 'id' has type int$"):
        transport.require_fields({"id": 1}, {"id": str}, where="w")


def test_retry_after_is_honoured_up_to_the_cap(monkeypatch):
    monkeypatch.setattr(transport, "MAX_RETRY_AFTER", 7.0)
    retry = transport.make_retry()

    class Answer:
        def __init__(self, value: str) -> None:
            self.headers = {"Retry-After": value}

        def getheader(self, name: str) -> str | None:
            return self.headers.get(name)

    assert retry.get_retry_after(Answer("3")) == 3.0
    assert retry.get_retry_after(Answer("3600")) == 7.0


def test_a_host_name_that_does_not_resolve_is_not_retried():
    from urllib3.exceptions import MaxRetryError, NameResolutionError, NewConnectionError

    retry = transport.make_retry(total=3)
    # Any other connection failure is retried as before...
    refused = NewConnectionError(None, "refused")  # type: ignore[arg-type]
    assert retry.increment("GET", "/x", error=refused).total == 2
    # ...but no DNS answer ends the request at once: a retry seconds later gets none either.
    no_dns = NameResolutionError("example.invalid", None, OSError("not known"))  # type: ignore[arg-type]
    with pytest.raises(MaxRetryError) as e:
        retry.increment("GET", "/x", error=no_dns)
    assert e.value.reason is no_dns


# ----------------------------------------------------------------- page-numbered listings


def _pages(*pages):
    asked = []

    def get(number):
        asked.append(number)
        return pages[number - 1]

    return get, asked


def test_collect_pages_reads_until_the_total():
    get, asked = _pages({"items": [1, 2], "total": 3}, {"items": [3], "total": 3}, {"items": [9]})
    got = transport.collect_pages(get, "items", "total", where="x", max_pages=10)
    assert (got, asked) == ([1, 2, 3], [1, 2])


def test_collect_pages_stops_at_an_empty_page_or_without_a_total():
    get, asked = _pages({"items": [1], "total": 5}, {"items": [], "total": 5})
    assert transport.collect_pages(get, "items", "total", where="x", max_pages=10) == [1]
    assert asked == [1, 2]
    get, asked = _pages({"items": [1, 2]}, {"items": [3]})
    assert transport.collect_pages(get, "items", "total", where="x", max_pages=10) == [1, 2]
    assert asked == [1]


def test_collect_pages_keeps_the_first_pages_of_a_listing_that_never_ends(caplog):
    get, asked = _pages(*({"items": [n], "total": 100} for n in range(5)))
    got = transport.collect_pages(get, "items", "total", where="p: list", max_pages=3)
    assert (got, asked) == ([0, 1, 2], [1, 2, 3])
    assert "p: list: more than 3 pages; using the first" in caplog.text


def test_collect_pages_names_a_page_without_its_list():
    get, _ = _pages({"products": []})
    with pytest.raises(ProviderError, match="p: list: field 'items' is missing"):
        transport.collect_pages(get, "items", "total", where="p: list", max_pages=3)
