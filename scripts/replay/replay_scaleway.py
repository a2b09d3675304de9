"""Replays two pages of Scaleway's public product catalog through the real
`ScalewayProvider.get()`.

The recordings (`tests/providers/data/scaleway/`, see its README) were built on RECORDED_AT:
the documented example product of the API reference and GPU products in its schema whose
prices and zones are illustrative, which is why the bundled snapshot leaves Scaleway out.
"""

from __future__ import annotations

import json
from typing import Any

import responses
from responses import matchers

from gpuhunt._internal.models import CatalogItem
from gpuhunt.providers.scaleway import PAGE_SIZE, PRODUCTS_URL, ScalewayProvider
from scripts.replay import RECORDINGS

RECORDED_AT = "2026-12-01"
DATA = RECORDINGS / "scaleway"


def load(page: int) -> Any:
    return json.loads((DATA / f"public_catalog_instances_page{page}.json").read_text())


def register(rsps: responses.RequestsMock) -> None:
    """Both pages, each only for the query the provider must send for it."""
    for page in (1, 2):
        rsps.add(
            responses.GET,
            PRODUCTS_URL,
            json=load(page),
            match=[
                matchers.query_param_matcher(
                    {"product_types": "instance", "page": str(page), "page_size": str(PAGE_SIZE)}
                )
            ],
        )


def collect() -> list[CatalogItem]:
    with responses.RequestsMock() as rsps:
        register(rsps)
        return ScalewayProvider.filter(ScalewayProvider.from_env().get())
