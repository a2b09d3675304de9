"""Builds the recorded GCP answers that `scripts/replay/replay_gcp.py` serves (run once; the output
is committed). `python tests/providers/data/gcp/make_replay_data.py` rewrites the `replay_*.json`.

Where every value comes from (see also the header of `tests/providers/test_gcp.py`):

* Machine types and accelerator types per zone: REAL, the gcloud exports
  `machine_types_by_zone_cyclenerd_excerpt.csv` and `accelerator_types_by_zone_cyclenerd_excerpt.csv`
  (rows for us-central1-a/b, europe-west4-a, asia-east1-a, and the two OBSOLETE m2 rows of
  us-central1-f, copied from Cyclenerd/google-cloud-pricing-cost-calculator@dac3128), written
  here in the `machineTypes.aggregatedList` / `acceleratorTypes.aggregatedList` JSON shape of the
  recorded 2018 pages (`machine_types_aggregated_list_2018_trimmed.json`). The CSV has no
  `accelerators` or `bundledLocalSsds`; those are added from GCP's machine-type documentation
  (a2-highgpu-Ng: N x nvidia-tesla-a100, a2-ultragpu-Ng: N x nvidia-a100-80gb and N x 375 GiB local
  SSD, g2-standard-*: 1/1/1/1/2/1/4/8 x nvidia-l4). `id`/`creationTimestamp` are not in the export
  and are left out. `maximumCardsPerInstance` is GCP's documented maximum per GPU model.
* DOCS: a3-highgpu-1g/8g, a4-highgpu-8g and g4-standard-6/48/384 are not in that (older) export;
  their shapes (vCPUs, memory, GPUs, bundled local SSD) are written from the accelerator-optimized
  machine documentation.
* Billing SKUs: the SKUs of `billing_skus_page_2019.json` and `billing_skus_2020_items.json` are
  REAL and kept verbatim (ids as recorded). Every other SKU is BUILT in the real SKU format with a
  synthetic id `B000-0000-NNNN`; its price source is tagged in `SKUS` below:
    PY  solved from per-machine totals in Cyclenerd's `pricing.yml` (generated 2025-03-06 from the
        Billing Catalog, commit 0166a59ebba7c36f2cc8c931d9f258dcebc44776). Totals are exact; where
        only a total of several SKUs is pinned (e.g. vCPU + 4 GiB for E2/G2), the split is ours.
    SP  the Spot VMs pricing page (cloud.google.com/spot-vms/pricing, per-vCPU/per-GiB table).
    SKY the SkyPilot v7 catalog excerpt (`skypilot_v7_gcp_vms_excerpt.csv`, VM part of a2/a3
        prices) and SkyPilot's hard-coded TPU prices (v3 pods, v6e).
    PUB GCP's public GPU/TPU pricing pages as widely quoted (not re-checked against a recording).
    ILL illustrative: no public number was at hand; the value only exercises the code path.
* TPU API answers (`locations`, `acceleratorTypes` of TPU API v2): DOCS, the documented response
  shape with accelerator types and topologies as GCP lists them for those zones.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
PROJECT = "gpuhunt-replay"
BUILT_AT = "2026-11-29T00:00:00Z"
COMPUTE_SERVICE = "6F81-5844-456A"
TPU_SERVICE = "E000-3F24-B8AA"
AMERICAS = ["us-central1", "us-east1", "us-west1"]
NETHERLANDS = ["europe-west4"]

# --- machine types ----------------------------------------------------------------------------

G2_GPUS = {"4": 1, "8": 1, "12": 1, "16": 1, "24": 2, "32": 1, "48": 4, "96": 8}
MAX_CARDS = {
    "nvidia-tesla-k80": 8,
    "nvidia-tesla-p4": 4,
    "nvidia-tesla-p4-vws": 4,
    "nvidia-tesla-p100": 4,
    "nvidia-tesla-p100-vws": 4,
    "nvidia-tesla-v100": 8,
    "nvidia-tesla-t4": 4,
    "nvidia-tesla-t4-vws": 4,
    "nvidia-l4": 8,
    "nvidia-l4-vws": 8,
    "nvidia-tesla-a100": 16,
    "nvidia-a100-80gb": 8,
}
ACCELERATOR_DESCRIPTIONS = {
    "nvidia-tesla-k80": "NVIDIA Tesla K80",
    "nvidia-tesla-p4": "NVIDIA Tesla P4",
    "nvidia-tesla-p4-vws": "NVIDIA Tesla P4 Virtual Workstation",
    "nvidia-tesla-p100": "NVIDIA Tesla P100",
    "nvidia-tesla-p100-vws": "NVIDIA Tesla P100 Virtual Workstation",
    "nvidia-tesla-v100": "NVIDIA V100",
    "nvidia-tesla-t4": "NVIDIA T4",
    "nvidia-tesla-t4-vws": "NVIDIA Tesla T4 Virtual Workstation",
    "nvidia-l4": "NVIDIA L4",
    "nvidia-l4-vws": "NVIDIA L4 Virtual Workstation",
    "nvidia-tesla-a100": "NVIDIA A100 40GB",
    "nvidia-a100-80gb": "NVIDIA A100 80GB",
}


def _accelerators(name: str) -> tuple[list[dict[str, Any]], int]:
    """GPUs and bundled local SSD partitions of a machine type, from GCP's documentation."""
    family, _, size = name.partition("-")
    if family == "a2":
        count = int(size.rsplit("-", 1)[1].rstrip("g"))
        if size.startswith("ultragpu"):
            return [
                {"guestAcceleratorType": "nvidia-a100-80gb", "guestAcceleratorCount": count}
            ], count
        return [{"guestAcceleratorType": "nvidia-tesla-a100", "guestAcceleratorCount": count}], 0
    if family == "g2":
        count = G2_GPUS[size.rsplit("-", 1)[1]]
        return [{"guestAcceleratorType": "nvidia-l4", "guestAcceleratorCount": count}], 0
    return [], 0


