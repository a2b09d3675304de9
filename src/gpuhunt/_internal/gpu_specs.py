"""What a GPU-hour buys: per GPU model (and form factor, where the figures depend on it), the
dense BF16 Tensor TFLOPS, FP8 where the GPU has it, and the memory bandwidth, each from the
vendor datasheet named in its row (pure data, no I/O).

Figures are the vendors' peak numbers without sparsity. Where a datasheet gives only the
sparse figure ("1,979 TFLOPS*", footnote "with sparsity"), the dense one is half of it, as the
footnotes say ("specifications are one-half lower without sparsity"); the row's `note` says
so. GPUs without BF16 (T4, V100) carry their dense FP16 Tensor figure (`precision="fp16"`).
The URLs are the vendors' own datasheets and product pages. On 2026-12-01 each figure was
checked against stored copies of pages that quote those datasheets (this project has no
network access to the vendors' sites). Models whose figures could not be checked so are left
out (`UNCHECKED`) until someone checks them against the datasheet: a figure users compare
prices by is never shipped on memory alone.

A model absent from `GPU_SPECS` has no figure here: never guessed. `NO_PUBLISHED_FIGURE`
names models whose vendor publishes none, and why.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from gpuhunt._internal.errors import AmbiguousGPUError, UnknownGPUError
from gpuhunt._internal.form_factor import FORM_FACTORS, label, words_form_factor
from gpuhunt._internal.gpu_names import (
    canonical_gpu_name,
    closest_gpu_names,
    gpu_name_spec,
    memory_fits,
)
from gpuhunt._internal.rentable import offer_gpu_fraction


@dataclass(frozen=True)
class GpuSpec:
    """Published peak figures of one GPU model in one form factor (and memory size, where
    the figures depend on it). TFLOPS are dense (no sparsity), bandwidth in GB/s."""

    gpu: str  # canonical name, as in offers' gpu_name
    form_factor: str | None  # None: the figures hold for every form factor of the model
    memory: int | None  # GiB; None: for every memory size of the model
    bf16_tflops: float  # dense BF16 Tensor TFLOPS (FP16 where `precision` says so)
    precision: str  # "bf16", or "fp16" for GPUs without BF16
    fp8_tflops: float | None  # dense FP8 Tensor TFLOPS; None: the GPU has no FP8
    memory_bandwidth: float  # GB/s
    source_title: str
    source_url: str
    note: str = ""


_HALF = "dense = half the datasheet's figure with sparsity, per its footnote"

_H100 = (
    "NVIDIA H100 Tensor Core GPU datasheet",
    "https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet",
)
_H200 = ("NVIDIA H200 Tensor Core GPU datasheet", "https://www.nvidia.com/en-us/data-center/h200/")
_A100 = (
    "NVIDIA A100 Tensor Core GPU datasheet",
    "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
    "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf",
)

GPU_SPECS: list[GpuSpec] = [
    GpuSpec("H100", "sxm", None, 989.5, "bf16", 1979.0, 3350, *_H100, _HALF),
    GpuSpec("H100", "pcie", None, 756.5, "bf16", 1513.0, 2000, *_H100, _HALF + " (2022 edition, H100 PCIe column)"),
    GpuSpec("H200", "sxm", None, 989.5, "bf16", 1979.0, 4800, *_H200, _HALF),
    GpuSpec("A100", "sxm", 40, 312.0, "bf16", None, 1555, *_A100),
    GpuSpec("A100", "sxm", 80, 312.0, "bf16", None, 2039, *_A100),
    GpuSpec("A100", "pcie", 40, 312.0, "bf16", None, 1555, *_A100),
    GpuSpec("A100", "pcie", 80, 312.0, "bf16", None, 1935, *_A100),
    GpuSpec(
        "B200", "sxm", None, 2250.0, "bf16", 4500.0, 7700,
        "NVIDIA HGX B200 specifications", "https://www.nvidia.com/en-us/data-center/hgx/",
        "the individual GPU column of HGX B200 (180GB HBM3E, 7.7TB/s); " + _HALF,
    ),
    GpuSpec(
        "GB200", "nvl72", None, 2500.0, "bf16", 5000.0, 8000,
        "NVIDIA GB200 NVL72 specifications", "https://www.nvidia.com/en-us/data-center/gb200-nvl72/",
        "the individual GPU column of GB200 NVL72 (186GB HBM3E, 8TB/s); " + _HALF,
    ),
    GpuSpec(
        "L40S", None, None, 362.05, "bf16", 733.0, 864,
        "NVIDIA L40S datasheet", "https://www.nvidia.com/en-us/data-center/l40s/",
    ),
    GpuSpec(
        "L40", None, None, 181.05, "bf16", 362.0, 864,
        "NVIDIA L40 datasheet", "https://www.nvidia.com/en-us/data-center/l40/",
    ),
    GpuSpec(
        "L4", None, None, 121.0, "bf16", 242.5, 300,
        "NVIDIA L4 Tensor Core GPU datasheet", "https://www.nvidia.com/en-us/data-center/l4/", _HALF,
    ),
    GpuSpec(
        "A10", None, None, 125.0, "bf16", None, 600,
        "NVIDIA A10 Tensor Core GPU datasheet",
        "https://www.nvidia.com/en-us/data-center/products/a10-gpu/",
    ),
    GpuSpec(
        "A40", None, None, 149.7, "bf16", None, 696,
        "NVIDIA A40 datasheet", "https://www.nvidia.com/en-us/data-center/a40/",
    ),
    GpuSpec(
        "T4", None, None, 65.0, "fp16", None, 320,
        "NVIDIA T4 Tensor Core GPU datasheet", "https://www.nvidia.com/en-us/data-center/tesla-t4/",
        "mixed-precision FP16/FP32 Tensor figure; the T4 has no BF16",
    ),
    GpuSpec(
        "V100", "sxm", None, 125.0, "fp16", None, 900,
        "NVIDIA V100 Tensor Core GPU datasheet", "https://www.nvidia.com/en-us/data-center/v100/",
        "Tensor performance (FP16); the V100 has no BF16",
    ),
    GpuSpec(
        "V100", "pcie", None, 112.0, "fp16", None, 900,
        "NVIDIA V100 Tensor Core GPU datasheet", "https://www.nvidia.com/en-us/data-center/v100/",
        "Tensor performance (FP16); the V100 has no BF16",
    ),
    GpuSpec(
        "MI300X", "oam", None, 1307.4, "bf16", 2614.9, 5300,
        "AMD Instinct MI300X accelerator specifications",
        "https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html",
    ),
    GpuSpec(
        "MI325X", "oam", None, 1307.4, "bf16", 2614.9, 6000,
        "AMD Instinct MI325X accelerator specifications",
        "https://www.amd.com/en/products/accelerators/instinct/mi300/mi325x.html",
    ),
    GpuSpec(
        "MI250X", "oam", None, 383.0, "bf16", None, 3200,
        "AMD Instinct MI250X accelerator specifications",
        "https://www.amd.com/en/products/accelerators/instinct/mi200/mi250x.html",
    ),
]  # fmt: skip

# Models offers carry whose vendor publishes no such figure: never guessed.
NO_PUBLISHED_FIGURE: dict[str, str] = {
    "A10G": "AWS's own variant of the A10 (g5 instances); NVIDIA publishes no datasheet for it",
}

# Models with a published datasheet whose figures no stored copy confirmed on 2026-12-01 (the
# pages found disagree on the H100 NVL's and H200 NVL's bandwidth): no figure until checked.
UNCHECKED: dict[str, str] = {
    "H100NVL": "NVIDIA H100 datasheet, H100 NVL column: not confirmed by a stored copy",
    "H200NVL": "NVIDIA H200 datasheet, H200 NVL column: not confirmed by a stored copy",
    "GH200": "NVIDIA GH200 datasheet: not confirmed by a stored copy",
}


def _rows(gpu: str, form_factor: str | None, memory: float | None) -> list[GpuSpec]:
    """Rows of `gpu` that hold for that form factor and memory (None: any)."""
    name = gpu.lower()
    return [
        r
        for r in GPU_SPECS
        if r.gpu.lower() == name
        and (form_factor is None or r.form_factor is None or r.form_factor == form_factor)
        and (memory is None or r.memory is None or memory_fits(memory, r.memory))
    ]


@dataclass(frozen=True)
class GpuSpecLookup:
    """What `lookup_gpu_spec` found for a name: `status` is "found" (`spec` is the one row),
    "ambiguous" (several rows fit: `candidates` says which, e.g. an "H100" is SXM, PCIe or
    NVL), "no-figure" (a known GPU whose vendor publishes no figure, or one not checked yet:
    `reason` says which) or "unknown" (no row of that GPU: `canonical` is the name it was
    read as, None when the name is no GPU the tables know)."""

    name: str
    status: str  # found, ambiguous, no-figure, unknown
    canonical: str | None
    spec: GpuSpec | None = None
    candidates: tuple[GpuSpec, ...] = ()
    reason: str = ""

    def __bool__(self) -> bool:
        return self.spec is not None


def lookup_gpu_spec(name: str, form_factor: str | None = None) -> GpuSpecLookup:
    """`gpu_spec`'s lookup with its answer typed: found, ambiguous (and the candidates), no
    published figure (and why) or unknown. A form factor in the name and a different
    `form_factor`, or an unknown `form_factor`, is a ValueError."""
    if form_factor is not None:
        given = form_factor
        form_factor = words_form_factor(given) or given.strip().lower()  # "SXM5", "PCIe"
        if form_factor not in FORM_FACTORS:
            allowed = ", ".join(FORM_FACTORS)
            raise ValueError(f"Unknown form factor {given!r} (expected one of: {allowed})")
    spec = gpu_name_spec(name)
    if spec is not None:
        gpu, memory, said = spec.name, spec.memory, spec.form_factor
        canonical: str | None = spec.name
    else:
        canonical = canonical_gpu_name(name)
        gpu, memory, said = canonical or name, None, None
    if said is not None and form_factor is not None and said != form_factor:
        raise ValueError(f"GPU name {name!r} says form factor {said!r}, not {form_factor!r}")
    rows = _rows(gpu, form_factor or said, memory)
    if len(rows) == 1:
        return GpuSpecLookup(name, "found", canonical, rows[0])
    if rows:
        return GpuSpecLookup(name, "ambiguous", canonical, candidates=tuple(rows))
    why = NO_PUBLISHED_FIGURE.get(gpu) or UNCHECKED.get(gpu, "")
    if canonical is not None and why:
        return GpuSpecLookup(name, "no-figure", canonical, reason=why)
    return GpuSpecLookup(name, "unknown", canonical)


def gpu_spec(name: str, form_factor: str | None = None, *, strict: bool = False) -> GpuSpec | None:
    """The published figures of a GPU spelled as `gpu_name` filters take it ("H100 SXM",
    `h100-pcie`, "A100 80GB", "RTX 4090") and, optionally, its form factor ("sxm", "pcie",
    "nvl", ...). None when no row fits, or several do (an "H100" is SXM, PCIe or NVL: say
    which). A form factor in the name and a different `form_factor` is a ValueError.

    `strict=True` tells those two apart: `UnknownGPUError` when no row fits (its message says
    whether the name is unknown or the GPU has no published figure here, and the closest
    models), `AmbiguousGPUError` when several do (its message lists a spelling for each, its
    `candidates` the rows). Both are `GPUHuntError`s and `ValueError`s. `lookup_gpu_spec`
    answers the same as a value instead of an exception."""
    found = lookup_gpu_spec(name, form_factor)
    if found.spec is not None or not strict:
        return found.spec
    if found.candidates:
        raise _ambiguous(name, list(found.candidates))
    raise _unknown(name)


def _spelling(row: GpuSpec) -> str:
    """A name that picks `row` alone: "H100 SXM", "A100 80GB PCIe"."""
    parts = [row.gpu]
    if row.memory is not None:
        parts.append(f"{row.memory}GB")
    if row.form_factor is not None:
        parts.append(label(row.form_factor))
    return " ".join(parts)


def _ambiguous(name: str, rows: list[GpuSpec]) -> AmbiguousGPUError:
    listed = ", ".join(repr(_spelling(r)) for r in rows)
    return AmbiguousGPUError(
        f"GPU name {name!r} fits {len(rows)} rows with different figures: say which ({listed})",
        name=name,
        candidates=rows,
    )


def _unknown(name: str) -> UnknownGPUError:
    canonical = canonical_gpu_name(name)
    known = {r.gpu for r in GPU_SPECS}
    if canonical is None:
        reason = "not a GPU name gpuhunt knows"
    elif canonical in NO_PUBLISHED_FIGURE:
        reason = f"no published figure: {NO_PUBLISHED_FIGURE[canonical]}"
    elif canonical in UNCHECKED:
        reason = f"figures not checked yet: {UNCHECKED[canonical]}"
    elif canonical in known:  # the model is here, not in that form factor or memory size
        sizes = ", ".join(repr(_spelling(r)) for r in GPU_SPECS if r.gpu == canonical)
        reason = f"{canonical} has figures only as {sizes}"
    else:
        reason = f"{canonical} is a known GPU without figures in gpuhunt's table (GPU_SPECS)"
    # Only a name gpuhunt does not know may be a misspelling; a known GPU without a figure is not.
    suggestions = [] if canonical is not None else closest_gpu_names(name, known, n=3)
    suggestions = [s for s in suggestions if s in known]
    hint = f"; did you mean {' or '.join(repr(s) for s in suggestions)}?" if suggestions else ""
    return UnknownGPUError(
        f"No GPU spec for {name!r}: {reason}{hint}",
        name=name,
        reason=reason,
        suggestions=suggestions,
    )


def offer_tflops_per_dollar(item: Any) -> float | None:
    """Dense BF16 TFLOPS of all of an offer's GPUs per USD/hour: the figure of the rows that
    fit its GPU, form factor (unknown: any) and memory, when they all agree (an A100 is 312
    as SXM or PCIe; an H100 of unknown form factor has no one figure, so None). A share of a GPU
    (`rentable.gpu_fraction`: Azure's NV6ads_A10_v5 is 1/6 of an A10) counts as that share."""
    if not item.gpu_count or not item.gpu_name or not item.price or item.price <= 0:
        return None
    fraction = offer_gpu_fraction(item)
    # The whole GPU's figure: a share's memory (4 GB of an A10) must not pick another row.
    memory = None if fraction is not None else item.gpu_memory
    figure = dense_tflops(item.gpu_name, item.form_factor, memory)
    gpus = item.gpu_count * (float(fraction) if fraction is not None else 1.0)
    return None if figure is None else figure * gpus / item.price


@lru_cache(maxsize=1024)
def dense_tflops(gpu: str, form_factor: str | None, memory: float | None) -> float | None:
    """The dense BF16 (or FP16) TFLOPS of one such GPU, when the rows that fit agree."""
    figures = {r.bf16_tflops for r in _rows(gpu, form_factor, memory)}
    return figures.pop() if len(figures) == 1 else None
