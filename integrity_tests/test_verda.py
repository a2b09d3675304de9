"""Data-quality checks on a freshly collected verda.csv (`CATALOG_DIR=dir pytest ...`)."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from gpuhunt._internal.models import AcceleratorVendor, CatalogItem
from integrity_tests.base import BaseIntegrity


class TestVerdaIntegrity(BaseIntegrity):
    provider = "verda"
    has_spot = True
    min_offers = 20

    @pytest.mark.parametrize("location", ["FIN-01", "FIN-02"])
    def test_location_has_offers(self, items: list[CatalogItem], location: str) -> None:
        assert Counter(i.location for i in items)[location] > 1

    # Only GPUs that both the live price list and the replayed fixture carry.
    @pytest.mark.parametrize("gpu", ["H100"])
    def test_gpu_sold(self, items: list[CatalogItem], gpu: str) -> None:
        assert any(i.gpu_name == gpu for i in items)

    def test_cpu_only_offers(self, items: list[CatalogItem]) -> None:
        assert any(i.gpu_count == 0 for i in items)

    def test_every_type_in_every_location(self, items: list[CatalogItem]) -> None:
        locations = {i.location for i in items}
        per_type: dict[str, set[str]] = defaultdict(set)
        for i in items:
            if not i.spot:
                per_type[i.instance_name].add(i.location)
        missing = {
            n: sorted(locations - found) for n, found in per_type.items() if found != locations
        }
        assert not missing, missing

    def test_spot_is_cheaper_than_on_demand(self, items: list[CatalogItem]) -> None:
        on_demand = {(i.instance_name, i.location): i.price for i in items if not i.spot}
        for i in items:
            if i.spot:
                assert (i.instance_name, i.location) in on_demand, i
                assert i.price <= on_demand[(i.instance_name, i.location)], i

    def test_no_amd_published(self, items: list[CatalogItem]) -> None:
        assert not [i for i in items if i.gpu_vendor == AcceleratorVendor.AMD]
