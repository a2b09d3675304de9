"""Data-quality checks on a freshly collected aws.csv (`CATALOG_DIR=dir pytest ...`)."""

from __future__ import annotations

from collections import Counter

import pytest

from gpuhunt._internal.accelerators import accelerators_named
from gpuhunt._internal.models import CatalogItem, CPUArchitecture
from gpuhunt.providers.aws import PUBLISHED_FAMILIES, family_of
from integrity_tests.base import BaseIntegrity

# Regions where AWS has sold m5.large and g4dn.xlarge for years.
CORE_REGIONS = {
    "us-east-1", "us-east-2", "us-west-1", "us-west-2", "ca-central-1", "sa-east-1",
    "eu-west-1", "eu-west-2", "eu-west-3", "eu-central-1", "eu-north-1",
    "ap-northeast-1", "ap-northeast-2", "ap-south-1", "ap-southeast-1", "ap-southeast-2",
}  # fmt: skip


class TestAWSIntegrity(BaseIntegrity):
    provider = "aws"
    has_spot = True
    min_offers = 2000

    def test_only_published_families(self, items: list[CatalogItem]) -> None:
        extra = sorted({i.instance_name for i in items} - _published(items))
        assert not extra, extra[:10]

    @pytest.mark.parametrize("gpu", ["H100", "H200", "A100", "L40S", "L4", "A10G", "T4"])
    def test_gpu_sold(self, items: list[CatalogItem], gpu: str) -> None:
        assert any(i.gpu_name == gpu for i in items)

    @pytest.mark.parametrize("instance_type", ["m5.large", "g4dn.xlarge"])
    def test_core_regions(self, items: list[CatalogItem], instance_type: str) -> None:
        locations = {i.location for i in items if i.instance_name == instance_type}
        assert not CORE_REGIONS - locations, sorted(CORE_REGIONS - locations)

    def test_known_offers(self, items: list[CatalogItem]) -> None:
        def on_demand(name: str) -> CatalogItem:
            found = [
                i
                for i in items
                if i.instance_name == name and i.location == "us-east-1" and not i.spot
            ]
            assert len(found) == 1, (name, found)
            return found[0]

        p4d = on_demand("p4d.24xlarge")
        assert (p4d.gpu_count, p4d.gpu_name, p4d.gpu_memory, p4d.cpu) == (8, "A100", 40, 96)
        assert 10 < p4d.price < 45  # $21.957642 on 2026-01-21
        p5 = on_demand("p5.48xlarge")
        assert (p5.gpu_count, p5.gpu_name, p5.gpu_memory) == (8, "H100", 80)
        assert 25 < p5.price < 110  # $55.04 on 2026-01-21
        g6 = on_demand("g6.xlarge")
        assert (g6.gpu_count, g6.gpu_name, g6.gpu_memory) == (1, "L4", 24)
        assert 0.4 < g6.price < 1.6  # $0.8048 on 2026-01-21

    def test_gpu_memory_matches_the_tables(self, items: list[CatalogItem]) -> None:
        for i in items:
            if i.gpu_name:
                known = {a.memory for a in accelerators_named(i.gpu_name)}
                assert i.gpu_memory in known, i

    def test_x86_only(self, items: list[CatalogItem]) -> None:
        assert all(i.cpu_arch == CPUArchitecture.X86 for i in items)

    def test_no_duplicates(self, items: list[CatalogItem]) -> None:
        counts = Counter((i.instance_name, i.location, i.spot) for i in items)
        assert not [k for k, n in counts.items() if n > 1]

    def test_spot_offers_have_an_on_demand_twin_and_cost_less(
        self, items: list[CatalogItem]
    ) -> None:
        on_demand = {(i.instance_name, i.location): i.price for i in items if not i.spot}
        spot = [i for i in items if i.spot]
        assert all((i.instance_name, i.location) in on_demand for i in spot)
        # AWS caps spot prices at the on-demand price; allow a stray exception.
        dearer = [i for i in spot if i.price > on_demand[(i.instance_name, i.location)]]
        assert len(dearer) <= len(spot) // 100, dearer[:5]


def _published(items: list[CatalogItem]) -> set[str]:
    return {i.instance_name for i in items if family_of(i.instance_name) in PUBLISHED_FAMILIES}
