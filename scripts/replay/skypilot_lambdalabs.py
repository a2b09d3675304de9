"""Lambda offers from a published third-party catalog: SkyPilot's `catalogs/v7/lambda/vms.csv`.

There is no recorded answer of Lambda's API with real prices (`data/lambdalabs/instance_types.json`
is a test fixture), so the bundled snapshot takes Lambda's prices from SkyPilot's public catalog,
`data/lambdalabs/skypilot_v7_vms.csv`: skypilot-org/skypilot-catalog
`catalogs/v7/lambda/vms.csv` at commit 11580132cea293395776b033c8533714d42abb4e, row for row (see
`data/lambdalabs/README.md`). SkyPilot lists every instance type in each of Lambda's regions;
whether a type is offered in a region is SkyPilot's statement, not an API reading. The file does
not give local storage, so `disk_size` is unknown (empty).

The conversion is the one the Lambda collector applies to the API's fields: vCPUs, memory in
GiB, GPU count and per-GPU memory as listed, GH200 (a Grace superchip) as ARM with the
`lambda-arm` flag.
"""

from __future__ import annotations

import ast
import csv
from pathlib import Path

from gpuhunt._internal.models import AcceleratorVendor, CatalogItem, CPUArchitecture
from gpuhunt.providers.lambdalabs import FLAG_ARM, LambdaLabsProvider
from scripts.replay import RECORDINGS

CATALOG = RECORDINGS / "lambdalabs" / "skypilot_v7_vms.csv"
SOURCE = (
    "skypilot-org/skypilot-catalog catalogs/v7/lambda/vms.csv "
    "@11580132cea293395776b033c8533714d42abb4e"
)
# SkyPilot's accelerator names that are not gpuhunt's (the memory comes from `GpuInfo`).
GPU_NAMES = {"A100-80GB": "A100"}
ARM_GPUS = {"GH200"}


def collect(path: Path = CATALOG) -> list[CatalogItem]:
    items = []
    with path.open(newline="") as f:
        for row in csv.DictReader(f):
            count = int(float(row["AcceleratorCount"] or 0))
            name = row["AcceleratorName"] or None
            memory = None
            if count and name:
                info = ast.literal_eval(row["GpuInfo"])
                memory = info["Gpus"][0]["MemoryInfo"]["SizeInMiB"] / 1024
            arm = name in ARM_GPUS
            items.append(
                CatalogItem(
                    provider="lambdalabs",
                    instance_name=row["InstanceType"],
                    location=row["Region"],
                    price=float(row["Price"]),
                    cpu=int(float(row["vCPUs"])),
                    memory=float(row["MemoryGiB"]),
                    gpu_count=count,
                    gpu_name=GPU_NAMES.get(name, name) if name else None,
                    gpu_memory=memory,
                    spot=False,
                    disk_size=None,
                    gpu_vendor=AcceleratorVendor.NVIDIA if count else None,
                    flags=[FLAG_ARM] if arm else [],
                    cpu_arch=CPUArchitecture.ARM if arm else CPUArchitecture.X86,
                )
            )
    return LambdaLabsProvider.filter(items)
