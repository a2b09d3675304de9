"""GCP provider: the real SDK request code (google-cloud-compute / google-cloud-billing with their
REST transport, TPU API through gpuhunt's transport) driven by `responses`.

Test data in `data/gcp/` (provenance in `data/gcp/make_replay_data.py`):

- REAL, verbatim from ../shared/fixtures/gcp: `machine_types_aggregated_list_2018_trimmed.json`
  (a recorded `machineTypes.aggregatedList` page), `machine_types_items_a2_t2d.json`,
  `accelerator_types_aggregated_list_2018.json`, `billing_skus_page_2019.json`,
  `billing_skus_2020_items.json`; and the gcloud exports `*_cyclenerd_excerpt.csv`.
- BUILT from those and from public facts: the `replay_*.json` answers. Prices checked below as
  "real" come from Cyclenerd's `pricing.yml` (machine totals GCP's Billing Catalog gave on
  2025-03-06: a2-highgpu-1g $3.673385 / spot $1.293355, a2-ultragpu-1g $5.068798, g2-standard-4
  $0.706832 / spot $0.279932, a3-highgpu-8g $88.49, n1-highmem-16 $0.946424, e2-standard-8
  $0.268046) or from recorded SKUs ($0.00698 preemptible N2 core, $0.030278 N2D core in
  europe-west4, the $4.50 TPU-v2 device SKU). T4/V100/P4/K80 on-demand prices are GCP's public
  GPU prices; spot GPU, G4, A4 and some TPU spot prices are illustrative.
- DOCS: the TPU API answers and the a3/a4/g4 machine shapes.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any
from unittest import mock
from urllib.parse import parse_qs, urlsplit

import pytest
import responses
from google.cloud import compute_v1
from google.oauth2.credentials import Credentials
from scripts.replay import replay_gcp
from scripts.replay.replay_gcp import (
    ACCELERATOR_TYPES_URL,
    ACCESS_TOKEN,
    COMPUTE_SKUS_URL,
    MACHINE_TYPES_URL,
    PROJECT,
    TOKEN_URL,
    TPU_LOCATIONS_URL,
    TPU_SKUS_URL,
    TPU_ZONES,
)

from gpuhunt._internal.errors import MissingCredsError, ProviderError
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem, CPUArchitecture
from gpuhunt.providers import gcp
from gpuhunt.providers.gcp import Capacity, GCPProvider, MachineType, ParseReport, PriceBook

DATA = Path(__file__).parent / "data" / "gcp"
UNIT_TOKEN = "unit-test-access-token"


def load(name: str) -> Any:
    return json.loads((DATA / name).read_text())


def query(request: Any) -> dict[str, list[str]]:
    return parse_qs(urlsplit(request.url).query)


@pytest.fixture(autouse=True)
def _no_retry_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gcp, "RETRY_BACKOFF", 0.0)


@pytest.fixture(scope="module")
def replayed() -> list[CatalogItem]:
    return replay_gcp.collect()


@pytest.fixture(scope="module")
def collected() -> list[CatalogItem]:
    """Everything collected over the recordings, before `filter()`."""
    with (
        responses.RequestsMock() as mocked,
        mock.patch.dict(os.environ, replay_gcp.replay_env()),
    ):
        replay_gcp.register(mocked)
        return GCPProvider.from_env().get()


@pytest.fixture
def rsps() -> Any:
    with responses.RequestsMock() as mocked:
        yield mocked


@pytest.fixture
def provider() -> GCPProvider:
    """A provider whose access token needs no refresh (no ADC file involved)."""
    return GCPProvider(PROJECT, credentials=Credentials(token=UNIT_TOKEN))


def offers_of(items: list[CatalogItem], name: str, zone: str) -> dict[str, CatalogItem]:
    """The offers of one machine in one zone by capacity: "on-demand", "spot" or "dws"
    (leaving out the `gcp-g4-preview` copies of G4 offers)."""
    out: dict[str, CatalogItem] = {}
    for item in items:
        if "gcp-g4-preview" in item.flags:
            continue
        if item.instance_name == name and item.location == zone:
            kind = "dws" if item.provider_data.get("is_dws_calendar_mode") else None
            kind = kind or ("spot" if item.spot else "on-demand")
            assert kind not in out, f"two {kind} offers of {name} in {zone}"
            out[kind] = item
    return out


# --- the replay: real facts through the real request code ------------------------------------


@pytest.mark.parametrize(
    ("name", "zone", "on_demand", "spot", "gpu", "count", "gpu_memory", "cpu", "memory"),
    [
        # pricing.yml totals (Billing Catalog, 2025-03-06)
        ("a2-highgpu-1g", "us-central1-a", 3.673385, 1.293355, "A100", 1, 40.0, 12, 85.0),
        ("a2-highgpu-1g", "europe-west4-a", 3.747972, 1.44587, "A100", 1, 40.0, 12, 85.0),
        ("a2-ultragpu-1g", "us-central1-a", 5.068798, 2.027468, "A100", 1, 80.0, 12, 170.0),
        ("a2-megagpu-16g", "us-central1-b", 55.739504, 19.48024, "A100", 16, 40.0, 96, 1360.0),
        ("g2-standard-4", "us-central1-a", 0.706832, 0.279932, "L4", 1, 24.0, 4, 16.0),
        ("g2-standard-4", "europe-west4-a", 0.742916, 0.253236, "L4", 1, 24.0, 4, 16.0),
        ("g2-standard-48", "us-central1-b", 4.001665, 1.574384, "L4", 4, 24.0, 48, 192.0),
        ("a3-highgpu-8g", "us-central1-a", 88.49, 35.39575, "H100", 8, 80.0, 208, 1872.0),
        ("e2-standard-8", "us-central1-a", 0.268046, 0.107168, None, 0, None, 8, 32.0),
        ("e2-standard-8", "europe-west4-a", 0.295088, 0.117888, None, 0, None, 8, 32.0),
        # public list prices: n2-standard-2 $0.097118, e2-medium (one vCPU share) $0.033506
        ("n2-standard-2", "us-central1-a", 0.097118, 0.021448, None, 0, None, 2, 8.0),
        ("e2-medium", "us-central1-b", 0.033506, 0.013396, None, 0, None, 2, 4.0),
    ],
)
def test_replay_prices_and_shapes(
    replayed: list[CatalogItem],
    name: str,
    zone: str,
    on_demand: float,
    spot: float,
    gpu: str | None,
    count: int,
    gpu_memory: float | None,
    cpu: int,
    memory: float,
) -> None:
    offers = offers_of(replayed, name, zone)
    assert offers["on-demand"].price == pytest.approx(on_demand, abs=1e-6)
    assert offers["spot"].price == pytest.approx(spot, abs=1e-6)
    for item in offers.values():
        assert (item.gpu_name, item.gpu_count, item.gpu_memory) == (gpu, count, gpu_memory)
        assert item.gpu_vendor == (AcceleratorVendor.NVIDIA if gpu else None)
        assert (item.cpu, item.memory, item.disk_size) == (cpu, memory, None)
        assert item.provider == "gcp" and item.cpu_arch == CPUArchitecture.X86
        assert item.flags == [] and item.provider_data == {"is_dws_calendar_mode": False}


def test_replay_n1_with_attachable_gpus(
    replayed: list[CatalogItem], collected: list[CatalogItem]
) -> None:
    def price(name: str, zone: str, gpu: str, count: int, spot: bool = False) -> float:
        (item,) = [
            i
            for i in collected
            if (i.instance_name, i.location, i.gpu_name, i.gpu_count, i.spot)
            == (name, zone, gpu, count, spot)
        ]
        assert item.gpu_vendor == AcceleratorVendor.NVIDIA
        return item.price

    # N1 part: n1-standard-4 $0.189999 (pricing.yml); T4 $0.35, V100 $2.48, K80 $0.45 list prices
    assert price("n1-standard-4", "us-central1-a", "T4", 1) == 0.539999
    assert price("n1-standard-4", "us-central1-b", "T4", 4) == pytest.approx(1.589999)
    assert price("n1-standard-8", "us-central1-a", "V100", 1) == pytest.approx(2.859998)
    assert price("n1-standard-4", "us-central1-a", "K80", 1) == 0.639999
    assert price("n1-highmem-8", "europe-west4-a", "P100", 2) == pytest.approx(3.720944)
    assert price("n1-standard-4", "us-central1-a", "T4", 1, spot=True) == pytest.approx(0.19201)

    combos = {(i.instance_name, i.location, i.gpu_name, i.gpu_count) for i in collected}
    # GCP's limits per GPU count: 1 V100 takes up to 12 vCPUs, 1 K80 up to 8, T4 needs <=48
    assert ("n1-standard-16", "us-central1-a", "V100", 1) not in combos
    assert ("n1-standard-16", "us-central1-a", "V100", 2) in combos
    assert ("n1-standard-16", "us-central1-a", "K80", 1) not in combos
    assert ("n1-standard-64", "us-central1-a", "T4", 2) not in combos
    assert ("n1-standard-64", "us-central1-a", "T4", 4) in combos
    assert ("n1-standard-1", "us-central1-a", "T4", 8) not in combos  # T4 max 4 cards
    # a zone without that GPU gets no combination; Virtual Workstation types are not attachable
    assert not any(c[1] == "us-central1-b" and c[2] == "K80" for c in combos)
    attached = {c[2] for c in combos if c[0].startswith("n1-") and c[2]}
    assert attached == {"T4", "V100", "P100", "P4", "K80"}
    # published on N1: T4 and V100 only, as gpuhunt 0.1.34 (not the end-of-life K80, P100, P4)
    published = {i.gpu_name for i in replayed if i.instance_name.startswith("n1-")}
    assert published == {"T4", "V100"}
    # N1 machines without a GPU are collected but not published
    assert not any(i.instance_name.startswith("n1-") and not i.gpu_count for i in replayed)


def test_replay_tpus(replayed: list[CatalogItem]) -> None:
    tpus = {
        (i.instance_name, i.location, i.spot): i
        for i in replayed
        if i.gpu_vendor == AcceleratorVendor.GOOGLE
    }
    v2 = tpus[("v2-8", "us-central1-b", False)]
    assert v2.price == 4.5  # REAL SKU 3B3D-4CB4-AECC: $4.50 per v2-8 device
    assert (v2.gpu_name, v2.gpu_count, v2.gpu_memory, v2.cpu, v2.memory) == ("v2-8", 1, 64, 96, 334)
    assert tpus[("v2-8", "us-central1-b", True)].price == 1.35
    assert tpus[("v3-8", "us-central1-a", False)].price == 8.0
    assert tpus[("v5litepod-8", "us-central1-a", False)].price == pytest.approx(9.6)  # 8 chips
    assert tpus[("v5litepod-4", "us-central1-a", False)].price == pytest.approx(4.8)
    assert tpus[("v5litepod-1", "us-central1-a", False)].price == pytest.approx(1.2)
    assert tpus[("v5p-8", "us-east5-a", False)].price == pytest.approx(16.8)  # 2x2x1 = 4 chips
    assert tpus[("v5p-8", "us-east5-a", False)].gpu_memory == 380
    assert tpus[("v6e-8", "us-east1-d", False)].price == pytest.approx(21.6)
    assert tpus[("v6e-8", "europe-west4-a", False)].price == pytest.approx(23.76)
    assert ("v6e-8", "europe-west4-a", True) not in tpus  # no spot SKU there
    assert not any(name == "v2-32" for name, _, _ in tpus)  # multi-host slice
    assert ("v2-8", "europe-west4-a", False) not in tpus  # no v2 price in europe-west4
    assert all(i.gpu_name == i.instance_name for i in tpus.values())


def test_replay_flags_and_dws(replayed: list[CatalogItem]) -> None:
    a4 = offers_of(replayed, "a4-highgpu-8g", "us-central1-b")
    assert set(a4) == {"dws", "spot"}  # A4 is not sold on demand
    assert a4["dws"].price == 66.0 and a4["dws"].spot is False
    assert a4["dws"].flags == ["gcp-dws-calendar-mode", "gcp-a4"]
    assert a4["dws"].provider_data == {"is_dws_calendar_mode": True}
    assert a4["spot"].flags == ["gcp-a4"] and a4["spot"].price == pytest.approx(31.6)
    assert (a4["spot"].gpu_name, a4["spot"].gpu_count, a4["spot"].gpu_memory) == ("B200", 8, 180.0)

    g4 = offers_of(replayed, "g4-standard-48", "us-central1-b")["on-demand"]
    assert g4.flags == ["gcp-g4"] and (g4.gpu_name, g4.gpu_count, g4.gpu_memory) == (
        "RTXPRO6000",
        1,
        96.0,
    )
    assert g4.price == pytest.approx(48 * 0.02 + 180 * 0.0025 + 2.80)
    fractional = offers_of(replayed, "g4-standard-6", "us-central1-b")["on-demand"]
    assert (fractional.gpu_count, fractional.gpu_memory) == (1, 12.0)
    assert fractional.price == pytest.approx(6 * 0.02 + 22.5 * 0.0025 + 2.80 / 8)

    # each G4 offer also comes flagged gcp-g4-preview instead of gcp-g4, for dstack 0.19.33
    g4s = [i for i in replayed if i.instance_name.startswith("g4-standard-")]
    plain = [i for i in g4s if i.flags == ["gcp-g4"]]
    preview = [i for i in g4s if i.flags == ["gcp-g4-preview"]]
    assert plain and len(plain) == len(preview) == len(g4s) / 2
    assert [replace(i, flags=["gcp-g4"]) for i in preview] == plain
    assert not [i for i in replayed if "gcp-g4-preview" in i.flags and i not in preview]

    # A3 High below 8 GPUs is not sold on demand: only its spot offer is published
    assert set(offers_of(replayed, "a3-highgpu-1g", "us-central1-a")) == {"spot"}
    assert not [
        i
        for i in replayed
        if "gcp-dws-calendar-mode" in i.flags and not i.provider_data["is_dws_calendar_mode"]
    ]


def test_replay_catalog_shape(replayed: list[CatalogItem]) -> None:
    assert [i.price for i in replayed] == sorted(i.price for i in replayed)
    assert all(i.provider_data.keys() == {"is_dws_calendar_mode"} for i in replayed)
    zones = {i.location for i in replayed}
    assert zones == {"us-central1-a", "us-central1-b", "europe-west4-a", "us-east1-d", "us-east5-a"}
    # asia-east1 has machine types but no price SKUs in the set; OBSOLETE m2 and f1/g1 never priced
    names = {i.instance_name for i in replayed}
    assert not any(n.startswith(("m2-", "f1-", "g1-", "n2d-", "t2d-", "c2-")) for n in names)
    families = Counter(i.instance_name.split("-")[0] for i in replayed)
    assert families["e2"] == 90 and families["n2"] == 40 and families["a2"] == 46
    # 1262 collected N1/A/G/TPU offers, less 112 K80, 102 P4 and 102 P100 ones, plus 6 G4
    # preview copies
    assert len(replayed) == 1262 - 112 - 102 - 102 + 6


# --- the requests the provider sends ---------------------------------------------------------


def test_requests_sent() -> None:
    with (
        responses.RequestsMock() as rsps,
        mock.patch.dict(os.environ, replay_gcp.replay_env()),
    ):
        replay_gcp.register(rsps)
        provider = GCPProvider.from_env()
        items = provider.get()
        calls = [
            (c.request.method, urlsplit(c.request.url)._replace(query="").geturl(), c)
            for c in rsps.calls
        ]

    token_calls = [c for m, u, c in calls if u == TOKEN_URL]
    assert len(token_calls) == 1 and token_calls[0].request.method == "POST"
    body = parse_qs(token_calls[0].request.body.decode())
    assert body["grant_type"] == ["refresh_token"] and body["refresh_token"] == [
        "replay-refresh-token"
    ]
    for method, url, call in calls:
        if url != TOKEN_URL:
            assert method == "GET"
            assert call.request.headers["Authorization"] == f"Bearer {ACCESS_TOKEN}"

    machine_pages = [
        query(c.request).get("pageToken") for m, u, c in calls if u == MACHINE_TYPES_URL
    ]
    assert machine_pages == [None, ["replay-machineTypes-page-2"]]
    assert [u for m, u, c in calls].count(ACCELERATOR_TYPES_URL) == 1
    sku_calls = [c for m, u, c in calls if u in (COMPUTE_SKUS_URL, TPU_SKUS_URL)]
    assert [urlsplit(c.request.url).path for c in sku_calls] == [
        "/v1/services/6F81-5844-456A/skus",
        "/v1/services/6F81-5844-456A/skus",
        "/v1/services/E000-3F24-B8AA/skus",
    ]
    for call in sku_calls:
        assert query(call.request)["currencyCode"] == ["USD"]
        assert query(call.request)["pageSize"] == ["5000"]
    assert query(sku_calls[1].request)["pageToken"] == ["replay-skus-page-2"]
    tpu_calls = [c for m, u, c in calls if u.startswith(TPU_LOCATIONS_URL)]
    assert [urlsplit(c.request.url).path.rsplit("/locations", 1)[1] for c in tpu_calls] == [
        "",
        *[f"/{zone}/acceleratorTypes" for zone in sorted(TPU_ZONES)],
    ]
    assert all(c.request.headers["User-Agent"].startswith("gpuhunt/") for c in tpu_calls)
    assert len(calls) == 1 + 2 + 1 + 3 + 1 + len(TPU_ZONES)

    # unfiltered: N1 without GPUs and the not-on-demand A3/A4 offers are collected
    assert any(i.instance_name == "n1-highmem-16" and i.price == 0.946424 for i in items)
    assert any(i.instance_name == "a3-highgpu-1g" and not i.spot for i in items)
    assert provider.last_report.skipped == [] and not provider.last_report.unknown_gpus


def test_apply_filter_is_filter(rsps: Any) -> None:
    replay_gcp.register(rsps)
    with mock.patch.dict(os.environ, replay_gcp.replay_env()):
        provider = GCPProvider.from_env()
        filtered = provider.get(apply_filter=True)
        everything = provider.get()
    assert filtered == GCPProvider.filter(everything)
    assert len(everything) > len(filtered)


def test_real_2018_page_paginates_with_its_token(rsps: Any, provider: GCPProvider) -> None:
    real = load("machine_types_aggregated_list_2018_trimmed.json")
    rsps.add(responses.GET, MACHINE_TYPES_URL, json=real, match=[replay_gcp.page(None)])
    last = {
        "items": {
            "zones/europe-west4-a": {
                "machineTypes": [real["items"]["zones/us-central1-a"]["machineTypes"][2]]
            }
        }
    }
    rsps.add(
        responses.GET, MACHINE_TYPES_URL, json=last, match=[replay_gcp.page(real["nextPageToken"])]
    )
    client = compute_v1.MachineTypesClient(credentials=provider.credentials, transport="rest")

    items = gcp.fetch_machine_types(client, PROJECT)
    report = ParseReport()
    machines = gcp.parse_machine_types(items, report)

    assert query(rsps.calls[1].request)["pageToken"] == ["CgsIAxHUCAAAAAAAABIPCg1uMS1tZWdhbWVtLTk2"]
    assert rsps.calls[0].request.headers["Authorization"] == f"Bearer {UNIT_TOKEN}"
    by_zone = Counter(m.zone for m in machines)
    assert by_zone == {"us-central1-a": 25, "asia-east1-a": 25, "europe-west4-a": 1}
    highcpu = next(m for m in machines if m.name == "n1-highcpu-2" and m.zone == "us-central1-a")
    assert (highcpu.cpu, highcpu.memory, highcpu.gpu_type) == (2, 1.8, None)
    assert report.skipped == []


def test_real_items_with_accelerators_and_architecture() -> None:
    a2, t2d = load("machine_types_items_a2_t2d.json")
    machines = gcp.parse_machine_types(
        {
            "zones/us-central1-a": {"machineTypes": [a2]},
            "zones/europe-north2-b": {"machineTypes": [t2d]},
        },
        ParseReport(),
    )
    by_name = {m.name: m for m in machines}
    assert by_name["a2-highgpu-1g"] == MachineType(
        zone="us-central1-a",
        name="a2-highgpu-1g",
        cpu=12,
        memory=85.0,
        gpu_type="nvidia-tesla-a100",
        gpu_count=1,
    )
    assert by_name["t2d-standard-8"].cpu_arch == CPUArchitecture.X86
    arm = gcp.parse_machine_types(
        {
            "zones/us-central1-a": {
                "machineTypes": [{**t2d, "name": "t2a-standard-8", "architecture": "ARM64"}]
            }
        },
        ParseReport(),
    )
    assert arm[0].cpu_arch == CPUArchitecture.ARM


def test_real_2018_accelerator_types_and_n1_limits() -> None:
    accelerators = gcp.parse_accelerator_types(
        load("accelerator_types_aggregated_list_2018.json")["items"]
    )
    assert accelerators["us-central1-a"]["nvidia-tesla-k80"] == 8
    assert accelerators["us-central1-a"]["nvidia-tesla-p4"] == 4
    assert "europe-west1-c" not in accelerators  # a NO_RESULTS_ON_PAGE scope
    n1 = [
        MachineType("us-central1-a", "n1-standard-8", 8, 30.0),
        MachineType("us-central1-a", "n1-highmem-64", 64, 416.0),
        MachineType("us-central1-a", "e2-standard-8", 8, 32.0),
    ]
    combos = {(m.name, m.gpu_type, m.gpu_count) for m in gcp.n1_gpu_machine_types(n1, accelerators)}
    assert ("n1-standard-8", "nvidia-tesla-k80", 1) in combos
    assert ("n1-standard-8", "nvidia-tesla-k80", 8) in combos
    assert ("n1-highmem-64", "nvidia-tesla-k80", 8) not in combos  # K80 x8: up to 208 GB
    assert ("n1-highmem-64", "nvidia-tesla-p4", 4) in combos
    assert not any(name == "e2-standard-8" for name, _, _ in combos)
    assert not any(gpu.endswith("-vws") for _, gpu, _ in combos)


def test_real_billing_skus() -> None:
    skus = load("billing_skus_page_2019.json")["skus"] + load("billing_skus_2020_items.json")
    book = gcp.parse_skus(skus, ParseReport())
    assert book.prices == {
        ("core", "n2", "us-central1", Capacity.SPOT): pytest.approx(0.00698),
        ("core", "n2", "us-west1", Capacity.SPOT): pytest.approx(0.00698),
        ("core", "n2", "us-east1", Capacity.SPOT): pytest.approx(0.00698),
        ("core", "n2d", "europe-west4", Capacity.ON_DEMAND): pytest.approx(0.030278),
    }  # licence, commitment, persistent-disk and custom-extended SKUs price nothing


@pytest.mark.parametrize(
    ("description", "group", "usage", "expected"),
    [
        (
            "N1 Predefined Instance Core running in Americas",
            "N1Standard",
            "OnDemand",
            ("core", "n1", Capacity.ON_DEMAND),
        ),
        (
            "Spot Preemptible N1 Predefined Instance Ram running in Americas",
            "N1Standard",
            "Preemptible",
            ("ram", "n1", Capacity.SPOT),
        ),
        (
            "N2D AMD Instance Core running in Netherlands",
            "CPU",
            "OnDemand",
            ("core", "n2d", Capacity.ON_DEMAND),
        ),
        (
            "C4A Arm Instance Ram running in Americas",
            "RAM",
            "OnDemand",
            ("ram", "c4a", Capacity.ON_DEMAND),
        ),
        (
            "M3 Memory-optimized Instance Core running in Americas",
            "CPU",
            "OnDemand",
            ("core", "m3", Capacity.ON_DEMAND),
        ),
        (
            "Memory-optimized Instance Core running in Americas",
            "CPU",
            "OnDemand",
            ("core", "m1", Capacity.ON_DEMAND),
        ),
        (
            "Compute optimized Core running in Americas",
            "CPU",
            "OnDemand",
            ("core", "c2", Capacity.ON_DEMAND),
        ),
        (
            "A3Plus Instance Ram running in Americas",
            "RAM",
            "OnDemand",
            ("ram", "a3-megagpu", Capacity.ON_DEMAND),
        ),
        (
            "Nvidia Tesla T4 GPU attached to Spot Preemptible VMs running in Americas",
            "GPU",
            "Preemptible",
            ("gpu", "nvidia-tesla-t4", Capacity.SPOT),
        ),
        (
            "Nvidia Tesla A100 80GB GPU running in Americas",
            "GPU",
            "OnDemand",
            ("gpu", "nvidia-a100-80gb", Capacity.ON_DEMAND),
        ),
        (
            "Nvidia H100 80GB Mega GPU running in Americas",
            "GPU",
            "OnDemand",
            ("gpu", "nvidia-h100-mega-80gb", Capacity.ON_DEMAND),
        ),
        (
            "RTX 6000 96GB running in Americas",
            "GPU",
            "OnDemand",
            ("gpu", "nvidia-rtx-pro-6000", Capacity.ON_DEMAND),
        ),
        (
            "DWS Calendar Mode A4 Nvidia B200 (1 gpu slice) running in Americas",
            "GPU",
            "OnDemand",
            ("gpu_slice", "nvidia-b200", Capacity.DWS_CALENDAR),
        ),
        (
            "Spot Preemptible A4 Nvidia B200 (1 gpu slice) running in Americas",
            "GPU",
            "Preemptible",
            ("gpu_slice", "nvidia-b200", Capacity.SPOT),
        ),
        (
            "C4 Instance Local SSD running in Americas",
            "LocalSSD",
            "OnDemand",
            ("local_ssd", "c4", Capacity.ON_DEMAND),
        ),
        ("TpuV5e running in Americas", "TPU", "OnDemand", ("tpu", "v5litepod", Capacity.ON_DEMAND)),
        ("Preemptible TPU-v2 Accelerator USA", "TPU", "Preemptible", ("tpu", "v2", Capacity.SPOT)),
        ("TPU-v3 Pod Accelerator USA", "TPU", "OnDemand", ("tpu_pod", "v3", Capacity.ON_DEMAND)),
        ("Commitment v1: A2 Cpu in Americas for 1 Year", "CPU", "Commit1Yr", None),
        ("Reserved A2 Instance Core running in Americas", "CPU", "OnDemand", None),
        ("N2 Custom Instance Core running in Americas", "CPU", "OnDemand", None),
        ("Micro Instance with burstable CPU running in Americas", "F1Micro", "OnDemand", None),
        ("DWS Calendar Mode Nvidia H100 80GB GPU running in Americas", "GPU", "Preemptible", None),
    ],
)
def test_classify_sku(description: str, group: str, usage: str, expected: Any) -> None:
    sku = {
        "description": description,
        "category": {"resourceFamily": "Compute", "resourceGroup": group, "usageType": usage},
    }
    assert gcp.classify_sku(sku) == expected


def test_local_ssd_storage_sku_is_hourly() -> None:
    sku = next(
        s
        for s in load("replay_compute_skus_page1.json")["skus"]
        + load("replay_compute_skus_page2.json")["skus"]
        if s["description"] == "SSD backed Local Storage running in Americas"
    )
    assert gcp.classify_sku(sku) == ("local_ssd", "", Capacity.ON_DEMAND)
    assert gcp.sku_hourly_price(sku) == pytest.approx(0.08 / 730)


def test_machine_price_rules() -> None:
    book = PriceBook()
    for kind, key, price in [
        ("core", "e2", 0.02),
        ("ram", "e2", 0.003),
        ("core", "a2", 0.03),
        ("ram", "a2", 0.004),
        ("gpu", "nvidia-a100-80gb", 3.9),
    ]:
        book.add((kind, key, "us-central1", Capacity.ON_DEMAND), price, "test")
    micro = MachineType("us-central1-a", "e2-micro", 2, 1.0)
    assert gcp.machine_price(micro, book, Capacity.ON_DEMAND) == pytest.approx(0.25 * 0.02 + 0.003)
    assert gcp.machine_price(micro, book, Capacity.SPOT) is None
    ultra = MachineType("us-central1-a", "a2-ultragpu-1g", 12, 170.0, "nvidia-a100-80gb", 1, 375)
    assert gcp.machine_price(ultra, book, Capacity.ON_DEMAND) is None  # no local SSD price
    book.add(("local_ssd", "", "us-central1", Capacity.ON_DEMAND), 0.08 / 730, "test")
    assert gcp.machine_price(ultra, book, Capacity.ON_DEMAND) == pytest.approx(
        12 * 0.03 + 170 * 0.004 + 3.9 + 375 * 0.08 / 730
    )
    assert (
        gcp.machine_price(
            MachineType("us-central1-a", "f1-micro", 1, 0.6), book, Capacity.ON_DEMAND
        )
        is None
    )
    assert (
        gcp.machine_price(
            MachineType("europe-west4-a", "e2-micro", 2, 1.0), book, Capacity.ON_DEMAND
        )
        is None
    )


# --- malformed records and unknown GPUs ------------------------------------------------------


def test_malformed_records_skipped_and_unknown_gpu_kept() -> None:
    report = ParseReport()
    machines = gcp.parse_machine_types(
        {
            "zones/us-central1-a": {
                "machineTypes": [
                    {"name": "n1-standard-2", "guestCpus": 2, "memoryMb": 7680},
                    {"name": "n1-broken-2", "memoryMb": 7680},  # no guestCpus
                    {"guestCpus": 2, "memoryMb": 7680},  # no name
                    {
                        "name": "a9-bad-1g",
                        "guestCpus": 4,
                        "memoryMb": 4096,
                        "accelerators": [{"guestAcceleratorCount": 1}],
                    },
                    {
                        "name": "a9-highgpu-1g",
                        "guestCpus": 12,
                        "memoryMb": 87040,
                        "accelerators": [
                            {
                                "guestAcceleratorType": "nvidia-zz900-141gb",
                                "guestAcceleratorCount": 1,
                            }
                        ],
                    },
                    {
                        "name": "ct9-hightpu-4t",
                        "guestCpus": 24,
                        "memoryMb": 49152,
                        "accelerators": [
                            {"guestAcceleratorType": "ct9", "guestAcceleratorCount": 4}
                        ],
                    },
                    {
                        "name": "n1-standard-1",
                        "guestCpus": 1,
                        "memoryMb": 3840,
                        "deprecated": {"state": "DEPRECATED"},
                    },
                ]
            },
            "zones/us-central1-b": {"warning": {"code": "NO_RESULTS_ON_PAGE"}},
        },
        report,
    )
    assert [m.name for m in machines] == ["n1-standard-2", "a9-highgpu-1g", "ct9-hightpu-4t"]
    assert len(report.skipped) == 3
    book = PriceBook()
    for kind, key, price in [
        ("core", "a9", 0.03),
        ("ram", "a9", 0.004),
        ("gpu", "nvidia-zz900-141gb", 5.0),
        ("core", "ct9", 0.01),
        ("ram", "ct9", 0.001),
        ("gpu", "ct9", 1.0),
    ]:
        book.add((kind, key, "us-central1", Capacity.ON_DEMAND), price, "test")
    offers = gcp.make_vm_offers(machines, book, report)
    (kept,) = offers
    assert (kept.instance_name, kept.gpu_name, kept.gpu_memory, kept.gpu_vendor) == (
        "a9-highgpu-1g",
        "nvidia-zz900-141gb",
        141.0,
        AcceleratorVendor.NVIDIA,
    )
    assert report.unknown_gpus == {"nvidia-zz900-141gb": 1, "ct9": 1}
    assert len(report.skipped) == 4  # ct9: no vendor, so no offer

    tpus = gcp.parse_tpu_accelerator_types(
        "us-central1-a",
        [
            {"type": "v5litepod-4", "acceleratorConfigs": [{"topology": "2x2"}]},
            {"type": "v5litepod-8"},
            {"acceleratorConfigs": []},
        ],
        report,
    )
    assert tpus == [gcp.TPUType("us-central1-a", "v5litepod-4", 4)]
    assert len(report.skipped) == 6

    skus_report = ParseReport()
    gcp.parse_skus(
        [
            {
                "skuId": "X",
                "description": "E2 Instance Core running in Americas",
                "category": {
                    "resourceFamily": "Compute",
                    "resourceGroup": "CPU",
                    "usageType": "OnDemand",
                },
                "serviceRegions": ["us-central1"],
                "pricingInfo": [],
            },
            "not a sku",
        ],
        skus_report,
    )
    assert skus_report.skipped == ["SKU X: no hourly USD price", "billing SKU: not an object"]


def test_malformed_record_in_replay_is_counted(rsps: Any, provider: GCPProvider) -> None:
    replay_gcp.register(rsps, token=False)
    rsps.remove(responses.GET, MACHINE_TYPES_URL)
    pages = [load("replay_machine_types_page1.json"), load("replay_machine_types_page2.json")]
    del pages[1]["items"]["zones/europe-west4-a"]["machineTypes"][0]["guestCpus"]
    rsps.add(responses.GET, MACHINE_TYPES_URL, json=pages[0], match=[replay_gcp.page(None)])
    rsps.add(
        responses.GET,
        MACHINE_TYPES_URL,
        json=pages[1],
        match=[replay_gcp.page("replay-machineTypes-page-2")],
    )
    items = provider.get()
    assert provider.last_report.skipped == [
        "a2-highgpu-1g in europe-west4-a: no guestCpus or memoryMb"
    ]
    assert not any(
        i.instance_name == "a2-highgpu-1g" and i.location == "europe-west4-a" for i in items
    )
    assert any(i.instance_name == "a2-highgpu-1g" and i.location == "us-central1-a" for i in items)


# --- errors ----------------------------------------------------------------------------------


def test_missing_project_env() -> None:
    with (
        mock.patch.dict(os.environ, {}, clear=True),
        pytest.raises(MissingCredsError, match="GCP_PROJECT_ID"),
    ):
        GCPProvider.from_env()


def test_missing_application_default_credentials(tmp_path: Path) -> None:
    env = {"GCP_PROJECT_ID": PROJECT, "GOOGLE_APPLICATION_CREDENTIALS": str(tmp_path / "none.json")}
    with mock.patch.dict(os.environ, env, clear=True):
        provider = GCPProvider.from_env()  # no lookup yet: constructing never touches the network
        with pytest.raises(MissingCredsError, match="GOOGLE_APPLICATION_CREDENTIALS"):
            provider.get()


def test_refused_credentials_name_them(rsps: Any) -> None:
    rsps.add(
        responses.POST,
        TOKEN_URL,
        json={"access_token": ACCESS_TOKEN, "expires_in": 3599, "token_type": "Bearer"},
    )
    rsps.add(
        responses.GET,
        MACHINE_TYPES_URL,
        status=401,
        json={"error": {"code": 401, "message": "Request had invalid authentication credentials."}},
    )
    with mock.patch.dict(os.environ, replay_gcp.replay_env()):
        provider = GCPProvider.from_env()
        with pytest.raises(ProviderError) as error:
            provider.get()
    message = str(error.value)
    assert (
        "HTTP 401" in message
        and "GOOGLE_APPLICATION_CREDENTIALS" in message
        and "GCP_PROJECT_ID" in message
    )
    assert ACCESS_TOKEN not in message and "replay-refresh-token" not in message
    # google-auth refreshes the token and tries again (twice) on a 401; gpuhunt adds no retries
    assert [c.request.method for c in rsps.calls] == ["POST", "GET"] * 3


def test_token_refresh_refused(rsps: Any) -> None:
    rsps.add(
        responses.POST,
        TOKEN_URL,
        status=400,
        json={"error": "invalid_grant", "error_description": "Bad Request"},
    )
    with mock.patch.dict(os.environ, replay_gcp.replay_env()):
        provider = GCPProvider.from_env()
        with pytest.raises(ProviderError, match="GOOGLE_APPLICATION_CREDENTIALS") as error:
            provider.get()
    assert "replay-client-secret" not in str(error.value)


def test_forbidden_project(rsps: Any, provider: GCPProvider) -> None:
    rsps.add(
        responses.GET,
        MACHINE_TYPES_URL,
        status=403,
        json={"error": {"code": 403, "message": "Compute Engine API has not been used in project"}},
    )
    with pytest.raises(ProviderError, match=r"refused with HTTP 403.*GCP_PROJECT_ID"):
        provider.get()
    assert len(rsps.calls) == 1


@pytest.mark.parametrize("status", [429, 500, 503])
def test_transient_errors_retried_then_fail(rsps: Any, provider: GCPProvider, status: int) -> None:
    rsps.add(
        responses.GET,
        MACHINE_TYPES_URL,
        json=load("replay_machine_types_page2.json") | {"nextPageToken": ""},
    )
    rsps.add(responses.GET, ACCELERATOR_TYPES_URL, json=load("replay_accelerator_types.json"))
    rsps.add(responses.GET, COMPUTE_SKUS_URL, status=status, json={"error": {"code": status}})
    with pytest.raises(
        ProviderError,
        match=f"SKUs of services/6F81-5844-456A failed after 4 attempts: HTTP {status}",
    ):
        provider.get()
    assert (
        sum(urlsplit(c.request.url).path.endswith("/skus") for c in rsps.calls)
        == gcp.MAX_RETRIES + 1
    )


def test_transient_error_then_success(rsps: Any, provider: GCPProvider) -> None:
    rsps.add(responses.GET, ACCELERATOR_TYPES_URL, status=503)  # answered first, then dropped
    replay_gcp.register(rsps, token=False)
    items = provider.get()
    urls = [c.request.url.split("?")[0] for c in rsps.calls]
    assert urls.count(ACCELERATOR_TYPES_URL) == 2
    assert any(i.gpu_name == "T4" for i in items)


def test_connection_error_retried(rsps: Any, provider: GCPProvider) -> None:
    import requests

    rsps.add(responses.GET, MACHINE_TYPES_URL, body=requests.ConnectionError("reset"))
    with pytest.raises(ProviderError, match="failed after 4 attempts: ConnectionError"):
        provider.get()
    assert len(rsps.calls) == 4


@pytest.mark.parametrize(
    "body",
    [
        "<html>not json</html>",
        json.dumps({"items": ["not", "a", "map"]}),
        json.dumps({"items": {"zones/a": {"machineTypes": [{"guestCpus": "many"}]}}}),
    ],
)
def test_malformed_answer(rsps: Any, provider: GCPProvider, body: str) -> None:
    rsps.add(responses.GET, MACHINE_TYPES_URL, body=body, content_type="application/json")
    with pytest.raises(ProviderError, match="listing machine types returned a malformed response"):
        provider.get()
    assert len(rsps.calls) == 1


def _register_without_tpu_zones(rsps: Any) -> None:
    replay_gcp.register(rsps, token=False)
    for zone in TPU_ZONES:
        rsps.remove(responses.GET, f"{TPU_LOCATIONS_URL}/{zone}/acceleratorTypes")


def test_tpu_zone_failure_is_skipped(rsps: Any, provider: GCPProvider) -> None:
    _register_without_tpu_zones(rsps)
    for zone in TPU_ZONES:
        if zone == "us-east1-d":
            rsps.add(responses.GET, f"{TPU_LOCATIONS_URL}/{zone}/acceleratorTypes", status=503)
        else:
            rsps.add(
                responses.GET,
                f"{TPU_LOCATIONS_URL}/{zone}/acceleratorTypes",
                json=load(f"replay_tpu_accelerator_types_{zone}.json"),
            )
    items = provider.get()
    assert provider.last_report.failed_tpu_zones == ["us-east1-d"]
    assert (
        sum(c.request.url.endswith("us-east1-d/acceleratorTypes") for c in rsps.calls) == 4
    )  # 3 retries
    tpu_zones = {i.location for i in items if i.gpu_vendor == AcceleratorVendor.GOOGLE}
    assert tpu_zones == {"us-central1-a", "us-central1-b", "us-east5-a", "europe-west4-a"}


def test_tpu_all_zones_failing_is_an_error(rsps: Any, provider: GCPProvider) -> None:
    _register_without_tpu_zones(rsps)
    for zone in TPU_ZONES:
        rsps.add(responses.GET, f"{TPU_LOCATIONS_URL}/{zone}/acceleratorTypes", status=404)
    with pytest.raises(ProviderError, match="TPU types failed in all 5 zones"):
        provider.get()


def test_tpu_api_refused_names_credentials(rsps: Any, provider: GCPProvider) -> None:
    _register_without_tpu_zones(rsps)
    rsps.replace(responses.GET, TPU_LOCATIONS_URL, status=403, json={"error": {"code": 403}})
    with pytest.raises(
        ProviderError, match="HTTP 403; check GOOGLE_APPLICATION_CREDENTIALS"
    ) as error:
        provider.get()
    assert UNIT_TOKEN not in str(error.value)


def test_tpu_api_malformed(rsps: Any, provider: GCPProvider) -> None:
    _register_without_tpu_zones(rsps)
    rsps.replace(responses.GET, TPU_LOCATIONS_URL, body="not json")
    with pytest.raises(ProviderError, match="invalid JSON"):
        provider.get()
    rsps.replace(responses.GET, TPU_LOCATIONS_URL, json={"locations": {"us-central1-a": {}}})
    with pytest.raises(ProviderError, match="field 'locations' is not a list"):
        provider.get()


def test_repr_hides_credentials(provider: GCPProvider) -> None:
    assert repr(provider) == "GCPProvider(project='gpuhunt-replay', credentials=***)"
    assert UNIT_TOKEN not in repr(provider)


# --- committed use: terms beside the offers (costs, issue 49) --------------------------------

# A real SKU, quoted with its JSON in public code (Billing Catalog, effectiveTime 2023-12-20).
A2_CPU_COMMIT_APAC = {
    "name": "services/6F81-5844-456A/skus/38FA-6071-3D88",
    "skuId": "38FA-6071-3D88",
    "description": "Commitment v1: A2 Cpu in APAC for 1 Year",
    "category": {
        "serviceDisplayName": "Compute Engine",
        "resourceFamily": "Compute",
        "resourceGroup": "CPU",
        "usageType": "Commit1Yr",
    },
    "serviceRegions": ["asia-east1"],
    "pricingInfo": [
        {
            "pricingExpression": {
                "usageUnit": "h",
                "tieredRates": [
                    {
                        "startUsageAmount": 0,
                        "unitPrice": {"currencyCode": "USD", "units": "0", "nanos": 23059300},
                    }
                ],
            },
            "effectiveTime": "2023-12-20T22:56:00.158911Z",
        }
    ],
}


def _commit(description: str, group: str, usage: str, price: float) -> dict[str, Any]:
    """A commitment SKU in the real SKU's shape; `price` is an arithmetic input only."""
    units, nanos = divmod(round(price * 1e9), 10**9)
    sku = json.loads(json.dumps(A2_CPU_COMMIT_APAC))
    sku["description"] = description
    sku["category"].update(resourceGroup=group, usageType=usage)
    sku["pricingInfo"][0]["pricingExpression"]["tieredRates"][0]["unitPrice"].update(
        units=str(units), nanos=nanos
    )
    return sku


