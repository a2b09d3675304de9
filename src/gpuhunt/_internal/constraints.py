"""What matches: the one definition of whether an offer satisfies a filter (pure).

The fast query path in `query/table.py` must give exactly the answers of `matches`; a property
test compares the two over random catalogs and filters.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable
from typing import Any

from gpuhunt._internal.accelerators import (
    KNOWN_ACCELERATORS,
    accelerators_named,
)
from gpuhunt._internal.models import (
    AcceleratorInfo,
    AcceleratorVendor,
    CatalogItem,
    NvidiaGPUInfo,
    QueryFilter,
)


def matches(i: CatalogItem, q: QueryFilter) -> bool:
    """Whether the offer `i` satisfies every filter set in `q` (ranges inclusive).

    GPU filters do not apply to GPU-less offers when `q.min_gpu_count == 0`; disk filters do not
    apply to offers with an unknown disk size; compute capability only matches known NVIDIA GPUs.
    """
    if q.provider is not None and i.provider.lower() not in {p.lower() for p in q.provider}:
        return False
    if not _between(i.price, q.min_price, q.max_price):
        return False
    if q.spot is not None and i.spot != q.spot:
        return False
    if q.cpu_arch and q.cpu_arch != i.cpu_arch:
        return False
    if not _between(i.cpu, q.min_cpu, q.max_cpu):
        return False
    if not _between(i.memory, q.min_memory, q.max_memory):
        return False
    if not (q.min_gpu_count == 0 and i.gpu_count == 0):
        if q.gpu_vendor and q.gpu_vendor != i.gpu_vendor:
            return False
        if not _between(i.gpu_count, q.min_gpu_count, q.max_gpu_count):
            return False
        if q.gpu_name is not None and (
            i.gpu_name is None or i.gpu_name.lower() not in {n.lower() for n in q.gpu_name}
        ):
            return False
        if q.min_compute_capability is not None or q.max_compute_capability is not None:
            if i.gpu_vendor != AcceleratorVendor.NVIDIA or not i.gpu_name:
                return False
            cc = get_compute_capability(i.gpu_name)
            if not cc or not _between(cc, q.min_compute_capability, q.max_compute_capability):
                return False
        has_gpu_memory = i.gpu_count > 0 and i.gpu_memory is not None
        gpu_memory = i.gpu_memory if has_gpu_memory else 0
        if not _between(gpu_memory, q.min_gpu_memory, q.max_gpu_memory):
            return False
        total = i.gpu_count * i.gpu_memory if has_gpu_memory else 0  # type: ignore[operator]
        if not _between(total, q.min_total_gpu_memory, q.max_total_gpu_memory):
            return False
    if i.disk_size is not None and not _between(i.disk_size, q.min_disk_size, q.max_disk_size):
        return False
    return q.allowed_flags is None or all(flag in q.allowed_flags for flag in i.flags)


def _between(value: Any, low: Any, high: Any) -> bool:
    return (low is None or value >= low) and (high is None or value <= high)


def find_accelerators(
    names: Iterable[str] | None = None,
    vendors: Container[AcceleratorVendor] | None = None,
) -> list[AcceleratorInfo]:
    """Known accelerators with any of `names` (case-insensitive) and any of `vendors`, in table
    order. `None` does not filter."""
    if names is None:
        candidates: Iterable[AcceleratorInfo] = KNOWN_ACCELERATORS
    else:
        wanted = {n.lower() for n in names}
        candidates = [a for a in KNOWN_ACCELERATORS if a.name.lower() in wanted]
    return [a for a in candidates if vendors is None or a.vendor in vendors]


def get_compute_capability(gpu_name: str) -> tuple[int, int] | None:
    for acc in accelerators_named(gpu_name):
        if isinstance(acc, NvidiaGPUInfo):
            return acc.compute_capability
    return None


def get_gpu_vendor(gpu_name: str | None) -> AcceleratorVendor | None:
    if gpu_name is None:
        return None
    found = accelerators_named(gpu_name)
    return found[0].vendor if found else None


def correct_gpu_memory_gib(gpu_name: str, memory_mib: float) -> int:
    """Whole GiB of a GPU whose memory was reported in MiB, snapped to the known size of that GPU
    when within 7% of it (drivers and clouds report a little less than the marketed size)."""
    memory_gib = memory_mib / 1024
    known = {a.memory for a in accelerators_named(gpu_name)}
    if known:
        closest = min(known, key=lambda m: abs(m - memory_gib))
        if closest and abs(closest - memory_gib) / closest < 0.07:
            return closest
    return round(memory_gib)


def is_nvidia_superchip(gpu_name: str) -> bool:
    """Whether the name is an NVIDIA Grace superchip (GH200, GB200, GB10, ...): GPU plus ARM CPU."""
    return re.match(r"^g[bh]\d+", gpu_name.lower()) is not None


def parse_compute_capability(value: str | tuple[int, int] | None) -> tuple[int, int] | None:
    """`"8.0"` or `(8, 0)` -> `(8, 0)`; a clear ValueError otherwise."""
    if value is None or isinstance(value, tuple):
        return value
    try:
        major, minor = str(value).split(".")
        return int(major), int(minor)
    except ValueError:
        raise ValueError(
            f"Invalid compute capability {value!r}: expected MAJOR.MINOR, e.g. 8.0"
        ) from None