def _description(cpus: int, memory_gb: float, shared: bool, gpus: list[dict[str, Any]]) -> str:
    memory = f"{memory_gb:g}"
    if shared:
        return f"{cpus} vCPU (shared physical core) and {memory} GB RAM"
    text = f"{cpus} vCPUs, {memory} GB RAM"
    if gpus:
        gpu = gpus[0]
        return f"Accelerator Optimized: {gpu['guestAcceleratorCount']} x {gpu['guestAcceleratorType']}, {text}"
    return text


def machine_type(
    zone: str,
    name: str,
    cpus: int,
    memory_mb: int,
    *,
    shared: bool = False,
    deprecated: str = "",
    gpus: list[dict[str, Any]] | None = None,
    ssd_partitions: int = 0,
    memory_gb: float | None = None,
) -> dict[str, Any]:
    gpus = gpus or []
    item: dict[str, Any] = {
        "kind": "compute#machineType",
        "name": name,
        "description": _description(cpus, memory_gb or memory_mb / 1024, shared, gpus),
        "guestCpus": cpus,
        "memoryMb": memory_mb,
        "imageSpaceGb": 0,
        "maximumPersistentDisks": 16 if shared else 128,
        "maximumPersistentDisksSizeGb": "3072" if shared else "263168",
        "zone": zone,
        "selfLink": f"https://www.googleapis.com/compute/v1/projects/{PROJECT}/zones/{zone}/machineTypes/{name}",
        "isSharedCpu": shared,
        "architecture": "X86_64",
    }
    if gpus:
        item["accelerators"] = gpus
    if ssd_partitions:
        item["bundledLocalSsds"] = {"defaultInterface": "NVME", "partitionCount": ssd_partitions}
    if deprecated:
        item["deprecated"] = {"state": deprecated}
    return item


def machine_types_by_zone() -> dict[str, list[dict[str, Any]]]:
    zones: dict[str, list[dict[str, Any]]] = {}
    with open(HERE / "machine_types_by_zone_cyclenerd_excerpt.csv", newline="") as f:
        for row in csv.DictReader(f, delimiter=";"):
            memory_gb = float(row["MEMORY_GB"])
            gpus, ssd = _accelerators(row["NAME"])
            zones.setdefault(row["ZONE"], []).append(
                machine_type(
                    row["ZONE"],
                    row["NAME"],
                    int(row["CPUS"]),
                    round(memory_gb * 1024),
                    shared=row["SHARED_CPU"] == "True",
                    deprecated=row["DEPRECATED"],
                    gpus=gpus,
                    ssd_partitions=ssd,
                    memory_gb=memory_gb,
                )
            )
    docs = [
        ("us-central1-a", "a3-highgpu-1g", 26, 234, "nvidia-h100-80gb", 1, 2),
        ("us-central1-a", "a3-highgpu-8g", 208, 1872, "nvidia-h100-80gb", 8, 16),
        ("us-central1-b", "a4-highgpu-8g", 224, 3968, "nvidia-b200", 8, 32),
        ("us-central1-b", "g4-standard-6", 6, 22.5, "nvidia-rtx-pro-6000", 1, 0),
        ("us-central1-b", "g4-standard-48", 48, 180, "nvidia-rtx-pro-6000", 1, 0),
        ("us-central1-b", "g4-standard-384", 384, 1440, "nvidia-rtx-pro-6000", 8, 0),
    ]
    for zone, name, cpus, memory_gb, gpu, count, ssd in docs:
        zones[zone].append(
            machine_type(
                zone,
                name,
                cpus,
                round(memory_gb * 1024),
                gpus=[{"guestAcceleratorType": gpu, "guestAcceleratorCount": count}],
                ssd_partitions=ssd,
                memory_gb=memory_gb,
            )
        )
    return zones


def _no_results(scope: str) -> dict[str, Any]:
    return {
        "warning": {
            "code": "NO_RESULTS_ON_PAGE",
            "message": f"There are no results for scope '{scope}' on this page.",
            "data": [{"key": "scope", "value": scope}],
        }
    }


def aggregated_pages(
    kind: str, key: str, by_zone: dict[str, list[dict[str, Any]]], pages: list[list[str]]
) -> list[dict[str, Any]]:
    out = []
    all_zones = sorted(by_zone)
    for number, zones in enumerate(pages):
        items = {}
        for zone in all_zones:
            scope = f"zones/{zone}"
            items[scope] = {key: by_zone[zone]} if zone in zones else _no_results(scope)
        page: dict[str, Any] = {
            "kind": f"compute#{kind}AggregatedList",
            "id": f"projects/{PROJECT}/aggregated/{key}",
            "items": items,
            "selfLink": f"https://www.googleapis.com/compute/v1/projects/{PROJECT}/aggregated/{key}",
        }
        if number + 1 < len(pages):
            page["nextPageToken"] = f"replay-{key}-page-{number + 2}"
        out.append(page)
    return out


