"""The GPU spec table (issue 24): figures as the vendor datasheets publish them, `gpu_spec()`
with the spellings `gpu_name` takes, TFLOPS per dollar of an offer, and no figure where none
is published."""

from __future__ import annotations

import dataclasses

import pytest

import gpuhunt
from gpuhunt import GPU_SPECS, NO_PUBLISHED_FIGURE, GpuSpec, gpu_spec
from gpuhunt._internal.accelerators import accelerators_named
from gpuhunt._internal.form_factor import FORM_FACTORS
from tests.helpers import item


def figures(spec: GpuSpec | None):
    return None if spec is None else (spec.gpu, spec.form_factor, spec.memory, spec.bf16_tflops,
                                      spec.fp8_tflops, spec.memory_bandwidth)  # fmt: skip


@pytest.mark.parametrize(
    "name, form_factor, expected",
    [
        # H100: the figures differ by board, so the board must be known.
        ("H100 SXM", None, ("H100", "sxm", None, 989.5, 1979.0, 3350)),
        ("h100-sxm5", None, ("H100", "sxm", None, 989.5, 1979.0, 3350)),
        ("H100", "sxm", ("H100", "sxm", None, 989.5, 1979.0, 3350)),
        ("H100", "PCIe", ("H100", "pcie", None, 756.5, 1513.0, 2000)),
        ("h100-pcie", None, ("H100", "pcie", None, 756.5, 1513.0, 2000)),
        ("H100 NVL", None, None),  # datasheet figures not confirmed here (UNCHECKED)
        ("H100", None, None),  # SXM, PCIe or NVL: say which
        ("H200", None, ("H200", "sxm", None, 989.5, 1979.0, 4800)),
        ("A100 80GB SXM", None, ("A100", "sxm", 80, 312.0, None, 2039)),
        ("A100-80GB", "pcie", ("A100", "pcie", 80, 312.0, None, 1935)),
        ("A100 40GB PCIe", None, ("A100", "pcie", 40, 312.0, None, 1555)),
        ("A100", None, None),  # four boards, bandwidths differ
        ("NVIDIA L40S", None, ("L40S", None, None, 362.05, 733.0, 864)),
        ("L4", None, ("L4", None, None, 121.0, 242.5, 300)),
        ("Tesla T4", None, ("T4", None, None, 65.0, None, 320)),
        ("GB200 NVL72", None, ("GB200", "nvl72", None, 2500.0, 5000.0, 8000)),
        ("MI300X", None, ("MI300X", "oam", None, 1307.4, 2614.9, 5300)),
        ("A10G", None, None),  # no published figure
        ("RTX 4090", None, None),  # not in the table
        ("NoSuchGPU", None, None),
    ],
)
def test_gpu_spec(name, form_factor, expected):
    assert figures(gpu_spec(name, form_factor)) == expected


def test_gpu_spec_refuses_two_form_factors():
    with pytest.raises(ValueError, match="says form factor 'sxm', not 'pcie'"):
        gpu_spec("H100 SXM", "pcie")
    with pytest.raises(ValueError, match="Unknown form factor 'hbm3'"):
        gpu_spec("H100", "hbm3")
    assert figures(gpu_spec("H100", "SXM5")) == figures(gpu_spec("H100 SXM"))
    assert gpuhunt.gpu_spec is gpu_spec and dataclasses.is_dataclass(GpuSpec)


def test_every_row_names_its_vendor_datasheet_and_is_consistent():
    vendors = ("https://www.nvidia.com/", "https://resources.nvidia.com/", "https://www.amd.com/")
    seen = set()
    for r in GPU_SPECS:
        assert r.source_url.startswith(vendors) and r.source_title, r
        assert accelerators_named(r.gpu), r  # a canonical name offers carry
        assert r.form_factor is None or r.form_factor in FORM_FACTORS, r
        assert r.precision in ("bf16", "fp16") and r.bf16_tflops > 0 and r.memory_bandwidth > 0
        assert r.fp8_tflops is None or r.fp8_tflops >= r.bf16_tflops, r
        assert (r.gpu, r.form_factor, r.memory) not in seen, r
        seen.add((r.gpu, r.form_factor, r.memory))
    # A model whose vendor publishes no figure is absent, never guessed.
    assert not {r.gpu for r in GPU_SPECS} & set(NO_PUBLISHED_FIGURE)
    assert "A10G" in NO_PUBLISHED_FIGURE


