"""VerdaProvider over recorded API answers (see replay_verda.py for where they came from)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import responses
from scripts.replay import replay_verda as replay

from gpuhunt._internal.accelerators import accelerators_named
from gpuhunt._internal.errors import MissingCredsError, ProviderError
from gpuhunt._internal.models import AcceleratorVendor
from gpuhunt.providers.verda import (
    AVAILABILITY_URL,
    INSTANCE_TYPES_URL,
    LOCATIONS_URL,
    TOKEN_URL,
    ParseReport,
    VerdaProvider,
    parse_offers,
)

LOCATIONS = {"FIN-01", "FIN-02", "ICE-01"}
TYPES = {"1H100.80S.30V", "2A6000.20V", "CPU.120V.480G", "1V100.6V"}


def instance_types() -> list[dict[str, Any]]:
    return copy.deepcopy(replay.load("instance_types.json"))


def parse(types: list[dict[str, Any]], **kwargs: Any):
    return parse_offers(types, replay.load("locations.json"), **kwargs)


def record(description: str, count: int, total_memory: float, **extra: Any) -> dict[str, Any]:
    base = copy.deepcopy(instance_types()[0])
    base.update(instance_type=f"X.{description}", **extra)
    base["gpu"] = {"description": description, "number_of_gpus": count}
    base["gpu_memory"] = {"description": "", "size_in_gigabytes": total_memory}
    return base


def offer(offers, name: str, location: str, spot: bool):
    [found] = [o for o in offers if (o.instance_name, o.location, o.spot) == (name, location, spot)]
    return found


def test_replay_lists_every_type_in_every_location_on_demand_and_spot() -> None:
    offers = replay.collect()

    assert len(offers) == len(TYPES) * len(LOCATIONS) * 2
    assert {o.instance_name for o in offers} == TYPES
    assert {o.location for o in offers} == LOCATIONS
    # 1H100 has no capacity anywhere in the recorded spot availability, yet it is listed.
    assert {
        o.location for o in offers if o.instance_name == "1H100.80S.30V" and o.spot
    } == LOCATIONS
    assert [o.price for o in offers] == sorted(o.price for o in offers)
    assert (offers[0].instance_name, offers[0].price, offers[0].spot) == ("1V100.6V", 0.25, True)
    assert replay.collect() == offers  # deterministic


def test_replay_facts_of_each_instance_type() -> None:
    offers = replay.collect()

    h100 = offer(offers, "1H100.80S.30V", "FIN-01", False)
    assert (h100.price, h100.cpu, h100.memory) == (3.95, 30, 120.0)
    assert (h100.gpu_count, h100.gpu_name, h100.gpu_memory) == (1, "H100", 80)
    assert h100.gpu_vendor == AcceleratorVendor.NVIDIA and h100.disk_size is None
    assert offer(offers, "1H100.80S.30V", "FIN-01", True).price == 1.70

    a6000 = offer(offers, "2A6000.20V", "FIN-02", False)
    assert (a6000.price, a6000.cpu, a6000.memory) == (1.98, 20, 120.0)
    assert (a6000.gpu_count, a6000.gpu_name, a6000.gpu_memory) == (2, "A6000", 48)
    assert offer(offers, "2A6000.20V", "FIN-02", True).price == 0.70

    cpu = offer(offers, "CPU.120V.480G", "ICE-01", False)
    assert (cpu.price, cpu.cpu, cpu.memory) == (3.00, 120, 480.0)
    assert (cpu.gpu_count, cpu.gpu_name, cpu.gpu_memory, cpu.gpu_vendor) == (0, None, None, None)
    assert offer(offers, "CPU.120V.480G", "ICE-01", True).price == 1.50

    v100 = offer(offers, "1V100.6V", "FIN-01", False)
    assert (v100.price, v100.cpu, v100.memory) == (0.89, 6, 23.0)
    assert (v100.gpu_count, v100.gpu_name, v100.gpu_memory) == (1, "V100", 16)


@responses.activate
def test_requests_sent() -> None:
    replay.register(responses.mock, client_id="my-id", client_secret="my-secret")
    provider = VerdaProvider("my-id", "my-secret")
    offers = provider.get()

    assert offers
    calls = [(c.request.method, c.request.url.split("?")[0]) for c in responses.calls]
    assert calls == [
        ("POST", TOKEN_URL),
        ("GET", INSTANCE_TYPES_URL),
        ("GET", LOCATIONS_URL),
        ("GET", AVAILABILITY_URL),
        ("GET", AVAILABILITY_URL),
    ]  # the body and query parameters are checked by the matchers in replay.register
    assert "Authorization" not in responses.calls[0].request.headers
    for call in responses.calls[1:]:
        assert call.request.headers["Authorization"] == f"Bearer {replay.REPLAY_ACCESS_TOKEN}"
    # Recorded availability names types the trimmed price list lacks: counted, not published.
    assert provider.last_report.unpriced_types["1A100.22V"] == 1
    assert provider.last_report.unpriced_types["CPU.4V.16G"] == 4  # 2 locations x 2 modes
    assert provider.last_report.skipped == []


@pytest.mark.parametrize(
    "description, count, total, name, memory",
    [
        ("8x H100 SXM5 80GB", 8, 640, "H100", 80),
        ("8x H200 SXM5 141GB", 8, 1128, "H200", 141),
        ("8x B200 SXM6 180GB", 8, 1440, "B200", 180),
        ("1x B300 SXM6 268GB", 1, 268, "B300", 270),  # near the tables' 270: that size
        ("4x A100 SXM4 40GB", 4, 160, "A100", 40),
        ("8x A100 SXM4 80GB", 8, 640, "A100", 80),
        ("1x RTX6000 Ada 48GB", 1, 48, "RTX6000Ada", 48),
        ("2x RTX 6000 Ada 48GB", 2, 96, "RTX6000Ada", 48),
        ("1x RTX PRO 6000 96GB", 1, 96, "RTXPRO6000", 96),
        ("1x L40S 48GB", 1, 48, "L40S", 48),
        ("4x Tesla V100 16GB", 4, 64, "V100", 16),
    ],
)
def test_gpu_names_from_descriptions(
    description: str, count: int, total: float, name: str, memory: float
) -> None:
    offers = parse([record(description, count, total)])
    assert {(o.gpu_name, o.gpu_count, o.gpu_memory) for o in offers} == {(name, count, memory)}
    assert {o.gpu_vendor for o in offers} == {AcceleratorVendor.NVIDIA}


def test_unknown_gpu_is_kept_warned_counted_and_filtered_if_amd(
    caplog: pytest.LogCaptureFixture,
) -> None:
    types = [
        *instance_types(),
        record("1x AMD 7900XTX", 1, 24, manufacturer="AMD", model="7900XTX"),
        record("1x Future GPU 512GB", 1, 512, model="Future GPU"),
    ]
    report = ParseReport()
    offers = parse(types, report=report)

    amd = [o for o in offers if o.gpu_name == "AMD 7900XTX"]
    assert len(amd) == len(LOCATIONS) * 2
    assert {(o.gpu_vendor, o.gpu_memory) for o in amd} == {(AcceleratorVendor.AMD, 24)}
    future = [o for o in offers if o.gpu_name == "Future GPU 512GB"]
    assert {(o.gpu_vendor, o.gpu_memory) for o in future} == {(AcceleratorVendor.NVIDIA, 512)}
    assert report.unknown_gpus == {"AMD 7900XTX": 1, "Future GPU 512GB": 1}
    assert "AMD 7900XTX" in caplog.text

    published = VerdaProvider.filter(offers)
    assert not [o for o in published if o.gpu_vendor == AcceleratorVendor.AMD]
    assert len(published) == len(offers) - len(amd)


def test_malformed_record_is_skipped_and_counted() -> None:
    types = instance_types()
    types[0]["price_per_hour"] = "N/A"
    del types[1]["cpu"]
    types.append("not a record")
    report = ParseReport()
    offers = parse(types, report=report)

    assert {o.instance_name for o in offers} == {"CPU.120V.480G", "1V100.6V"}
    assert len(report.skipped) == 3
    assert any("price_per_hour is not a number" in s for s in report.skipped)
    assert any("'cpu'" in s for s in report.skipped)


def test_type_without_spot_price_has_no_spot_offer() -> None:
    types = instance_types()
    types[0]["spot_price"] = None
    offers = parse(types)
    assert {o.spot for o in offers if o.instance_name == "1H100.80S.30V"} == {False}


def test_location_reporting_capacity_but_not_listed_is_added() -> None:
    availability = [[{"location_code": "FIN-03", "availabilities": ["1V100.6V"]}]]
    offers = parse(instance_types(), availability=availability)
    assert {o.location for o in offers} == LOCATIONS | {"FIN-03"}


def test_every_record_malformed_is_an_error_not_an_empty_catalog() -> None:
    with pytest.raises(ProviderError, match="no offers from 1 instance types"):
        parse([{"instance_type": "x"}])


@pytest.mark.parametrize("payload", [{"data": []}, "text", None])
def test_wrong_shape_is_a_provider_error(payload: Any) -> None:
    with pytest.raises(ProviderError, match="GET /instance-types: expected a list"):
        parse(payload)


def _token_then(rsps: responses.RequestsMock) -> None:
    rsps.add(responses.POST, TOKEN_URL, json=replay.token_answer())


@pytest.mark.parametrize("status", [400, 401])
def test_bad_credentials_fail_clearly_without_the_secret(status: int) -> None:
    with responses.RequestsMock() as rsps:
        rsps.add(responses.POST, TOKEN_URL, status=status, json={"code": "unauthorized_request"})
        with pytest.raises(ProviderError) as e:
            VerdaProvider("my-id", "very-secret").get()
    assert "oauth2/token" in str(e.value)
    assert "very-secret" not in str(e.value)
    if status == 401:
        assert "VERDA_CLIENT_ID/VERDA_CLIENT_SECRET" in str(e.value)


def test_token_answer_without_access_token_names_the_field() -> None:
    with responses.RequestsMock() as rsps:
        rsps.add(responses.POST, TOKEN_URL, json={"token_type": "Bearer"})
        with pytest.raises(ProviderError, match="'access_token' is missing"):
            VerdaProvider("id", "secret").get()


@pytest.mark.parametrize("status", [429, 500, 503])
def test_throttling_and_server_errors_are_retried_then_fail(status: int) -> None:
    with responses.RequestsMock() as rsps:
        _token_then(rsps)
        types = rsps.add(responses.GET, INSTANCE_TYPES_URL, status=status)
        with pytest.raises(ProviderError, match=f"HTTP {status}"):
            VerdaProvider("id", "secret").get()
    assert types.call_count == 4  # one try and three bounded retries


def test_malformed_json_is_a_provider_error() -> None:
    with responses.RequestsMock() as rsps:
        _token_then(rsps)
        rsps.add(responses.GET, INSTANCE_TYPES_URL, body="{not json")
        with pytest.raises(ProviderError, match="invalid JSON"):
            VerdaProvider("id", "secret").get()


@pytest.mark.parametrize("missing", ["VERDA_CLIENT_ID", "VERDA_CLIENT_SECRET"])
def test_missing_credentials_name_the_variable(
    monkeypatch: pytest.MonkeyPatch, missing: str
) -> None:
    monkeypatch.setenv("VERDA_CLIENT_ID", "id")
    monkeypatch.setenv("VERDA_CLIENT_SECRET", "secret")
    monkeypatch.delenv(missing)
    with pytest.raises(MissingCredsError, match=missing):
        VerdaProvider.from_env()


def test_repr_hides_the_secret() -> None:
    assert "very-secret" not in repr(VerdaProvider("id", "very-secret"))


def test_gpu_names_resolve_to_canonical_names() -> None:
    unresolved = sorted(
        {o.gpu_name for o in replay.collect() if o.gpu_name and not accelerators_named(o.gpu_name)}
    )
    assert unresolved == [], f"Verda GPU names missing from the accelerator tables: {unresolved}"


def test_replay_records_the_availability_reading_of_each_kind() -> None:
    offers = replay.collect()
    reading = {(o.instance_name, o.location, o.spot): o.available for o in offers}

    # On demand: 1H100 had capacity in FIN-01 and FIN-02, none in ICE-01 (still listed there).
    assert reading[("1H100.80S.30V", "FIN-01", False)] is True
    assert reading[("1H100.80S.30V", "FIN-02", False)] is True
    assert reading[("1H100.80S.30V", "ICE-01", False)] is False
    # Spot is its own answer: 1H100 had no spot capacity anywhere, 1V100 in FIN-01 only.
    assert not any(reading[("1H100.80S.30V", loc, True)] for loc in LOCATIONS)
    assert reading[("1V100.6V", "FIN-01", True)] is True
    assert reading[("1V100.6V", "FIN-02", True)] is False
    assert reading[("CPU.120V.480G", "ICE-01", True)] is True


def test_no_reading_without_labelled_availability_answers() -> None:
    unlabelled = [replay.load("instance_availability_spot.json")]
    for offers in (parse(instance_types()), parse(instance_types(), availability=unlabelled)):
        assert offers and all(o.available is None for o in offers)
