"""Replays recorded Google Cloud answers through the real `GCPProvider.from_env().get()`.

The SDKs (google-cloud-compute, google-cloud-billing) run with their REST transport, the TPU API
through gpuhunt's transport, and application default credentials come from a dummy
`authorized_user` file whose token refresh is answered here too: every request is the one the
provider sends in production, served by `responses`.

What the data is (details in `data/gcp/make_replay_data.py`, which wrote the `replay_*.json`):
machine and accelerator types per zone are REAL gcloud exports (Cyclenerd, commit dac3128) put in
the aggregatedList JSON shape, plus a3/a4/g4 shapes from GCP's documentation; the billing SKUs mix
six REAL recorded SKUs with SKUs BUILT in the real format whose prices come from Cyclenerd's
Billing-Catalog-derived `pricing.yml` (2025-03-06), GCP's spot pricing page, SkyPilot's catalog,
GCP's public GPU/TPU prices, or are illustrative (tagged per SKU there). RECORDED_AT is the day the
set was assembled.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any
from unittest import mock
from urllib.parse import parse_qs, urlsplit

import responses

from gpuhunt._internal.models import CatalogItem
from gpuhunt.providers.gcp import (
    ADC_ENV,
    COMPUTE_SERVICE,
    PROJECT_ENV,
    TPU_API_URL,
    TPU_SERVICE,
    GCPProvider,
)
from scripts.replay import RECORDINGS

RECORDED_AT = "2026-11-29"
DATA = RECORDINGS / "gcp"
PROJECT = "gpuhunt-replay"
ACCESS_TOKEN = "replay-access-token"
ADC_FILE = DATA / "adc_authorized_user.json"

TOKEN_URL = "https://oauth2.googleapis.com/token"
COMPUTE_URL = f"https://compute.googleapis.com/compute/v1/projects/{PROJECT}/aggregated"
MACHINE_TYPES_URL = f"{COMPUTE_URL}/machineTypes"
ACCELERATOR_TYPES_URL = f"{COMPUTE_URL}/acceleratorTypes"
BILLING_URL = "https://cloudbilling.googleapis.com/v1"
COMPUTE_SKUS_URL = f"{BILLING_URL}/{COMPUTE_SERVICE}/skus"
TPU_SKUS_URL = f"{BILLING_URL}/{TPU_SERVICE}/skus"
TPU_LOCATIONS_URL = f"{TPU_API_URL}/projects/{PROJECT}/locations"
TPU_ZONES = ("europe-west4-a", "us-central1-a", "us-central1-b", "us-east1-d", "us-east5-a")


def load(name: str) -> Any:
    return json.loads((DATA / name).read_text())


def page(token: str | None) -> Any:
    """A `responses` matcher for the page a request asks for (`pageToken`, or none: the first)."""

    def match(request: Any) -> tuple[bool, str]:
        asked = parse_qs(urlsplit(request.url).query).get("pageToken", [None])[0]
        return asked == token, f"pageToken {asked!r} is not {token!r}"

    return match


def register(
    rsps: responses.RequestsMock,
    *,
    token: bool = True,
    keep_sku: Callable[[dict[str, Any]], bool] | None = None,
) -> None:
    """Add every recorded answer to an active `responses` mock (`token=False`: not the OAuth
    token endpoint, for credentials that need no refresh; `keep_sku`: which billing SKUs the
    answers hold, default all)."""
    if token:
        rsps.add(
            responses.POST,
            TOKEN_URL,
            json={"access_token": ACCESS_TOKEN, "expires_in": 3599, "token_type": "Bearer"},
        )
    machines = [load("replay_machine_types_page1.json"), load("replay_machine_types_page2.json")]
    rsps.add(responses.GET, MACHINE_TYPES_URL, json=machines[0], match=[page(None)])
    rsps.add(
        responses.GET,
        MACHINE_TYPES_URL,
        json=machines[1],
        match=[page(machines[0]["nextPageToken"])],
    )
    rsps.add(responses.GET, ACCELERATOR_TYPES_URL, json=load("replay_accelerator_types.json"))

    def skus(name: str) -> Any:
        answer = load(name)
        if keep_sku is not None:
            answer["skus"] = [s for s in answer["skus"] if keep_sku(s)]
        return answer

    pages = [skus("replay_compute_skus_page1.json"), skus("replay_compute_skus_page2.json")]
    rsps.add(responses.GET, COMPUTE_SKUS_URL, json=pages[0], match=[page(None)])
    rsps.add(
        responses.GET, COMPUTE_SKUS_URL, json=pages[1], match=[page(pages[0]["nextPageToken"])]
    )
    rsps.add(responses.GET, TPU_SKUS_URL, json=skus("replay_tpu_skus.json"))
    rsps.add(responses.GET, TPU_LOCATIONS_URL, json=load("replay_tpu_locations.json"))
    for zone in TPU_ZONES:
        rsps.add(
            responses.GET,
            f"{TPU_LOCATIONS_URL}/{zone}/acceleratorTypes",
            json=load(f"replay_tpu_accelerator_types_{zone}.json"),
        )


def replay_env() -> dict[str, str]:
    # GOOGLE_CLOUD_PROJECT only keeps google-auth from warning that ADC names no project.
    return {PROJECT_ENV: PROJECT, ADC_ENV: str(ADC_FILE), "GOOGLE_CLOUD_PROJECT": PROJECT}


def sku_sources() -> dict[str, str]:
    """skuId -> where its price comes from (REAL, PY, SP, SKY, PUB, or ILL for illustrative;
    see data/gcp/make_replay_data.py)."""
    sources: dict[str, str] = load("replay_sku_sources.json")
    return sources


def collect(keep_sku: Callable[[dict[str, Any]], bool] | None = None) -> list[CatalogItem]:
    with (
        responses.RequestsMock() as rsps,
        mock.patch.dict(os.environ, replay_env()),
    ):
        register(rsps, keep_sku=keep_sku)
        return GCPProvider.filter(GCPProvider.from_env().get())
