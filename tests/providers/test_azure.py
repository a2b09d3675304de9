"""Azure provider over recorded answers (see data/azure/README.md).

The resource SKU fixtures are the official REST example (CPU sizes only) plus GPU and CPU records
BUILT for these tests from Azure's documented capability names (`vCPUs`, `vCPUsAvailable`,
`MemoryGB`, `GPUs`, `CpuArchitectureType`) and Microsoft Learn's size tables, because no recorded
SKU list with GPU sizes exists. Two price pages are real recordings; the GPU price items are built
in the API's item format with public prices cross-checked elsewhere. The SDK talks HTTP to
`responses` (azure-core's transport is `requests`).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any
from unittest import mock
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
import responses
from responses import matchers
from scripts.replay import replay_azure
from scripts.replay.replay_azure import (
    ACCESS_TOKEN,
    SKUS_API_VERSION,
    SKUS_URL,
    SUBSCRIPTION_ID,
    first_page_match,
    load,
)

from gpuhunt._internal.errors import MissingCredsError, ProviderError
from gpuhunt._internal.load import transport
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem, CPUArchitecture
from gpuhunt.providers import azure
from gpuhunt.providers.azure import (
    PRICES_API_VERSION,
    PRICES_URL,
    AzureProvider,
    ParseReport,
    gpu_for_size,
    parse_price_item,
    parse_prices,
    parse_vm_sizes,
    prices_filter,
)


@pytest.fixture(autouse=True)
def _fast_sdk_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(azure, "SDK_RETRY_BACKOFF", 0)


def find(items: list[CatalogItem], name: str, location: str, spot: bool = False) -> CatalogItem:
    (item,) = [
        i for i in items if i.instance_name == name and i.location == location and i.spot == spot
    ]
    return item


def sku_record(name: str, region: str = "eastus", **caps: str) -> dict[str, Any]:
    return {
        "resourceType": "virtualMachines",
        "name": name,
        "locations": [region],
        "capabilities": [{"name": k, "value": v} for k, v in caps.items()],
    }


def price_item(size: str, price: Any, **extra: Any) -> dict[str, Any]:
    item = {
        "currencyCode": "USD",
        "retailPrice": price,
        "armRegionName": "eastus",
        "meterName": size.removeprefix("Standard_").replace("_", " "),
        "productName": "Virtual Machines Test Series",
        "serviceName": "Virtual Machines",
        "unitOfMeasure": "1 Hour",
        "type": "Consumption",
        "armSkuName": size,
    }
    return {**item, **extra}


# --------------------------------------------------------------------------- real facts


def _unfiltered() -> list[CatalogItem]:
    with responses.RequestsMock() as rsps:
        replay_azure.register(rsps)
        return replay_azure.provider().get()


def test_replay_offers_carry_real_prices_and_gpus() -> None:
    items = _unfiltered()  # every priced size; filter() is tested below

    h100 = find(items, "Standard_ND96isr_H100_v5", "eastus")
    assert (h100.price, h100.cpu, h100.memory) == (98.32, 96, 1900.0)
    assert (h100.gpu_count, h100.gpu_name, h100.gpu_memory) == (8, "H100", 80.0)
    assert h100.gpu_vendor == AcceleratorVendor.NVIDIA and h100.disk_size is None
    assert find(items, "Standard_ND96isr_H100_v5", "eastus", spot=True).price == 18.169536
    # the Windows and Windows Low Priority meters of the same size are not Linux prices
    assert not [i for i in items if i.price in (102.736, 41.094)]

    a100_pcie = find(items, "Standard_NC24ads_A100_v4", "eastus")
    assert (a100_pcie.price, a100_pcie.gpu_name, a100_pcie.gpu_memory) == (3.673, "A100", 80.0)
    assert find(items, "Standard_NC24ads_A100_v4", "eastus", spot=True).price == 0.7345
    a100_40 = find(items, "Standard_ND96asr_v4", "eastus")
    assert (a100_40.price, a100_40.gpu_count, a100_40.gpu_memory) == (27.197, 8, 40.0)
    assert find(items, "Standard_ND96amsr_A100_v4", "eastus").gpu_memory == 80.0
    t4 = find(items, "Standard_NC4as_T4_v3", "eastus")
    assert (t4.price, t4.cpu, t4.memory, t4.gpu_name, t4.gpu_memory) == (0.526, 4, 28.0, "T4", 16)
    h100nvl = find(items, "Standard_NC40ads_H100_v5", "eastus")
    assert (h100nvl.price, h100nvl.gpu_name, h100nvl.gpu_memory) == (6.98, "H100NVL", 94.0)
    assert find(items, "Standard_NV36ads_A10_v5", "eastus").gpu_name == "A10"
    h200 = find(items, "Standard_ND96isr_H200_v5", "eastus2")
    assert (h200.price, h200.gpu_count, h200.gpu_name, h200.gpu_memory) == (84.8, 8, "H200", 141)

    # the real recorded pages: Esv3 in eastus, and the one Consumption price of D8_v4 in
    # westeurope among two reservation prices
    assert find(items, "Standard_E16s_v3", "eastus").price == 1.008
    assert find(items, "Standard_E32-8s_v3", "eastus").price == 2.016
    d8 = find(items, "Standard_D8_v4", "westeurope")
    assert (d8.price, d8.cpu, d8.memory, d8.gpu_count) == (0.46, 8, 32.0, 0)
    assert not [i for i in items if i.price in (2377.0, 4594.0)]

    # constrained-core sizes: billed as 16 vCPUs, the guest gets 4
    assert find(items, "Standard_E16-4s_v3", "eastus").cpu == 4
    # sizes without a price produce no offer; retired sizes never appear
    names = {i.instance_name for i in items}
    assert "Standard_NC6s_v3" not in names and "Standard_ND96isr_MI300X_v5" not in names
    assert not names & {"Standard_A0", "Standard_A1"}

    assert [i.price for i in items] == sorted(i.price for i in items)
    assert all(i.provider == "azure" and i.cpu_arch == CPUArchitecture.X86 for i in items)
    assert _unfiltered() == items  # deterministic


def test_requests_sent_by_sdk_and_price_walks() -> None:
    with responses.RequestsMock() as rsps:
        replay_azure.register(rsps)
        replay_azure.provider().get()
        calls = list(rsps.calls)

    sku_calls = [c for c in calls if "management.azure.com" in c.request.url]
    assert len(sku_calls) == 2  # the SDK followed nextLink to the official example
    for call in sku_calls:
        assert call.request.method == "GET"
        assert call.request.headers["Authorization"] == f"Bearer {ACCESS_TOKEN}"
        query = parse_qs(urlsplit(call.request.url).query)
        assert query["api-version"] == [SKUS_API_VERSION]
    assert urlsplit(sku_calls[1].request.url).query.endswith("$skiptoken=page2")

    price_calls = [c for c in calls if "prices.azure.com" in c.request.url]
    regions = []
    for call in price_calls:
        assert call.request.method == "GET"
        assert "Authorization" not in call.request.headers  # a public API
        assert call.request.headers["User-Agent"].startswith("gpuhunt/")
        query = parse_qs(urlsplit(call.request.url).query)
        assert query["api-version"] == [PRICES_API_VERSION]
        (flt,) = query["$filter"]
        assert "serviceName eq 'Virtual Machines'" in flt
        assert "priceType eq 'Consumption'" in flt
        assert "contains(productName, 'Windows') eq false" in flt
        assert "contains(meterName, 'Low Priority') eq false" in flt
        regions.append((flt.rsplit("armRegionName eq ", 1)[1], query.get("$skip", [""])[0]))
    # one walk per region that has a size; eastus has a second page
    assert sorted(regions) == [
        ("'eastus'", ""),
        ("'eastus'", "1000"),
        ("'eastus2'", ""),
        ("'westeurope'", ""),
        ("'westus'", ""),
    ]


def test_from_env_uses_default_azure_credential(monkeypatch: pytest.MonkeyPatch) -> None:
    tenant = "11111111-1111-1111-1111-111111111111"
    secret = "replay-client-secret"
    login = f"https://login.microsoftonline.com/{tenant}"
    env = {
        "AZURE_SUBSCRIPTION_ID": SUBSCRIPTION_ID,
        "AZURE_TENANT_ID": tenant,
        "AZURE_CLIENT_ID": "22222222-2222-2222-2222-222222222222",
        "AZURE_CLIENT_SECRET": secret,
    }
    with mock.patch.dict(os.environ, env), responses.RequestsMock() as rsps:
        rsps.get(
            f"{login}/v2.0/.well-known/openid-configuration",
            json={
                "issuer": f"{login}/v2.0",
                "token_endpoint": f"{login}/oauth2/v2.0/token",
                "authorization_endpoint": f"{login}/oauth2/v2.0/authorize",
            },
        )
        token = rsps.post(
            f"{login}/oauth2/v2.0/token",
            json={"token_type": "Bearer", "expires_in": 3599, "access_token": "env-token"},
        )
        replay_azure.register(rsps)
        provider = AzureProvider.from_env()
        assert SUBSCRIPTION_ID not in repr(provider)
        items = provider.get()
        sku_call = next(c for c in rsps.calls if c.request.url.startswith(SKUS_URL))

    assert token.call_count == 1
    body = parse_qs(token.calls[0].request.body)
    assert body["grant_type"] == ["client_credentials"]
    assert body["scope"] == ["https://management.azure.com/.default"]
    assert sku_call.request.headers["Authorization"] == "Bearer env-token"
    assert find(items, "Standard_ND96isr_H100_v5", "eastus").price == 98.32


def test_missing_subscription_id_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AZURE_SUBSCRIPTION_ID", raising=False)
    with pytest.raises(MissingCredsError, match="AZURE_SUBSCRIPTION_ID"):
        AzureProvider.from_env()


# --------------------------------------------------------------------------- SKUs and GPUs


@pytest.mark.parametrize(
    ("size", "gpu"),
    [
        ("Standard_ND96isr_H100_v5", ("H100", 80.0, AcceleratorVendor.NVIDIA)),
        ("Standard_ND96isr_H200_v5", ("H200", 141.0, AcceleratorVendor.NVIDIA)),
        ("Standard_ND96isr_MI300X_v5", ("MI300X", 192.0, AcceleratorVendor.AMD)),
        ("Standard_NC40ads_H100_v5", ("H100NVL", 94.0, AcceleratorVendor.NVIDIA)),
        ("Standard_NCC40ads_H100_v5", ("H100NVL", 94.0, AcceleratorVendor.NVIDIA)),
        ("Standard_NC96ads_A100_v4", ("A100", 80.0, AcceleratorVendor.NVIDIA)),
        ("Standard_ND96asr_v4", ("A100", 40.0, AcceleratorVendor.NVIDIA)),
        ("Standard_ND96amsr_A100_v4", ("A100", 80.0, AcceleratorVendor.NVIDIA)),
        ("Standard_NC64as_T4_v3", ("T4", 16.0, AcceleratorVendor.NVIDIA)),
        ("Standard_NC24rs_v3", ("V100", 16.0, AcceleratorVendor.NVIDIA)),
        ("Standard_ND40rs_v2", ("V100", 32.0, AcceleratorVendor.NVIDIA)),
        # NVadsA10 v5 partitions one A10: 1/6, 1/3, 1/2, then whole GPUs
        ("Standard_NV6ads_A10_v5", ("A10", 4.0, AcceleratorVendor.NVIDIA)),
        ("Standard_NV12ads_A10_v5", ("A10", 8.0, AcceleratorVendor.NVIDIA)),
        ("Standard_NV18ads_A10_v5", ("A10", 12.0, AcceleratorVendor.NVIDIA)),
        ("Standard_NV36adms_A10_v5", ("A10", 24.0, AcceleratorVendor.NVIDIA)),
        ("Standard_NV72ads_A10_v5", ("A10", 24.0, AcceleratorVendor.NVIDIA)),
        # not in the series table: a part of the name the accelerator tables know
        ("Standard_ND128isr_NDR_GB200_v6", ("GB200", 186.0, AcceleratorVendor.NVIDIA)),
        ("Standard_NG8ads_V620_v1", None),
        ("Standard_D2s_v3", None),
    ],
)
def test_gpu_series_mapping(size: str, gpu: tuple[str, float, AcceleratorVendor] | None) -> None:
    spec = gpu_for_size(size)
    assert (spec.name, spec.memory, spec.vendor) == gpu if spec else gpu is None


def test_official_example_holds_only_retired_sizes() -> None:
    report = ParseReport()
    assert parse_vm_sizes(load("resource_skus_list_example.json")["value"], report) == {}
    assert report.skipped == [] and not report.unknown_gpus


def test_malformed_and_unknown_skus_are_skipped_and_counted() -> None:
    records = [
        sku_record("Standard_D2s_v3", vCPUs="2", MemoryGB="8"),
        sku_record("Standard_D4s_v3", vCPUs="4"),  # no MemoryGB
        sku_record("Standard_D8s_v3", vCPUs="eight", MemoryGB="32"),
        {"resourceType": "virtualMachines", "capabilities": []},  # no name
        "not a record",
        sku_record("Standard_NG8ads_V620_v1", vCPUs="8", MemoryGB="16", GPUs="1"),
        sku_record("Standard_D2ps_v5", vCPUs="2", MemoryGB="8", CpuArchitectureType="Arm64"),
        {**sku_record("Standard_D2s_v3", "westeurope", vCPUs="2", MemoryGB="8")},
        {"resourceType": "disks", "name": "Premium_LRS", "locations": ["eastus"]},
    ]
    report = ParseReport()
    sizes = parse_vm_sizes(records, report)

    assert sorted(sizes) == ["Standard_D2ps_v5", "Standard_D2s_v3"]
    assert sizes["Standard_D2s_v3"].locations == {"eastus", "westeurope"}
    assert sizes["Standard_D2ps_v5"].cpu_arch == CPUArchitecture.ARM
    assert len(report.skipped) == 4
    assert any("Standard_D4s_v3" in s and "MemoryGB" in s for s in report.skipped)
    assert any("Standard_D8s_v3" in s and "vCPUs" in s for s in report.skipped)
    assert report.unknown_gpus == {"Standard_NG8ads_V620_v1": 1}


# --------------------------------------------------------------------------- price items


def test_documented_item_examples_are_not_linux_on_demand_prices() -> None:
    # a DevTest Windows spot price, a reservation and a EUR price
    report = ParseReport()
    examples = load("retail_prices_docs_item_examples.json")
    assert [parse_price_item(item, report) for item in examples] == [None, None, None]
    assert report.skipped == []


def test_price_item_rules() -> None:
    report = ParseReport()
    sizes = parse_vm_sizes([sku_record("Standard_D2s_v3", vCPUs="2", MemoryGB="8")], report)
    # every rejected item is cheaper than the real price, so a missed rule shows up
    items = [
        price_item("Standard_D2s_v3", 0.096),
        price_item("Standard_D2s_v3", 0.1),  # the same meter listed twice: the lower wins
        price_item("Standard_D2s_v3", 0.0192, meterName="D2s v3 Spot"),
        price_item("Standard_D2s_v3", 0.01, meterName="D2s v3 Low Priority"),
        price_item("Standard_D2s_v3", 0.05, productName="Virtual Machines DSv3 Series Windows"),
        price_item("Standard_D2s_v3", 0.04, productName="Virtual Machines Dedicated Host"),
        price_item("Standard_D2s_v3", 0.03, type="Reservation", reservationTerm="1 Year"),
        price_item("Standard_D2s_v3", 0.02, currencyCode="EUR"),
        price_item("Standard_D2s_v3", 0.015, unitOfMeasure="1/Month"),
        price_item("Standard_D2s_v3", 0),
        price_item("Standard_D2s_v3", "0.096"),  # malformed
        price_item("Standard_D2s_v3", None),  # malformed
        ["not", "an", "item"],  # malformed
        price_item("Standard_X1_v9", 1.0),  # priced, but no spec
        price_item("", 1.0),
    ]
    offers = parse_prices(items, sizes, report)

    assert sorted((o.price, o.spot) for o in offers) == [(0.0192, True), (0.096, False)]
    assert len(report.skipped) == 3
    assert report.unpriced_sizes == {"Standard_X1_v9": 1}


def test_restricted_regions_and_gpu_shares_are_flagged() -> None:
    report = ParseReport()
    records = [
        sku_record("Standard_NV6ads_A10_v5", vCPUs="6", MemoryGB="55", GPUs="1"),
        sku_record("Standard_D2s_v3", vCPUs="2", MemoryGB="8"),
    ]
    sizes = parse_vm_sizes(records, report)
    items = [
        price_item("Standard_NV6ads_A10_v5", 0.454),
        price_item("Standard_D2s_v3", 0.1, armRegionName="koreasouth"),
        price_item("Standard_NV6ads_A10_v5", 0.5, armRegionName="koreasouth"),
    ]
    flags = {(o.instance_name, o.location): o.flags for o in parse_prices(items, sizes, report)}
    assert flags == {
        ("Standard_NV6ads_A10_v5", "eastus"): ["fractional-gpu"],
        ("Standard_D2s_v3", "koreasouth"): ["azure-restricted-region"],
        ("Standard_NV6ads_A10_v5", "koreasouth"): ["azure-restricted-region", "fractional-gpu"],
    }


# --------------------------------------------------------------------------- HTTP failures


def register_skus(rsps: responses.RequestsMock, records: list[dict[str, Any]]) -> None:
    rsps.add(
        responses.GET,
        SKUS_URL,
        json={"value": records, "nextLink": None},
        match=[matchers.query_param_matcher({"api-version": SKUS_API_VERSION})],
    )


ONE_SIZE = [sku_record("Standard_D2s_v3", vCPUs="2", MemoryGB="8")]


@pytest.mark.parametrize("status", [429, 503])
def test_prices_retried_a_bounded_number_of_times(status: int) -> None:
    with responses.RequestsMock() as rsps:
        register_skus(rsps, ONE_SIZE)
        prices = rsps.get(PRICES_URL, status=status, match=first_page_match("eastus"))
        with pytest.raises(ProviderError, match=f"HTTP {status}"):
            replay_azure.provider().get()
    assert prices.call_count == 4  # the first try and three retries


def test_prices_recover_after_a_429() -> None:
    page = {"Items": [price_item("Standard_D2s_v3", 0.096)], "NextPageLink": None}
    with responses.RequestsMock() as rsps:
        register_skus(rsps, ONE_SIZE)
        rsps.get(PRICES_URL, status=429, match=first_page_match("eastus"))
        rsps.get(PRICES_URL, json=page, match=first_page_match("eastus"))
        (offer,) = replay_azure.provider().get()
    assert offer.price == 0.096


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ("{not json", "invalid JSON"),
        (json.dumps({"items": []}), "'Items' is missing"),
        (json.dumps({"Items": {}}), "'Items' has type dict"),
        (json.dumps({"Items": [], "NextPageLink": "https://evil.example/prices"}), "NextPageLink"),
    ],
)
def test_malformed_price_pages_fail(body: str, error: str) -> None:
    with responses.RequestsMock() as rsps:
        register_skus(rsps, ONE_SIZE)
        rsps.get(PRICES_URL, body=body, match=first_page_match("eastus"))
        with pytest.raises(ProviderError, match=error):
            replay_azure.provider().get()


@pytest.mark.slow
def test_a_repeated_next_page_link_ends_the_walk() -> None:
    link = f"{PRICES_URL}?$skip=1000"
    page = {"Items": [price_item("Standard_D2s_v3", 0.096)], "NextPageLink": link}
    with responses.RequestsMock() as rsps:
        register_skus(rsps, ONE_SIZE)
        rsps.get(PRICES_URL, json=page, match=first_page_match("eastus"))
        again = rsps.get(link, json=page)
        (offer,) = replay_azure.provider().get()
    assert again.call_count == 1 and offer.price == 0.096


def test_no_vm_sizes_fails() -> None:
    with responses.RequestsMock() as rsps:
        register_skus(rsps, [sku_record("Standard_A1", vCPUs="1", MemoryGB="1.75")])
        with pytest.raises(ProviderError, match="no VM sizes"):
            replay_azure.provider().get()


def test_sku_list_refused_names_the_credential() -> None:
    with responses.RequestsMock() as rsps:
        rsps.get(SKUS_URL, status=401, json={"error": {"code": "InvalidAuthenticationToken"}})
        with pytest.raises(ProviderError) as e:
            replay_azure.provider().get()
    message = str(e.value)
    assert "HTTP 401" in message and "AZURE_SUBSCRIPTION_ID" in message
    assert "DefaultAzureCredential" in message
    assert SUBSCRIPTION_ID not in message and ACCESS_TOKEN not in message


def test_sku_list_retried_by_the_sdk_then_fails() -> None:
    with responses.RequestsMock() as rsps:
        skus = rsps.get(SKUS_URL, status=503)
        with pytest.raises(ProviderError, match="HTTP 503"):
            replay_azure.provider().get()
    assert skus.call_count == azure.SDK_RETRY_TOTAL + 1


def test_sku_list_connection_error() -> None:
    with responses.RequestsMock() as rsps:
        rsps.get(SKUS_URL, body=requests.exceptions.ConnectionError("down"))
        with pytest.raises(ProviderError, match="listing resource SKUs failed"):
            replay_azure.provider().get()


def test_prices_have_a_timeout() -> None:
    with responses.RequestsMock() as rsps:
        register_skus(rsps, ONE_SIZE)
        call = rsps.get(PRICES_URL, json={"Items": []}, match=first_page_match("eastus"))
        assert replay_azure.provider().get() == []
    assert call.calls[0].request.req_kwargs["timeout"] == transport.default_timeout()


# --------------------------------------------------------------------------- filter


def test_apply_filter_skips_regions_of_dropped_sizes() -> None:
    records = [
        sku_record("Standard_D2s_v3", "eastus", vCPUs="2", MemoryGB="8"),
        sku_record("Standard_B2s", "northeurope", vCPUs="2", MemoryGB="4"),
    ]
    with responses.RequestsMock() as rsps:
        register_skus(rsps, records)
        rsps.get(PRICES_URL, json={"Items": []}, match=first_page_match("eastus"))
        replay_azure.provider().get(apply_filter=True)
        # northeurope (only a B-series size, which filter() drops) is never asked for
        (price_call,) = [c for c in rsps.calls if c.request.url.startswith(PRICES_URL)]
    assert parse_qs(urlsplit(price_call.request.url).query)["$filter"] == [prices_filter("eastus")]


def test_filter_keeps_launched_families() -> None:
    def item(name: str) -> CatalogItem:
        return CatalogItem(
            provider="azure",
            instance_name=name,
            location="eastus",
            price=1.0,
            cpu=2,
            memory=8,
            gpu_count=0,
            gpu_name=None,
            gpu_memory=None,
            spot=False,
            disk_size=None,
        )

    kept = [
        "Standard_D2s_v3",
        "Standard_E16-4s_v4",
        "Standard_E80is_v4",
        "Standard_NC24ads_A100_v4",
        "Standard_ND96isr_H100_v5",
        "Standard_ND96isr_H200_v5",
        "Standard_ND96isr_MI300X_v5",
        "Standard_ND96asr_v4",
        "Standard_NC4as_T4_v3",
        "Standard_NV36ads_A10_v5",
        "Standard_NC6s_v3",
    ]
    dropped = [
        "Standard_B2s",
        "Standard_NV12s_v3",
        "Standard_ND128isr_NDR_GB200_v6",
        "Basic_A1",
        # CPU series dstack's Azure backend does not launch (gpuhunt 0.1.x leaves them out too)
        "Standard_D2_v3",
        "Standard_D8_v4",
        "Standard_D4s_v6",
        "Standard_E16_v3",
        "Standard_E16s_v3",
        "Standard_E16-4s_v3",
        "Standard_E96s_v5",
        "Standard_F8s_v2",
    ]
    offers = [item(n) for n in kept + dropped]
    assert [o.instance_name for o in AzureProvider.filter(offers)] == kept


def test_filter_on_the_recordings_publishes_the_reference_families() -> None:
    """On the recorded answers, the recordings' Ev3/Esv3 and Dv4 sizes are priced but not
    published: the CPU families published are gpuhunt 0.1.x's (Dsv3, Esv4)."""
    items = _unfiltered()
    names = {o.instance_name for o in items}
    assert {"Standard_E16s_v3", "Standard_E32_v3", "Standard_D8_v4"} <= names
    published = {o.instance_name for o in AzureProvider.filter(items)}
    cpu = sorted(n for n in published if not gpu_for_size(n))  # none priced in the recordings
    assert all(re.match(r"^Standard_(D\d+s_v3|E\d+(-\d+)?i?s_v4)$", n) for n in cpu), cpu
    assert not {"Standard_E16s_v3", "Standard_E32_v3", "Standard_D8_v4"} & published


