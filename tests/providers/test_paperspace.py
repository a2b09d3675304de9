"""Paperspace: the price list (from SkyPilot's catalog) asked for availability per machine type
and region, over the documented `/machine-availability` answers
(tests/providers/data/paperspace/README.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import responses

from gpuhunt._internal.errors import MissingCredsError, ProviderError
from gpuhunt._internal.models import AcceleratorVendor, QueryFilter
from gpuhunt.providers._report import ParseReport
from gpuhunt.providers.paperspace import AVAILABILITY_URL, PaperspaceProvider, list_offers

DATA = Path(__file__).parent / "data" / "paperspace"
YES = json.loads((DATA / "machine_availability_true.json").read_text())
NO = json.loads((DATA / "machine_availability_false.json").read_text())


def answer(available: set[tuple[str, str]]) -> Any:
    def callback(request: Any) -> tuple[int, dict[str, str], str]:
        query = parse_qs(urlsplit(request.url).query)
        pair = (query["machineType"][0], query["region"][0])
        return 200, {}, json.dumps(YES if pair in available else NO)

    return callback


def asked() -> list[tuple[str, str]]:
    out = []
    for call in responses.calls:
        query = parse_qs(urlsplit(call.request.url).query)
        out.append((query["machineType"][0], query["region"][0]))
    return out


@responses.activate
def test_a_gpu_query_asks_only_for_matching_machines() -> None:
    responses.add_callback(
        responses.GET, AVAILABILITY_URL, callback=answer({("H100x8", "East Coast (NY2)")})
    )
    provider = PaperspaceProvider(api_key="ps-secret")

    offers = provider.get(QueryFilter(gpu_name=["H100"]))

    assert sorted(asked()) == [("H100", "East Coast (NY2)"), ("H100x8", "East Coast (NY2)")]
    assert {c.request.headers["Authorization"] for c in responses.calls} == {"Bearer ps-secret"}
    sold_out, h100 = offers
    assert (sold_out.instance_name, sold_out.available, sold_out.provider_data) == (
        "H100",
        False,
        {},
    )
    assert (h100.available, h100.provider_data) == (True, {})
    assert (h100.instance_name, h100.location, h100.price, h100.cpu, h100.memory) == (
        "H100x8",
        "East Coast (NY2)",
        47.6,
        128,
        640.0,
    )
    assert (h100.gpu_name, h100.gpu_count, h100.gpu_memory, h100.gpu_vendor) == (
        "H100",
        8,
        80.0,
        AcceleratorVendor.NVIDIA,
    )


@responses.activate
def test_every_listed_pair_is_asked_without_a_filter() -> None:
    available = {("A4000", "Europe (AMS1)"), ("A4000", "West Coast (CA1)"), ("C5", "Europe (AMS1)")}
    responses.add_callback(responses.GET, AVAILABILITY_URL, callback=answer(available))

    offers = PaperspaceProvider(api_key="k").get()

    # 14 GPU machine types over their 26 regions, 5 CPU types in all 3
    assert len(responses.calls) == len(list_offers()) == 26 + 15
    # Every listed pair is offered; the answer is its reading.
    assert len(offers) == len(list_offers())
    assert [(o.instance_name, o.location, o.price, o.gpu_name) for o in offers if o.available] == [
        ("C5", "Europe (AMS1)", 0.08, None),
        ("A4000", "Europe (AMS1)", 0.76, "A4000"),
        ("A4000", "West Coast (CA1)", 0.76, "A4000"),
    ]
    assert sum(o.available is False for o in offers) == len(offers) - 3


def test_the_price_list() -> None:
    report = ParseReport()
    by_type = {(o.instance_name, o.location): o for o in list_offers(report)}
    a100 = by_type["A100-80Gx8", "East Coast (NY2)"]
    assert (a100.gpu_name, a100.gpu_memory, a100.gpu_count, a100.price) == ("A100", 80.0, 8, 25.44)
    v100 = by_type["V100-32Gx4", "East Coast (NY2)"]
    assert (v100.gpu_name, v100.gpu_memory, v100.cpu, v100.memory) == ("V100", 32.0, 32, 128.0)
    assert by_type["V100", "Europe (AMS1)"].gpu_memory == 16.0
    m4000 = by_type["GPU+", "Europe (AMS1)"]
    assert (m4000.gpu_name, m4000.gpu_memory) == ("M4000", 8.0)
    assert ("GPU+", "West Coast (CA1)") not in by_type  # not sold there
    assert report.unknown_gpus == {"M4000": 1, "P4000": 2}  # per machine type


@responses.activate
def test_a_malformed_answer_is_skipped_and_counted() -> None:
    responses.get(AVAILABILITY_URL, json={"availability": "yes"})
    provider = PaperspaceProvider(api_key="k")

    offers = provider.get(QueryFilter(gpu_name=["H100"]))
    # Kept from the price list, without a reading: the answer said nothing usable.
    assert [o.instance_name for o in offers] == ["H100", "H100x8"]
    assert all(o.available is None for o in offers)
    assert provider.last_report.counts["malformed"] == 2
    assert provider.last_report.skipped[0].startswith("availability of H100")


@responses.activate
def test_refused_key_names_the_variable() -> None:
    responses.get(AVAILABILITY_URL, status=401, json={"code": "UNAUTHORIZED", "message": "no"})

    with pytest.raises(ProviderError, match="PAPERSPACE_API_KEY") as e:
        PaperspaceProvider(api_key="ps-secret").get(QueryFilter(gpu_name=["H100"]))
    assert "ps-secret" not in str(e.value)


@pytest.mark.parametrize("status", [429, 500, 503])
@responses.activate
def test_overload_is_retried_then_an_error(status: int) -> None:
    responses.get(AVAILABILITY_URL, status=status)

    with pytest.raises(ProviderError, match=f"HTTP {status}"):
        PaperspaceProvider(api_key="k").get(QueryFilter(gpu_name=["H100"], max_gpu_count=1))
    assert len(responses.calls) == 4


@responses.activate
def test_a_429_then_success_is_answered() -> None:
    responses.get(AVAILABILITY_URL, status=429)
    responses.get(AVAILABILITY_URL, json=YES)

    [offer] = PaperspaceProvider(api_key="k").get(QueryFilter(gpu_name=["H100"], max_gpu_count=1))
    assert offer.instance_name == "H100"
    assert len(responses.calls) == 2


@responses.activate
def test_invalid_json_is_an_error() -> None:
    responses.get(AVAILABILITY_URL, body="{")
    with pytest.raises(ProviderError, match="invalid JSON"):
        PaperspaceProvider(api_key="k").get(QueryFilter(gpu_name=["H100"]))


@responses.activate
def test_spot_queries_make_no_call() -> None:
    assert PaperspaceProvider(api_key="k").get(QueryFilter(spot=True)) == []
    assert len(responses.calls) == 0


def test_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PAPERSPACE_API_KEY", raising=False)
    with pytest.raises(MissingCredsError, match="PAPERSPACE_API_KEY"):
        PaperspaceProvider.from_env()
    monkeypatch.setenv("PAPERSPACE_API_KEY", "ps-secret")
    provider = PaperspaceProvider.from_env()
    assert provider.api_key == "ps-secret"
    assert "ps-secret" not in repr(provider)