@pytest.mark.parametrize(
    ("description", "group", "expected"),
    [
        ("Commitment v1: A2 Cpu in APAC for 1 Year", "CPU", ("core", "a2", Capacity.ON_DEMAND)),
        ("Commitment v1: A2 Ram in APAC for 3 Years", "RAM", ("ram", "a2", Capacity.ON_DEMAND)),
        (
            "Commitment v1: Nvidia H100 80GB GPU running in Americas for 1 Year",
            "GPU",
            ("gpu", "nvidia-h100-80gb", Capacity.ON_DEMAND),
        ),
        ("Commitment v1: Cpu in Montreal for 1 Year", "CPU", None),  # no series: N1's old SKU
    ],
)
def test_commitment_skus_read_as_the_component_they_commit_to(
    description: str, group: str, expected: Any
) -> None:
    usage = "Commit3Yr" if "3 Years" in description else "Commit1Yr"
    found = gcp.commitment_as_on_demand(_commit(description, group, usage, 0.01))
    assert found is not None
    assert found[0] == ("3y" if usage == "Commit3Yr" else "1y")
    assert gcp.classify_sku(found[1]) == expected


def test_on_demand_skus_are_not_commitments() -> None:
    sku = _commit("A2 Instance Core running in APAC", "CPU", "OnDemand", 0.01)
    assert gcp.commitment_as_on_demand(sku) is None


