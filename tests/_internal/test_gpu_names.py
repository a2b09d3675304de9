import pytest

from gpuhunt import (
    KNOWN_ACCELERATORS,
    KNOWN_TPUS,
    Catalog,
    QueryFilter,
    canonical_gpu_name,
    matches,
)
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.gpu_names import (
    MEMORY_TOLERANCE,
    closest_gpu_names,
    resolve_gpu,
    tpu_generation,
)
from gpuhunt._internal.models import AcceleratorVendor
from tests.helpers import item, publish_archive

GOOGLE = AcceleratorVendor.GOOGLE


@pytest.mark.parametrize(
    "spelling, canonical",
    [
        ("NVIDIA GeForce RTX 4090", "RTX4090"),
        ("RTX 4090", "RTX4090"),
        ("4090", "RTX4090"),
        ("H100 NVL", "H100NVL"),
        ("H100-SXM5-80GB", "H100"),
        ("A100-SXM4-80GB", "A100"),
        ("NVIDIA A100 80GB PCIe", "A100"),
        ("Tesla V100", "V100"),
        ("Tesla V100-SXM2-16GB", "V100"),
        ("Radeon Instinct MI300X", "MI300X"),
        ("AMD Instinct MI300X OAM", "MI300X"),
        ("RTX A6000", "A6000"),
        ("RTX 6000 Ada Generation", "RTX6000Ada"),
        ("Quadro RTX 6000", "RTX6000"),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTXPRO6000"),
        ("NVIDIA H100 80GB HBM3", "H100"),
        ("RTX 3090 Ti", "RTX3090Ti"),
        ("RTX 4070 Ti SUPER", "RTX4070TiSUPER"),
        ("TPU v5e", "v5litepod"),
        ("Gaudi 2", "Gaudi2"),
        ("HL-225", "Gaudi2"),
        ("gb200", "GB200"),
        ("NVIDIA GH200 480GB", "GH200"),
        ("l40s", "L40S"),
        # Lium's spellings, once cleaned in lium.py, now read by the shared resolver
        ("Tesla V100 Tensor Core GPU", "V100"),
        ("B300 SXM6 AC", "B300"),
        ("B300 PC", "B300"),
        ("H100 PCIe", "H100"),  # ends in "pcie": the suffix rule does not touch it
    ],
)
def test_aliases(spelling, canonical):
    assert canonical_gpu_name(spelling) == canonical


@pytest.mark.parametrize("name", ["", "   ", "Voodoo 5", "H1000"])
def test_unknown(name):
    assert canonical_gpu_name(name) is None


def test_every_canonical_name_maps_to_itself():
    for acc in KNOWN_ACCELERATORS:
        assert canonical_gpu_name(acc.name) == acc.name


# resolve_gpu: the one rule every provider uses (see its docstring and CONTRIBUTING.md).


@pytest.mark.parametrize(
    "spelling, memory, expected",
    [
        ("A100", None, ("A100", 40.0)),  # two sizes, none reported: the smallest
        ("NVIDIA A100 80GB PCIe", None, ("A100", 80.0)),  # the size written in the name
        ("A100", 79.6, ("A100", 80.0)),  # reported, near a known size: that size
        ("A100", 39.5, ("A100", 40.0)),
        ("A100", 20.0, ("A100", 20.0)),  # reported, near none: kept (a slice, a new board)
        ("Tesla V100", None, ("V100", 16.0)),
        ("V100", 32.0, ("V100", 32.0)),
        ("H100", None, ("H100", 80.0)),
        ("RTX 3060", None, ("RTX3060", 8.0)),
        ("RTX 3060", 11.8, ("RTX3060", 12.0)),
        ("MI300X", None, ("MI300X", 192.0)),
        ("v5litepod", None, ("v5litepod", 0.0)),  # TPUs: per-chip memory is not tracked
        # underscores separate words (Fluidstack's gpu_type, Prime Intellect's gpuType)
        ("A100_PCIE_80GB", None, ("A100", 80.0)),
        ("A100_80GB", None, ("A100", 80.0)),
        ("RTX_A6000_48GB", None, ("A6000", 48.0)),
    ],
)
def test_resolve_gpu_memory_rule(spelling, memory, expected):
    gpu = resolve_gpu(spelling, memory)
    assert gpu is not None
    assert (gpu.name, gpu.memory) == expected


