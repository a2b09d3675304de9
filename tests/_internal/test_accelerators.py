import pytest

from gpuhunt import KNOWN_ACCELERATORS, canonical_gpu_name


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