def accelerator_types_by_zone() -> dict[str, list[dict[str, Any]]]:
    zones: dict[str, list[dict[str, Any]]] = {}
    with open(HERE / "accelerator_types_by_zone_cyclenerd_excerpt.csv", newline="") as f:
        for row in csv.DictReader(f, delimiter=";"):
            name, zone = row["NAME"], row["ZONE"]
            zone_link = f"https://www.googleapis.com/compute/v1/projects/{PROJECT}/zones/{zone}"
            zones.setdefault(zone, []).append(
                {
                    "kind": "compute#acceleratorType",
                    "name": name,
                    "description": ACCELERATOR_DESCRIPTIONS[name],
                    "zone": zone_link,
                    "selfLink": f"{zone_link}/acceleratorTypes/{name}",
                    "maximumCardsPerInstance": MAX_CARDS[name],
                }
            )
    return {zone: sorted(items, key=lambda i: i["name"]) for zone, items in zones.items()}


# --- billing SKUs -----------------------------------------------------------------------------

HOUR = {
    "usageUnit": "h",
    "usageUnitDescription": "hour",
    "baseUnit": "s",
    "baseUnitDescription": "second",
    "baseUnitConversionFactor": 3600,
}
GIB_HOUR = {
    "usageUnit": "GiBy.h",
    "usageUnitDescription": "gibibyte hour",
    "baseUnit": "By.s",
    "baseUnitDescription": "byte second",
    "baseUnitConversionFactor": 3865470566400,
}
GIB_MONTH = {
    "usageUnit": "GiBy.mo",
    "usageUnitDescription": "gibibyte month",
    "baseUnit": "By.s",
    "baseUnitDescription": "byte second",
    "baseUnitConversionFactor": 2.8759101014016e15,
}

# Local SSD is billed per GiB-month; GCP's calculators use 730 hours a month.
SSD_US, SSD_US_SPOT, SSD_NL, SSD_NL_SPOT = 0.08, 0.048, 0.088, 0.0528
A2_US = (0.031611, 0.004237)
A2_US_SPOT = (0.01264, 0.001695)
A2_NL = (0.034802, 0.004664)
A2_NL_SPOT = (0.0136, 0.00182)
A3_US = (0.02289, 0.00251013)
A3_US_SPOT = (0.0102, 0.000888)


def _vm(cpu: int, gib: float, rates: tuple[float, float]) -> float:
    return cpu * rates[0] + gib * rates[1]


def _ssd_hourly(gib: int, per_month: float) -> float:
    return gib * per_month / 730


# Per-GPU prices solved from pricing.yml machine totals (tag PY): total - VM part - local SSD.
A100_80_US = 5.06879789041096 - _vm(12, 170, A2_US) - _ssd_hourly(375, SSD_US)  # 3.92808
A100_80_US_SPOT = 2.02746835616438 - _vm(12, 170, A2_US_SPOT) - _ssd_hourly(375, SSD_US_SPOT)
A100_80_NL = 5.58091847945206 - _vm(12, 170, A2_NL) - _ssd_hourly(375, SSD_NL)
A100_80_NL_SPOT = 1.81105531506849 - _vm(12, 170, A2_NL_SPOT) - _ssd_hourly(375, SSD_NL_SPOT)
A100_US_SPOT = 1.293355 - _vm(12, 85, A2_US_SPOT)  # 0.9976
A100_NL_SPOT = 1.44587 - _vm(12, 85, A2_NL_SPOT)
H100_US = (88.4899999025753 - _vm(208, 1872, A3_US) - _ssd_hourly(6000, SSD_US)) / 8
H100_US_SPOT = (35.3957496986301 - _vm(208, 1872, A3_US_SPOT) - _ssd_hourly(6000, SSD_US_SPOT)) / 8

