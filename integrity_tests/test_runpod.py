"""Data-quality checks on a freshly collected runpod.csv (`CATALOG_DIR=dir pytest ...`)."""

from __future__ import annotations

import re

from gpuhunt._internal.accelerators import accelerators_named
from gpuhunt._internal.models import CatalogItem
from gpuhunt.providers.runpod import (
    CLUSTER_POD_COUNTS,
    EXCLUDED_LOCATIONS,
    FLAG_CLUSTER,
    FLAG_CPU,
)
from integrity_tests.base import BaseIntegrity

DATA_CENTER = re.compile(r"[A-Z]+-[A-Z]+-\d+")  # Secure Cloud, e.g. EU-RO-1
COUNTRY = re.compile(r"[A-Z]{2}")  # Community Cloud, e.g. FR


def gpu_pods(items: list[CatalogItem]) -> list[CatalogItem]:
    return [i for i in items if i.gpu_count and not i.flags]


class TestRunpodIntegrity(BaseIntegrity):
    provider = "runpod"
    has_spot = False  # RunPod is retiring interruptible pods: spot offers may disappear
    min_offers = 100
    # MIG slices and brand-new GPUs are kept under RunPod's name; bounded below instead.
    allow_unknown_gpus = True

    def test_few_unknown_gpus(self, items: list[CatalogItem]) -> None:
        gpus = [i for i in items if i.gpu_count]
        unknown = sorted({i.gpu_name for i in gpus if not accelerators_named(i.gpu_name or "")})
        assert len(unknown) <= 3, unknown

    def test_secure_and_community_locations(self, items: list[CatalogItem]) -> None:
        locations = {i.location for i in items}
        assert 10 <= len(locations) <= 300
        assert {loc for loc in locations if DATA_CENTER.fullmatch(loc)}
        assert {loc for loc in locations if COUNTRY.fullmatch(loc)}
        assert not locations & EXCLUDED_LOCATIONS
        odd = sorted(
            loc
            for loc in locations
            if not DATA_CENTER.fullmatch(loc) and not COUNTRY.fullmatch(loc)
        )
        assert not odd, odd

    def test_popular_gpus_sold(self, items: list[CatalogItem]) -> None:
        sold = {i.gpu_name for i in gpu_pods(items)}
        expected = {"H100", "A100", "L40S", "RTX4090", "A6000", "H200", "B200", "L4", "A40"}
        assert len(expected & sold) >= 6, sorted(expected - sold)

    def test_pods_of_several_sizes(self, items: list[CatalogItem]) -> None:
        counts = {i.gpu_count for i in gpu_pods(items)}
        assert {1, 2, 4} <= counts, counts

    def test_price_scales_with_gpu_count(self, items: list[CatalogItem]) -> None:
        by_key: dict[tuple[str, str, bool], dict[int, float]] = {}
        # On demand, RunPod prices per GPU; spot bids are quoted per pod size and may differ.
        for i in gpu_pods(items):
            if not i.spot:
                by_key.setdefault((i.instance_name, i.location, i.spot), {})[i.gpu_count] = i.price
        for key, prices in by_key.items():
            per_gpu = {round(p / n, 4) for n, p in prices.items()}
            assert len(per_gpu) == 1, (key, prices)

    def test_spot_cheaper_than_on_demand(self, items: list[CatalogItem]) -> None:
        on_demand = {
            (i.instance_name, i.location, i.gpu_count): i.price
            for i in gpu_pods(items)
            if not i.spot
        }
        for i in gpu_pods(items):
            if i.spot:
                key = (i.instance_name, i.location, i.gpu_count)
                assert key in on_demand and i.price <= on_demand[key], i

    def test_cpu_offers(self, items: list[CatalogItem]) -> None:
        cpu = [i for i in items if i.gpu_count == 0]
        assert cpu
        for i in cpu:
            assert i.flags == [FLAG_CPU], i
            assert not i.spot and i.gpu_name is None, i
            assert DATA_CENTER.fullmatch(i.location), i
            assert i.disk_size and i.disk_size > 0, i
            assert i.instance_name == f"{i.instance_name.split('-')[0]}-{i.cpu}-{int(i.memory)}", i

    def test_cluster_offers(self, items: list[CatalogItem]) -> None:
        for i in items:
            if FLAG_CLUSTER in i.flags:
                assert i.flags == [FLAG_CLUSTER], i
                assert i.gpu_count >= 1 and not i.spot, i
                assert DATA_CENTER.fullmatch(i.location), i
                assert i.provider_data == {"pod_counts": CLUSTER_POD_COUNTS}, i
            else:
                assert "pod_counts" not in i.provider_data, i
