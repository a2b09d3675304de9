"""Sizing vCPUs, RAM and disk for marketplaces where the renter picks them (pure, no I/O).

TensorDock and CUDO Compute sell a host's GPUs, vCPUs, RAM and disk separately. An offer is
therefore a *choice* of amounts, and the cheapest choice is nonsense (an A100 with 2 GB of RAM).
Both providers size their offers with `size_resources`, so the rules below hold for both.

**GPU count.** `smallest_gpu_count` takes the fewest GPUs the filter allows: at least
`min_gpu_count` (default 1) and enough for `min_total_gpu_memory`, at most what the host has free
and what `max_gpu_count` / `max_total_gpu_memory` allow. One offer per host and GPU model.

**Bounds.** Every amount lies between a lower bound, the largest of the filter's minimum, the
host's own minimum (e.g. the disk an OS image needs) and, for vCPUs, the host's minimum vCPUs per
GPU; and an upper bound, the smallest of the filter's maximum, what the host has free and, for
vCPUs, the host's maximum vCPUs per GPU. Bounds are rounded inwards to the host's step (TensorDock
sells even amounts of vCPUs and RAM). Empty bounds mean no offer.

**`balance=True`** (what orchestrators pass). Amounts the filter leaves open are sized for the GPUs:

- RAM: `RAM_PER_GPU_MEMORY` (2) GB per GB of total GPU memory, so a model that fits in VRAM can
  be staged in RAM (1x A100 80GB -> 160 GB).
- vCPUs: one per `RAM_PER_VCPU` (6) GB of that RAM, and at least `MIN_VCPUS_PER_GPU` (2) per GPU
  to feed each GPU (1x A100 80GB -> 27 vCPUs; 28 where vCPUs are sold in pairs).
- Disk: the larger of RAM and total GPU memory, so a checkpoint of either fits.
- Without GPUs: `CPU_ONLY_RAM_PER_VCPU` (4) GB of RAM per vCPU, counted from whichever of the
  two minimums asks for more (min_memory=64 -> 16 vCPUs; min_cpu=8 -> 32 GB).

Each target is raised to the lower bound and capped at the upper bound: a filter's minimum
always wins over a smaller target, a filter's maximum or the host's free amount over a larger one.

**`balance=False`**: the lower bounds as they are, i.e. the minimums asked for (or the host's
minimums when the filter leaves them open).

**Ratios.** Some hosts (CUDO) only allow vCPUs per GB of RAM within a range. If the chosen
amounts fall outside it, vCPUs move to the nearest count the range allows for that RAM (within
the vCPU bounds); if there is none, RAM moves to the nearest amount within its bounds for which
there is (larger amounts first at equal distance); if there is none either, no offer.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from gpuhunt._internal.models import QueryFilter

RAM_PER_GPU_MEMORY = 2.0
RAM_PER_VCPU = 6.0
MIN_VCPUS_PER_GPU = 2
CPU_ONLY_RAM_PER_VCPU = 4.0

# Ratios computed in floating point (0.259109 vCPU per GiB, ...) must not fail on the last bit.
_EPS = 1e-9


@dataclass(frozen=True)
class HostLimits:
    """What one host (or machine type) can give to one VM, and in which units."""

    max_cpu: int
    max_memory: float
    max_disk: float | None = None  # None: the provider does not say
    min_cpu: int = 1
    min_memory: float = 1
    min_disk: float = 0
    cpu_step: int = 1
    memory_step: int = 1
    # (min, max) vCPUs per GB of RAM and per GPU; max may be math.inf
    cpu_per_memory: tuple[float, float] | None = None
    cpu_per_gpu: tuple[float, float] | None = None


@dataclass(frozen=True)
class Resources:
    cpu: int
    memory: int
    disk: int


def smallest_gpu_count(available: int, gpu_memory: float | None, q: QueryFilter) -> int | None:
    """The fewest GPUs of one model the filter allows on a host with `available` free, or None."""
    low = q.min_gpu_count if q.min_gpu_count else 1
    if q.min_total_gpu_memory and gpu_memory:
        low = max(low, math.ceil(q.min_total_gpu_memory / gpu_memory - _EPS))
    high = available
    if q.max_gpu_count is not None:
        high = min(high, q.max_gpu_count)
    if q.max_total_gpu_memory is not None and gpu_memory:
        high = min(high, math.floor(q.max_total_gpu_memory / gpu_memory + _EPS))
    return low if low <= high else None


def size_resources(
    gpu_count: int,
    gpu_memory: float | None,
    host: HostLimits,
    q: QueryFilter | None = None,
    balance: bool = True,
) -> Resources | None:
    """vCPUs, RAM (GB) and disk (GB) for `gpu_count` GPUs of `gpu_memory` GB each on `host`,
    following the rules in this module's docstring; None when the filter and the host leave
    nothing to offer."""
    q = q or QueryFilter()
    cpu_lo, cpu_hi = _cpu_bounds(gpu_count, host, q)
    mem_lo = _round_up(_max_of(q.min_memory, host.min_memory), host.memory_step)
    mem_hi = _round_down(_min_of(q.max_memory, host.max_memory), host.memory_step)
    disk_lo = math.ceil(_max_of(q.min_disk_size, host.min_disk) - _EPS)
    disk_hi = _round_down(_min_of(q.max_disk_size, host.max_disk), 1)
    if cpu_lo > cpu_hi or mem_lo > mem_hi or disk_lo > disk_hi:
        return None

    if balance:
        total_gpu_memory = gpu_count * (gpu_memory or 0)
        if gpu_count:
            memory = _clamp(
                _round_up(RAM_PER_GPU_MEMORY * total_gpu_memory, host.memory_step), mem_lo, mem_hi
            )
            cpu_target = max(MIN_VCPUS_PER_GPU * gpu_count, math.ceil(memory / RAM_PER_VCPU - _EPS))
            cpu = _clamp(_round_up(cpu_target, host.cpu_step), cpu_lo, cpu_hi)
        else:
            cpu_target = math.ceil(mem_lo / CPU_ONLY_RAM_PER_VCPU - _EPS)
            cpu = _clamp(_round_up(cpu_target, host.cpu_step), cpu_lo, cpu_hi)
            memory = _clamp(
                _round_up(CPU_ONLY_RAM_PER_VCPU * cpu, host.memory_step), mem_lo, mem_hi
            )
        disk = _clamp(math.ceil(max(memory, total_gpu_memory) - _EPS), disk_lo, disk_hi)
    else:
        cpu, memory, disk = cpu_lo, mem_lo, disk_lo

    if host.cpu_per_memory is not None:
        fitted = _fit_ratio(cpu, memory, host, (cpu_lo, cpu_hi), (mem_lo, mem_hi))
        if fitted is None:
            return None
        cpu, memory = fitted
    return Resources(cpu=cpu, memory=memory, disk=disk)


def _cpu_bounds(gpu_count: int, host: HostLimits, q: QueryFilter) -> tuple[int, int]:
    low = _max_of(q.min_cpu, host.min_cpu)
    high = _min_of(q.max_cpu, host.max_cpu)
    if gpu_count and host.cpu_per_gpu is not None:
        per_gpu_min, per_gpu_max = host.cpu_per_gpu
        low = max(low, math.ceil(gpu_count * per_gpu_min - _EPS))
        if math.isfinite(per_gpu_max):
            high = min(high, math.floor(gpu_count * per_gpu_max + _EPS))
    return _round_up(low, host.cpu_step), _round_down(high, host.cpu_step)


def _fit_ratio(
    cpu: int,
    memory: int,
    host: HostLimits,
    cpu_bounds: tuple[int, int],
    mem_bounds: tuple[int, int],
) -> tuple[int, int] | None:
    assert host.cpu_per_memory is not None
    ratio_lo, ratio_hi = host.cpu_per_memory
    (cpu_lo, cpu_hi), (mem_lo, mem_hi) = cpu_bounds, mem_bounds
    # Only RAM amounts that leave some vCPU count in bounds are worth trying.
    if ratio_hi > 0:
        mem_lo = max(mem_lo, _round_up(cpu_lo / ratio_hi, host.memory_step))
    if ratio_lo > 0:
        mem_hi = min(mem_hi, _round_down(cpu_hi / ratio_lo, host.memory_step))
    for candidate in _nearest_first(memory, mem_lo, mem_hi, host.memory_step):
        lowest = max(cpu_lo, _round_up(candidate * ratio_lo, host.cpu_step))
        highest = min(cpu_hi, _round_down(candidate * ratio_hi, host.cpu_step))
        if lowest <= highest:
            return _clamp(cpu, lowest, highest), candidate
    return None


def _nearest_first(start: int, low: int, high: int, step: int) -> Iterator[int]:
    """`start` clamped into [low, high], then the other multiples of `step` by distance,
    larger before smaller."""
    start = _clamp(start, low, high)
    up, down = start, start - step
    while up <= high or down >= low:
        if up <= high:
            yield up
            up += step
        if down >= low:
            yield down
            down -= step


def _max_of(*values: float | None) -> float:
    return max(v for v in values if v is not None)


def _min_of(*values: float | None) -> float:
    present = [v for v in values if v is not None]
    return min(present) if present else math.inf


def _round_up(value: float, step: int) -> int:
    return math.ceil(value / step - _EPS) * step


def _round_down(value: float, step: int) -> int:
    if math.isinf(value):
        return 2**62
    return math.floor(value / step + _EPS) * step


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(value, high))