# (description, resourceFamily, resourceGroup, usageType, regions, price, unit, source)
SKUS: list[tuple[str, str, str, str, list[str], float, dict[str, Any], str]] = [
    # N1 (PY: n1-highmem-16 and n1-highcpu-96 totals)
    (
        "N1 Predefined Instance Core running in Americas",
        "Compute",
        "N1Standard",
        "OnDemand",
        AMERICAS,
        0.031611,
        HOUR,
        "PY",
    ),
    (
        "N1 Predefined Instance Ram running in Americas",
        "Compute",
        "N1Standard",
        "OnDemand",
        AMERICAS,
        0.004237,
        GIB_HOUR,
        "PY",
    ),
    (
        "Spot Preemptible N1 Predefined Instance Core running in Americas",
        "Compute",
        "N1Standard",
        "Preemptible",
        AMERICAS,
        0.00878,
        HOUR,
        "PY",
    ),
    (
        "Spot Preemptible N1 Predefined Instance Ram running in Americas",
        "Compute",
        "N1Standard",
        "Preemptible",
        AMERICAS,
        0.001126,
        GIB_HOUR,
        "PY",
    ),
    (
        "N1 Predefined Instance Core running in Netherlands",
        "Compute",
        "N1Standard",
        "OnDemand",
        NETHERLANDS,
        0.034802,
        HOUR,
        "PY",
    ),
    (
        "N1 Predefined Instance Ram running in Netherlands",
        "Compute",
        "N1Standard",
        "OnDemand",
        NETHERLANDS,
        0.004664,
        GIB_HOUR,
        "PY",
    ),
    (
        "Spot Preemptible N1 Predefined Instance Core running in Netherlands",
        "Compute",
        "N1Standard",
        "Preemptible",
        NETHERLANDS,
        0.00894,
        HOUR,
        "PY",
    ),
    (
        "Spot Preemptible N1 Predefined Instance Ram running in Netherlands",
        "Compute",
        "N1Standard",
        "Preemptible",
        NETHERLANDS,
        0.001204,
        GIB_HOUR,
        "PY",
    ),
    # E2 (PY: e2-standard-8 totals; on-demand split ours, spot split SP)
    (
        "E2 Instance Core running in Americas",
        "Compute",
        "CPU",
        "OnDemand",
        AMERICAS,
        0.02181159,
        HOUR,
        "PY",
    ),
    (
        "E2 Instance Ram running in Americas",
        "Compute",
        "RAM",
        "OnDemand",
        AMERICAS,
        0.00292353,
        GIB_HOUR,
        "PY",
    ),
    (
        "Spot Preemptible E2 Instance Core running in Americas",
        "Compute",
        "CPU",
        "Preemptible",
        AMERICAS,
        0.00872,
        HOUR,
        "SP",
    ),
    (
        "Spot Preemptible E2 Instance Ram running in Americas",
        "Compute",
        "RAM",
        "Preemptible",
        AMERICAS,
        0.001169,
        GIB_HOUR,
        "SP",
    ),
    (
        "E2 Instance Core running in Netherlands",
        "Compute",
        "CPU",
        "OnDemand",
        NETHERLANDS,
        0.02401206,
        HOUR,
        "PY",
    ),
    (
        "E2 Instance Ram running in Netherlands",
        "Compute",
        "RAM",
        "OnDemand",
        NETHERLANDS,
        0.00321849,
        GIB_HOUR,
        "PY",
    ),
    (
        "Spot Preemptible E2 Instance Core running in Netherlands",
        "Compute",
        "CPU",
        "Preemptible",
        NETHERLANDS,
        0.009592,
        HOUR,
        "PY",
    ),
    (
        "Spot Preemptible E2 Instance Ram running in Netherlands",
        "Compute",
        "RAM",
        "Preemptible",
        NETHERLANDS,
        0.001286,
        GIB_HOUR,
        "PY",
    ),
    # N2 (PUB: n2-standard-2 $0.097118/h); spot core is the REAL 2020 SKU, spot RAM is ILL
    (
        "N2 Instance Core running in Americas",
        "Compute",
        "CPU",
        "OnDemand",
        AMERICAS,
        0.031611,
        HOUR,
        "PUB",
    ),
    (
        "N2 Instance Ram running in Americas",
        "Compute",
        "RAM",
        "OnDemand",
        AMERICAS,
        0.004237,
        GIB_HOUR,
        "PUB",
    ),
    (
        "Preemptible N2 Instance Ram running in Americas",
        "Compute",
        "RAM",
        "Preemptible",
        AMERICAS,
        0.000936,
        GIB_HOUR,
        "ILL",
    ),
    # N2D RAM for the REAL 2020 "N2D AMD Instance Core running in Netherlands"
    (
        "N2D AMD Instance Ram running in Netherlands",
        "Compute",
        "RAM",
        "OnDemand",
        NETHERLANDS,
        0.004058,
        GIB_HOUR,
        "ILL",
    ),
    # A2 + A100 (PY totals; VM part also SKY; spot VM rates SP)
    (
        "A2 Instance Core running in Americas",
        "Compute",
        "CPU",
        "OnDemand",
        AMERICAS,
        A2_US[0],
        HOUR,
        "SKY",
    ),
    (
        "A2 Instance Ram running in Americas",
        "Compute",
        "RAM",
        "OnDemand",
        AMERICAS,
        A2_US[1],
        GIB_HOUR,
        "SKY",
    ),
    (
        "Spot Preemptible A2 Instance Core running in Americas",
        "Compute",
        "CPU",
        "Preemptible",
        AMERICAS,
        A2_US_SPOT[0],
        HOUR,
        "SP",
    ),
    (
        "Spot Preemptible A2 Instance Ram running in Americas",
        "Compute",
        "RAM",
        "Preemptible",
        AMERICAS,
        A2_US_SPOT[1],
        GIB_HOUR,
        "SP",
    ),
    (
        "A2 Instance Core running in Netherlands",
        "Compute",
        "CPU",
        "OnDemand",
        NETHERLANDS,
        A2_NL[0],
        HOUR,
        "SKY",
    ),
    (
        "A2 Instance Ram running in Netherlands",
        "Compute",
        "RAM",
        "OnDemand",
        NETHERLANDS,
        A2_NL[1],
        GIB_HOUR,
        "SKY",
    ),
    (
        "Spot Preemptible A2 Instance Core running in Netherlands",
        "Compute",
        "CPU",
        "Preemptible",
        NETHERLANDS,
        A2_NL_SPOT[0],
        HOUR,
        "ILL",
    ),
    (
        "Spot Preemptible A2 Instance Ram running in Netherlands",
        "Compute",
        "RAM",
        "Preemptible",
        NETHERLANDS,
        A2_NL_SPOT[1],
        GIB_HOUR,
        "ILL",
    ),
    (
        "Nvidia Tesla A100 GPU running in Americas",
        "Compute",
        "GPU",
        "OnDemand",
        AMERICAS,
        2.933908,
        HOUR,
        "PY",
    ),
    (
        "Nvidia Tesla A100 GPU attached to Spot Preemptible VMs running in Americas",
        "Compute",
        "GPU",
        "Preemptible",
        AMERICAS,
        A100_US_SPOT,
        HOUR,
        "PY",
    ),
    (
        "Nvidia Tesla A100 GPU running in Netherlands",
        "Compute",
        "GPU",
        "OnDemand",
        NETHERLANDS,
        2.933908,
        HOUR,
        "PY",
    ),
    (
        "Nvidia Tesla A100 GPU attached to Spot Preemptible VMs running in Netherlands",
        "Compute",
        "GPU",
        "Preemptible",
        NETHERLANDS,
        A100_NL_SPOT,
        HOUR,
        "PY",
    ),
    (
        "Nvidia Tesla A100 80GB GPU running in Americas",
        "Compute",
        "GPU",
        "OnDemand",
        AMERICAS,
        A100_80_US,
        HOUR,
        "PY",
    ),
    (
        "Nvidia Tesla A100 80GB GPU attached to Spot Preemptible VMs running in Americas",
        "Compute",
        "GPU",
        "Preemptible",
        AMERICAS,
        A100_80_US_SPOT,
        HOUR,
        "PY",
    ),
    (
        "Nvidia Tesla A100 80GB GPU running in Netherlands",
        "Compute",
        "GPU",
        "OnDemand",
        NETHERLANDS,
        A100_80_NL,
        HOUR,
        "PY",
    ),
    (
        "Nvidia Tesla A100 80GB GPU attached to Spot Preemptible VMs running in Netherlands",
        "Compute",
        "GPU",
        "Preemptible",
        NETHERLANDS,
        A100_80_NL_SPOT,
        HOUR,
        "PY",
    ),
    # Local SSD (PY: the a2-ultragpu-1g totals pin $0.08/GiB-month in us-central1; others ILL)
    (
        "SSD backed Local Storage running in Americas",
        "Storage",
        "LocalSSD",
        "OnDemand",
        AMERICAS,
        SSD_US,
        GIB_MONTH,
        "PY",
    ),
    (
        "SSD backed Local Storage attached to Spot Preemptible VMs running in Americas",
        "Storage",
        "LocalSSD",
        "Preemptible",
        AMERICAS,
        SSD_US_SPOT,
        GIB_MONTH,
        "ILL",
    ),
    (
        "SSD backed Local Storage running in Netherlands",
        "Storage",
        "LocalSSD",
        "OnDemand",
        NETHERLANDS,
        SSD_NL,
        GIB_MONTH,
        "PY",
    ),
    (
        "SSD backed Local Storage attached to Spot Preemptible VMs running in Netherlands",
        "Storage",
        "LocalSSD",
        "Preemptible",
        NETHERLANDS,
        SSD_NL_SPOT,
        GIB_MONTH,
        "ILL",
    ),
    # G2 + L4 (PY: g2-standard-4 and g2-standard-24 totals; vCPU/RAM split ours)
    (
        "G2 Instance Core running in Americas",
        "Compute",
        "CPU",
        "OnDemand",
        AMERICAS,
        0.024988,
        HOUR,
        "PY",
    ),
    (
        "G2 Instance Ram running in Americas",
        "Compute",
        "RAM",
        "OnDemand",
        AMERICAS,
        0.002927501,
        GIB_HOUR,
        "PY",
    ),
    (
        "Spot Preemptible G2 Instance Core running in Americas",
        "Compute",
        "CPU",
        "Preemptible",
        AMERICAS,
        0.009672,
        HOUR,
        "PY",
    ),
    (
        "Spot Preemptible G2 Instance Ram running in Americas",
        "Compute",
        "RAM",
        "Preemptible",
        AMERICAS,
        0.001134,
        GIB_HOUR,
        "PY",
    ),
    (
        "Nvidia L4 GPU running in Americas",
        "Compute",
        "GPU",
        "OnDemand",
        AMERICAS,
        0.560040239,
        HOUR,
        "PY",
    ),
    (
        "Nvidia L4 GPU attached to Spot Preemptible VMs running in Americas",
        "Compute",
        "GPU",
        "Preemptible",
        AMERICAS,
        0.2231,
        HOUR,
        "PY",
    ),
    (
        "G2 Instance Core running in Netherlands",
        "Compute",
        "CPU",
        "OnDemand",
        NETHERLANDS,
        0.026263,
        HOUR,
        "PY",
    ),
    (
        "G2 Instance Ram running in Netherlands",
        "Compute",
        "RAM",
        "OnDemand",
        NETHERLANDS,
        0.00307711,
        GIB_HOUR,
        "PY",
    ),
    (
        "Spot Preemptible G2 Instance Core running in Netherlands",
        "Compute",
        "CPU",
        "Preemptible",
        NETHERLANDS,
        0.01017,
        HOUR,
        "PY",
    ),
    (
        "Spot Preemptible G2 Instance Ram running in Netherlands",
        "Compute",
        "RAM",
        "Preemptible",
        NETHERLANDS,
        0.001316,
        GIB_HOUR,
        "PY",
    ),
    (
        "Nvidia L4 GPU running in Netherlands",
        "Compute",
        "GPU",
        "OnDemand",
        NETHERLANDS,
        0.588630286,
        HOUR,
        "PY",
    ),
    (
        "Nvidia L4 GPU attached to Spot Preemptible VMs running in Netherlands",
        "Compute",
        "GPU",
        "Preemptible",
        NETHERLANDS,
        0.1915,
        HOUR,
        "PY",
    ),
    # A3 + H100 (PY: a3-highgpu-8g totals incl. 6000 GiB local SSD; VM split SKY, spot VM SP)
    (
        "A3 Instance Core running in Americas",
        "Compute",
        "CPU",
        "OnDemand",
        AMERICAS,
        A3_US[0],
        HOUR,
        "SKY",
    ),
    (
        "A3 Instance Ram running in Americas",
        "Compute",
        "RAM",
        "OnDemand",
        AMERICAS,
        A3_US[1],
        GIB_HOUR,
        "SKY",
    ),
    (
        "Spot Preemptible A3 Instance Core running in Americas",
        "Compute",
        "CPU",
        "Preemptible",
        AMERICAS,
        A3_US_SPOT[0],
        HOUR,
        "SP",
    ),
    (
        "Spot Preemptible A3 Instance Ram running in Americas",
        "Compute",
        "RAM",
        "Preemptible",
        AMERICAS,
        A3_US_SPOT[1],
        GIB_HOUR,
        "SP",
    ),
    (
        "Nvidia H100 80GB GPU running in Americas",
        "Compute",
        "GPU",
        "OnDemand",
        AMERICAS,
        H100_US,
        HOUR,
        "PY",
    ),
    (
        "Nvidia H100 80GB GPU attached to Spot Preemptible VMs running in Americas",
        "Compute",
        "GPU",
        "Preemptible",
        AMERICAS,
        H100_US_SPOT,
        HOUR,
        "PY",
    ),
    # Attachable N1 GPUs (PUB on-demand; spot ILL at 40% of on-demand)
    (
        "Nvidia Tesla T4 GPU running in Americas",
        "Compute",
        "GPU",
        "OnDemand",
        AMERICAS,
        0.35,
        HOUR,
        "PUB",
    ),
    (
        "Nvidia Tesla T4 GPU attached to Spot Preemptible VMs running in Americas",
        "Compute",
        "GPU",
        "Preemptible",
        AMERICAS,
        0.14,
        HOUR,
        "ILL",
    ),
    (
        "Nvidia Tesla T4 GPU running in Netherlands",
        "Compute",
        "GPU",
        "OnDemand",
        NETHERLANDS,
        0.35,
        HOUR,
        "PUB",
    ),
    (
        "Nvidia Tesla T4 GPU attached to Spot Preemptible VMs running in Netherlands",
        "Compute",
        "GPU",
        "Preemptible",
        NETHERLANDS,
        0.14,
        HOUR,
        "ILL",
    ),
    (
        "Nvidia Tesla V100 GPU running in Americas",
        "Compute",
        "GPU",
        "OnDemand",
        AMERICAS,
        2.48,
        HOUR,
        "PUB",
    ),
    (
        "Nvidia Tesla V100 GPU attached to Spot Preemptible VMs running in Americas",
        "Compute",
        "GPU",
        "Preemptible",
        AMERICAS,
        0.992,
        HOUR,
        "ILL",
    ),
    (
        "Nvidia Tesla V100 GPU running in Netherlands",
        "Compute",
        "GPU",
        "OnDemand",
        NETHERLANDS,
        2.55,
        HOUR,
        "PUB",
    ),
    (
        "Nvidia Tesla V100 GPU attached to Spot Preemptible VMs running in Netherlands",
        "Compute",
        "GPU",
        "Preemptible",
        NETHERLANDS,
        1.02,
        HOUR,
        "ILL",
    ),
    (
        "Nvidia Tesla P100 GPU running in Netherlands",
        "Compute",
        "GPU",
        "OnDemand",
        NETHERLANDS,
        1.60,
        HOUR,
        "PUB",
    ),
    (
        "Nvidia Tesla P100 GPU attached to Spot Preemptible VMs running in Netherlands",
        "Compute",
        "GPU",
        "Preemptible",
        NETHERLANDS,
        0.64,
        HOUR,
        "ILL",
    ),
    (
        "Nvidia Tesla P4 GPU running in Americas",
        "Compute",
        "GPU",
        "OnDemand",
        AMERICAS,
        0.60,
        HOUR,
        "PUB",
    ),
    (
        "Nvidia Tesla P4 GPU attached to Spot Preemptible VMs running in Americas",
        "Compute",
        "GPU",
        "Preemptible",
        AMERICAS,
        0.24,
        HOUR,
        "ILL",
    ),
    (
        "Nvidia Tesla K80 GPU running in Americas",
        "Compute",
        "GPU",
        "OnDemand",
        AMERICAS,
        0.45,
        HOUR,
        "PUB",
    ),
    (
        "Nvidia Tesla K80 GPU attached to Spot Preemptible VMs running in Americas",
        "Compute",
        "GPU",
        "Preemptible",
        AMERICAS,
        0.18,
        HOUR,
        "ILL",
    ),
    (
        "Nvidia Tesla T4 Virtual Workstation GPU running in Americas",
        "Compute",
        "GPU",
        "OnDemand",
        AMERICAS,
        0.55,
        HOUR,
        "PUB",
    ),
    # G4 + RTX PRO 6000 (ILL)
    (
        "G4 Instance Core running in Americas",
        "Compute",
        "CPU",
        "OnDemand",
        AMERICAS,
        0.02,
        HOUR,
        "ILL",
    ),
    (
        "G4 Instance Ram running in Americas",
        "Compute",
        "RAM",
        "OnDemand",
        AMERICAS,
        0.0025,
        GIB_HOUR,
        "ILL",
    ),
    (
        "RTX 6000 96GB running in Americas",
        "Compute",
        "GPU",
        "OnDemand",
        AMERICAS,
        2.80,
        HOUR,
        "ILL",
    ),
    (
        "Spot Preemptible G4 Instance Core running in Americas",
        "Compute",
        "CPU",
        "Preemptible",
        AMERICAS,
        0.008,
        HOUR,
        "ILL",
    ),
    (
        "Spot Preemptible G4 Instance Ram running in Americas",
        "Compute",
        "RAM",
        "Preemptible",
        AMERICAS,
        0.001,
        GIB_HOUR,
        "ILL",
    ),
    (
        "RTX 6000 96GB attached to Spot Preemptible VMs running in Americas",
        "Compute",
        "GPU",
        "Preemptible",
        AMERICAS,
        1.12,
        HOUR,
        "ILL",
    ),
    # A4: sold per GPU slice (the whole VM share), spot and DWS calendar mode only (ILL)
    (
        "Spot Preemptible A4 Nvidia B200 (1 gpu slice) running in Americas",
        "Compute",
        "GPU",
        "Preemptible",
        AMERICAS,
        3.95,
        HOUR,
        "ILL",
    ),
    (
        "DWS Calendar Mode A4 Nvidia B200 (1 gpu slice) running in Americas",
        "Compute",
        "GPU",
        "OnDemand",
        AMERICAS,
        8.25,
        HOUR,
        "ILL",
    ),
    # SKUs that must not price anything
    (
        "Reserved A2 Instance Core running in Americas",
        "Compute",
        "CPU",
        "OnDemand",
        AMERICAS,
        0.0199,
        HOUR,
        "ILL",
    ),
    (
        "Commitment v1: A2 Cpu in Americas for 1 Year",
        "Compute",
        "CPU",
        "Commit1Yr",
        AMERICAS,
        0.019915,
        HOUR,
        "ILL",
    ),
    (
        "N1 Predefined Instance Core running in Americas Sole Tenancy",
        "Compute",
        "CPU",
        "OnDemand",
        AMERICAS,
        0.034772,
        HOUR,
        "ILL",
    ),
    # TPUs on Compute Engine, per chip-hour (v5e PUB $1.20, v5p PUB $4.20, v6e SKY $2.70/$2.97)
    (
        "TpuV5e running in Americas",
        "Compute",
        "TPU",
        "OnDemand",
        ["us-central1"],
        1.20,
        HOUR,
        "PUB",
    ),
    (
        "Spot Preemptible TpuV5e running in Americas",
        "Compute",
        "TPU",
        "Preemptible",
        ["us-central1"],
        0.48,
        HOUR,
        "ILL",
    ),
    ("TpuV5p running in Americas", "Compute", "TPU", "OnDemand", ["us-east5"], 4.20, HOUR, "PUB"),
    (
        "Spot Preemptible TpuV5p running in Americas",
        "Compute",
        "TPU",
        "Preemptible",
        ["us-east5"],
        2.10,
        HOUR,
        "ILL",
    ),
    (
        "TpuV6e running in Americas",
        "Compute",
        "TPU",
        "OnDemand",
        ["us-east1", "us-east5"],
        2.70,
        HOUR,
        "SKY",
    ),
    (
        "Spot Preemptible TpuV6e running in Americas",
        "Compute",
        "TPU",
        "Preemptible",
        ["us-east1", "us-east5"],
        1.35,
        HOUR,
        "ILL",
    ),
    ("TpuV6e running in Netherlands", "Compute", "TPU", "OnDemand", NETHERLANDS, 2.97, HOUR, "SKY"),
]

