"""Differential tests against gpuhunt 0.1.30 itself (installed from PyPI into a venv once per
session by the `gpuhunt_0130` fixture): `matches` answers the same on the same offers and
filters, and catalog CSVs written by either library read identically in the other. With gpuhunt
0.1.34 (`gpuhunt_0134`, what dstack 0.22.5 pins): catalog CSVs both ways, every field 0.1.34
knows, `provider_data` included, equal to what the provider returned."""

from __future__ import annotations

import dataclasses
import datetime as dt
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


# gpuhunt 0.1.34 (what dstack 0.22.5 pins) and this package read each other's catalog CSVs.
# 0.1.34 takes the columns it knows by name and ignores the rest; dstack copies `provider_data`
# into its database, so it must be exactly what the provider returned.
_REFERENCE_0134 = r"""
import dataclasses, enum, json, sys
from gpuhunt import AcceleratorVendor, CatalogItem, CPUArchitecture
from gpuhunt._internal import storage
job = json.load(sys.stdin)
def plain(v):
    return v.value if isinstance(v, enum.Enum) else v
with open(job["read"], newline="") as f:
    read = [
        {fld.name: plain(getattr(i, fld.name)) for fld in dataclasses.fields(CatalogItem)}
        for i in storage.load(f, provider=job["provider"])
    ]
items = []
for d in job["write"]:
    d = dict(d)
    d["gpu_vendor"] = AcceleratorVendor(d["gpu_vendor"]) if d["gpu_vendor"] else None
    d["cpu_arch"] = CPUArchitecture(d["cpu_arch"])
    items.append(CatalogItem(**d))
storage.dump(items, job["write_to"])
print(json.dumps({"fields": [f.name for f in dataclasses.fields(CatalogItem)], "read": read}))
"""

# What providers put in provider_data: nested objects, lists, nulls, floats, unicode, and keys
# that look like the library's own (a provider may well report its own "status").
_PROVIDER_DATA = [
    {},
    {"vm_specs": {"cpu_cores": 13, "ram_gb": 224, "gpus": [{"model": "MI300X", "count": 1}]}},
    {"min_bid": 0.45, "host_id": 12345, "reliability": 0.9981, "geolocation": "Québec, CA"},
    {"fabrics": ["f1", "f2"], "zone": None, "spot": True, "status": "ready", "n": 0},
    {"offer_id": 'a,b;"c"\n', "tags": {"nested": {"deeper": [1, 2.5, None, False]}}},
]


def _provider_items(rnd: random.Random, n: int, provider: str) -> list[dict]:
    """Offers as a provider returns them: the 0.1.x fields only, as plain JSON values."""
    out = []
    for k, i in enumerate(_items(rnd, n)):
        d = {
            **i.__dict__,
            "provider": provider,
            "gpu_vendor": i.gpu_vendor.value if i.gpu_vendor else None,
            "cpu_arch": i.cpu_arch.value,
            "provider_data": json.loads(json.dumps(_PROVIDER_DATA[k % len(_PROVIDER_DATA)])),
        }
        out.append({f: d[f] for f in _FIELDS_0134})
    return out


# CatalogItem's fields in gpuhunt 0.1.34, in its order (the reference script reports them too,
# and the tests check this list against it).
_FIELDS_0134 = [
    "provider",
    "instance_name",
    "location",
    "price",
    "cpu",
    "memory",
    "gpu_count",
    "gpu_name",
    "gpu_memory",
    "spot",
    "disk_size",
    "gpu_vendor",
    "flags",
    "cpu_arch",
    "provider_data",
]


def _run_0134(python, job: dict) -> dict:
    out = subprocess.run(
        [str(python), "-c", _REFERENCE_0134],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        timeout=300,
        # A PYTHONPATH pointing at this checkout would shadow 0.1.34.
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTHON")},
    )
    assert out.returncode == 0, out.stderr[-2000:]
    answer = json.loads(out.stdout)
    assert answer["fields"] == _FIELDS_0134
    return answer


def _ours(d: dict) -> CatalogItem:
    d = dict(d)
    d["gpu_vendor"] = AcceleratorVendor(d["gpu_vendor"]) if d["gpu_vendor"] else None
    d["cpu_arch"] = CPUArchitecture(d["cpu_arch"])
    d["provider_data"] = json.loads(json.dumps(d["provider_data"]))  # not shared with `d`
    return CatalogItem(**d)


