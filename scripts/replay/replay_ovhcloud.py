"""Replays OVHcloud's public cloud catalog (FR subsidiary) through the real
`OVHcloudProvider.get()`.

The recording (`tests/providers/data/ovhcloud/`, see its README) was rebuilt on RECORDED_AT in
the catalog's format from a dated third-party table of OVHcloud's prices, which is why the
bundled snapshot leaves OVHcloud out.
"""

from __future__ import annotations

import json
from typing import Any

import responses
from responses import matchers

from gpuhunt._internal.models import CatalogItem
from gpuhunt.providers.ovhcloud import CATALOG_URL, SUBSIDIARY, OVHcloudProvider
from scripts.replay import RECORDINGS

RECORDED_AT = "2026-12-01"
DATA = RECORDINGS / "ovhcloud"


def load() -> Any:
    return json.loads((DATA / "catalog_public_cloud_FR.json").read_text())


def register(rsps: responses.RequestsMock) -> None:
    rsps.add(
        responses.GET,
        CATALOG_URL,
        json=load(),
        match=[matchers.query_param_matcher({"ovhSubsidiary": SUBSIDIARY})],
    )


def collect() -> list[CatalogItem]:
    with responses.RequestsMock() as rsps:
        register(rsps)
        return OVHcloudProvider.filter(OVHcloudProvider.from_env().get())
