import pytest

from gpuhunt import AcceleratorVendor, CatalogItem
from integrity_tests.base import CatalogFileIntegrityTests


class TestGCPCatalog(CatalogFileIntegrityTests):
    CATALOG_NAME = "gcp"

    def test_e2_highcpu_2_zones(self, offers: list[CatalogItem]) -> None:
        expected_zones = {
            "asia-east1-a",
            "asia-east1-b",
            "asia-east1-c",
            "asia-east2-a",
            "asia-east2-b",
            "asia-east2-c",
            "asia-northeast1-a",
            "asia-northeast1-b",
            "asia-northeast1-c",
            "asia-northeast2-a",
            "asia-northeast2-b",
            "asia-northeast2-c",
            "asia-northeast3-a",
            "asia-northeast3-b",
            "asia-northeast3-c",
            "asia-south1-a",
            "asia-south1-b",
            "asia-south1-c",
            "asia-south2-a",
            "asia-south2-b",
            "asia-south2-c",
            "asia-southeast1-a",
            "asia-southeast1-b",
            "asia-southeast1-c",
            "asia-southeast2-a",
            "asia-southeast2-b",
            "asia-southeast2-c",
            "australia-southeast1-a",
            "australia-southeast1-b",
            "australia-southeast1-c",
            "australia-southeast2-a",
            "australia-southeast2-b",
            "australia-southeast2-c",
            "europe-central2-a",
            "europe-central2-b",
            "europe-central2-c",
            "europe-north1-a",
            "europe-north1-b",
            "europe-north1-c",
            "europe-southwest1-a",
            "europe-southwest1-b",
            "europe-southwest1-c",
            "europe-west1-b",
            "europe-west1-c",
            "europe-west1-d",
            "europe-west10-a",
            "europe-west10-b",
            "europe-west10-c",
            "europe-west12-a",
            "europe-west12-b",
            "europe-west12-c",
            "europe-west2-a",
            "europe-west2-b",
            "europe-west2-c",
            "europe-west3-a",
            "europe-west3-b",
            "europe-west3-c",
            "europe-west4-a",
            "europe-west4-b",
            "europe-west4-c",
            "europe-west6-a",
            "europe-west6-b",
            "europe-west6-c",
            "europe-west8-a",
            "europe-west8-b",
            "europe-west8-c",
            "europe-west9-a",
            "europe-west9-b",
            "europe-west9-c",
            "me-central1-a",
            "me-central1-b",
            "me-central1-c",
            "me-central2-a",
            "me-central2-b",
            "me-central2-c",
            "me-west1-a",
            "me-west1-b",
            "me-west1-c",
            "northamerica-northeast1-a",
            "northamerica-northeast1-b",
            "northamerica-northeast1-c",
            "northamerica-northeast2-a",
            "northamerica-northeast2-b",
            "northamerica-northeast2-c",
            "southamerica-east1-a",
            "southamerica-east1-b",
            "southamerica-east1-c",
            "southamerica-west1-a",
            "southamerica-west1-b",
            "southamerica-west1-c",
            "us-central1-a",
            "us-central1-b",
            "us-central1-c",
            "us-central1-f",
            "us-east1-b",
            "us-east1-c",
            "us-east1-d",
            "us-east4-a",
            "us-east4-b",
            "us-east4-c",
            "us-east5-a",
            "us-east5-b",
            "us-east5-c",
            "us-south1-a",
            "us-south1-b",
            "us-south1-c",
            "us-west1-a",
            "us-west1-b",
            "us-west1-c",
            "us-west2-a",
            "us-west2-b",
            "us-west2-c",
            "us-west3-a",
            "us-west3-b",
            "us-west3-c",
            "us-west4-a",
            "us-west4-b",
            "us-west4-c",
        }
        zones = {o.location for o in offers if o.instance_name == "e2-highcpu-2"}
        assert not expected_zones - zones

    def test_spot_present(self, offers: list[CatalogItem]) -> None:
        assert any(o.spot for o in offers)

    def test_on_demand_present(self, offers: list[CatalogItem]) -> None:
        assert any(not o.spot for o in offers)

    def test_gpu_present(self, offers: list[CatalogItem]) -> None:
        expected_gpus = {
            "B200",
            "H100",
            "A100",
            "L4",
            "RTXPRO6000",
            "T4",
            "V100",
        }
        gpus = {o.gpu_name for o in offers if o.gpu_vendor == AcceleratorVendor.NVIDIA}
        assert not expected_gpus - gpus

    # TPU offers are named after the TPU version and the number of cores, e.g. `v5litepod-4`
    @pytest.mark.parametrize("version", ["v2", "v3", "v5litepod", "v5p"])
    def test_tpu_present(self, version: str, offers: list[CatalogItem]) -> None:
        tpus = {o.gpu_name for o in offers if o.gpu_vendor == AcceleratorVendor.GOOGLE}
        assert any(tpu.startswith(f"{version}-") for tpu in tpus if tpu)

    def test_both_a100_present(self, offers: list[CatalogItem]) -> None:
        gpu_memory = {o.gpu_memory for o in offers if o.gpu_name == "A100"}
        assert gpu_memory == {40.0, 80.0}

    @pytest.mark.parametrize(
        ("instance_name", "gpu_memory"),
        [("g4-standard-6", 12.0), ("g4-standard-12", 24.0), ("g4-standard-24", 48.0)],
    )
    def test_fractional_g4_specs(
        self, offers: list[CatalogItem], instance_name: str, gpu_memory: float
    ) -> None:
        machine_offers = [o for o in offers if o.instance_name == instance_name]
        assert machine_offers
        for offer in machine_offers:
            assert offer.gpu_name == "RTXPRO6000", str(offer)
            assert offer.gpu_count == 1, str(offer)
            assert offer.gpu_memory == gpu_memory, str(offer)

    def test_full_g4_specs(self, offers: list[CatalogItem]) -> None:
        full_g4_offers = [
            o
            for o in offers
            if o.instance_name.startswith("g4-standard-")
            and o.instance_name not in {"g4-standard-6", "g4-standard-12", "g4-standard-24"}
        ]
        assert full_g4_offers
        for offer in full_g4_offers:
            assert offer.gpu_memory == 96.0, str(offer)
