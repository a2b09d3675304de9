"""Data-quality checks on a freshly collected azure.csv (`CATALOG_DIR=dir pytest ...`)."""

from __future__ import annotations

import re
from collections import defaultdict

import pytest

from gpuhunt._internal.models import AcceleratorVendor, CatalogItem
from gpuhunt.providers.azure import KEEP_SERIES, is_retired
from integrity_tests.base import BaseIntegrity

REGION = re.compile(r"[a-z]+[a-z0-9]*")


class TestAzureIntegrity(BaseIntegrity):
    provider = "azure"
    has_spot = True
    min_offers = 1000

    def test_only_published_families(self, items: list[CatalogItem]) -> None:
        odd = sorted({i.instance_name for i in items if not KEEP_SERIES.match(i.instance_name)})
        assert not odd, odd[:10]
        assert not [i for i in items if is_retired(i.instance_name)]

    def test_locations_are_arm_region_names(self, items: list[CatalogItem]) -> None:
        odd = sorted({i.location for i in items if not REGION.fullmatch(i.location)})
        assert not odd, odd

    def test_core_regions(self, items: list[CatalogItem]) -> None:
        locations = {i.location for i in items}
        assert {"eastus", "eastus2", "westus2", "westeurope", "northeurope"} <= locations
        assert len(locations) >= 30

    def test_general_purpose_size_everywhere(self, items: list[CatalogItem]) -> None:
        d2 = [i for i in items if i.instance_name == "Standard_D2s_v3"]
        assert len({i.location for i in d2}) >= 30
        assert {i.spot for i in d2 if i.location == "eastus"} == {False, True}
        assert all((i.cpu, i.memory) == (2, 8) for i in d2), d2[:3]

    @pytest.mark.parametrize("gpu", ["A100", "H100", "H100NVL", "T4", "V100", "A10"])
    def test_gpu_sold(self, items: list[CatalogItem], gpu: str) -> None:
        assert any(i.gpu_name == gpu for i in items)

    def test_both_a100_memories(self, items: list[CatalogItem]) -> None:
        assert {i.gpu_memory for i in items if i.gpu_name == "A100"} == {40.0, 80.0}

    def test_gpu_vendors(self, items: list[CatalogItem]) -> None:
        for i in items:
            if i.gpu_count:
                amd = i.gpu_name in ("MI300X",)
                assert i.gpu_vendor == (
                    AcceleratorVendor.AMD if amd else AcceleratorVendor.NVIDIA
                ), i

    def test_gpu_memory_and_price_per_gpu_plausible(self, items: list[CatalogItem]) -> None:
        for i in items:
            if i.gpu_count:
                assert i.gpu_memory and 2 <= i.gpu_memory <= 200, i
                assert 0.02 <= i.price / i.gpu_count <= 40, i

    def test_constrained_core_sizes_count_usable_vcpus(self, items: list[CatalogItem]) -> None:
        for i in items:
            if m := re.fullmatch(r"Standard_E\d+-(\d+)\w*", i.instance_name):
                assert i.cpu == int(m.group(1)), i

    def test_spot_cheaper_than_on_demand(self, items: list[CatalogItem]) -> None:
        prices: dict[tuple[str, str], dict[bool, float]] = defaultdict(dict)
        for i in items:
            prices[(i.instance_name, i.location)][i.spot] = i.price
        dearer = [k for k, p in prices.items() if len(p) == 2 and p[True] > p[False]]
        assert not dearer, dearer[:5]
