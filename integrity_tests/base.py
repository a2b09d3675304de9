"""Shared data-quality checks for a freshly collected provider CSV.

Run as `CATALOG_DIR=dir pytest integrity_tests/test_<provider>.py`. Each provider module
subclasses `BaseIntegrity` with `provider = "<name>"` and adds its own expectations (regions,
GPU models). A failure here keeps the provider's previous CSV in the nightly build.
"""

from __future__ import annotations

import os
from functools import cache

import pytest

from gpuhunt._internal.accelerators import accelerators_named
from gpuhunt._internal.formats.csv import ReadStats, load
from gpuhunt._internal.models import CatalogItem


@cache
def _load(path: str, provider: str) -> tuple[CatalogItem, ...]:
    stats = ReadStats()
    with open(path, encoding="utf-8", newline="") as f:
        items = tuple(load(f, provider=provider, stats=stats))
    if stats.skipped:
        raise AssertionError(f"{path}: {stats.skipped} malformed rows: {stats.errors}")
    return items


def load_catalog(provider: str) -> list[CatalogItem]:
    directory = os.getenv("CATALOG_DIR")
    if not directory:
        pytest.skip("set CATALOG_DIR to the folder holding the collected CSVs")
    path = os.path.join(directory, f"{provider}.csv")
    if not os.path.exists(path):
        pytest.fail(f"{path} does not exist")
    return list(_load(path, provider))


class BaseIntegrity:
    provider: str = ""
    has_spot: bool = False  # the provider sells both spot and on-demand
    min_offers: int = 1
    allow_unknown_gpus: bool = False

    @pytest.fixture
    def items(self) -> list[CatalogItem]:
        return load_catalog(self.provider)

    def test_has_offers(self, items: list[CatalogItem]) -> None:
        assert len(items) >= self.min_offers

    def test_names_and_locations(self, items: list[CatalogItem]) -> None:
        assert all(i.instance_name.strip() for i in items)
        assert all(i.location.strip() for i in items)

    def test_prices_positive(self, items: list[CatalogItem]) -> None:
        bad = [i for i in items if not i.price > 0]
        assert not bad, bad[:3]

    def test_cpu_and_memory_positive(self, items: list[CatalogItem]) -> None:
        bad = [i for i in items if i.cpu <= 0 or i.memory <= 0]
        assert not bad, bad[:3]

    def test_gpu_fields_consistent(self, items: list[CatalogItem]) -> None:
        for i in items:
            if i.gpu_count:
                assert i.gpu_name and i.gpu_vendor is not None, i
                assert i.gpu_memory is None or i.gpu_memory >= 0, i
            else:
                assert not i.gpu_name, i

    def test_known_gpu_names(self, items: list[CatalogItem]) -> None:
        if self.allow_unknown_gpus:
            return
        unknown = sorted(
            {i.gpu_name for i in items if i.gpu_name and not accelerators_named(i.gpu_name)}
        )
        assert not unknown, f"GPU names the accelerator tables do not know: {unknown}"

    def test_spot_and_on_demand(self, items: list[CatalogItem]) -> None:
        if self.has_spot:
            assert any(i.spot for i in items), "no spot offers"
            assert any(not i.spot for i in items), "no on-demand offers"

    def test_sorted_by_price(self, items: list[CatalogItem]) -> None:
        prices = [i.price for i in items]
        assert prices == sorted(prices)