@pytest.mark.parametrize(
    "offer, expected",
    [
        # 8 x 989.5 TFLOPS for $23.92/h (Lambda's gpu_8x_h100_sxm5 in the bundled snapshot).
        (dict(instance_name="gpu_8x_h100_sxm5", gpu_name="H100", gpu_count=8, price=23.92),
         8 * 989.5 / 23.92),
        (dict(instance_name="gpu_1x_h100_pcie", gpu_name="H100", price=2.49), 756.5 / 2.49),
        # An A100 is 312 as SXM or PCIe: known even when the board is not.
        (dict(instance_name="gpu_1x_a100", gpu_name="A100", gpu_memory=40.0, price=1.29),
         312 / 1.29),
        # An H100 of unknown board has no one figure.
        (dict(instance_name="h100-box", gpu_name="H100", price=2.0), None),
        (dict(gpu_name="A10G", gpu_memory=24.0, price=1.0), None),
        (dict(gpu_name="RTX4090", gpu_memory=24.0, price=0.3), None),
        (dict(gpu_count=0, price=1.0), None),
        (dict(instance_name="p5.48xlarge", gpu_name="H100", price=0.0), None),
    ],
)  # fmt: skip
def test_tflops_per_dollar(offer, expected):
    got = item(**offer).tflops_per_dollar
    assert got == (pytest.approx(expected) if expected is not None else None)


@pytest.mark.parametrize(
    "name, status, canonical, candidates",
    [
        ("H100", "ambiguous", "H100", {"sxm", "pcie"}),
        ("H100 SXM", "found", "H100", set()),
        ("A10G", "no-figure", "A10G", set()),
        ("H100 NVL", "no-figure", "H100NVL", set()),
        ("NoSuchGPU", "unknown", None, set()),
    ],
)
def test_lookup_tells_ambiguous_from_unknown(name, status, canonical, candidates):
    # gpu_spec() answers None for all but "found"; the lookup says which None it is.
    found = gpuhunt.lookup_gpu_spec(name)
    assert (found.status, found.canonical) == (status, canonical)
    assert {c.form_factor for c in found.candidates} >= candidates
    assert bool(found) is (status == "found") and found.spec == gpu_spec(name)
    assert (found.reason != "") is (status == "no-figure")


def test_gpu_spec_strict_tells_ambiguous_from_unknown():
    # Without strict, None for both (as before: 0.1-compatible callers).
    assert gpu_spec("H100") is None and gpu_spec("Z9000") is None
    with pytest.raises(gpuhunt.AmbiguousGPUError) as ambiguous:
        gpu_spec("H100", strict=True)
    assert "'H100 SXM', 'H100 PCIe'" in str(ambiguous.value)
    assert {(r.gpu, r.form_factor) for r in ambiguous.value.candidates} == {
        ("H100", "sxm"),
        ("H100", "pcie"),
    }
    # Each spelling the message offers picks one row.
    for row in ambiguous.value.candidates:
        assert gpu_spec(f"H100 {row.form_factor}", strict=True) == row
    with pytest.raises(gpuhunt.UnknownGPUError, match="not a GPU name gpuhunt knows") as unknown:
        gpu_spec("H10O", strict=True)
    assert unknown.value.suggestions[0] == "H100"
    with pytest.raises(gpuhunt.UnknownGPUError, match="no published figure") as known:
        gpu_spec("A10G", strict=True)
    assert known.value.suggestions == []
    for error in (gpuhunt.AmbiguousGPUError, gpuhunt.UnknownGPUError):
        assert issubclass(error, gpuhunt.GPUHuntError) and issubclass(error, ValueError)
    assert gpu_spec("B200", strict=True) is not None