@pytest.mark.pypi
def test_gpuhunt_0134_reads_our_catalog_with_provider_data_as_the_provider_wrote_it(
    gpuhunt_0134, tmp_path
):
    provider_items = _provider_items(random.Random(46), 60, "hotaisle")
    # What the library knows about each offer besides the provider's fields: when it was
    # observed and whether the provider reported it available (True, False, not said).
    when = dt.datetime(2026, 12, 7, 0, 31, 14, tzinfo=dt.timezone.utc)
    ours = [
        dataclasses.replace(
            _ours(d),
            observed_at=when - dt.timedelta(minutes=k),
            available=[True, False, None][k % 3],
        )
        for k, d in enumerate(provider_items)
    ]
    catalog = tmp_path / "hotaisle.csv"
    write_csv_file(ours, str(catalog))

    answer = _run_0134(
        gpuhunt_0134,
        {
            "read": str(catalog),
            "provider": "hotaisle",
            "write": [],
            "write_to": str(tmp_path / "x"),
        },
    )

    assert len(answer["read"]) == len(provider_items)
    for got, want in zip(answer["read"], provider_items):
        for field in _FIELDS_0134:
            assert got[field] == want[field], (want["instance_name"], field)
    # The library's own attributes went somewhere 0.1.34 does not read, and our reader still has
    # them: written once, read back by each version as what it knows.
    with open(catalog, newline="") as f:
        back = list(load(f, provider="hotaisle"))
    assert [(i.observed_at, i.available) for i in back] == [
        (i.observed_at, i.available) for i in ours
    ]
    assert [i.provider_data for i in back] == [d["provider_data"] for d in provider_items]


@pytest.mark.pypi
def test_we_read_a_catalog_gpuhunt_0134_wrote_field_by_field(gpuhunt_0134, tmp_path):
    provider_items = _provider_items(random.Random(4634), 60, "vastai")
    written = tmp_path / "vastai.csv"
    empty = tmp_path / "empty.csv"
    write_csv_file([], str(empty))
    _run_0134(
        gpuhunt_0134,
        {
            "read": str(empty),
            "provider": "vastai",
            "write": provider_items,
            "write_to": str(written),
        },
    )

    with open(written, newline="") as f:
        read = list(load(f, provider="vastai"))

    assert len(read) == len(provider_items)
    for got, want in zip(read, provider_items):
        for field in _FIELDS_0134:
            value = getattr(got, field)
            value = (
                value.value if isinstance(value, (AcceleratorVendor, CPUArchitecture)) else value
            )
            assert value == want[field], (want["instance_name"], field)
        # 0.1.34 knows nothing of these: they are not made up on the way in.
        assert (got.observed_at, got.available) == (None, None)
    assert read == [_ours(d) for d in provider_items]


_LOAD_0134 = r"""
import json, sys
from gpuhunt._internal.catalog import Catalog
c = Catalog(auto_reload=False)
c.load()
print(json.dumps([[i.provider, i.instance_name, i.location, i.price, i.spot]
                  for i in c.query(provider=["aws"])]))
"""


@pytest.mark.pypi
def test_gpuhunt_0134_loads_a_built_catalog_whose_zips_carry_side_files(gpuhunt_0134, tmp_path):
    # The terms and spot bands (docs/costs.md) are members of the published zips of their own:
    # 0.1.34 opens `{provider}.csv` by name in `{provider}/{version}/catalog.zip` and reads the
    # offers it read before, never a term as an offer.
    from gpuhunt._internal.costs.terms import Term
    from gpuhunt._internal.formats.csv import csv_bytes
    from gpuhunt._internal.formats.terms import write_terms
    from gpuhunt._internal.publish.build import Collected, build_catalog
    from tests.helpers import item

    offers = [item("aws", instance_name="g6.xlarge", price=0.8048, spot=s) for s in (False, True)]
    term = Term("aws", "g6.xlarge", "us-east-1", "3y", "all", "standard", 0.0, 9.0, "s", None)
    got = Collected(
        csv_bytes(offers), "2026-12-07T00:00:00+00:00", {"aws.terms": write_terms([term])}
    )
    build = build_catalog("20261207-1", {"aws": got}, None, providers=["aws"])
    root = tmp_path / "bucket"
    for rel, data in {**build.objects, **build.pointers}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    out = subprocess.run(
        [str(gpuhunt_0134), "-c", _LOAD_0134],
        capture_output=True,
        text=True,
        timeout=300,
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("PYTHON")},
            "GPUHUNT_CATALOG_URL": root.as_uri(),
        },
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout) == [
        ["aws", "g6.xlarge", "us-east-1", 0.8048, False],
        ["aws", "g6.xlarge", "us-east-1", 0.8048, True],
    ]
