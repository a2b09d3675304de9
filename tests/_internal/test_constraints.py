import pytest

from gpuhunt import (
    KNOWN_ACCELERATORS,
    KNOWN_AMD_GPUS,
    KNOWN_NVIDIA_GPUS,
    AcceleratorVendor,
    CPUArchitecture,
    QueryFilter,
    correct_gpu_memory_gib,
    find_accelerators,
    is_nvidia_superchip,
    matches,
)
from gpuhunt._internal.query.filters import make_filter
from tests._internal.fastpath import select, table_of
from tests.helpers import item


def test_provider_case_insensitive():
    assert matches(item("aws"), QueryFilter(provider=["AWS"]))
    assert not matches(item("aws"), QueryFilter(provider=["gcp"]))


@pytest.mark.parametrize(
    "field, low, high",
    [
        ("price", "min_price", "max_price"),
        ("cpu", "min_cpu", "max_cpu"),
        ("memory", "min_memory", "max_memory"),
    ],
)
def test_ranges_inclusive(field, low, high):
    i = item(**{field: 8})
    assert matches(i, QueryFilter(**{low: 8, high: 8}))
    assert not matches(i, QueryFilter(**{low: 9}))
    assert not matches(i, QueryFilter(**{high: 7}))


def test_spot_and_arch():
    assert matches(item(spot=True), QueryFilter(spot=True))
    assert not matches(item(spot=True), QueryFilter(spot=False))
    assert not matches(
        item(cpu_arch=CPUArchitecture.ARM), QueryFilter(cpu_arch=CPUArchitecture.X86)
    )


def test_gpu_filters_skipped_for_cpu_offers_when_min_gpu_count_zero():
    cpu = item(gpu_count=0)
    q = QueryFilter(
        min_gpu_count=0, gpu_name=["H100"], gpu_vendor=AcceleratorVendor.AMD, min_gpu_memory=80
    )
    assert matches(cpu, q)
    assert not matches(cpu, QueryFilter(gpu_name=["H100"]))
    assert not matches(item(gpu_name="A100"), q)


def test_gpu_name_vendor_memory_and_total():
    i = item(gpu_count=8, gpu_name="A100", gpu_memory=40.0)
    assert matches(i, QueryFilter(gpu_name=["a100"]))
    assert not matches(i, QueryFilter(gpu_name=["H100"]))
    assert not matches(i, QueryFilter(gpu_vendor=AcceleratorVendor.AMD))
    assert matches(i, QueryFilter(min_gpu_memory=40, max_gpu_memory=40))
    assert matches(i, QueryFilter(min_total_gpu_memory=320, max_total_gpu_memory=320))
    assert not matches(i, QueryFilter(min_total_gpu_memory=321))
    assert not matches(item(gpu_count=1), QueryFilter(min_gpu_count=2))


def test_unknown_gpu_memory_counts_as_zero():
    i = item(gpu_memory=None)
    assert matches(i, QueryFilter(max_gpu_memory=0))
    assert not matches(i, QueryFilter(min_total_gpu_memory=1))


def test_compute_capability_only_known_nvidia():
    assert matches(item(gpu_name="H100"), QueryFilter(min_compute_capability=(9, 0)))
    assert not matches(item(gpu_name="A100"), QueryFilter(min_compute_capability=(9, 0)))
    assert matches(item(gpu_name="A100"), QueryFilter(max_compute_capability=(8, 0)))
    assert not matches(item(gpu_name="NewGPU"), QueryFilter(min_compute_capability=(1, 0)))
    amd = item(gpu_name="MI300X", gpu_vendor=AcceleratorVendor.AMD)
    assert not matches(amd, QueryFilter(min_compute_capability=(1, 0)))


def test_disk_checks_skipped_when_unknown():
    assert matches(item(disk_size=None), QueryFilter(min_disk_size=100))
    assert not matches(item(disk_size=50.0), QueryFilter(min_disk_size=100))
    assert matches(item(disk_size=100.0), QueryFilter(min_disk_size=100, max_disk_size=100))


def test_flags():
    i = item(flags=["oci-spot"])
    assert matches(i, QueryFilter())
    assert not matches(i, QueryFilter(allowed_flags=[]))
    assert matches(i, QueryFilter(allowed_flags=["oci-spot", "x"]))
    assert matches(item(flags=[]), QueryFilter(allowed_flags=[]))


def test_find_accelerators_and_order():
    a100 = find_accelerators(names=["a100"])
    assert [a.memory for a in a100] == [40, 80]  # larger memory last, for dict-building callers
    assert {a.vendor for a in find_accelerators(vendors=[AcceleratorVendor.AMD])} == {
        AcceleratorVendor.AMD
    }
    assert len(find_accelerators()) == len(KNOWN_ACCELERATORS)
    names = [g.name for g in KNOWN_NVIDIA_GPUS]
    for n in {
        "K80",
        "T4",
        "V100",
        "A100",
        "H100",
        "H200",
        "B200",
        "B300",
        "GB300",
        "RTXPRO6000",
        "RTX5090",
        "L40S",
    }:
        assert n in names
    mi300x = next(g for g in KNOWN_AMD_GPUS if g.name == "MI300X")
    assert 0x74A1 in mi300x.device_ids and mi300x.memory == 192


def test_correct_gpu_memory_gib():
    assert correct_gpu_memory_gib("A100", 81920 * 0.98) == 80
    assert correct_gpu_memory_gib("A100", 40960) == 40
    assert correct_gpu_memory_gib("H100", 30000) == 29  # too far from any known size
    assert correct_gpu_memory_gib("Unknown", 2048) == 2


def test_superchip():
    assert is_nvidia_superchip("GH200") and is_nvidia_superchip("GB200")
    assert not is_nvidia_superchip("H100") and not is_nvidia_superchip("B200")


def test_cast():
    assert AcceleratorVendor.cast("NVIDIA") is AcceleratorVendor.NVIDIA
    assert CPUArchitecture.cast("ARM") is CPUArchitecture.ARM
    with pytest.raises(ValueError, match="sparc"):
        CPUArchitecture.cast("sparc")


def test_a_tpu_generation_matches_its_slices_in_matches_and_the_table():
    google = AcceleratorVendor.GOOGLE
    offers = [
        item("gcp", instance_name=n, gpu_name=n, gpu_memory=None, gpu_vendor=google, price=p)
        for n, p in [("v5litepod-1", 1.0), ("v5litepod-8", 8.0), ("v5p-8", 9.0), ("v6e-4", 4.0)]
    ] + [item("gcp", instance_name="v5litepod", gpu_name="v5litepodx-8", gpu_vendor=google)]
    table = table_of(offers, ["gcp"])
    for wanted, expected in [
        (["v5litepod"], ["v5litepod-1", "v5litepod-8"]),
        (["V5P"], ["v5p-8"]),
        (["v5litepod-8"], ["v5litepod-8"]),  # a slice name is that slice only
        (["v5"], []),
    ]:
        q = make_filter(gpu_name=wanted)
        assert sorted(i.gpu_name for i in offers if matches(i, q)) == expected, wanted
        assert sorted(i.gpu_name for i in select(table, q)) == expected, wanted
