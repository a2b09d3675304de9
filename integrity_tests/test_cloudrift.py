"""Data-quality checks on a freshly collected cloudrift.csv (`CATALOG_DIR=dir pytest ...`)."""

from __future__ import annotations

import pytest

from gpuhunt._internal.models import CatalogItem
from integrity_tests.base import BaseIntegrity


class TestCloudRiftIntegrity(BaseIntegrity):
    provider = "cloudrift"
    has_spot = False

    def test_no_spot(self, items: list[CatalogItem]) -> None:
        assert not [i for i in items if i.spot]

    @pytest.mark.parametrize("gpu_count", [1, 2])
    def test_gpu_count_sold(self, items: list[CatalogItem], gpu_count: int) -> None:
        assert any(i.gpu_count == gpu_count for i in items)

    def test_units_plausible(self, items: list[CatalogItem]) -> None:
        for i in items:
            # Prices come in cents and sizes in bytes: a missed conversion is off by 100x or more.
            if i.gpu_count:
                assert 0.05 <= i.price / i.gpu_count <= 20, i
                assert i.gpu_memory and 8 <= i.gpu_memory <= 300, i
            assert 1 <= i.memory <= 8192, i
            assert i.disk_size is not None and 10 <= i.disk_size <= 100_000, i
