"""OVHcloud over its public cloud catalog, rebuilt from a dated table of OVHcloud's real prices
(tests/providers/data/ovhcloud/README.md), through scripts/replay/replay_ovhcloud.py."""

from __future__ import annotations

import copy

import pytest
import responses
from scripts.replay import replay_ovhcloud

from gpuhunt._internal import currency
from gpuhunt._internal.errors import ProviderError
from gpuhunt._internal.models import AcceleratorVendor
from gpuhunt.providers.ovhcloud import CATALOG_URL, OVHcloudProvider


def test_offers() -> None:
    with responses.RequestsMock() as rsps:
        replay_ovhcloud.register(rsps)
        provider = OVHcloudProvider()
        offers = provider.get()
        [call] = rsps.calls
        assert "Authorization" not in call.request.headers

    got = [
        (
            o.instance_name,
            o.price_native,
            o.cpu,
            o.memory,
            o.disk_size,
            o.gpu_count,
        )
        for o in offers
    ]
    assert got == [
        ("b3-8", 0.09, 2, 8.0, 50.0, 0),
        ("l4-90", 0.75, 22, 90.0, 400.0, 1),
        ("a10-45", 0.76, 30, 45.0, 400.0, 1),
        ("l40s-90", 1.4, 15, 90.0, 400.0, 1),
        ("a100-180", 2.75, 15, 180.0, 300.0, 1),
        ("h100-380", 2.8, 30, 380.0, 4040.0, 1),
        ("h100-1520", 11.2, 120, 1520.0, 4040.0, 4),
    ]
    gpus = {
        o.instance_name: (o.gpu_name, o.gpu_memory, o.gpu_vendor) for o in offers if o.gpu_count
    }
    assert gpus == {
        "l4-90": ("L4", 24.0, AcceleratorVendor.NVIDIA),
        "a10-45": ("A10", 24.0, AcceleratorVendor.NVIDIA),
        "l40s-90": ("L40S", 48.0, AcceleratorVendor.NVIDIA),
        "a100-180": ("A100", 80.0, AcceleratorVendor.NVIDIA),
        "h100-380": ("H100", 80.0, AcceleratorVendor.NVIDIA),
        "h100-1520": ("H100", 80.0, AcceleratorVendor.NVIDIA),
    }
    assert {o.location for o in offers} == {"eu"}
    assert {o.currency for o in offers} == {"EUR"}
    # `price` is USD: the EUR price at the ECB rate of the day, both kept beside it.
    rate = currency.reference_rate("EUR")
    for o in offers:
        assert o.fx_rate == rate.usd_per_unit, o
        assert o.fx_date == rate.date.isoformat(), o
        assert o.price == round(o.price_native * rate.usd_per_unit, 6), o
    assert not any(o.spot for o in offers)
    # the monthly and 3-AZ plans, and the Windows flavor
    assert provider.last_report.counts == {"other_plan": 2, "windows": 1}


def catalog() -> dict:
    return replay_ovhcloud.load()


@responses.activate
def test_malformed_addons_are_skipped_and_counted() -> None:
    data = catalog()
    good = data["addons"][0]
    no_price = copy.deepcopy(good)
    no_price["planCode"] = "np-1.consumption"
    no_price["pricings"] = [{"intervalUnit": "month", "price": 1}]
    no_cores = copy.deepcopy(good)
    no_cores["planCode"] = "nc-1.consumption"
    del no_cores["blobs"]["technical"]["cpu"]
    no_model = copy.deepcopy(good)
    no_model["planCode"] = "nm-1.consumption"
    no_model["blobs"]["technical"]["gpu"]["model"] = ""
    unknown = copy.deepcopy(good)
    unknown["planCode"] = "x9-96.consumption"
    unknown["blobs"]["technical"]["gpu"] = {"model": "X9", "number": 2, "memory": {"size": 96}}
    data["addons"] = [no_price, no_cores, no_model, "junk", unknown]
    responses.get(CATALOG_URL, json=data)
    provider = OVHcloudProvider()

    offers = provider.get()

    assert [(o.instance_name, o.gpu_name, o.gpu_count, o.gpu_memory) for o in offers] == [
        ("x9-96", "X9", 2, 96.0)
    ]
    report = provider.last_report
    assert report.counts["malformed"] == 4
    assert report.unknown_gpus == {"X9": 1}
    assert [s.split(":")[0] for s in report.skipped] == [
        "plan 'np-1.consumption'",
        "plan 'nc-1.consumption'",
        "plan 'nm-1.consumption'",
        "addon #3",
    ]


@responses.activate
def test_another_currency_is_refused() -> None:
    data = catalog()
    data["locale"]["currencyCode"] = "USD"
    responses.get(CATALOG_URL, json=data)
    with pytest.raises(ProviderError, match="'USD'"):
        OVHcloudProvider().get()


@pytest.mark.parametrize("status", [429, 500, 503])
@responses.activate
def test_overload_is_retried_then_an_error(status: int) -> None:
    responses.get(CATALOG_URL, status=status)

    with pytest.raises(ProviderError, match=f"HTTP {status}"):
        OVHcloudProvider().get()
    assert len(responses.calls) == 4


@responses.activate
def test_a_429_then_success_is_answered() -> None:
    responses.get(CATALOG_URL, status=429)
    responses.get(CATALOG_URL, json=catalog())

    assert len(OVHcloudProvider().get()) == 7
    assert len(responses.calls) == 2


@responses.activate
def test_a_refusal_is_an_error() -> None:
    # the catalog needs no key; a 401/403 would mean the API changed, and says so
    responses.get(CATALOG_URL, status=401)
    with pytest.raises(ProviderError, match="HTTP 401"):
        OVHcloudProvider().get()


@responses.activate
def test_invalid_json_and_wrong_shape() -> None:
    responses.get(CATALOG_URL, body="{")
    with pytest.raises(ProviderError, match="invalid JSON"):
        OVHcloudProvider().get()
    responses.replace(responses.GET, CATALOG_URL, json={"plans": []})
    with pytest.raises(ProviderError, match="'addons'"):
        OVHcloudProvider().get()


def test_collect_needs_no_credential() -> None:
    assert len(replay_ovhcloud.collect()) == 7
