"""RunPod provider over recorded GraphQL answers (see tests/providers/data/runpod/README.md:
the per-query answers are assembled from recorded `gpuTypes` records and documented GPU types;
no recording of a batched RunPod answer exists)."""

from __future__ import annotations

import json
import math

import pytest
import responses
from scripts.replay import replay_runpod

from gpuhunt._internal.errors import ProviderError
from gpuhunt._internal.gpu_names import canonical_gpu_name
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem
from gpuhunt.providers import runpod
from gpuhunt.providers.runpod import (
    API_URL,
    CpuQuery,
    ParseReport,
    PodQuery,
    RunpodProvider,
    cpu_sizes,
    parse_cpu_offers,
    parse_pod_offers,
    run_batched,
)


def find(offers: list[CatalogItem], name: str, location: str, count: int, spot: bool = False):
    found = [
        o
        for o in offers
        if o.instance_name == name
        and o.location == location
        and o.gpu_count == count
        and o.spot is spot
    ]
    assert len(found) == 1, (name, location, count, spot, found)
    return found[0]


@pytest.fixture
def offers() -> list[CatalogItem]:
    return replay_runpod.collect()


def test_contract() -> None:
    assert RunpodProvider.NAME == "runpod"
    assert RunpodProvider.MIN_CUDA_VERSION == "12.8"
    assert replay_runpod.RECORDED_AT == "2026-11-29"


def test_secure_cloud_pods(offers: list[CatalogItem]) -> None:
    l4 = find(offers, "NVIDIA L4", "US-KS-2", 1)
    assert (l4.price, l4.cpu, l4.memory) == (0.44, 12, 50.0)
    assert (l4.gpu_name, l4.gpu_memory, l4.gpu_vendor) == ("L4", 24.0, AcceleratorVendor.NVIDIA)
    assert l4.flags == [] and l4.disk_size is None
    assert l4.provider_data == {}
    assert (l4.cuda_version, l4.available) == ("12.8", True)
    assert find(offers, "NVIDIA L4", "US-KS-2", 2).price == pytest.approx(0.88)
    h100 = find(offers, "NVIDIA H100 80GB HBM3", "EU-SE-1", 1)
    assert (h100.price, h100.gpu_name, h100.gpu_memory, h100.cpu) == (2.99, "H100", 80.0, 16)
    assert find(offers, "NVIDIA H100 80GB HBM3", "EU-SE-1", 2).price == pytest.approx(5.98)
    # RunPod's "NVIDIA H100 80GB HBM3" is the board its gpuTypes list calls "H100 SXM".
    assert h100.form_factor == "sxm" and l4.form_factor == "pcie"
    # The H100 has no Community Cloud and no stock in Kansas.
    assert not [o for o in offers if o.gpu_name == "H100" and o.location != "EU-SE-1"]


def test_spot_offers_use_the_minimum_bid(offers: list[CatalogItem]) -> None:
    assert find(offers, "NVIDIA L4", "US-KS-2", 1, spot=True).price == 0.19
    assert find(offers, "NVIDIA L4", "US-KS-2", 2, spot=True).price == pytest.approx(0.38)
    assert find(offers, "NVIDIA H100 80GB HBM3", "EU-SE-1", 1, spot=True).price == 1.75
    assert find(offers, "NVIDIA L4", "SE", 1, spot=True).price == 0.18


def test_community_cloud_pods_by_country(offers: list[CatalogItem]) -> None:
    l4 = find(offers, "NVIDIA L4", "SE", 1)
    assert (l4.price, l4.cpu, l4.memory) == (0.34, 8, 30.0)  # communityPrice
    # The captured RTX 3080 record has no type-level price: the location's quote is used.
    rtx = find(offers, "NVIDIA GeForce RTX 3080", "US", 1)
    assert (rtx.price, rtx.cpu, rtx.memory, rtx.gpu_name, rtx.gpu_memory) == (
        0.21,
        10,
        15.0,
        "RTX3080",
        10.0,
    )
    assert find(offers, "NVIDIA GeForce RTX 3080", "US", 1, spot=True).price == 0.125


