"""Every filter field at its bound, just inside, just outside, and its "not applicable" rules,
checked in `matches` and in the vectorised `Table.select` alike.

The select path runs over the offer under test plus a varied background, and its whole answer
must equal `matches` over all of them, so a check that wrongly keeps or drops some other kind of
offer is caught too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest

from gpuhunt import AcceleratorVendor, CatalogItem, CPUArchitecture, QueryFilter, matches
from gpuhunt._internal.constraints import gpu_name_wanted, parse_version
from gpuhunt._internal.gpu_names import gpu_name_spec
from tests._internal.fastpath import select, table_of
from tests.helpers import item

NV, AMD, GOOGLE = AcceleratorVendor.NVIDIA, AcceleratorVendor.AMD, AcceleratorVendor.GOOGLE
ARM = CPUArchitecture.ARM


def up(v: float) -> float:
    return math.nextafter(v, math.inf)


def down(v: float) -> float:
    return math.nextafter(v, -math.inf)


@dataclass(frozen=True)
class Bound:
    """A range field: an offer whose value is `at`, and the nearest thresholds either side."""

    field: str
    low: str | None
    high: str | None
    offer: dict[str, Any]
    at: Any
    below: Any
    above: Any


BOUNDS = [
    Bound("price", "min_price", "max_price", dict(price=1.25), 1.25, down(1.25), up(1.25)),
    Bound("cpu", "min_cpu", "max_cpu", dict(cpu=8), 8, 7, 9),
    Bound("memory", "min_memory", "max_memory", dict(memory=32.0), 32.0, down(32.0), up(32.0)),
    Bound("gpu_count", "min_gpu_count", "max_gpu_count", dict(gpu_count=2), 2, 1, 3),
    Bound(
        "gpu_memory",
        "min_gpu_memory",
        "max_gpu_memory",
        dict(gpu_count=2, gpu_memory=40.0),
        40.0,
        down(40.0),
        up(40.0),
    ),
    Bound(
        "total_gpu_memory",
        "min_total_gpu_memory",
        "max_total_gpu_memory",
        dict(gpu_count=2, gpu_memory=40.0),
        80.0,
        down(80.0),
        up(80.0),
    ),
    Bound("disk_size", "min_disk_size", "max_disk_size", dict(disk_size=100.0), 100.0, 99.5, 100.5),
    Bound(
        "compute_capability minor",
        "min_compute_capability",
        "max_compute_capability",
        dict(gpu_name="A10G", gpu_memory=24.0),
        (8, 6),
        (8, 5),
        (8, 7),
    ),
    Bound(
        "compute_capability major",
        "min_compute_capability",
        "max_compute_capability",
        dict(gpu_name="H100"),
        (9, 0),
        (8, 9),
        (10, 0),
    ),
]


def bound_cases():
    for b in BOUNDS:
        cases = []
        if b.low:
            cases += [
                ("min at the value", {b.low: b.at}, True),
                ("min just below", {b.low: b.below}, True),
                ("min just above", {b.low: b.above}, False),
            ]
        if b.high:
            cases += [
                ("max at the value", {b.high: b.at}, True),
                ("max just above", {b.high: b.above}, True),
                ("max just below", {b.high: b.below}, False),
            ]
        if b.low and b.high:
            cases += [
                ("min = max = the value", {b.low: b.at, b.high: b.at}, True),
                ("range just around", {b.low: b.below, b.high: b.above}, True),
                ("range just above", {b.low: b.above, b.high: b.above}, False),
                ("range just below", {b.low: b.below, b.high: b.below}, False),
            ]
        for label, q, expected in cases:
            yield pytest.param(b.offer, q, expected, id=f"{b.field}: {label}")


# Other offers the select path answers about at the same time: no GPU, a GPU-less row naming a
# GPU, unknown GPU memory, AMD, TPU, an unknown NVIDIA model, NVIDIA with no model, spot, ARM,
# flags, known and unknown disk, another provider.
BACKGROUND = [
    item(instance_name="cpu", gpu_count=0, cpu=2, memory=4.0, price=0.1, disk_size=50.0),
    item(instance_name="named-no-gpu", gpu_count=0, gpu_name="H100", gpu_memory=80.0, price=0.2),
    item(instance_name="unknown-mem", gpu_count=4, gpu_name="H100", gpu_memory=None, price=3.0),
    item(
        "gcp",
        instance_name="amd",
        gpu_count=8,
        gpu_name="MI300X",
        gpu_vendor=AMD,
        gpu_memory=192.0,
        price=20.0,
        disk_size=2000.0,
    ),
    item("gcp", instance_name="tpu", gpu_name="v5litepod", gpu_vendor=GOOGLE, gpu_memory=None),
    item("gcp", instance_name="newgpu", gpu_name="NewGPU", gpu_memory=12.0, price=0.5),
    item("gcp", instance_name="no-model", gpu_name=None, gpu_memory=None, price=0.7),
    item(instance_name="spot-arm", spot=True, cpu_arch=ARM, gpu_name="T4", gpu_memory=16.0),
    item(instance_name="flagged", flags=["oci-spot"], gpu_name="L4", gpu_memory=24.0, cpu=96),
    item(instance_name="two-flags", flags=["a", "b"], gpu_count=8, gpu_memory=80.0, price=30.0),
    # Locations patterns hit or miss, hosts that say their CUDA version (or say it unreadably),
    # and A100s whose memory is just inside and just outside the 80 GB tolerance.
    item(
        "gcp",
        instance_name="europe-cuda-12.8",
        location="europe-west4",
        gpu_memory=40.0,
        cuda_version="12.8",
    ),
    item(
        instance_name="us-west-cuda-12.10",
        location="US-WEST-2",
        gpu_memory=75.0,
        cuda_version="12.10",
        price=1.5,
    ),
    item(
        "gcp",
        instance_name="central-cuda-13",
        location="us-central1-a",
        gpu_name="H100",
        cuda_version="13",
        price=4.0,
    ),
    item(
        instance_name="cuda-12.4",
        location="FIN-01",
        gpu_memory=74.0,
        cuda_version="12.4",
    ),
    item(instance_name="cuda-garbled", location="eu-west-1", cuda_version="new"),
    item(
        instance_name="cuda-list",
        gpu_name="T4",
        gpu_memory=16.0,
        cuda_version="11.8",
    ),
]


def check(offer: CatalogItem, q: QueryFilter, expected: bool, path: str) -> None:
    if path == "matches":
        assert matches(offer, q) is expected
        return
    everything = [*BACKGROUND, offer]
    got = select(table_of(everything, ["aws", "gcp"]), q)
    assert (offer in got) is expected
    reference = sorted(
        (i for i in everything if matches(i, q)),
        key=lambda i: (i.price, ["aws", "gcp"].index(i.provider)),
    )
    assert got == reference


PATHS = pytest.mark.parametrize("path", ["matches", "select"])


@PATHS
@pytest.mark.parametrize("offer, q, expected", list(bound_cases()))
def test_range_bounds(offer, q, expected, path):
    check(item(instance_name="target", **offer), QueryFilter(**q), expected, path)


CPU_ONLY = dict(gpu_count=0)
NAMED_NO_GPU = dict(gpu_count=0, gpu_name="H100", gpu_memory=80.0)  # vendor None
GPU_FILTERS_MISSING_A_CPU_OFFER = [
    dict(gpu_name=["H100"]),
    dict(gpu_name=["H100", "A100"]),
    dict(gpu_vendor=NV),
    dict(gpu_vendor=AMD),
    dict(min_gpu_memory=1),
    dict(min_total_gpu_memory=1),
    dict(min_compute_capability=(1, 0)),
    dict(max_compute_capability=(99, 0)),
    dict(min_gpu_count=1),
]

NOT_APPLICABLE = [
    # No GPU: GPU filters miss it, unless min_gpu_count=0 says GPU-less offers are welcome.
    *[(f"no GPU: {q}", CPU_ONLY, q, False) for q in GPU_FILTERS_MISSING_A_CPU_OFFER],
    *[
        (f"no GPU, min_gpu_count=0: {q}", CPU_ONLY, {**q, "min_gpu_count": 0}, True)
        for q in GPU_FILTERS_MISSING_A_CPU_OFFER
        if "min_gpu_count" not in q
    ],
    *[
        (f"GPU-less row naming a GPU: {q}", NAMED_NO_GPU, q, False)
        for q in [
            dict(min_gpu_memory=80),
            dict(min_total_gpu_memory=1),
            dict(min_compute_capability=(9, 0)),
            dict(gpu_vendor=NV),
        ]
    ],
    (
        "GPU-less row naming a GPU, min_gpu_count=0",
        NAMED_NO_GPU,
        dict(min_gpu_count=0, min_gpu_memory=80),
        True,
    ),
    (
        "GPU-less row naming a GPU: its memory counts 0",
        NAMED_NO_GPU,
        dict(max_gpu_memory=0, max_total_gpu_memory=0),
        True,
    ),
    (
        "GPU-less row naming a GPU: its name still matches",
        NAMED_NO_GPU,
        dict(gpu_name=["h100"]),
        True,
    ),
    (
        "no GPU: max bounds hold at 0",
        CPU_ONLY,
        dict(max_gpu_count=0, max_gpu_memory=0, max_total_gpu_memory=0),
        True,
    ),
    (
        "no GPU, min_gpu_count=0, max_gpu_count=0",
        CPU_ONLY,
        dict(min_gpu_count=0, max_gpu_count=0),
        True,
    ),
    # min_gpu_count=0 only waives the GPU filters for GPU-less offers.
    ("GPU, min_gpu_count=0, other name", {}, dict(min_gpu_count=0, gpu_name=["H100"]), False),
    ("GPU, min_gpu_count=0, other vendor", {}, dict(min_gpu_count=0, gpu_vendor=AMD), False),
    (
        "GPU, min_gpu_count=0, too little memory",
        {},
        dict(min_gpu_count=0, min_gpu_memory=81),
        False,
    ),
    ("GPU, min_gpu_count=0, max_gpu_count=0", {}, dict(min_gpu_count=0, max_gpu_count=0), False),
    (
        "GPU, min_gpu_count=0, compute capability",
        {},
        dict(min_gpu_count=0, min_compute_capability=(9, 0)),
        False,
    ),
    # Unknown GPU memory counts as 0.
    *[
        (f"unknown GPU memory: {q}", dict(gpu_count=2, gpu_memory=None), q, e)
        for q, e in [
            (dict(max_gpu_memory=0), True),
            (dict(max_total_gpu_memory=0), True),
            (dict(min_gpu_memory=0, min_total_gpu_memory=0), True),
            (dict(min_gpu_memory=1), False),
            (dict(min_total_gpu_memory=1), False),
        ]
    ],
    # Unknown disk: disk filters do not apply.
    ("unknown disk: min", dict(disk_size=None), dict(min_disk_size=100), True),
    ("unknown disk: max", dict(disk_size=None), dict(max_disk_size=10), True),
    ("unknown disk: both", dict(disk_size=None), dict(min_disk_size=10, max_disk_size=10), True),
    # (A minimum above its maximum is refused when the filter is made: test_arguments.py.)
    ("known disk below min", dict(disk_size=50.0), dict(min_disk_size=100), False),
    ("known disk above max", dict(disk_size=50.0), dict(max_disk_size=10), False),
    # Compute capability: known NVIDIA models only.
    *[
        (f"compute capability, {label}: {q}", offer, q, False)
        for label, offer in [
            ("AMD", dict(gpu_name="MI300X", gpu_vendor=AMD, gpu_memory=192.0)),
            ("TPU", dict(gpu_name="v5litepod", gpu_vendor=GOOGLE, gpu_memory=None)),
            ("unknown NVIDIA model", dict(gpu_name="NewGPU", gpu_memory=12.0)),
            ("NVIDIA, no model", dict(gpu_name=None, gpu_memory=None)),
            ("NVIDIA model, other vendor", dict(gpu_name="A100", gpu_vendor=AMD)),
        ]
        for q in [
            dict(min_compute_capability=(1, 0)),
            dict(max_compute_capability=(99, 0)),
            dict(min_compute_capability=(1, 0), max_compute_capability=(99, 0)),
        ]
    ],
    (
        "compute capability, known NVIDIA",
        {},
        dict(min_compute_capability=(1, 0), max_compute_capability=(99, 0)),
        True,
    ),
]


@PATHS
@pytest.mark.parametrize(
    "offer, q, expected",
    [pytest.param(o, q, e, id=label) for label, o, q, e in NOT_APPLICABLE],
)
def test_not_applicable_rules(offer, q, expected, path):
    check(item(instance_name="target", **offer), QueryFilter(**q), expected, path)


# Compute capability bounds compare as (major, minor) tuples, whatever the minor number.
CC_AS_TUPLES = [
    ("H100", dict(max_compute_capability=(8, 1000)), False),
    ("H100", dict(min_compute_capability=(8, 1000)), True),
    ("H100", dict(max_compute_capability=(8, 999)), False),
    ("H100", dict(max_compute_capability=(9, -1)), False),
    ("A100", dict(min_compute_capability=(8, -1)), True),
    ("A100", dict(max_compute_capability=(7, 5000)), False),
    ("A100", dict(min_compute_capability=(7, 5000)), True),
    ("A100", dict(min_compute_capability=(8, -5000)), True),
    ("A100", dict(min_compute_capability=(9, -5000)), False),
]


@PATHS
@pytest.mark.parametrize(
    "name, q, expected", [pytest.param(n, q, e, id=f"{n} {q}") for n, q, e in CC_AS_TUPLES]
)
def test_compute_capability_bounds_compare_as_tuples(name, q, expected, path):
    check(item(instance_name="target", gpu_name=name), QueryFilter(**q), expected, path)


CHOICES = [
    # provider: case-insensitive, one or several names
    ("provider", dict(), dict(provider=["aws"]), True),
    ("provider other case", dict(), dict(provider=["AWS"]), True),
    ("provider other", dict(), dict(provider=["gcp"]), False),
    ("provider one of several", dict(), dict(provider=["gcp", "aws"]), True),
    ("provider none of several", dict(), dict(provider=["gcp", "azure"]), False),
    ("provider empty list", dict(), dict(provider=[]), False),
    # gpu_name: case-insensitive, one or several names
    ("gpu_name", dict(), dict(gpu_name=["A100"]), True),
    ("gpu_name other case", dict(), dict(gpu_name=["a100"]), True),
    ("gpu_name other", dict(), dict(gpu_name=["H100"]), False),
    ("gpu_name one of several", dict(), dict(gpu_name=["T4", "a100", "H100"]), True),
    ("gpu_name none of several", dict(), dict(gpu_name=["T4", "H100"]), False),
    ("gpu_name empty list", dict(), dict(gpu_name=[]), False),
    ("gpu_name unknown name", dict(), dict(gpu_name=["NoSuchGPU"]), False),
    ("gpu_name, offer without model", dict(gpu_name=None), dict(gpu_name=["A100"]), False),
    (
        "gpu_name several, offer without model",
        dict(gpu_name=None),
        dict(gpu_name=["A100", "T4"]),
        False,
    ),
    # spot
    ("spot wanted, on-demand offer", dict(spot=False), dict(spot=True), False),
    ("on-demand wanted, on-demand offer", dict(spot=False), dict(spot=False), True),
    ("spot wanted, spot offer", dict(spot=True), dict(spot=True), True),
    ("on-demand wanted, spot offer", dict(spot=True), dict(spot=False), False),
    ("either, spot offer", dict(spot=True), dict(spot=None), True),
    # cpu_arch
    ("x86 wanted, x86 offer", dict(), dict(cpu_arch=CPUArchitecture.X86), True),
    ("arm wanted, x86 offer", dict(), dict(cpu_arch=ARM), False),
    ("arm wanted, arm offer", dict(cpu_arch=ARM), dict(cpu_arch=ARM), True),
    ("x86 wanted, arm offer", dict(cpu_arch=ARM), dict(cpu_arch=CPUArchitecture.X86), False),
    # gpu_vendor
    ("nvidia wanted, nvidia offer", dict(), dict(gpu_vendor=NV), True),
    ("amd wanted, nvidia offer", dict(), dict(gpu_vendor=AMD), False),
    ("amd wanted, amd offer", dict(gpu_name="MI300X", gpu_vendor=AMD), dict(gpu_vendor=AMD), True),
    (
        "google wanted, amd offer",
        dict(gpu_name="MI300X", gpu_vendor=AMD),
        dict(gpu_vendor=GOOGLE),
        False,
    ),
    # allowed_flags: every flag of the offer must be allowed; None allows all
    ("flags: none given", dict(flags=["oci-spot"]), dict(allowed_flags=None), True),
    ("flags: empty allows no flag", dict(flags=["oci-spot"]), dict(allowed_flags=[]), False),
    ("flags: exactly covered", dict(flags=["oci-spot"]), dict(allowed_flags=["oci-spot"]), True),
    (
        "flags: covered with more",
        dict(flags=["oci-spot"]),
        dict(allowed_flags={"x", "oci-spot"}),
        True,
    ),
    ("flags: not covered", dict(flags=["oci-spot"]), dict(allowed_flags=("x",)), False),
    (
        "flags: one of two missing",
        dict(flags=["a", "b"]),
        dict(allowed_flags=frozenset({"a"})),
        False,
    ),
    ("flags: both of two", dict(flags=["a", "b"]), dict(allowed_flags=["b", "a"]), True),
    ("flags: no flags, empty allowed", dict(flags=[]), dict(allowed_flags=[]), True),
]


@PATHS
@pytest.mark.parametrize(
    "offer, q, expected", [pytest.param(o, q, e, id=label) for label, o, q, e in CHOICES]
)
def test_choices(offer, q, expected, path):
    check(item(instance_name="target", **offer), QueryFilter(**q), expected, path)


def cuda(version: Any) -> dict[str, Any]:
    return dict(cuda_version=version)


MIN_CUDA = [
    # At the host's version, just inside, just outside; minor numbers compare as numbers.
    ("12.8, min at", cuda("12.8"), (12, 8), True),
    ("12.8, min just below", cuda("12.8"), (12, 7), True),
    ("12.8, min just above", cuda("12.8"), (12, 9), False),
    ("12.8, min 12.10 is newer", cuda("12.8"), "12.10", False),
    ("12.8, min 12.1", cuda("12.8"), "12.1", True),
    ("12.8, min next major", cuda("12.8"), 13, False),
    ("12.8, min last major", cuda("12.8"), (11, 999), True),
    ("12.10, min at", cuda("12.10"), (12, 10), True),
    ("12.10, min 12.8 is older", cuda("12.10"), "12.8", True),
    ("12.10, min just below", cuda("12.10"), (12, 9), True),
    ("12.10, min just above", cuda("12.10"), (12, 11), False),
    ("13.0, min 12.999", cuda("13.0"), (12, 999), True),
    ("12.999, min 13", cuda("12.999"), 13, False),
    ("12.999, min 12.999", cuda("12.999"), "12.999", True),
    ("13.0, min 13.1", cuda("13.0"), (13, 1), False),
    ("0.0, min 0.1", cuda("0.0"), (0, 1), False),
    ("0.0, min 0.0", cuda("0.0"), (0, 0), True),
    # Versions as people write them, on both sides.
    *[
        (f"12.0, min {v!r}", cuda("12"), v, True)
        for v in [12, "12", 12.0, "12.0", (12, 0), [12, 0]]
    ],
    *[(f"12.0, min {v!r}", cuda("12.0"), v, False) for v in ["12.1", (12, 1), 12.1, 13]],
    ("12.4, min float 12.4", cuda("12.4"), 12.4, True),
    ("12.4, min 12.5", cuda("12.4"), "12.5", False),
    ("11.8, min (11, 8)", cuda("11.8"), (11, 8), True),
    ("11.8, min (11, 9)", cuda("11.8"), (11, 9), False),
    # Not applicable: a host that does not say (or says something unreadable) is kept.
    ("no provider data", {}, (99, 0), True),
    ("other provider data", dict(provider_data={"pod_counts": [2]}), (99, 0), True),
    ("cuda_version None", cuda(None), (99, 0), True),
    ("cuda_version unreadable", cuda("new"), (99, 0), True),
    ("cuda_version 12.8.1", cuda("12.8.1"), (1, 0), True),
    # A CUDA version asks for an NVIDIA GPU (issue 24): CPU-only and other vendors' offers are
    # out, whatever their provider_data says; an NVIDIA GPU without a model name is in.
    ("CPU only", dict(gpu_count=0), (1, 0), False),
    ("CPU only, says 12.8", dict(gpu_count=0, **cuda("12.8")), (12, 0), False),
    ("CPU only, min_gpu_count 0 elsewhere", dict(gpu_count=0), (0, 0), False),
    ("AMD", dict(gpu_name="MI300X", gpu_vendor=AMD, gpu_memory=192.0), (1, 0), False),
    ("TPU", dict(gpu_name="v5litepod", gpu_vendor=GOOGLE, gpu_memory=None), (1, 0), False),
    ("NVIDIA, no model", dict(gpu_name=None, gpu_memory=None), (1, 0), True),
    ("GPU name, no GPU", dict(gpu_count=0, gpu_name="H100", gpu_memory=80.0), (1, 0), False),
]


@PATHS
@pytest.mark.parametrize(
    "offer, min_cuda, expected", [pytest.param(o, v, e, id=label) for label, o, v, e in MIN_CUDA]
)
def test_min_cuda(offer, min_cuda, expected, path):
    check(item(instance_name="target", **offer), QueryFilter(min_cuda=min_cuda), expected, path)


# MAJOR and MINOR are whole numbers 0..999; anything else is a ValueError naming the field.
GOOD_VERSIONS = [
    ((0, 0), (0, 0)),
    ((999, 999), (999, 999)),
    ("12", (12, 0)),
    ("99", (99, 0)),
    ("999.999", (999, 999)),
    (" 12.8 ", (12, 8)),
    (("12", "8"), (12, 8)),
    ([12, 8], (12, 8)),
    (7, (7, 0)),
]
BAD_VERSIONS = [
    (1000, 0),
    (0, 1000),
    (-1, 0),
    (0, -1),
    "1000",
    "12.1000",
    "-12",
    "12.",
    ".8",
    "12.8.1",
    "",
    True,
    (True, 0),
    (12, False),
    ("12", "x"),
    (12,),
    (12, 8, 0),
    12.5e3,
    {"12": 8},
    Decimal("12.8"),  # a number, but not one of the types a version is written as
]


@pytest.mark.parametrize("value, expected", GOOD_VERSIONS)
def test_versions_within_the_limits(value, expected):
    assert parse_version(value, "min_cuda") == expected
    offer = item(instance_name="target", **cuda("12.8"))
    q = QueryFilter(min_cuda=value)
    assert matches(offer, q) is (expected <= (12, 8))
    assert (offer in select(table_of([offer], ["aws"]), q)) is (expected <= (12, 8))


@pytest.mark.parametrize("value", BAD_VERSIONS, ids=repr)
def test_versions_outside_the_limits_are_value_errors(value):
    with pytest.raises(ValueError, match="Invalid min_cuda"):
        parse_version(value, "min_cuda")
    offer = item(instance_name="target", **cuda("12.8"))
    with pytest.raises(ValueError, match="Invalid min_cuda"):
        matches(offer, QueryFilter(min_cuda=value))
    with pytest.raises(ValueError, match="Invalid min_cuda"):
        select(table_of([offer], ["aws"]), QueryFilter(min_cuda=value))


LOCATIONS = [
    ("exact", ["europe-west4"], True),
    ("other case", ["EUROPE-West4"], True),
    ("a prefix is not the name", ["europe-west"], False),
    ("longer name", ["europe-west41"], False),
    ("pattern *", ["europe-*"], True),
    ("pattern * at the start", ["*-west4"], True),
    ("pattern * matching nothing", ["europe-west4*"], True),
    ("pattern ?", ["europe-west?"], True),
    ("pattern ? in other case", ["EUROPE-WES?4"], True),
    ("pattern ? wants one character", ["europe-west4?"], False),
    ("pattern [seq]", ["[ef]urope-west4"], True),
    ("pattern [seq] missing", ["europe-west[5-9]"], False),
    ("pattern missing", ["us-*"], False),
    ("one of several", ["us-*", "europe-west4"], True),
    ("pattern one of several", ["us-east-1", "Europe-*"], True),
    ("none of several", ["us-east-1", "eu-west-?"], False),
    ("empty list", [], False),
    ("a plain string is one pattern", "europe-*", True),
    ("a plain string missing", "europe-west", False),
]


@PATHS
@pytest.mark.parametrize(
    "location, expected", [pytest.param(v, e, id=label) for label, v, e in LOCATIONS]
)
def test_location(location, expected, path):
    offer = item(instance_name="target", location="europe-west4")
    check(offer, QueryFilter(location=location), expected, path)


# VRAM_TOLERANCE is 7%: an "80GB" name matches 74.4 to 85.6 GB.
GPU_NAMES_WITH_MEMORY = [
    ("A100 80, A100 80GB", dict(gpu_memory=80.0), ["A100 80GB"], True),
    ("A100 80, other spelling", dict(gpu_memory=80.0), ["a100-80gb"], True),
    ("A100 80, A100 40GB", dict(gpu_memory=80.0), ["A100 40GB"], False),
    ("A100 40, A100 80GB", dict(gpu_memory=40.0), ["A100 80GB"], False),
    ("A100 40, one of two sizes", dict(gpu_memory=40.0), ["A100 80GB", "A100 40GB"], True),
    ("A100 75, just inside", dict(gpu_memory=75.0), ["A100 80GB"], True),
    ("A100 74.4, at the lower edge", dict(gpu_memory=74.4), ["A100 80GB"], True),
    ("A100 74.3, just outside", dict(gpu_memory=74.3), ["A100 80GB"], False),
    ("A100 85.6, at the upper edge", dict(gpu_memory=85.6), ["A100 80GB"], True),
    ("A100 85.7, just outside", dict(gpu_memory=85.7), ["A100 80GB"], False),
    # 7% of 125 is 8.75, and 125 +/- 8.75 lands on it exactly in floating point.
    ("A100 133.75, exactly at the upper edge", dict(gpu_memory=133.75), ["A100 125GB"], True),
    ("A100 116.25, exactly at the lower edge", dict(gpu_memory=116.25), ["A100 125GB"], True),
    ("A100 133.76, past the upper edge", dict(gpu_memory=133.76), ["A100 125GB"], False),
    ("A100 116.24, past the lower edge", dict(gpu_memory=116.24), ["A100 125GB"], False),
    ("A100 unknown memory", dict(gpu_memory=None), ["A100 80GB"], False),
    ("A100 unknown memory, plain name", dict(gpu_memory=None), ["A100"], True),
    ("H100 80, A100 80GB", dict(gpu_name="H100"), ["A100 80GB"], False),
    ("H100 80, with a plain name", dict(gpu_name="H100"), ["A100 80GB", "h100"], True),
    ("H100 80, H100 80GB", dict(gpu_name="H100"), ["H100 80GB"], True),
    ("unknown GPU with memory", dict(gpu_name="NewGPU", gpu_memory=12.0), ["NewGPU 12GB"], False),
    ("a name that holds the memory", dict(gpu_name="A100 80GB"), ["a100 80gb"], True),
    (
        "GPU-less row naming the GPU",
        dict(gpu_count=0, gpu_name="A100", gpu_memory=80.0),
        ["A100 80GB"],
        True,
    ),
    ("no GPU", dict(gpu_count=0), ["A100 80GB"], False),
]


@PATHS
@pytest.mark.parametrize(
    "offer, names, expected",
    [pytest.param(o, n, e, id=label) for label, o, n, e in GPU_NAMES_WITH_MEMORY],
)
def test_gpu_names_with_memory(offer, names, expected, path):
    check(item(instance_name="target", **offer), QueryFilter(gpu_name=names), expected, path)


def test_gpu_name_wanted_answers_a_bool():
    assert gpu_name_wanted("A100", 80.0, ["A100 80GB"]) is True
    assert gpu_name_wanted("A100", 80.0, ["H100", "A100 40GB"]) is False
    assert gpu_name_wanted(None, None, ["A100"]) is False


def test_cuda_versions_are_read_once_per_table():
    offers = [item(instance_name=f"o{k}", **cuda(v)) for k, v in enumerate(["12.8", "new", 13])]
    table = table_of([*offers, item(instance_name="silent")], ["aws"])
    first = table.cuda_version()
    assert table.cuda_version() is first
    assert sorted(first.tolist()) == sorted([12008, -1, 13000, -1])


def test_form_factors_are_worked_out_once_per_table():
    offers = [
        item(instance_name="gpu_1x_h100_pcie", gpu_name="H100"),
        item(instance_name="p5.48xlarge", gpu_name="H100"),
        item(instance_name="box", gpu_name="H100"),
        item(instance_name="cpu", gpu_count=0),
        # An NVIDIA GPU without a model has no form factor, whatever its instance type says.
        item(instance_name="nameless_pcie", gpu_name=None, gpu_memory=None),
    ]
    table = table_of(offers, ["aws"])
    first = table.form_factors()
    assert table.form_factors() is first
    assert sorted(first.tolist()) == [-1, -1, -1, 0, 1]  # unknown three times, sxm, pcie
    assert [o.form_factor for o in offers] == ["pcie", "sxm", None, None, None]


def test_gpu_names_that_give_nothing_more_match_by_their_canonical_name_too():
    # Read once into the parsed form (query/parsed.py): `matches` and `Catalog.query` both
    # add the canonical name ("RTX 4090" finds RTX4090 offers); a bare string is one name.
    assert gpu_name_spec("H100") is None and gpu_name_spec("RTX 4090") is None
    assert matches(item(gpu_name="RTX4090"), QueryFilter(gpu_name=["RTX 4090"]))
    assert matches(item(gpu_name="RTX4090"), QueryFilter(gpu_name="RTX 4090"))
    assert select(table_of([item(gpu_name="RTX4090")], ["aws"]), QueryFilter(gpu_name="4090"))


def test_an_empty_table_answers_nothing_to_any_filter():
    table = table_of([], ["aws"])
    assert len(table) == 0
    for q in [
        QueryFilter(),
        QueryFilter(allowed_flags=[]),
        QueryFilter(gpu_name=["A100", "H100"], min_gpu_count=0),
        QueryFilter(max_compute_capability=(9, 0), min_disk_size=1, provider=["aws"]),
        QueryFilter(location=["*"], min_cuda=(1, 0), gpu_name=["A100 80GB"]),
    ]:
        assert select(table, q) == []


def ff(value: str) -> dict[str, Any]:
    return dict(provider_data={"form_factor": value})


# A GPU name that says a form factor ("H100 SXM") keeps offers of that form factor and of an
# unknown one; a count ("A100:8") asks for exactly that many (issue 24).
GPU_NAME_SPECS = [
    ("sxm asked, sxm offer", dict(gpu_name="H100", **ff("sxm")), ["H100 SXM"], True),
    ("sxm5 asked, sxm offer", dict(gpu_name="H100", **ff("sxm")), ["H100-SXM5"], True),
    ("sxm asked, pcie offer", dict(gpu_name="H100", **ff("pcie")), ["H100 SXM"], False),
    ("pcie asked, sxm offer", dict(gpu_name="H100", **ff("sxm")), ["h100-pcie"], False),
    ("pcie asked, unknown kept", dict(gpu_name="H100"), ["h100 pcie"], True),
    ("sxm asked, instance says pcie", dict(gpu_name="H100", instance_name="gpu_1x_h100_pcie"), ["H100 SXM"], False),
    ("sxm asked, aws p5", dict(gpu_name="H100", instance_name="p5.48xlarge"), ["H100 SXM"], True),
    ("pcie asked, aws p5", dict(gpu_name="H100", instance_name="p5.48xlarge"), ["H100 PCIe"], False),
    ("pcie asked, nebius sxm", dict(gpu_name="H100", instance_name="gpu-h100-sxm 1gpu"), ["H100 PCIe"], False),
    ("memory and ff", dict(gpu_name="A100", gpu_memory=80.0, **ff("sxm")), ["A100 80GB SXM"], True),
    ("memory wrong, ff right", dict(gpu_name="A100", gpu_memory=40.0, **ff("sxm")), ["A100 80GB SXM"], False),
    ("other GPU, ff right", dict(gpu_name="A100", **ff("sxm")), ["H100 SXM"], False),
    ("H100 NVL is its own model", dict(gpu_name="H100", **ff("nvl")), ["H100 NVL"], False),
    ("H100 NVL model", dict(gpu_name="H100NVL", gpu_memory=94.0), ["H100 NVL"], True),
    ("GB200 NVL72, Crusoe-style type", dict(gpu_name="GB200", instance_name="gb200-186gb-nvl-4x"), ["GB200 NVL72"], True),
    ("GB200 NVL72, unknown kept", dict(gpu_name="GB200"), ["GB200 NVL72"], True),
    ("GB200 NVL is the NVL72", dict(gpu_name="GB200", instance_name="p6e-gb200.36xlarge"), ["GB200 NVL"], True),
    ("model decides: L40S is PCIe", dict(gpu_name="L40S", **ff("sxm")), ["L40S SXM"], False),
    ("bad form factor data is unknown", dict(gpu_name="H100", **ff("board")), ["H100 PCIe"], True),
    ("gpu_type words", dict(gpu_name="H100", provider_data={"gpu_type": "H100-80GB-SXM"}), ["H100 PCIe"], False),
    ("count at", dict(gpu_name="A100", gpu_count=8), ["A100:8"], True),
    ("count below", dict(gpu_name="A100", gpu_count=4), ["A100:8"], False),
    ("count above", dict(gpu_name="A100", gpu_count=16), ["A100:8"], False),
    ("count, other name", dict(gpu_name="H100", gpu_count=8), ["A100:8"], False),
    ("count, spaces and case", dict(gpu_name="RTX4090", gpu_count=2), ["rtx 4090 : 2"], True),
    ("count, one of several", dict(gpu_name="H100", gpu_count=4), ["A100:8", "H100:4"], True),
    ("count, several, none fits", dict(gpu_name="H100", gpu_count=8), ["A100:8", "H100:4"], False),
    ("count and memory and ff", dict(gpu_name="A100", gpu_count=8, **ff("sxm")), ["A100 80GB SXM:8"], True),
    ("unknown name with count", dict(gpu_name="NewGPU", gpu_count=2), ["NewGPU:2"], True),
    ("unknown name, other count", dict(gpu_name="NewGPU", gpu_count=1), ["NewGPU:2"], False),
]  # fmt: skip


@PATHS
@pytest.mark.parametrize(
    "offer, names, expected",
    [pytest.param(o, n, e, id=label) for label, o, n, e in GPU_NAME_SPECS],
)
def test_gpu_name_form_factor_and_count(offer, names, expected, path):
    offer = {"instance_name": "target", **offer}
    check(item(**offer), QueryFilter(gpu_name=names), expected, path)


@PATHS
@pytest.mark.parametrize("name", ["A100:0", "A100:", "A100:x", ":8", "A100:8:2", "H100 SXM PCIe"])
def test_bad_gpu_name_spec_is_a_value_error(name, path):
    with pytest.raises(ValueError, match=r"Invalid gpu_name"):
        check(item(instance_name="target"), QueryFilter(gpu_name=[name]), False, path)


MEMORY_PER_GPU = [
    ("at the bound", dict(gpu_count=4, memory=96.0), {}, 24.0, True),
    ("just below it", dict(gpu_count=4, memory=96.0), {}, down(24.0), True),
    ("just above it", dict(gpu_count=4, memory=96.0), {}, up(24.0), False),
    ("a third, at it", dict(gpu_count=3, memory=100.0), {}, 100.0 / 3, True),
    ("a third, above", dict(gpu_count=3, memory=100.0), {}, up(100.0 / 3), False),
    ("0 keeps every offer with GPUs", dict(gpu_count=8, memory=0.5), {}, 0, True),
    ("no GPU", CPU_ONLY, {}, 0, False),
    ("no GPU, even with min_gpu_count=0", CPU_ONLY, {"min_gpu_count": 0}, 0, False),
]


@PATHS
@pytest.mark.parametrize(
    "offer, more, value, expected",
    [case[1:] for case in MEMORY_PER_GPU],
    ids=[case[0] for case in MEMORY_PER_GPU],
)
def test_min_memory_per_gpu(offer, more, value, expected, path):
    q = QueryFilter(min_memory_per_gpu=value, **more)
    check(item(instance_name="target", **offer), q, expected, path)
