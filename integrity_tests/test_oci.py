"""Data-quality checks on a freshly collected oci.csv (`CATALOG_DIR=dir pytest ...`)."""

from __future__ import annotations

import math
import re
from collections import defaultdict

import pytest

from gpuhunt._internal.constraints import is_nvidia_superchip
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem, CPUArchitecture
from gpuhunt.providers.oci import PREEMPTIBLE_DISCOUNT, SPOT_FLAG
from integrity_tests.base import BaseIntegrity

REGION = re.compile(r"[a-z]+-[a-z]+-\d+")


class TestOCIIntegrity(BaseIntegrity):
    provider = "oci"
    has_spot = True
    min_offers = 300

    @pytest.mark.parametrize(
        "gpu", ["A10", "A100", "H100", "H200", "V100", "MI300X", "B200", "GB200"]
    )
    def test_gpu_sold(self, items: list[CatalogItem], gpu: str) -> None:
        assert any(i.gpu_name == gpu for i in items)

    @pytest.mark.parametrize("prefix", ["VM.Standard", "BM.Standard", "VM.GPU", "BM.GPU"])
    def test_family_present(self, items: list[CatalogItem], prefix: str) -> None:
        assert any(i.instance_name.startswith(prefix) for i in items)

    def test_cpu_offers_present(self, items: list[CatalogItem]) -> None:
        assert any(i.gpu_count == 0 for i in items)

    def test_names_are_compute_api_names(self, items: list[CatalogItem]) -> None:
        # the Cost Estimator writes some as "BM.GPU.GB200.4 (NVL72)"
        assert not [i for i in items if "(" in i.instance_name or " " in i.instance_name]

    def test_regions(self, items: list[CatalogItem]) -> None:
        locations = {i.location for i in items}
        assert {"us-ashburn-1", "us-phoenix-1", "eu-frankfurt-1", "uk-london-1"} <= locations
        assert len(locations) >= 20
        odd = sorted(loc for loc in locations if not REGION.fullmatch(loc))
        assert not odd, odd

    def test_every_shape_in_every_region(self, items: list[CatalogItem]) -> None:
        # OCI prices are global: each shape is listed in each region
        regions: dict[str, set[str]] = defaultdict(set)
        for i in items:
            regions[i.instance_name].add(i.location)
        everywhere = set().union(*regions.values())
        short = sorted(name for name, r in regions.items() if r != everywhere)
        assert not short, short

    def test_spot_offers_are_flagged_and_discounted(self, items: list[CatalogItem]) -> None:
        on_demand = {(i.instance_name, i.location): i.price for i in items if not i.spot}
        for i in items:
            assert i.spot == (SPOT_FLAG in i.flags), i
            if i.spot:
                full = on_demand[(i.instance_name, i.location)]
                assert math.isclose(i.price, full * (1 - PREEMPTIBLE_DISCOUNT), rel_tol=1e-6), i

    def test_vendors_and_architectures(self, items: list[CatalogItem]) -> None:
        for i in items:
            if i.gpu_name in ("MI300X", "MI355X"):
                assert i.gpu_vendor == AcceleratorVendor.AMD, i
            if i.gpu_name and is_nvidia_superchip(i.gpu_name):
                assert i.cpu_arch == CPUArchitecture.ARM, i

    def test_gpu_memory_and_price_per_gpu_plausible(self, items: list[CatalogItem]) -> None:
        for i in items:
            if i.gpu_count:
                assert i.gpu_memory and 16 <= i.gpu_memory <= 300, i
                assert 0.5 <= i.price / i.gpu_count <= 30, i