def test_filter_drops_argentina() -> None:
    with responses.RequestsMock() as rsps:
        replay_runpod.register(rsps)
        raw = RunpodProvider().get()
    assert {o.location for o in raw if o.instance_name == "NVIDIA GeForce RTX 3080"} == {"AR", "US"}
    assert "AR" not in {o.location for o in RunpodProvider.filter(raw)}
    assert len(RunpodProvider.filter(raw)) == len(raw) - 2


def test_cluster_offers(offers: list[CatalogItem]) -> None:
    clusters = [o for o in offers if "runpod-cluster" in o.flags]
    assert len(clusters) == 1  # the B200 cluster type has no vCPU/RAM quote: out of stock
    h100 = clusters[0]
    assert (h100.instance_name, h100.location, h100.gpu_count) == (
        "NVIDIA H100 80GB HBM3",
        "EU-SE-1",
        8,
    )
    assert h100.price == pytest.approx(2.69 * 8)
    assert (h100.cpu, h100.memory, h100.spot) == (128, 1006.0, False)
    assert h100.provider_data == {"pod_counts": [2, 3, 4, 5, 6, 7, 8]}
    assert h100.available is True


def test_cpu_offers(offers: list[CatalogItem]) -> None:
    cpu = [o for o in offers if o.gpu_count == 0]
    assert all(o.flags == ["runpod-cpu"] and not o.spot and o.gpu_name is None for o in cpu)
    names = {(o.instance_name, o.location) for o in cpu}
    assert {f"cpu3g-{n}-{4 * n}" for n in (2, 4, 8, 16, 32)} == {
        name for name, loc in names if loc == "EU-SE-1"
    }
    assert ("cpu3c-4-8", "US-KS-2") in names
    # cpu5c is out of stock, cpu3m has no price, EU-RO-1 is not listed.
    assert not [n for n, _ in names if n.startswith(("cpu5c", "cpu3m"))]
    assert "EU-RO-1" not in {o.location for o in offers}
    big = find(offers, "cpu3g-32-128", "US-KS-2", 0)
    assert (big.price, big.cpu, big.memory, big.disk_size) == (1.28, 32, 128.0, 320.0)


def test_sorted_by_price(offers: list[CatalogItem]) -> None:
    prices = [o.price for o in offers]
    assert prices == sorted(prices)
    assert len(offers) == 30


def test_requests_sent() -> None:
    with responses.RequestsMock() as rsps:
        fake = replay_runpod.register(rsps)
        RunpodProvider().get()
        sent = list(rsps.calls)
    assert len(sent) == 3  # discovery, one pod batch, one CPU batch
    for call in sent:
        assert call.request.method == "POST" and call.request.url == API_URL
        assert call.request.headers["User-Agent"].startswith("gpuhunt/")
        assert "Authorization" not in call.request.headers
    discovery, pods, cpus = fake.requests
    assert "clusterGpuTypes: gpuTypes(input: {cluster: true})" in discovery["query"]
    assert "lowestPrice(input: {gpuCount: 8})" in discovery["query"]
    pod_inputs = list(pods["variables"].values())
    assert len(pod_inputs) == 2 * 4 + 3 * 4  # listed DCs and countries (no null) x 4 GPUs
    assert {
        "gpuCount": 3,
        "secureCloud": True,
        "dataCenterId": "EU-SE-1",
        "minCudaVersion": "12.8",
    } in pod_inputs
    assert {
        "gpuCount": 2,
        "secureCloud": False,
        "countryCode": "US",
        "minCudaVersion": "12.8",
    } in pod_inputs
    assert not [v for v in pod_inputs if v.get("dataCenterId") == "EU-RO-1"]
    assert "$q0: GpuLowestPriceInput" in pods["query"]
    assert sorted(cpus["variables"].values()) == ["EU-SE-1", "US-KS-2"]
    assert "$q1: String!" in cpus["query"]


