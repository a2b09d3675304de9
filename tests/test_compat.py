"""Differential tests against gpuhunt 0.1.30 itself (installed from PyPI into a venv once per
session by the `gpuhunt_0130` fixture): `matches` answers the same on the same offers and
filters, and catalog CSVs written by either library read identically in the other."""

from __future__ import annotations

import json
import os
import random
import subprocess

import pytest

from gpuhunt import AcceleratorVendor, CatalogItem, CPUArchitecture, QueryFilter, matches
from gpuhunt._internal.formats.csv import load, write_csv_file
from gpuhunt._internal.schema import CONTRACT_FIELDS as _CSV_CONTRACT
from tests.helpers import possible_ranges

# The fields of 0.1.x's CatalogItem: the provider and the CSV's fourteen columns.
CONTRACT = {"provider", *_CSV_CONTRACT}

_REFERENCE = r"""
import json, sys
import gpuhunt
from gpuhunt import CatalogItem, QueryFilter, AcceleratorVendor, CPUArchitecture
from gpuhunt._internal import storage
job = json.load(sys.stdin)
items = []
for d in job["items"]:
    d = dict(d)
    d["gpu_vendor"] = AcceleratorVendor(d["gpu_vendor"]) if d["gpu_vendor"] else None
    d["cpu_arch"] = CPUArchitecture(d["cpu_arch"])
    items.append(CatalogItem(**d))
def qf(d):
    d = dict(d)
    for k in ("min_compute_capability", "max_compute_capability"):
        if d.get(k) is not None: d[k] = tuple(d[k])
    if d.get("gpu_vendor"): d["gpu_vendor"] = AcceleratorVendor(d["gpu_vendor"])
    if d.get("cpu_arch"): d["cpu_arch"] = CPUArchitecture(d["cpu_arch"])
    return QueryFilter(**d)
answers = [[gpuhunt.matches(i, qf(q)) for i in items] for q in job["filters"]]
storage.dump(items, job["csv_out"])
with open(job["csv_in"]) as f:
    read_back = list(storage.load(f, provider="aws"))
print(json.dumps({"answers": answers, "read": [[i.instance_name, i.price, i.gpu_name, i.gpu_vendor.value if i.gpu_vendor else None, i.flags, i.cpu_arch.value, i.provider_data, i.disk_size, i.spot] for i in read_back]}))
"""

GPUS = [
    ("A100", "nvidia", 40.0),
    ("A100", "nvidia", 80.0),
    ("H100", "nvidia", 80.0),
    ("B300", "nvidia", 270.0),
    ("MI300X", "amd", 192.0),
    ("v5litepod", "google", None),
    ("RTX4090", "nvidia", 24.0),
    ("Gaudi2", "intel", 96.0),
    ("SomeNewGPU", "nvidia", 12.0),
]


def _items(rnd: random.Random, n: int) -> list[CatalogItem]:
    out = []
    for k in range(n):
        count = rnd.choice([0, 0, 1, 2, 8])
        name, vendor, mem = rnd.choice(GPUS)
        out.append(
            CatalogItem(
                provider="aws",
                instance_name=f"i{k}",
                location=rnd.choice(["r1", "r2"]),
                price=rnd.choice([0.5, 1.0, 2.25, 10.0]),
                cpu=rnd.choice([2, 8, 96]),
                memory=rnd.choice([4.0, 32.0, 1152.0]),
                gpu_count=count,
                gpu_name=name if count else None,
                gpu_memory=mem if count else None,
                spot=rnd.random() < 0.5,
                disk_size=rnd.choice([None, 50.0, 200.0]),
                gpu_vendor=AcceleratorVendor(vendor) if count else None,
                flags=rnd.choice([[], ["oci-spot"], ["lambda-arm", "x"]]),
                cpu_arch=rnd.choice(list(CPUArchitecture)),
                provider_data=rnd.choice([{}, {"fabrics": ["f1"]}]),
            )
        )
    return out