# Cloud TPU service: per device (v2-8/v3-8, four chips). 3B3D-4CB4-AECC ($4.50/h in us-central1)
# is a REAL id and price quoted in public code; the others are PUB (v2 preemptible) and SKY (v3).
TPU_SKUS: list[tuple[str, str, str, list[str], float, str]] = [
    ("3B3D-4CB4-AECC", "TPU-v2 Accelerator USA", "OnDemand", ["us-central1"], 4.50, "REAL"),
    (
        "B000-0000-0901",
        "Preemptible TPU-v2 Accelerator USA",
        "Preemptible",
        ["us-central1"],
        1.35,
        "PUB",
    ),
    ("B000-0000-0902", "TPU-v3 Accelerator USA", "OnDemand", ["us-central1"], 8.00, "SKY"),
    (
        "B000-0000-0903",
        "Preemptible TPU-v3 Accelerator USA",
        "Preemptible",
        ["us-central1"],
        2.40,
        "SKY",
    ),
    ("B000-0000-0904", "TPU-v3 Pod Accelerator USA", "OnDemand", ["us-central1"], 8.00, "SKY"),
]


def _money(price: float) -> dict[str, Any]:
    units = int(price)
    nanos = round((price - units) * 1e9)
    if nanos == 1_000_000_000:
        units, nanos = units + 1, 0
    return {"currencyCode": "USD", "units": str(units), "nanos": nanos}


