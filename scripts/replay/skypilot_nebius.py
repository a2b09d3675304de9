"""Nebius offers from a published third-party catalog: SkyPilot's `catalogs/v7/nebius/vms.csv`.

Nebius's answers in `data/nebius/` were built from documentation, with some plausible prices, so
the bundled snapshot takes Nebius from SkyPilot's public catalog instead:
`data/nebius/skypilot_v7_vms.csv`, skypilot-org/skypilot-catalog `catalogs/v7/nebius/vms.csv` at
commit 22fd1feab9aa97a155f0f5a9d39351d9aa8ae9be, verbatim (see `data/nebius/README.md`).

Converted the way the Nebius collector names its offers: `platform preset` as the instance name
(SkyPilot joins them with `_`), one on-demand offer per row and a preemptible one where SkyPilot
lists a spot price. SkyPilot's `GpuInfo` memory is the preset's RAM, not the GPU's, so the GPU
memory is Nebius's documented size per GPU model (H100 80 GB, H200 141 GB, L40S 48 GB, B200
180 GB, as in `data/nebius/README.md`). SkyPilot does not list InfiniBand fabrics, so
`provider_data` is empty.
"""

from __future__ import annotations

import csv
from pathlib import Path

from gpuhunt._internal.models import AcceleratorVendor, CatalogItem
from gpuhunt.providers.nebius import NebiusProvider
from scripts.replay import RECORDINGS

CATALOG = RECORDINGS / "nebius" / "skypilot_v7_vms.csv"
SOURCE = (
    "skypilot-org/skypilot-catalog catalogs/v7/nebius/vms.csv"
    "@22fd1feab9aa97a155f0f5a9d39351d9aa8ae9be"
)
GPU_MEMORY = {"H100": 80.0, "H200": 141.0, "L40S": 48.0, "B200": 180.0}


def collect(path: Path = CATALOG) -> list[CatalogItem]:
    items = []
    with path.open(newline="") as f:
        for row in csv.DictReader(f):
            count = int(float(row["AcceleratorCount"] or 0))
            gpu = row["AcceleratorName"] or None
            if count and gpu not in GPU_MEMORY:
                raise ValueError(f"{path.name}: no documented memory for GPU {gpu!r}")
            prices = [(float(row["Price"]), False)]
            if row["SpotPrice"]:
                prices.append((float(row["SpotPrice"]), True))
            for price, spot in prices:
                items.append(
                    CatalogItem(
                        provider="nebius",
                        instance_name=row["InstanceType"].replace("_", " ", 1),
                        location=row["Region"],
                        price=price,
                        cpu=int(row["vCPUs"]),
                        memory=float(row["MemoryGiB"]),
                        gpu_count=count,
                        gpu_name=gpu if count else None,
                        gpu_memory=GPU_MEMORY[gpu] if count and gpu else None,
                        spot=spot,
                        disk_size=None,
                        gpu_vendor=AcceleratorVendor.NVIDIA if count else None,
                    )
                )
    return NebiusProvider.filter(items)
