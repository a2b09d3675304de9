"""Seeweb over the recorded `/ecs/v2/plans` answer (`ecs_v2_plans.json`, the shared fixture,
which mirrors the live shape: string amounts, RAM in MiB, `gpu_label` with a memory suffix).
Extra plans are built in the tests with the same field names."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import responses

from gpuhunt._internal import currency
from gpuhunt._internal.errors import MissingCredsError, ProviderError
from gpuhunt._internal.models import AcceleratorVendor
from gpuhunt.providers._report import ParseReport
from gpuhunt.providers.seeweb import (
    NON_NVIDIA_FLAG,
    PLANS_URL,
    SeewebProvider,
    accelerator_identity,
    parse_plans,
)

DATA = Path(__file__).parent / "data" / "seeweb"
TOKEN = "seeweb-test-token-0123456789"


def plans() -> dict[str, Any]:
    return json.loads((DATA / "ecs_v2_plans.json").read_text())


class TestRequest:
    @responses.activate
    def test_token_header(self):
        responses.add(responses.GET, PLANS_URL, json=plans())
        SeewebProvider(token=TOKEN).get()
        assert len(responses.calls) == 1
        request = responses.calls[0].request
        assert (request.method, request.url) == ("GET", "https://api.seeweb.it/ecs/v2/plans")
        assert request.headers["X-APITOKEN"] == TOKEN

    def test_from_env(self, monkeypatch):
        monkeypatch.setenv("SEEWEB_API_TOKEN", TOKEN)
        provider = SeewebProvider.from_env()
        assert TOKEN not in repr(provider)
        assert isinstance(SeewebProvider(), SeewebProvider)  # the constructor reads it too

    def test_missing_token(self, monkeypatch):
        monkeypatch.delenv("SEEWEB_API_TOKEN", raising=False)
        with pytest.raises(MissingCredsError, match="SEEWEB_API_TOKEN"):
            SeewebProvider.from_env()
        with pytest.raises(MissingCredsError, match="SEEWEB_API_TOKEN"):
            SeewebProvider()


class TestOffers:
    @responses.activate
    def test_gpu_plans_per_region(self):
        responses.add(responses.GET, PLANS_URL, json=plans())
        provider = SeewebProvider(token=TOKEN)
        offers = provider.get()
        native = [(o.instance_name, o.location, o.price_native) for o in offers]
        assert native == [
            ("ECS1GPU7", "it-fr2", 0.85),
            ("ECS1GPU7", "it-mi2", 0.85),
            ("ECS1GPU9", "it-fr2", 1.6),
            ("ECS2GPU3", "it-fr2", 1.98),
        ]  # the CPU-only plan eCS4 is not offered
        # Seeweb's EUR prices in USD at one dated ECB rate, kept beside them.
        [rate] = {(o.fx_rate, o.fx_date) for o in offers}
        assert {o.currency for o in offers} == {"EUR"}
        assert rate == (currency.reference_rate("EUR").usd_per_unit, rate[1])
        assert [o.price for o in offers] == [round(p * rate[0], 6) for _, _, p in native]
        l40s, _, mi300x, a100 = offers
        assert (l40s.gpu_name, l40s.gpu_count, l40s.gpu_memory) == ("L40S", 1, 48.0)
        assert (l40s.cpu, l40s.memory, l40s.disk_size) == (8, 32.0, 500.0)  # 32768 MiB
        assert (l40s.gpu_vendor, l40s.flags, l40s.spot) == (AcceleratorVendor.NVIDIA, [], False)
        assert (a100.gpu_name, a100.gpu_count, a100.gpu_memory) == ("A100", 2, 80.0)
        assert (a100.cpu, a100.memory, a100.disk_size) == (32, 240.0, 2000.0)
        assert (mi300x.gpu_name, mi300x.gpu_memory) == ("MI300X", 192.0)
        assert mi300x.gpu_vendor == AcceleratorVendor.AMD
        assert mi300x.flags == [NON_NVIDIA_FLAG]
        assert provider.last_report.counts == {}

    def test_inactive_plan_and_duplicate_region(self):
        payload = plans()
        payload["plans"][0]["available"] = False
        payload["plans"][1]["available_regions"].append({"location": "it-fr2"})
        assert [(o.instance_name, o.location) for o in parse_plans(payload)] == [
            ("ECS2GPU3", "it-fr2"),
            ("ECS1GPU9", "it-fr2"),
        ]

    def test_unknown_accelerator_is_kept_and_counted(self):
        payload = plans()
        grayskull = copy.deepcopy(payload["plans"][0])
        grayskull.update(name="ECS1TT1", gpu_label="Tenstorrent Grayskull e150")
        payload["plans"] = [grayskull]
        report = ParseReport()
        offers = parse_plans(payload, report)
        assert [(o.gpu_name, o.gpu_vendor, o.flags) for o in offers] == [
            ("Tenstorrent Grayskull e150", AcceleratorVendor.TENSTORRENT, [NON_NVIDIA_FLAG])
        ] * 2
        assert report.unknown_gpus == {"Tenstorrent Grayskull e150": 1}

    def test_malformed_plan_and_region_are_skipped_and_counted(self):
        payload = plans()
        payload["plans"][0]["cpu"] = "eight"
        payload["plans"][1]["available_regions"].append({"id": 3})
        payload["plans"].append("not a plan")
        report = ParseReport()
        offers = parse_plans(payload, report)
        assert [(o.instance_name, o.location) for o in offers] == [
            ("ECS2GPU3", "it-fr2"),
            ("ECS1GPU9", "it-fr2"),
        ]
        assert report.counts == {"malformed": 3}

    @pytest.mark.parametrize(
        ("label", "expected"),
        [
            ("RTX A6000 48GB", ("A6000", AcceleratorVendor.NVIDIA, 48.0)),
            ("RTX 6000 24GB", ("RTX6000", AcceleratorVendor.NVIDIA, 24.0)),
            ("RTX PRO 6000 96GB", ("RTXPRO6000", AcceleratorVendor.NVIDIA, 96.0)),
            ("H200 141GB", ("H200", AcceleratorVendor.NVIDIA, 141.0)),
            ("A30", ("A30", AcceleratorVendor.NVIDIA, 24.0)),
            ("Tenstorrent Wormhole n300", ("n300", AcceleratorVendor.TENSTORRENT, 24.0)),
        ],
    )
    def test_labels(self, label, expected):
        assert accelerator_identity(label) == expected


class TestErrors:
    @responses.activate
    def test_refused_token_names_the_variable_and_hides_the_token(self):
        responses.add(responses.GET, PLANS_URL, status=401, json={"status": "ko"})
        with pytest.raises(ProviderError) as error:
            SeewebProvider(token=TOKEN).get()
        assert "SEEWEB_API_TOKEN" in str(error.value)
        assert TOKEN not in str(error.value)

    @responses.activate
    def test_rate_limit_is_retried_a_bounded_number_of_times(self):
        responses.add(responses.GET, PLANS_URL, status=429)
        with pytest.raises(ProviderError, match="HTTP 429"):
            SeewebProvider(token=TOKEN).get()
        assert len(responses.calls) == 4

    @responses.activate
    def test_malformed_json(self):
        responses.add(responses.GET, PLANS_URL, body="plans: none")
        with pytest.raises(ProviderError, match="invalid JSON"):
            SeewebProvider(token=TOKEN).get()

    def test_wrong_shape_names_the_field(self):
        with pytest.raises(ProviderError, match="'plans' is missing"):
            parse_plans({"status": "ok"})
        with pytest.raises(ProviderError, match="'plans' has type dict"):
            parse_plans({"status": "ok", "plans": {}})


class TestCaching:
    @responses.activate
    def test_answers_are_cached_per_token(self):
        responses.add(responses.GET, PLANS_URL, json=plans())
        SeewebProvider(token=TOKEN).get()
        SeewebProvider(token=TOKEN).get()
        assert len(responses.calls) == 1
        SeewebProvider(token="another-account").get()
        assert len(responses.calls) == 2
        assert responses.calls[1].request.headers["X-APITOKEN"] == "another-account"


@responses.activate
def test_a_gpu_count_of_1e999_skips_that_plan_only():
    """`1e999` is valid JSON and decodes to infinity; int() of it raises OverflowError, which
    the shared record guard turns into one skipped, counted plan (issue 27)."""
    payload = plans()
    payload["plans"][0]["gpu"] = "__BIG__"
    responses.add(
        responses.GET,
        PLANS_URL,
        body=json.dumps(payload).replace('"__BIG__"', "1e999"),
        content_type="application/json",
    )
    provider = SeewebProvider(token=TOKEN)
    offers = provider.get()
    assert [(o.instance_name, o.location) for o in offers] == [
        ("ECS1GPU9", "it-fr2"),
        ("ECS2GPU3", "it-fr2"),
    ]
    assert provider.last_report.counts == {"malformed": 1}


def test_prices_are_converted_at_the_rate_given():
    rate = currency.Rate("EUR", 1.1699, __import__("datetime").date(2026, 8, 21))
    offers = parse_plans(plans(), rate=rate)
    first = offers[0]
    assert (first.price, first.provider_data) == (0.994415, {})  # 0.85 EUR x 1.1699
    native = (first.currency, first.price_native, first.fx_rate, first.fx_date)
    assert native == ("EUR", 0.85, 1.1699, "2026-08-21")


@responses.activate
def test_a_price_that_cannot_be_converted_fails_the_collection(monkeypatch):
    """EUR with no usable rate is an error, never EUR shown as USD."""

    def no_rate(code, on=None):
        raise currency.CurrencyError(f"no ECB reference rate for {code!r}")

    monkeypatch.setattr(currency, "reference_rate", no_rate)
    responses.add(responses.GET, PLANS_URL, json=plans())
    with pytest.raises(currency.CurrencyError, match="EUR"):
        SeewebProvider(token=TOKEN).get()