def test_batches_split_and_answers_stay_paired() -> None:
    with responses.RequestsMock() as rsps:
        fake = replay_runpod.register(rsps)
        small = RunpodProvider(batch_size=3).get()
    pod_batches = [r for r in fake.requests if "GpuhuntPodPrices" in r["query"]]
    # Batches run in parallel, so they may arrive in any order.
    assert sorted(len(r["variables"]) for r in pod_batches) == [2, 3, 3, 3, 3, 3, 3]
    with responses.RequestsMock() as rsps:
        replay_runpod.register(rsps)
        big = RunpodProvider().get()
    assert small == big


def test_answers_paired_by_alias_not_by_position() -> None:
    queries = [PodQuery(True, "EU-SE-1", n) for n in (1, 2, 3)]

    def reversed_answer(request):
        variables = json.loads(request.body)["variables"]
        data = {alias: [{"asked": v["gpuCount"]}] for alias, v in reversed(variables.items())}
        return 200, {}, json.dumps({"data": data})

    with responses.RequestsMock() as rsps:
        rsps.add_callback(responses.POST, API_URL, callback=reversed_answer)
        pairs = run_batched(queries, "Test")
    assert [(q.gpu_count, a[0]["asked"]) for q, a in pairs] == [(1, 1), (2, 2), (3, 3)]


def test_missing_alias_is_an_error() -> None:
    with responses.RequestsMock() as rsps:
        rsps.add(responses.POST, API_URL, json={"data": {"q0": []}})
        with pytest.raises(ProviderError, match="lacks alias 'q1'"):
            run_batched([CpuQuery("A"), CpuQuery("B")], "Test")


@pytest.mark.parametrize("status", [429, 500, 503])
def test_retried_then_error(status: int) -> None:
    with responses.RequestsMock() as rsps:
        rsps.add(responses.POST, API_URL, status=status)
        with pytest.raises(ProviderError, match=f"HTTP {status}"):
            RunpodProvider().get()
        assert len(rsps.calls) == 4  # one try and three bounded retries


def test_unauthorized_is_not_retried() -> None:
    with responses.RequestsMock() as rsps:
        rsps.add(responses.POST, API_URL, status=401)
        with pytest.raises(ProviderError, match="refused with HTTP 401"):
            RunpodProvider().get()
        assert len(rsps.calls) == 1


def test_malformed_json() -> None:
    with responses.RequestsMock() as rsps:
        rsps.add(responses.POST, API_URL, body="<html>maintenance</html>")
        with pytest.raises(ProviderError, match="invalid JSON"):
            RunpodProvider().get()


def test_graphql_errors() -> None:
    body = {"errors": [{"message": 'Cannot query field "foo" on type "GpuType".'}], "data": None}
    with responses.RequestsMock() as rsps:
        rsps.add(responses.POST, API_URL, json=body)
        with pytest.raises(ProviderError, match='Cannot query field "foo"'):
            RunpodProvider().get()


def test_wrong_shape_names_the_field() -> None:
    discovery = replay_runpod.load("discovery.json")
    discovery["data"]["gpuTypes"] = {"oops": True}
    with responses.RequestsMock() as rsps:
        rsps.add(responses.POST, API_URL, json=discovery)
        with pytest.raises(ProviderError, match="'gpuTypes'"):
            RunpodProvider().get()


def test_failed_batch_fails_the_collection() -> None:
    fake = replay_runpod.FakeRunpod()

    def flaky(request):
        if "GpuhuntCpuPrices" in json.loads(request.body)["query"]:
            return 500, {}, "{}"
        return fake(request)

    with responses.RequestsMock() as rsps:
        rsps.add_callback(responses.POST, API_URL, callback=flaky)
        with pytest.raises(ProviderError, match="HTTP 500"):
            RunpodProvider().get()


