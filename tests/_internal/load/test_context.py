"""`load.context.Context`: the sessions it makes carry its settings' timeouts and send through
its transport; HTTP errors raised over them carry the request and the response."""

from __future__ import annotations

import pytest
import requests

from gpuhunt._internal.errors import ProviderError
from gpuhunt._internal.load import transport
from gpuhunt._internal.load.context import Context
from gpuhunt._internal.load.mock import MockTransport, make_response
from gpuhunt._internal.load.settings import Settings


def test_sessions_use_the_settings_timeouts_and_the_transport():
    seen: list[tuple[str, object]] = []

    def answer(request: requests.PreparedRequest) -> requests.Response:
        return make_response(200, b'{"ok": true}')

    mock = MockTransport(answer)
    real_send = mock.send

    def send(request, **kwargs):  # what requests hands the adapter
        seen.append((request.url, kwargs.get("timeout")))
        return real_send(request, **kwargs)

    mock.send = send  # type: ignore[method-assign]
    ctx = Context(settings=Settings(connect_timeout=2.0, read_timeout=7.0), transport=mock)
    got = transport.request_json(
        "GET", "https://api.test/x?key=1", provider="p", http=ctx.session()
    )
    assert got == {"ok": True}
    assert seen == [("https://api.test/x?key=1", (2.0, 7.0))]
    assert ctx.session() is ctx.session()  # one shared session per context
    assert ctx.new_session() is not ctx.session()


@pytest.mark.parametrize(("status", "words"), [(404, "returned HTTP 404"), (403, "refused")])
def test_provider_errors_carry_the_request_and_the_response(status, words):
    mock = MockTransport(lambda request: make_response(status, b"no"))
    ctx = Context(transport=mock)
    with pytest.raises(ProviderError, match=words) as got:
        transport.request("GET", "https://api.test/plans?token=s", provider="p", http=ctx.session())
    assert got.value.response.status_code == status
    assert got.value.request is mock.requests[0]
    assert "token" not in str(got.value)  # the message stays safe; the objects are the caller's


def test_a_connection_error_carries_the_request_and_no_response():
    def down(request):
        raise requests.ConnectionError("refused")

    ctx = Context(transport=MockTransport(down))
    with pytest.raises(ProviderError, match="failed: ConnectionError") as got:
        transport.request("GET", "https://api.test/plans", provider="p", http=ctx.session())
    assert got.value.response is None
    assert got.value.request.url == "https://api.test/plans"
