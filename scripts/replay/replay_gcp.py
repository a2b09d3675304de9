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

import os
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
from scripts.replay import recordings

RECORDED_AT = "2026-11-29"
DATA, load = recordings("gcp")
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


def page(token: str | None) -> Any:
    """A `responses` matcher for the page a request asks for (`pageToken`, or none: the first)."""

    def match(request: Any) -> tuple[bool, str]:
        asked = parse_qs(urlsplit(request.url).query).get("pageToken", [None])[0]
        return asked == token, f"pageToken {asked!r} is not {token!r}"

    return match


def register(rsps: responses.RequestsMock, *, token: bool = True) -> None:
    """Add every recorded answer to an active `responses` mock (`token=False`: not the OAuth
    token endpoint, for credentials that need no refresh)."""
    if token:
        rsps.add(
            responses.POST,
            TOKEN_URL,
            json={"access_token": ACCESS_TOKEN, "expires_in": 3599, "token_type": "Bearer"},
        )
    pages = [load("replay_machine_types_page1.json"), load("replay_machine_types_page2.json")]
    rsps.add(responses.GET, MACHINE_TYPES_URL, json=pages[0], match=[page(None)])
    rsps.add(
        responses.GET, MACHINE_TYPES_URL, json=pages[1], match=[page(pages[0]["nextPageToken"])]
    )
    rsps.add(responses.GET, ACCELERATOR_TYPES_URL, json=load("replay_accelerator_types.json"))
    skus = [load("replay_compute_skus_page1.json"), load("replay_compute_skus_page2.json")]
    rsps.add(responses.GET, COMPUTE_SKUS_URL, json=skus[0], match=[page(None)])
    rsps.add(responses.GET, COMPUTE_SKUS_URL, json=skus[1], match=[page(skus[0]["nextPageToken"])])
    rsps.add(responses.GET, TPU_SKUS_URL, json=load("replay_tpu_skus.json"))
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


def collect() -> list[CatalogItem]:
    with (
        responses.RequestsMock() as rsps,
        mock.patch.dict(os.environ, replay_env()),
    ):
        register(rsps)
        return GCPProvider.filter(GCPProvider.from_env().get())