def test_malformed_records_are_skipped_and_counted() -> None:
    good = replay_runpod.load("pod_prices.json")["answers"][0]["gpuTypes"][0]
    no_resources = {**good, "lowestPrice": {**good["lowestPrice"], "minVcpu": None}}
    no_memory = {**good, "id": "NVIDIA L4 bis", "memoryInGb": "24"}
    report = ParseReport()
    items = parse_pod_offers(
        PodQuery(True, "US-KS-2", 1), [good, "garbage", no_resources, no_memory], report
    )
    assert [(o.instance_name, o.spot) for o in items] == [("NVIDIA L4", False), ("NVIDIA L4", True)]
    assert report.skipped_records == 3

    flavors = replay_runpod.load("cpu_flavors.json")["answers"][0]["cpuFlavors"]
    bad = {**flavors[0], "id": "cpu9x", "minVcpu": 64}  # larger than maxVcpu
    report = ParseReport()
    items = parse_cpu_offers(CpuQuery("US-KS-2"), [bad, flavors[1]], report)
    assert {o.instance_name for o in items} == {f"cpu3g-{n}-{4 * n}" for n in (2, 4, 8, 16, 32)}
    assert report.skipped_records == 1


def test_malformed_record_in_a_collection_is_counted_on_the_provider() -> None:
    fake = replay_runpod.FakeRunpod()
    key = (True, "US-KS-2", 1)
    fake.pods[key] = [*fake.pods[key], {"id": "NVIDIA L4", "lowestPrice": "High"}]
    with responses.RequestsMock() as rsps:
        rsps.add_callback(responses.POST, API_URL, callback=fake)
        provider = RunpodProvider()
        items = provider.get()
    assert provider.last_report.skipped_records == 1
    assert len(items) == 32  # nothing else lost (30 after filter + 2 in AR)


def test_unknown_gpu_is_kept_warned_and_counted(caplog: pytest.LogCaptureFixture) -> None:
    base = replay_runpod.load("pod_prices.json")["answers"][0]["gpuTypes"][0]
    new = {**base, "id": "NVIDIA RTX 9900 Hyper", "displayName": "RTX 9900 Hyper", "memoryInGb": 64}
    mig = {**base, "id": "NVIDIA B300 1g.34gb", "displayName": "B300 1g.34gb", "memoryInGb": 34}
    alien = {**new, "id": "Acme X1", "displayName": "X1", "manufacturer": "Acme"}
    report = ParseReport()
    items = parse_pod_offers(PodQuery(True, "US-KS-2", 1), [new, mig, alien], report)
    on_demand = {o.gpu_name: o for o in items if not o.spot}
    assert set(on_demand) == {"RTX 9900 Hyper", "B300 1g.34gb"}
    assert on_demand["B300 1g.34gb"].gpu_memory == 34.0
    assert on_demand["RTX 9900 Hyper"].gpu_vendor == AcceleratorVendor.NVIDIA
    assert report.unknown_gpus == {"RTX 9900 Hyper": 1, "B300 1g.34gb": 1}
    assert report.skipped_records == 1  # unknown GPU of an unknown vendor cannot be listed
    assert "RTX 9900 Hyper" in caplog.text


def test_every_runpod_gpu_name_is_canonical() -> None:
    """Lists any GPU name in the RunPod data that the accelerator tables do not resolve."""
    discovery = replay_runpod.load("discovery.json")["data"]
    records = [*discovery["gpuTypes"], *discovery["clusterGpuTypes"]]
    for answer in replay_runpod.load("pod_prices.json")["answers"]:
        records += answer["gpuTypes"]
    unresolved = sorted(
        {r["displayName"] for r in records if canonical_gpu_name(r["displayName"]) is None}
    )
    assert unresolved == []
    report = ParseReport()
    items = parse_pod_offers(PodQuery(True, "X", 1), records_in_stock(records), report)
    assert not report.unknown_gpus and {o.gpu_name for o in items} >= {"L4", "H100", "MI300X"}


