"""Data-quality checks on a freshly collected scaleway.csv (`CATALOG_DIR=dir pytest ...`)."""

from __future__ import annotations

from gpuhunt._internal.models import CatalogItem
from integrity_tests.base import BaseIntegrity

# Scaleway's Instance zones (its Instance API's zone list); a new one should be noticed.
ZONES = {
    "fr-par-1",
    "fr-par-2",
    "fr-par-3",
    "nl-ams-1",
    "nl-ams-2",
    "nl-ams-3",
    "pl-waw-1",
    "pl-waw-2",
    "pl-waw-3",
}


class TestScalewayIntegrity(BaseIntegrity):
    provider = "scaleway"
    has_spot = False

    def test_no_spot(self, items: list[CatalogItem]) -> None:
        assert not [i for i in items if i.spot]

    def test_zones_known(self, items: list[CatalogItem]) -> None:
        assert {i.location for i in items} <= ZONES

    def test_gpu_offers(self, items: list[CatalogItem]) -> None:
        assert any(i.gpu_count for i in items), "no GPU Instance in the catalog"

    def test_prices_in_euros(self, items: list[CatalogItem]) -> None:
        assert {i.provider_data.get("currency") for i in items} == {"EUR"}

    def test_units_plausible(self, items: list[CatalogItem]) -> None:
        for i in items:
            # nanos or bytes read as the unit would be off by 1e9
            assert 0.001 <= i.price <= 500, i
            assert 0.5 <= i.memory <= 8192, i
            if i.gpu_count:
                assert i.gpu_memory and 8 <= i.gpu_memory <= 300, i
