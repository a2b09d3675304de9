"""Scaleway over two pages of its public product catalog: the documented example product and
GPU products built in its schema (tests/providers/data/scaleway/README.md), through the
replay in scripts/replay/replay_scaleway.py."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import responses
from scripts.replay import replay_scaleway

from gpuhunt._internal import currency
from gpuhunt._internal.errors import ProviderError
from gpuhunt._internal.models import AcceleratorVendor, CPUArchitecture
from gpuhunt.providers.scaleway import PRODUCTS_URL, ScalewayProvider


def test_offers_from_both_pages() -> None:
    with responses.RequestsMock() as rsps:
        replay_scaleway.register(rsps)
        provider = ScalewayProvider()
        offers = provider.get()
        assert len(rsps.calls) == 2
        assert "Authorization" not in rsps.calls[0].request.headers

    got = [
        (o.instance_name, o.location, o.price_native, o.cpu, o.memory, o.gpu_count) for o in offers
    ]
    assert got == [
        ("POP2-HC-2C-4G", "fr-par-2", 0.0532, 2, 4.0, 0),
        ("L4-1-24G", "fr-par-1", 0.75, 8, 48.0, 1),
        ("L4-1-24G", "pl-waw-2", 0.75, 8, 48.0, 1),
        ("L40S-1-48G", "fr-par-2", 1.4, 8, 96.0, 1),
        ("H100-1-80G", "fr-par-2", 2.73, 24, 240.0, 1),
        ("H100-2-80G", "fr-par-2", 5.46, 48, 480.0, 2),
    ]
    gpus = {
        o.instance_name: (o.gpu_name, o.gpu_memory, o.gpu_vendor) for o in offers if o.gpu_count
    }
    assert gpus == {
        "L4-1-24G": ("L4", 24.0, AcceleratorVendor.NVIDIA),
        "L40S-1-48G": ("L40S", 48.0, AcceleratorVendor.NVIDIA),
        "H100-1-80G": ("H100", 80.0, AcceleratorVendor.NVIDIA),
        "H100-2-80G": ("H100", 80.0, AcceleratorVendor.NVIDIA),
    }
    by_name = {o.instance_name: o for o in offers}
    assert by_name["POP2-HC-2C-4G"].disk_size is None  # block storage only
    assert by_name["H100-1-80G"].disk_size == 3000.0
    assert {o.currency for o in offers} == {"EUR"}
    # `price` is USD: the EUR price at the ECB rate of the day, both kept beside it.
    rate = currency.reference_rate("EUR")
    for o in offers:
        assert o.fx_rate == rate.usd_per_unit, o
        assert o.fx_date == rate.date.isoformat(), o
        assert o.price == round(o.price_native * rate.usd_per_unit, 6), o
    assert {o.cpu_arch for o in offers} == {CPUArchitecture.X86}
    assert not any(o.spot for o in offers)
    # the RENDER-S product is end_of_sale
    assert provider.last_report.counts == {"not_orderable": 1}


def products() -> list[Any]:
    return replay_scaleway.load(1)["products"]


@responses.activate
def test_malformed_products_are_skipped_and_counted() -> None:
    good = products()[1]
    usd = copy.deepcopy(good)
    usd["sku"] = "usd"
    usd["price"]["retail_price"]["currency_code"] = "USD"
    no_ram = copy.deepcopy(good)
    no_ram["sku"] = "no-ram"
    del no_ram["properties"]["hardware"]["ram"]
    bad_nanos = copy.deepcopy(good)
    bad_nanos["sku"] = "bad-nanos"
    bad_nanos["price"]["retail_price"]["nanos"] = "730000000"
    monthly = copy.deepcopy(good)
    monthly["unit_of_measure"] = {"unit": "month", "size": 1}
    arm = copy.deepcopy(products()[0])
    arm["properties"]["hardware"]["cpu"]["arch"] = "arm64"
    arm["properties"]["instance"] = {"range": "Cost-Optimized", "offer_id": "COPARM1-2C-8G"}
    unknown = copy.deepcopy(good)
    unknown["properties"]["instance"]["offer_id"] = "X9-1-96G"
    unknown["properties"]["hardware"]["gpu"].update(type="X9", description="ACME X9")
    storage = {"sku": "/storage/local/ssd/storage", "locality": {"global": True}, "properties": {}}
    page = [usd, no_ram, bad_nanos, monthly, arm, unknown, storage, None]
    responses.get(PRODUCTS_URL, json={"products": page, "total_count": len(page)})
    provider = ScalewayProvider()

    offers = provider.get()

    assert [(o.instance_name, o.cpu_arch, o.gpu_name, o.gpu_memory) for o in offers] == [
        ("COPARM1-2C-8G", CPUArchitecture.ARM, None, None),
        ("X9-1-96G", CPUArchitecture.X86, "X9", 96.0),
    ]
    report = provider.last_report
    assert report.counts == {
        "malformed": 4,
        "not_hourly": 1,
        "not_an_instance": 1,
    }
    assert report.unknown_gpus == {"X9": 1}
    assert [s.split(":")[0] for s in report.skipped] == [
        "product 'usd'",
        "product 'no-ram'",
        "product 'bad-nanos'",
        "product #7",
    ]


@pytest.mark.parametrize("status", [429, 500, 503])
@responses.activate
def test_overload_is_retried_then_an_error(status: int) -> None:
    responses.get(PRODUCTS_URL, status=status)

    with pytest.raises(ProviderError, match=f"HTTP {status}"):
        ScalewayProvider().get()
    assert len(responses.calls) == 4


@responses.activate
def test_a_429_then_success_is_answered() -> None:
    responses.get(PRODUCTS_URL, status=429)
    responses.get(PRODUCTS_URL, json={"products": products(), "total_count": 4})

    assert len(ScalewayProvider().get()) == 4
    assert len(responses.calls) == 2


@responses.activate
def test_a_refusal_is_an_error() -> None:
    # the catalog needs no key; a 401/403 would mean the API changed, and says so
    responses.get(PRODUCTS_URL, status=403)
    with pytest.raises(ProviderError, match="HTTP 403"):
        ScalewayProvider().get()


@responses.activate
def test_invalid_json_and_wrong_shape() -> None:
    responses.get(PRODUCTS_URL, body="{")
    with pytest.raises(ProviderError, match="invalid JSON"):
        ScalewayProvider().get()
    responses.replace(responses.GET, PRODUCTS_URL, json={"items": []})
    with pytest.raises(ProviderError, match="'products'"):
        ScalewayProvider().get()


def test_collect_needs_no_credential(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("SCW_SECRET_KEY", "SCW_ACCESS_KEY"):
        monkeypatch.delenv(var, raising=False)
    assert len(replay_scaleway.collect()) == 6