def sku(
    service: str,
    sku_id: str,
    description: str,
    family: str,
    group: str,
    usage: str,
    regions: list[str],
    price: float,
    unit: dict[str, Any],
    display_name: str,
) -> dict[str, Any]:
    return {
        "name": f"services/{service}/skus/{sku_id}",
        "skuId": sku_id,
        "description": description,
        "category": {
            "serviceDisplayName": display_name,
            "resourceFamily": family,
            "resourceGroup": group,
            "usageType": usage,
        },
        "serviceRegions": regions,
        "pricingInfo": [
            {
                "summary": "",
                "pricingExpression": {
                    **unit,
                    "displayQuantity": 1,
                    "tieredRates": [{"startUsageAmount": 0, "unitPrice": _money(price)}],
                },
                "aggregationInfo": {
                    "aggregationLevel": "ACCOUNT",
                    "aggregationInterval": "DAILY",
                    "aggregationCount": 1,
                },
                "currencyConversionRate": 1,
                "effectiveTime": BUILT_AT,
            }
        ],
        "serviceProviderName": "Google",
        "geoTaxonomy": {
            "type": "MULTI_REGIONAL" if len(regions) > 1 else "REGIONAL",
            "regions": regions,
        },
    }


def compute_skus() -> list[dict[str, Any]]:
    real = json.loads((HERE / "billing_skus_page_2019.json").read_text())["skus"]
    real += json.loads((HERE / "billing_skus_2020_items.json").read_text())
    built = [
        sku(
            COMPUTE_SERVICE,
            f"B000-0000-{n:04d}",
            desc,
            fam,
            grp,
            usage,
            regions,
            price,
            unit,
            "Compute Engine",
        )
        for n, (desc, fam, grp, usage, regions, price, unit, _source) in enumerate(SKUS, start=1)
    ]
    return real[:3] + built + real[3:]