def test_machine_terms_compose_like_the_on_demand_price() -> None:
    books = gcp.commitment_books(
        [
            A2_CPU_COMMIT_APAC,
            _commit("Commitment v1: A2 Ram in APAC for 1 Year", "RAM", "Commit1Yr", 0.003),
            _commit(
                "Commitment v1: Nvidia Tesla A100 GPU running in APAC for 1 Year",
                "GPU",
                "Commit1Yr",
                2.0,
            ),
            _commit("Commitment v1: A2 Cpu in APAC for 3 Years", "CPU", "Commit3Yr", 0.015),
        ]
    )
    assert books["1y"].get("core", "a2", "asia-east1", Capacity.ON_DEMAND) == pytest.approx(
        0.0230593
    )
    machine = MachineType("asia-east1-a", "a2-highgpu-1g", 12, 85.0, "nvidia-tesla-a100", 1)
    (term,) = gcp.make_vm_terms([machine], books, observed_at=None)  # 3y: no RAM, no GPU SKU
    assert (term.term, term.payment, term.upfront) == ("1y", "none", 0.0)
    assert term.hourly == pytest.approx(12 * 0.0230593 + 85 * 0.003 + 2.0, abs=1e-6)


def test_replay_terms_are_beside_the_offers() -> None:
    with (
        responses.RequestsMock() as mocked,
        mock.patch.dict(os.environ, replay_gcp.replay_env()),
    ):
        replay_gcp.register(mocked)
        provider = GCPProvider.from_env()
        offers = provider.get()
    # The replay's commitment SKUs price vCPUs only: no machine has every component, so no
    # term, and the offers are what the on-demand and spot SKUs make (the replay tests above).
    assert provider.last_terms == [] and provider.extra_tables() == {}
    assert offers
