"""Data-quality checks on a freshly collected lambdalabs.csv (`CATALOG_DIR=dir pytest ...`)."""

from __future__ import annotations

from collections import defaultdict

import pytest

from gpuhunt._internal.constraints import is_nvidia_superchip
from gpuhunt._internal.models import CatalogItem, CPUArchitecture
from gpuhunt.providers.lambdalabs import FLAG_ARM
from integrity_tests.base import BaseIntegrity


class TestLambdaLabsIntegrity(BaseIntegrity):
    provider = "lambdalabs"
    has_spot = False
    min_offers = 20

    def test_no_spot(self, items: list[CatalogItem]) -> None:
        assert not [i for i in items if i.spot]

    @pytest.mark.parametrize("gpu", ["A100", "H100"])
    def test_gpu_sold(self, items: list[CatalogItem], gpu: str) -> None:
        assert any(i.gpu_name == gpu for i in items)

    def test_core_regions(self, items: list[CatalogItem]) -> None:
        locations = {i.location for i in items}
        assert {"us-west-1", "us-east-1"} <= locations
        assert len(locations) >= 5

    def test_types_listed_beyond_current_capacity(self, items: list[CatalogItem]) -> None:
        # Offers are listed in every region running their architecture, not only where a machine
        # was free at collection time (which is often nowhere for popular GPUs).
        regions: dict[str, set[str]] = defaultdict(set)
        for i in items:
            regions[i.instance_name].add(i.location)
        few = {name: sorted(r) for name, r in regions.items() if len(r) < 2}
        assert not few, few

    def test_arm_offers_are_flagged(self, items: list[CatalogItem]) -> None:
        for i in items:
            is_arm = i.cpu_arch == CPUArchitecture.ARM
            assert (FLAG_ARM in i.flags) == is_arm, i
            if i.gpu_name and is_nvidia_superchip(i.gpu_name):
                assert is_arm, i

    def test_gpu_memory_and_price_per_gpu_plausible(self, items: list[CatalogItem]) -> None:
        for i in items:
            if i.gpu_count:
                assert i.gpu_memory and i.gpu_memory >= 8, i
                # Cents not converted would show up as hundreds of dollars per GPU-hour.
                assert 0.05 <= i.price / i.gpu_count <= 20, i
