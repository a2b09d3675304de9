"""The provider base's session: a provider's requests go through the session it is given
(`with_session`, or a `Catalog`'s, with the catalog's transport), its thread pools included,
with no module global patched. The answers are Vultr's, as in test_vultr.py (built from Vultr's
API reference); `responses` is active with nothing registered, so a request that went around
the given session would fail instead of reaching the network."""

from __future__ import annotations

import json
from typing import Any

import requests
import responses

from gpuhunt import Catalog
from gpuhunt._internal.load import transport
from gpuhunt._internal.load.mock import MockTransport, make_response
from gpuhunt._internal.load.settings import Settings
from gpuhunt.providers.base import OnlineProvider
from gpuhunt.providers.vultr import VultrProvider

PLAN = {
    "id": "vcg-a40-24c-120g-48vram",
    "vcpu_count": 24,
    "ram": 122880,
    "disk": 1400,
    "hourly_cost": 1.712,
    "type": "vdm",
    "locations": [],
    "deploy_ondemand": True,
    "gpu_brand": "NVIDIA",
}
ANSWERS: dict[str, Any] = {
    "/v2/plans": {"plans": [PLAN], "meta": {"total": 1, "links": {"next": "", "prev": ""}}},
    "/v2/plans-metal": {"plans_metal": [], "meta": {"links": {"next": ""}}},
    "/v2/regions": {"regions": [{"id": "blr"}, {"id": "ord"}], "meta": {"links": {"next": ""}}},
    "/v2/regions/blr/availability": {"available_plans": [PLAN["id"]]},
    "/v2/regions/ord/availability": {"available_plans": []},
}


def vultr_api() -> MockTransport:
    def answer(request: requests.PreparedRequest) -> requests.Response:
        path = request.path_url.split("?", 1)[0]
        if path not in ANSWERS:
            return make_response(404, b"{}")
        return make_response(200, json.dumps(ANSWERS[path]), {"Content-Type": "application/json"})

    return MockTransport(answer)


def paths(mock: MockTransport) -> list[str]:
    return sorted(r.path_url.split("?", 1)[0] for r in mock.requests)


@responses.activate
def test_a_provider_sends_through_the_session_it_is_given() -> None:
    mock = vultr_api()
    session = requests.Session()
    session.mount("https://", mock)
    provider = VultrProvider(api_key="vultr-secret").with_session(session)
    assert provider.session is session and VultrProvider().session is None
    [offer] = [o for o in provider.get() if o.instance_name == PLAN["id"]]
    assert (offer.location, offer.price, offer.gpu_name) == ("blr", 1.712, "A40")
    # The availability lookups run on the provider's thread pool: they used the session too.
    assert paths(mock) == sorted(ANSWERS)
    assert {r.headers.get("Authorization") for r in mock.requests if "regions" in r.url} == {
        "Bearer vultr-secret"
    }
    assert len(responses.calls) == 0


@responses.activate
def test_a_catalog_gives_its_transport_to_providers_without_a_session(tmp_path) -> None:
    mock = vultr_api()
    catalog = Catalog(
        auto_reload=False, settings=Settings(cache_dir=tmp_path / "cache"), transport=mock
    )
    mine = requests.Session()
    own = VultrProvider(api_key="k").with_session(mine)
    Catalog(auto_reload=False, transport=mock).add_provider(own)
    assert own.session is mine  # a provider's own session is kept
    provider = VultrProvider(api_key="vultr-secret")
    catalog.add_provider(provider)
    assert provider.session is not None and provider.session is not mine
    with catalog:
        offers = catalog.query(provider="vultr")
    assert [o.instance_name for o in offers] == [PLAN["id"]]
    assert set(paths(mock)) == set(ANSWERS)
    assert len(responses.calls) == 0


@responses.activate
def test_a_generator_get_is_read_on_the_providers_session() -> None:
    mock = vultr_api()
    session = requests.Session()
    session.mount("https://", mock)

    class Lazy(OnlineProvider):
        NAME = "lazy"

        @classmethod
        def from_env(cls) -> Lazy:
            return cls()

        def get(self, query_filter=None, balance_resources=True, apply_filter=False):  # type: ignore[override]
            # Asks only once read: after `get()` itself has returned.
            yield transport.request_json("GET", "https://api.vultr.com/v2/plans", provider="lazy")

    [answer] = list(Lazy().with_session(session).get())
    assert answer == ANSWERS["/v2/plans"]
    assert paths(mock) == ["/v2/plans"] and len(responses.calls) == 0
