"""CUDO Compute over recorded machine types.

Data: `vm_machine_types.json` is the shared fixture (two items of `machineTypes`, from gpuhunt's
own CUDO tests); the endpoint wraps such items as `{"machineTypes": [...]}`, which `answer()`
does. Extra items (CPU-only, unknown GPU model, malformed) are built in the tests with the same
field names.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import responses

from gpuhunt._internal.errors import ProviderError
from gpuhunt._internal.models import AcceleratorVendor, QueryFilter
from gpuhunt.providers._report import ParseReport
from gpuhunt.providers.cudo import MACHINE_TYPES_URL, CudoProvider, parse_machine_types

DATA = Path(__file__).parent / "data" / "cudo"


def items() -> list[dict[str, Any]]:
    return json.loads((DATA / "vm_machine_types.json").read_text())


def answer(extra: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"machineTypes": items() + (extra or [])}


def cpu_only_item() -> dict[str, Any]:
    item = copy.deepcopy(items()[0])
    item.update(
        machineType="epyc-milan",
        dataCenterId="gb-bournemouth-1",
        gpuModel="",
        gpuModelId="",
        gpuPriceHr={"value": "0"},
        maxGpuFree=0,
        totalGpuFree=0,
    )
    return item


def price(item: dict[str, Any], cpu: int, memory: int, gpus: int, disk: int) -> float:
    return round(
        cpu * float(item["vcpuPriceHr"]["value"])
        + memory * float(item["memoryGibPriceHr"]["value"])
        + gpus * float(item["gpuPriceHr"]["value"])
        + disk * float(item["minStorageGibPriceHr"]["value"])
        + float(item["ipv4PriceHr"]["value"]),
        5,
    )


class TestRequest:
    @responses.activate
    def test_public_listing(self):
        responses.add(responses.GET, MACHINE_TYPES_URL, json=answer())
        CudoProvider().get(QueryFilter(gpu_name=["A5000"]))
        assert len(responses.calls) == 1
        request = responses.calls[0].request
        assert (request.method, request.url) == (
            "GET",
            "https://rest.compute.cudo.org/v1/vms/machine-types-2",
        )
        assert "Authorization" not in request.headers

    def test_from_env_needs_no_credential(self, monkeypatch):
        monkeypatch.delenv("CUDO_API_KEY", raising=False)
        assert isinstance(CudoProvider.from_env(), CudoProvider)


class TestOffers:
    @responses.activate
    def test_balanced_offers(self):
        responses.add(responses.GET, MACHINE_TYPES_URL, json=answer())
        offers = CudoProvider().get(QueryFilter(min_gpu_count=1))
        rtx3080, a5000 = offers  # by price
        rtx_item, a5000_item = items()

        assert (rtx3080.instance_name, rtx3080.location) == ("cascade-lake", "br-saopaulo-1")
        assert (rtx3080.gpu_name, rtx3080.gpu_count, rtx3080.gpu_memory) == ("RTX3080", 1, 10.0)
        assert rtx3080.gpu_vendor == AcceleratorVendor.NVIDIA
        assert rtx3080.provider_data == {"gpu_model_id": "nvidia-rtx-3080"}
        # 20 GB RAM for 10 GB of VRAM; 4 vCPUs would be below 0.25 vCPU per GiB, so 5.
        assert (rtx3080.cpu, rtx3080.memory, rtx3080.disk_size) == (5, 20.0, 100.0)
        assert rtx3080.price == price(rtx_item, 5, 20, 1, 100) == 0.157

        assert (a5000.instance_name, a5000.location) == ("epyc-rome-rtx-a5000", "no-luster-1")
        assert (a5000.gpu_name, a5000.gpu_memory) == ("A5000", 24.0)
        # 48 GB RAM; 8 vCPUs would be below 0.259109 vCPU per GiB (12.4), so 13.
        assert (a5000.cpu, a5000.memory, a5000.disk_size) == (13, 48.0, 100.0)
        assert a5000.price == price(a5000_item, 13, 48, 1, 100)
        assert all(o.spot is False for o in offers)

    def test_unbalanced_offers_are_the_minimums(self):
        rtx3080 = min(parse_machine_types(answer(), QueryFilter(), False), key=lambda o: o.price)
        assert (rtx3080.cpu, rtx3080.memory, rtx3080.disk_size) == (2, 8.0, 100.0)
        assert rtx3080.price == price(items()[0], 2, 8, 1, 100)

    def test_filter_minimums_and_maximums_bound_the_sizes(self):
        q = QueryFilter(gpu_name=["RTX3080"], min_gpu_count=3, min_disk_size=250, max_memory=40)
        offer = next(o for o in parse_machine_types(answer(), q) if o.gpu_name == "RTX3080")
        # 3 GPUs want 60 GB of RAM; the filter caps it at 40, and 40 GiB need 10+ vCPUs.
        assert (offer.gpu_count, offer.memory, offer.cpu, offer.disk_size) == (3, 40.0, 10, 250.0)

    def test_gpu_count_beyond_what_is_free(self):
        offers = parse_machine_types(answer(), QueryFilter(min_gpu_count=5))
        assert [(o.gpu_name, o.gpu_count) for o in offers] == [("RTX3080", 5)]
        assert parse_machine_types(answer(), QueryFilter(min_gpu_count=6)) == []

    def test_vcpus_per_gpu_limit(self):
        # RTX 3080 machines allow at most 13 vCPUs per GPU.
        assert not [
            o
            for o in parse_machine_types(answer(), QueryFilter(min_cpu=14, max_gpu_count=1))
            if o.gpu_name == "RTX3080"
        ]

    def test_cpu_only_machine_types(self):
        payload = answer([cpu_only_item()])
        cpu_offers = [o for o in parse_machine_types(payload, QueryFilter()) if o.gpu_count == 0]
        offer = cpu_offers[0]
        assert (offer.instance_name, offer.gpu_name, offer.gpu_vendor) == ("epyc-milan", None, None)
        # 8 GB RAM at least, 4 GB per vCPU when balanced.
        assert (offer.cpu, offer.memory, offer.disk_size) == (2, 8.0, 100.0)
        assert offer.provider_data == {}
        assert not [
            o for o in parse_machine_types(payload, QueryFilter(min_gpu_count=1)) if not o.gpu_count
        ]
        bigger = [
            o
            for o in parse_machine_types(payload, QueryFilter(min_memory=64, max_gpu_count=0))
            if not o.gpu_count
        ]
        assert [(o.cpu, o.memory) for o in bigger] == [(16, 64.0)]

    def test_unknown_gpu_model_is_kept_and_counted(self):
        unknown = copy.deepcopy(items()[1])
        unknown.update(gpuModel="Instinct MX 9000", gpuModelId="amd-instinct-mx9000")
        report = ParseReport()
        offers = parse_machine_types(answer([unknown]), QueryFilter(), True, report)
        kept = [o for o in offers if o.gpu_name == "Instinct MX 9000"]
        assert len(kept) == 1
        assert kept[0].gpu_vendor == AcceleratorVendor.AMD
        assert kept[0].gpu_memory is None
        assert report.unknown_gpus == {"Instinct MX 9000": 1}

    @responses.activate
    def test_malformed_machine_type_is_skipped_and_counted(self):
        broken = copy.deepcopy(items()[1])
        del broken["vcpuPriceHr"]
        responses.add(responses.GET, MACHINE_TYPES_URL, json=answer([broken, "not an object"]))
        provider = CudoProvider()
        offers = provider.get()
        assert [o.instance_name for o in offers] == ["cascade-lake", "epyc-rome-rtx-a5000"]
        assert provider.last_report.counts == {"malformed": 2}

    def test_compute_mode_suffix_is_not_part_of_the_name(self):
        item = copy.deepcopy(items()[1])
        item.update(gpuModel="A40 (compute mode)", gpuModelId="nvidia-a40-compute")
        (offer,) = parse_machine_types({"machineTypes": [item]})
        assert (offer.gpu_name, offer.gpu_memory) == ("A40", 48.0)


class TestErrors:
    @responses.activate
    def test_server_errors_are_retried_a_bounded_number_of_times(self):
        responses.add(responses.GET, MACHINE_TYPES_URL, status=503)
        with pytest.raises(ProviderError, match="cudo: GET .* HTTP 503"):
            CudoProvider().get()
        assert len(responses.calls) == 4

    @responses.activate
    def test_refusal(self):
        responses.add(responses.GET, MACHINE_TYPES_URL, status=401)
        with pytest.raises(ProviderError, match="HTTP 401"):
            CudoProvider().get()
        assert len(responses.calls) == 1

    @responses.activate
    def test_malformed_json(self):
        responses.add(responses.GET, MACHINE_TYPES_URL, body='{"machineTypes": [')
        with pytest.raises(ProviderError, match="invalid JSON"):
            CudoProvider().get()

    def test_wrong_shape_names_the_field(self):
        with pytest.raises(ProviderError, match="expected an object, got list"):
            parse_machine_types(items())
        with pytest.raises(ProviderError, match="'machineTypes' is missing"):
            parse_machine_types({"machine_types": items()})
        with pytest.raises(ProviderError, match="'machineTypes' has type dict"):
            parse_machine_types({"machineTypes": {}})


class TestCaching:
    @responses.activate
    def test_fifty_concurrent_queries_make_one_call(self):
        def slow_answer(request: Any) -> tuple[int, dict, str]:
            time.sleep(0.2)
            return 200, {}, json.dumps(answer())

        responses.add_callback(responses.GET, MACHINE_TYPES_URL, callback=slow_answer)
        provider = CudoProvider()
        counts: list[int] = []

        def query() -> None:
            counts.append(len(provider.get(QueryFilter(min_gpu_count=1))))

        threads = [threading.Thread(target=query) for _ in range(50)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=10)
        assert counts == [2] * 50
        assert len(responses.calls) == 1
        # Other filters are answered from the same cached listing.
        provider.get(QueryFilter(gpu_name=["A5000"]), balance_resources=False)
        assert len(responses.calls) == 1
