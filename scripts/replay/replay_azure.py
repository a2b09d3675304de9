"""Replays recorded Azure answers through the real `AzureProvider.get()`.

The ARM SDK (`azure-mgmt-compute`, whose transport is `requests`) lists resource SKUs from
`management.azure.com` and the Retail Prices API is read through gpuhunt's transport; both are
served by `responses`. The credential is a fixed `TokenCredential` (the bearer token the SDK
sends is checked by the tests).

What the data is (details in `data/azure/README.md`): resource SKUs are the official REST example
(two retired CPU sizes) plus records built in the same shape from Microsoft's size tables, with
Azure's documented capability names; prices are two REAL recorded pages (Ev3/Esv3 in eastus,
Dv4 in westeurope) plus items built in the API's format for GPU sizes, with public prices
cross-checked in other sources. RECORDED_AT is the day the set was assembled.
"""

from __future__ import annotations

import json
import time
from typing import Any

import responses
from azure.core.credentials import AccessToken
from responses import matchers

from gpuhunt._internal.models import CatalogItem
from gpuhunt.providers.azure import PRICES_API_VERSION, PRICES_URL, AzureProvider, prices_filter
from scripts.replay import RECORDINGS

RECORDED_AT = "2026-11-29"
DATA = RECORDINGS / "azure"
SUBSCRIPTION_ID = "00000000-0000-0000-0000-000000000000"
ACCESS_TOKEN = "replay-azure-token"
SKUS_URL = (
    f"https://management.azure.com/subscriptions/{SUBSCRIPTION_ID}/providers/Microsoft.Compute/skus"
)
SKUS_API_VERSION = "2021-07-01"

# region -> the pages its price walk gets, in order
PRICE_PAGES: dict[str, list[str]] = {
    "eastus": ["retail_prices_eastus_gpu_page.json", "retail_prices_page_meterid_or_query.json"],
    "eastus2": ["retail_prices_eastus2_gpu_page.json"],
    "westeurope": ["retail_prices_page_reservation_mix.json"],
    "westus": ["retail_prices_empty_page.json"],
}


class ReplayCredential:
    """A `TokenCredential` that hands out a fixed token (no identity endpoint involved)."""

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        return AccessToken(ACCESS_TOKEN, int(time.time()) + 3600)

    def __repr__(self) -> str:
        return "ReplayCredential()"


def load(name: str) -> Any:
    return json.loads((DATA / name).read_text())


def first_page_match(region: str) -> list[Any]:
    return [
        matchers.query_param_matcher(
            {"api-version": PRICES_API_VERSION, "$filter": prices_filter(region)}
        )
    ]


def register_skus(rsps: responses.RequestsMock) -> None:
    first = load("resource_skus_gpu_page.json")
    rsps.add(
        responses.GET,
        SKUS_URL,
        json=first,
        match=[matchers.query_param_matcher({"api-version": SKUS_API_VERSION})],
    )
    # the SDK follows nextLink verbatim; the official example is the last page
    rsps.add(responses.GET, first["nextLink"], json=load("resource_skus_list_example.json"))


def register_prices(rsps: responses.RequestsMock) -> None:
    for region, names in PRICE_PAGES.items():
        pages = [load(name) for name in names]
        rsps.add(responses.GET, PRICES_URL, json=pages[0], match=first_page_match(region))
        for previous, page in zip(pages, pages[1:]):
            rsps.add(responses.GET, previous["NextPageLink"], json=page)


def register(rsps: responses.RequestsMock) -> None:
    """Add every recorded answer to an active `responses` mock."""
    register_skus(rsps)
    register_prices(rsps)


def provider() -> AzureProvider:
    return AzureProvider(subscription_id=SUBSCRIPTION_ID, credential=ReplayCredential())


def collect() -> list[CatalogItem]:
    with responses.RequestsMock() as rsps:
        register(rsps)
        return AzureProvider.filter(provider().get())