def _filters(rnd: random.Random, n: int) -> list[dict]:
    def pick(*values):
        return rnd.choice([None, *values])

    out = []
    for _ in range(n):
        out.append(
            possible_ranges(
                {
                    k: v
                    for k, v in {
                        "provider": pick(["aws"], ["AWS", "gcp"], ["gcp"]),
                        "cpu_arch": pick("x86", "arm"),
                        "min_cpu": pick(2, 8),
                        "max_cpu": pick(8, 96),
                        "min_memory": pick(32.0),
                        "max_memory": pick(32.0),
                        "min_gpu_count": pick(0, 1, 2),
                        "max_gpu_count": pick(0, 1, 8),
                        "gpu_vendor": pick("nvidia", "amd", "google"),
                        "gpu_name": pick(["a100"], ["H100", "MI300X"], ["somenewgpu"]),
                        "min_gpu_memory": pick(0, 40, 80),
                        "max_gpu_memory": pick(80),
                        "min_total_gpu_memory": pick(80, 320),
                        "max_total_gpu_memory": pick(640),
                        "min_disk_size": pick(100),
                        "max_disk_size": pick(100),
                        "min_price": pick(1.0),
                        "max_price": pick(1.0, 2.25),
                        "min_compute_capability": pick((8, 0), (9, 0)),
                        "max_compute_capability": pick((8, 9), (10, 0)),
                        "spot": pick(True, False),
                        "allowed_flags": pick([], ["oci-spot"], ["lambda-arm", "x", "oci-spot"]),
                    }.items()
                    if v is not None
                }
            )
        )
    return out


def _as_filter(d: dict) -> QueryFilter:
    d = dict(d)
    if d.get("gpu_vendor"):
        d["gpu_vendor"] = AcceleratorVendor(d["gpu_vendor"])
    if d.get("cpu_arch"):
        d["cpu_arch"] = CPUArchitecture(d["cpu_arch"])
    return QueryFilter(**d)


@pytest.mark.pypi
def test_matches_and_csv_agree_with_gpuhunt_0130(gpuhunt_0130, tmp_path):
    rnd = random.Random(1130)
    items = _items(rnd, 150)
    filters = _filters(rnd, 150)
    ours_csv = tmp_path / "ours.csv"
    write_csv_file(items, str(ours_csv))
    job = {
        "items": [
            {
                # 0.1.30's fields only: the library's own fields came later.
                **{k: v for k, v in i.__dict__.items() if k in CONTRACT},
                "gpu_vendor": i.gpu_vendor.value if i.gpu_vendor else None,
                "cpu_arch": i.cpu_arch.value,
            }
            for i in items
        ],
        "filters": filters,
        "csv_out": str(tmp_path / "reference.csv"),
        "csv_in": str(ours_csv),
    }
    out = subprocess.run(
        [str(gpuhunt_0130), "-c", _REFERENCE],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        timeout=300,
        # Without PYTHONPATH, or a PYTHONPATH pointing at this checkout would shadow 0.1.30.
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTHON")},
    )
    assert out.returncode == 0, out.stderr[-2000:]
    reference = json.loads(out.stdout)
    ours = [[matches(i, _as_filter(q)) for i in items] for q in filters]
    assert ours == reference["answers"]
    assert sum(map(sum, ours)) > 100  # the filters are not all empty answers
    # The reference reads our CSV into the same offers...
    expected = [
        [
            i.instance_name,
            i.price,
            i.gpu_name,
            i.gpu_vendor.value if i.gpu_vendor else None,
            i.flags,
            i.cpu_arch.value,
            i.provider_data,
            i.disk_size,
            i.spot,
        ]
        for i in items
    ]
    assert reference["read"] == expected
    # ...and we read the reference's CSV into the same offers.
    with open(tmp_path / "reference.csv", newline="") as f:
        assert list(load(f, provider="aws")) == items
