"""Data-quality checks on a freshly collected ovhcloud.csv (`CATALOG_DIR=dir pytest ...`)."""

from __future__ import annotations

from gpuhunt._internal.models import CatalogItem
from integrity_tests.base import BaseIntegrity


class TestOVHcloudIntegrity(BaseIntegrity):
    provider = "ovhcloud"
    has_spot = False

    def test_no_spot(self, items: list[CatalogItem]) -> None:
        assert not [i for i in items if i.spot]

    def test_gpu_flavors(self, items: list[CatalogItem]) -> None:
        assert {"H100", "L40S", "L4"} & {i.gpu_name for i in items if i.gpu_name}

    def test_prices_in_euros(self, items: list[CatalogItem]) -> None:
        assert {i.provider_data.get("currency") for i in items} == {"EUR"}

    def test_units_plausible(self, items: list[CatalogItem]) -> None:
        for i in items:
            # a price read in 1e-8 units without the division is off by 1e8
            assert 0.001 <= i.price <= 500, i
            assert 0.5 <= i.memory <= 8192, i
            if i.gpu_count:
                assert i.gpu_memory and 8 <= i.gpu_memory <= 300, i