def tpu_skus() -> list[dict[str, Any]]:
    return [
        sku(TPU_SERVICE, sku_id, desc, "Compute", "TPU", usage, regions, price, HOUR, "Cloud TPU")
        for sku_id, desc, usage, regions, price, _source in TPU_SKUS
    ]


# --- TPU API ----------------------------------------------------------------------------------

TPU_TYPES: dict[str, list[tuple[str, str, str]]] = {
    "us-central1-a": [
        ("v3-8", "V3", "2x2"),
        ("v5litepod-1", "V5LITE_POD", "1x1"),
        ("v5litepod-4", "V5LITE_POD", "2x2"),
        ("v5litepod-8", "V5LITE_POD", "2x4"),
    ],
    "us-central1-b": [("v2-8", "V2", "2x2"), ("v2-32", "V2", "4x4"), ("v3-8", "V3", "2x2")],
    "us-east1-d": [("v6e-1", "V6E", "1x1"), ("v6e-4", "V6E", "2x2"), ("v6e-8", "V6E", "2x4")],
    "us-east5-a": [("v5p-8", "V5P", "2x2x1")],
    "europe-west4-a": [("v2-8", "V2", "2x2"), ("v6e-8", "V6E", "2x4")],
}


def tpu_locations() -> dict[str, Any]:
    zones = sorted(TPU_TYPES)
    return {
        "locations": [
            {"name": f"projects/{PROJECT}/locations/{zone}", "locationId": zone} for zone in zones
        ]
    }