def records_in_stock(records: list[dict]) -> list[dict]:
    stock = {"stockStatus": "High", "minVcpu": 8, "minMemory": 32, "minimumBidPrice": None}
    return [{**r, "securePrice": 1.0, "lowestPrice": stock} for r in records]


def test_amd_gpu_vendor() -> None:
    discovery = replay_runpod.load("discovery.json")["data"]
    mi300x = next(g for g in discovery["gpuTypes"] if g["manufacturer"] == "AMD")
    (item,) = parse_pod_offers(PodQuery(True, "EU-SE-1", 2), records_in_stock([mi300x]))
    assert (item.gpu_name, item.gpu_vendor, item.gpu_memory, item.price) == (
        "MI300X",
        AcceleratorVendor.AMD,
        192.0,
        2.0,
    )


def test_cpu_sizes() -> None:
    assert cpu_sizes(2, 32) == [2, 4, 8, 16, 32]
    assert cpu_sizes(3, 20) == [3, 6, 12, 20]
    assert cpu_sizes(4, 4) == [4]


def test_needs_no_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RUNPOD_API_KEY", raising=False)
    assert isinstance(RunpodProvider.from_env(), RunpodProvider)


def test_batch_count_is_small_for_many_locations() -> None:
    discovery = runpod.Discovery(
        data_centers=[f"DC-{i}" for i in range(30)],
        country_codes=[f"C{i}" for i in range(20)],
        max_secure_gpu_count=8,
        max_community_gpu_count=8,
        cluster_types=[],
    )
    queries = runpod.pod_queries(discovery)
    assert len(queries) == 400
    assert math.ceil(len(queries) / runpod.BATCH_SIZE) == 20


def test_form_factor_from_the_gpu_type_name() -> None:
    """A GPU type whose name says its board ("H100 PCIe", "H100 NVL") puts it in
    provider_data["form_factor"] unless the model decides it (H100 NVL is its own model)."""
    from gpuhunt.providers.runpod import gpu_of_record

    report = ParseReport()
    record = {"id": "NVIDIA H100 PCIe", "displayName": "H100 PCIe", "memoryInGb": 80}
    gpu = gpu_of_record(record, report)
    assert gpu is not None and (gpu.name, gpu.form_factor) == ("H100", "pcie")
    nvl = gpu_of_record(
        {"id": "NVIDIA H100 NVL", "displayName": "H100 NVL", "memoryInGb": 94}, report
    )
    assert nvl is not None and (nvl.name, nvl.form_factor) == ("H100NVL", None)
    l4 = gpu_of_record({"id": "NVIDIA L4", "displayName": "L4", "memoryInGb": 24}, report)
    assert l4 is not None and l4.form_factor is None


def test_availability_is_the_quotes_stock_status(offers: list[CatalogItem]) -> None:
    # Every pod offer comes from a quote with a stockStatus ("High", "Medium", "Low").
    assert offers and all(o.available is True for o in offers)
    # A quote without stock (the H100 in Kansas, cpu5c) gives no offer, as in 0.1.34.
    assert not [o for o in offers if o.gpu_name == "H100" and o.location == "US-KS-2"]
    assert not [o for o in offers if o.instance_name.startswith("cpu5c")]


def test_a_cluster_type_without_stock_is_listed_unavailable() -> None:
    with responses.RequestsMock() as rsps:
        fake = replay_runpod.register(rsps)
        # The recorded H100 cluster quote with its stock gone (vCPU/RAM still quoted).
        [record] = [
            r for r in fake.discovery["data"]["clusterGpuTypes"] if r["lowestPrice"].get("minVcpu")
        ]
        record["lowestPrice"]["stockStatus"] = None
        offers = RunpodProvider().get()
    [cluster] = [o for o in offers if "runpod-cluster" in o.flags]
    assert cluster.instance_name == "NVIDIA H100 80GB HBM3"
    assert cluster.available is False