def test_resolve_gpu_vendor_and_unknown_names():
    assert resolve_gpu("MI300X").vendor == AcceleratorVendor.AMD
    assert resolve_gpu("Gaudi 2").vendor == AcceleratorVendor.INTEL
    assert resolve_gpu("H100 SXM").vendor == AcceleratorVendor.NVIDIA
    assert resolve_gpu("X9000") is None
    assert resolve_gpu("") is None


def test_resolve_gpu_tolerance_is_relative():
    # 7% of 80 is 5.6: 74.5 is the 80 GB board, 74 is not
    assert resolve_gpu("H100", 74.5).memory == 80.0
    assert resolve_gpu("H100", 74.0).memory == 74.0
    assert MEMORY_TOLERANCE == 0.07


@pytest.mark.parametrize(
    ("spelling", "canonical"),
    [
        ("TPU v5e", "v5litepod"),
        ("v5e", "v5litepod"),
        ("Cloud TPU v5e", "v5litepod"),
        ("TPU v5p", "v5p"),
        ("TPU v6e", "v6e"),
        ("Trillium", "v6e"),
        ("TPU v6e Trillium", "v6e"),
        ("TPU v4", "v4"),
    ],
)
def test_tpu_marketing_names(spelling, canonical):
    assert canonical_gpu_name(spelling) == canonical
    assert canonical in {t.name for t in KNOWN_TPUS}


def test_tpu_generation_of_a_slice():
    assert tpu_generation("v5litepod-8") == "v5litepod"
    assert tpu_generation("V6E-4") == "v6e"
    for name in ("v5litepod", "A100", "v9-8", "H100-8", ""):
        assert tpu_generation(name) is None


def test_a_tpu_generation_finds_its_slices(tmp_path):
    slices = [
        item("gcp", instance_name=n, gpu_name=n, gpu_memory=None, gpu_vendor=GOOGLE)
        for n in ("v5litepod-1", "v5litepod-8", "v6e-4")
    ]
    q = QueryFilter(gpu_name=["v5litepod"])
    assert [i.gpu_name for i in slices if matches(i, q)] == ["v5litepod-1", "v5litepod-8"]
    publish_archive(tmp_path, "20261201-1", {"gcp": csv_bytes(slices)})
    with Catalog(catalog_url=str(tmp_path), auto_reload=False) as c:
        c.load()
        for name in ("TPU v5e", "v5e", "v5litepod"):  # the catalog's fast path
            assert sorted(i.gpu_name for i in c.query(gpu_name=name)) == [
                "v5litepod-1",
                "v5litepod-8",
            ]
        assert [i.gpu_name for i in c.query(gpu_name="Trillium")] == ["v6e-4"]
        assert [i.gpu_name for i in c.query(gpu_name="v5litepod-8")] == ["v5litepod-8"]
        # A catalog without v5p offers names who lists it.
        line = [x for x in c.explain(gpu_name="TPU v5p").lines() if x.startswith("No offer")]
        assert line == [
            "No offer in this catalog is a 'TPU v5p' (v5p). Listed by: gcp (in this catalog, "
            "without such an offer now)."
        ]


def test_refusing_many_unknown_names_compares_each_to_a_bounded_shortlist(monkeypatch):
    """Issue 50: each unknown name was compared (difflib) to every known name and every name in
    the catalog, whose keys were recomputed for every name: 10,000 names took seconds. The index
    is built once per catalog, and each name meets at most `SHORTLIST` candidates."""
    from gpuhunt._internal import gpu_names
    from gpuhunt._internal.query.names import gpu_name_problems

    compared: list[int] = []
    real = gpu_names._close_matches

    def counting(key: str, candidates: list[str], n: int) -> list[str]:
        compared.append(len(candidates))
        return real(key, candidates, n)

    monkeypatch.setattr(gpu_names, "_close_matches", counting)
    gpu_names._name_index.cache_clear()
    in_catalog = [f"Board {i} X{i % 7}" for i in range(500)] + ["H100"]
    names = [f"QZ{i}W{i * 7919 % 1000}" for i in range(2000)]
    problems = gpu_name_problems(names, in_catalog, set())
    assert len(problems) == len(names)
    assert len(compared) == len(names) and max(compared) <= gpu_names.SHORTLIST
    assert gpu_names._name_index.cache_info().misses == 1
    # The shortlist still finds the near misses the full comparison found.
    assert gpu_name_problems(["H1OO"], in_catalog)[0].endswith("did you mean H100?")
    assert closest_gpu_names("Board 12 X5", in_catalog)[0] == "Board 12 X5"