def tpu_accelerator_types(zone: str) -> dict[str, Any]:
    return {
        "acceleratorTypes": [
            {
                "name": f"projects/{PROJECT}/locations/{zone}/acceleratorTypes/{name}",
                "type": name,
                "acceleratorConfigs": [{"type": config, "topology": topology}],
            }
            for name, config, topology in TPU_TYPES[zone]
        ]
    }


def write(name: str, payload: Any) -> None:
    (HERE / name).write_text(json.dumps(payload, indent=1) + "\n")


def main() -> None:
    by_zone = machine_types_by_zone()
    pages = aggregated_pages(
        "machineType",
        "machineTypes",
        by_zone,
        [["us-central1-a", "us-central1-b"], ["asia-east1-a", "europe-west4-a", "us-central1-f"]],
    )
    for number, page in enumerate(pages, start=1):
        write(f"replay_machine_types_page{number}.json", page)
    accelerators = accelerator_types_by_zone()
    write(
        "replay_accelerator_types.json",
        aggregated_pages(
            "acceleratorType", "acceleratorTypes", accelerators, [sorted(accelerators)]
        )[0],
    )
    skus = compute_skus()
    half = len(skus) // 2
    write(
        "replay_compute_skus_page1.json",
        {"skus": skus[:half], "nextPageToken": "replay-skus-page-2"},
    )
    write("replay_compute_skus_page2.json", {"skus": skus[half:], "nextPageToken": ""})
    write("replay_tpu_skus.json", {"skus": tpu_skus(), "nextPageToken": ""})
    write("replay_tpu_locations.json", tpu_locations())
    for zone in TPU_TYPES:
        write(f"replay_tpu_accelerator_types_{zone}.json", tpu_accelerator_types(zone))


if __name__ == "__main__":
    main()
