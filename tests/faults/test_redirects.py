"""No credential leaves for another host (issue 14): for every provider that takes one, its API
answers the first request with a redirect to another host, and nothing secret-bearing reaches
that host: no header beyond the harmless ones, no planted secret anywhere in the request.
Requests are answered by the `responses` library (no network); the redirects run through
requests' own redirect handling and gpuhunt's session."""

from __future__ import annotations

import contextlib
import re

import pytest
import responses

from gpuhunt._internal import registry
from gpuhunt._internal.load import transport

SECRET = "sk-PLANTED-redirect-0123456789"
ATTACKER = "attacker.example"
# Providers whose credentials go to their cloud's SDK (not through gpuhunt's HTTP layer);
# every other provider that reads a credential must be in the table below.
SDK_PROVIDERS = {"aws", "azure", "gcp", "oci", "nebius"}
CREDENTIALED = [
    spec.name for spec in registry.PROVIDERS if spec.env and spec.name not in SDK_PROVIDERS
]


def test_every_credentialed_provider_is_covered():
    assert {"seeweb", "lambdalabs", "hotaisle", "digitalocean"} <= set(CREDENTIALED)


def _plant(monkeypatch, name: str) -> None:
    for var in registry.spec(name).env:
        if var.endswith("_URL"):  # where the API is (Daytona's), not a secret
            monkeypatch.delenv(var, raising=False)
            continue
        monkeypatch.setenv(var, SECRET if var != "HOTAISLE_TEAM_HANDLE" else "team")


@pytest.mark.parametrize("status", [302, 307])
@pytest.mark.parametrize("name", CREDENTIALED)
def test_credentials_do_not_follow_a_redirect_to_another_host(name, status, monkeypatch):
    _plant(monkeypatch, name)
    seen: list = []
    provider_hits: list = []

    def answer(request):
        if ATTACKER in request.url:
            seen.append(request)
            return 200, {}, "{}"
        provider_hits.append(request.url)
        return status, {"Location": f"https://{ATTACKER}/collect?token=t&page=2"}, ""

    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        for method in (responses.GET, responses.POST):
            rsps.add_callback(method, re.compile(r"https?://.*"), callback=answer)
        provider = registry.provider_class(name).from_env()
        with contextlib.suppress(Exception):  # the provider failing is fine; a leak is not
            provider.get()
    assert provider_hits, f"{name} made no request"
    for request in seen:
        assert {h.lower() for h in request.headers} <= transport.SAFE_HEADERS, (name, request)
        text = f"{request.url} {dict(request.headers)} {request.body!r}"
        assert SECRET not in text, name
        assert "token=" not in request.url


def test_same_host_redirects_keep_their_headers():
    with responses.RequestsMock() as rsps:
        rsps.add(
            responses.GET,
            "https://api.example.com/a",
            status=302,
            headers={"Location": "https://api.example.com/b"},
        )
        rsps.add(responses.GET, "https://api.example.com/b", json={"ok": True})
        got = transport.request_json(
            "GET", "https://api.example.com/a", provider="p", headers={"X-APITOKEN": SECRET}
        )
        assert got == {"ok": True}
        assert rsps.calls[1].request.headers["X-APITOKEN"] == SECRET


def test_a_body_is_never_carried_to_another_host():
    from gpuhunt._internal.errors import ProviderError

    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        rsps.add(
            responses.POST,
            "https://api.example.com/token",
            status=307,
            headers={"Location": f"https://{ATTACKER}/token"},
        )
        rsps.add(responses.POST, f"https://{ATTACKER}/token", json={})
        with pytest.raises(ProviderError, match="another host"):
            transport.request_json(
                "POST",
                "https://api.example.com/token",
                provider="verda",
                json={"client_secret": SECRET},
            )
        assert [c.request.url for c in rsps.calls] == ["https://api.example.com/token"]