# --------------------------------------------------------------------------- reservations

RESERVATIONS = (
    Path(__file__).parents[1]
    / "_internal"
    / "costs"
    / "data"
    / "azure_retail_prices_reservation_mix.json"
)


def test_reservations_are_asked_for_and_read_as_whole_term_prices() -> None:
    page = json.loads(RESERVATIONS.read_text())
    with responses.RequestsMock() as rsps:
        call = rsps.get(PRICES_URL, json=page)
        terms = azure.fetch_reservations(["westeurope"], ["Standard_D8_v4"])
    (query,) = parse_qs(urlsplit(call.calls[0].request.url).query)["$filter"]
    assert "priceType eq 'Reservation'" in query and "Consumption" not in query
    assert query == prices_filter("westeurope", "Reservation")
    assert [(t.term, t.upfront, t.hourly) for t in terms] == [
        ("1y", 2377.0, 0.0),
        ("3y", 4594.0, 0.0),
    ]
    assert all(t.observed_at is not None for t in terms)


def test_reservations_of_other_sizes_are_left_out() -> None:
    page = json.loads(RESERVATIONS.read_text())
    with responses.RequestsMock() as rsps:
        rsps.get(PRICES_URL, json=page)
        assert azure.fetch_reservations(["westeurope"], ["Standard_ND96isr_H100_v5"]) == []


def test_extra_tables_write_terms_or_warn(caplog: pytest.LogCaptureFixture) -> None:
    from gpuhunt._internal.formats import terms as terms_file

    provider = AzureProvider(subscription_id=SUBSCRIPTION_ID)
    provider._collected = ({"westeurope"}, {"Standard_D8_v4"})
    with responses.RequestsMock() as rsps:
        rsps.get(PRICES_URL, json=json.loads(RESERVATIONS.read_text()))
        tables = provider.extra_tables()
    assert [t.upfront for t in terms_file.read_terms(tables[".terms"])] == [2377.0, 4594.0]
    with responses.RequestsMock() as rsps:
        rsps.get(PRICES_URL, status=403)
        assert provider.extra_tables() == {}
    assert "no reservation terms" in caplog.text
