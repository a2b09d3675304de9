"""Data-quality checks on a freshly collected gcp.csv (`CATALOG_DIR=dir pytest ...`)."""

from __future__ import annotations

import re
from collections import defaultdict

from gpuhunt._internal.accelerators import accelerators_named
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem
from gpuhunt.providers.gcp import FRACTIONAL_GPU_SHARE, PUBLISHED_PREFIXES
from integrity_tests.base import BaseIntegrity

ZONE = re.compile(r"[a-z]+-[a-z]+\d+-[a-z]")
TPU_NAME = re.compile(r"(v\d+[a-z]*)-(\d+)")


def tpus(items: list[CatalogItem]) -> list[CatalogItem]:
    return [i for i in items if i.gpu_vendor == AcceleratorVendor.GOOGLE]


class TestGCPIntegrity(BaseIntegrity):
    provider = "gcp"
    has_spot = True
    min_offers = 500
    # TPU offers are named after the accelerator type ("v5litepod-8"), checked below.
    allow_unknown_gpus = True

    def test_known_gpu_names(self, items: list[CatalogItem]) -> None:
        unknown = set()
        for item in items:
            if not item.gpu_name:
                continue
            name = item.gpu_name
            if item.gpu_vendor == AcceleratorVendor.GOOGLE and (m := TPU_NAME.fullmatch(name)):
                name = m.group(1)
            if not accelerators_named(name):
                unknown.add(item.gpu_name)
        assert not unknown, sorted(unknown)

    def test_locations_are_zones(self, items: list[CatalogItem]) -> None:
        odd = sorted({i.location for i in items if not ZONE.fullmatch(i.location)})
        assert not odd, odd

    def test_main_zones_sell_e2(self, items: list[CatalogItem]) -> None:
        for zone in ("us-central1-a", "europe-west4-a"):
            e2 = [i for i in items if i.instance_name == "e2-standard-2" and i.location == zone]
            assert {i.spot for i in e2} == {False, True}, zone

    def test_gpu_models(self, items: list[CatalogItem]) -> None:
        gpus = {i.gpu_name for i in items if i.gpu_vendor == AcceleratorVendor.NVIDIA}
        assert {"A100", "H100", "L4", "T4", "V100"} <= gpus
        assert {i.gpu_memory for i in items if i.gpu_name == "A100"} == {40.0, 80.0}

    def test_tpu_generations(self, items: list[CatalogItem]) -> None:
        versions = set()
        for item in tpus(items):
            m = TPU_NAME.fullmatch(item.instance_name)
            assert m and item.gpu_name == item.instance_name and item.gpu_count == 1, item
            assert item.cpu > 0 and item.gpu_memory, item
            versions.add(m.group(1))
        assert {"v5litepod", "v5p", "v6e"} <= versions

    def test_dws_and_machine_flags(self, items: list[CatalogItem]) -> None:
        for item in items:
            dws = item.provider_data.get("is_dws_calendar_mode")
            assert isinstance(dws, bool), item
            assert ("gcp-dws-calendar-mode" in item.flags) == dws, item
            assert ("gcp-a4" in item.flags) == item.instance_name.startswith("a4-"), item
            g4 = item.instance_name.startswith("g4-standard-")
            # a G4 offer carries gcp-g4 or, in its copy for dstack 0.19.33, gcp-g4-preview
            assert (("gcp-g4" in item.flags) != ("gcp-g4-preview" in item.flags)) == g4, item
            assert not (dws and item.spot), item

    def test_only_what_gcp_sells_on_demand(self, items: list[CatalogItem]) -> None:
        bad = [
            i
            for i in items
            if not i.spot
            and not i.provider_data.get("is_dws_calendar_mode")
            and (
                i.instance_name.startswith(("a4-", "a4x-", "a3-ultragpu-"))
                or (i.instance_name.startswith("a3-highgpu-") and i.gpu_count < 8)
            )
        ]
        assert not bad, bad[:3]

    def test_published_families(self, items: list[CatalogItem]) -> None:
        bad = [
            i
            for i in items
            if not i.gpu_count and not i.instance_name.startswith(PUBLISHED_PREFIXES)
        ]
        assert not bad, bad[:3]

    def test_fractional_g4_memory(self, items: list[CatalogItem]) -> None:
        for item in items:
            if item.instance_name.startswith("g4-standard-"):
                share = FRACTIONAL_GPU_SHARE.get(item.instance_name, 1.0)
                assert item.gpu_name == "RTXPRO6000" and item.gpu_memory == 96.0 * share, item

    def test_spot_not_dearer_than_on_demand(self, items: list[CatalogItem]) -> None:
        prices: dict[tuple, dict[bool, float]] = defaultdict(dict)
        for i in items:
            if not i.provider_data.get("is_dws_calendar_mode"):
                key = (i.instance_name, i.location, i.gpu_name, i.gpu_count)
                prices[key][i.spot] = i.price
        dearer = [k for k, p in prices.items() if len(p) == 2 and p[True] > p[False]]
        assert not dearer, dearer[:3]

    def test_a100_price_plausible(self, items: list[CatalogItem]) -> None:
        a2 = [
            i.price
            for i in items
            if i.instance_name == "a2-highgpu-1g"
            and i.location.startswith("us-central1-")
            and not i.spot
        ]
        assert a2 and all(2.5 < p < 6.0 for p in a2), a2
