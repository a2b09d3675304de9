"""Daytona's answers served by `responses` (the payloads in `data/daytona/`, described in
test_daytona.py), shared by test_daytona.py and test_daytona_0134.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import responses
from responses import matchers

from gpuhunt.providers.daytona import API_URL, PRICING_URL

DATA = Path(__file__).parent / "data" / "daytona"
KEY = "dtn_test-key"
ORG = "org-7f3a"
IDENTITY_URL = f"{API_URL}/api-keys/current"
CAPACITY_URL = f"{API_URL}/organizations/{ORG}/gpu-capacity"
REGIONS_URL = f"{API_URL}/shared-regions"


def load(name: str) -> Any:
    return json.loads((DATA / name).read_text())


def pricing() -> Any:
    return load("gpu_pricing_testfixture.json")


def serve(
    *,
    rates: Any = None,
    capacity: Any = None,
    regions: Any = None,
    api_url: str = API_URL,
) -> None:
    """Register the public answers, and the authenticated ones (which demand the key)."""
    auth = [matchers.header_matcher({"Authorization": f"Bearer {KEY}"})]
    responses.get(PRICING_URL, json=pricing() if rates is None else rates)
    responses.get(
        f"{api_url}/shared-regions",
        json=load("shared_regions_testfixture.json") if regions is None else regions,
    )
    responses.get(f"{api_url}/api-keys/current", json={"organizationId": ORG}, match=auth)
    responses.get(
        f"{api_url}/organizations/{ORG}/gpu-capacity",
        json=load("organization_gpu_capacity_testfixture.json") if capacity is None else capacity,
        match=auth,
    )
