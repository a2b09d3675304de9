"""Data-quality checks on a freshly collected nebius.csv (`CATALOG_DIR=dir pytest ...`)."""

from __future__ import annotations

import pytest

from gpuhunt._internal.constraints import is_nvidia_superchip
from gpuhunt._internal.models import CatalogItem, CPUArchitecture
from gpuhunt.providers.nebius import PREEMPTIBLE_FLAT_RATE_GPUS
from integrity_tests.base import BaseIntegrity


def find(items: list[CatalogItem], name: str, location: str, spot: bool = False) -> CatalogItem:
    for i in items:
        if (i.instance_name, i.location, i.spot) == (name, location, spot):
            return i
    raise LookupError(f"no offer {name} in {location} (spot={spot})")


class TestNebiusIntegrity(BaseIntegrity):
    provider = "nebius"
    has_spot = True
    min_offers = 20

    @pytest.mark.parametrize("gpu", ["H100", "H200", "B200", "L40S", "RTXPRO6000"])
    def test_gpu_sold(self, items: list[CatalogItem], gpu: str) -> None:
        assert any(i.gpu_name == gpu for i in items)

    def test_cpu_offers(self, items: list[CatalogItem]) -> None:
        assert any(i.gpu_count == 0 for i in items)

    @pytest.mark.parametrize("region", ["eu-north1", "eu-west1"])
    def test_region_present(self, items: list[CatalogItem], region: str) -> None:
        assert any(i.location == region for i in items)

    def test_instance_names_are_platform_and_preset(self, items: list[CatalogItem]) -> None:
        for i in items:
            platform, preset = i.instance_name.split(" ")
            assert platform.startswith(("gpu-", "cpu-")), i
            assert (platform.startswith("gpu-") and i.gpu_count > 0) or i.gpu_count == 0, i

    def test_provider_data(self, items: list[CatalogItem]) -> None:
        for i in items:
            fabrics = i.provider_data["fabrics"]
            assert isinstance(fabrics, list) and len(fabrics) == len(set(fabrics)), i
            flat = i.provider_data["is_preemptible_flat_rate"]
            assert flat == (i.spot and i.gpu_name in PREEMPTIBLE_FLAT_RATE_GPUS), i

    def test_fabrics_of_a_known_cluster_preset(self, items: list[CatalogItem]) -> None:
        offer = find(items, "gpu-h100-sxm 8gpu-128vcpu-1600gb", "eu-north1")
        assert {"fabric-2", "fabric-3", "fabric-4", "fabric-6"} <= set(
            offer.provider_data["fabrics"]
        )
        single = find(items, "gpu-h100-sxm 1gpu-16vcpu-200gb", "eu-north1")
        assert single.provider_data["fabrics"] == []

    def test_preemptible_not_dearer_than_on_demand(self, items: list[CatalogItem]) -> None:
        on_demand = {(i.instance_name, i.location): i.price for i in items if not i.spot}
        for i in items:
            if i.spot:
                assert i.price <= on_demand[(i.instance_name, i.location)], i

    def test_superchips_are_arm(self, items: list[CatalogItem]) -> None:
        for i in items:
            if i.gpu_name and is_nvidia_superchip(i.gpu_name):
                assert i.cpu_arch == CPUArchitecture.ARM, i
