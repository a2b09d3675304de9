"""What matches: the one definition of whether an offer satisfies a filter (pure).

The fast query path in `query/table.py` must give exactly the answers of `matches`; a property
test compares the two over random catalogs and filters.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Container, Iterable
from functools import lru_cache
from typing import Any

from gpuhunt._internal import geography
from gpuhunt._internal.accelerators import KNOWN_ACCELERATORS, accelerators_named
from gpuhunt._internal.form_factor import form_factor_matches
from gpuhunt._internal.gpu_names import (
    VRAM_TOLERANCE,
    gpu_name_spec,
    memory_fits,
    tpu_generation,
)
from gpuhunt._internal.models import (
    AcceleratorInfo,
    AcceleratorVendor,
    CatalogItem,
    NvidiaGPUInfo,
    QueryFilter,
)
from gpuhunt._internal.validate import ensure_checked


def matches(i: CatalogItem, q: QueryFilter) -> bool:
    """Whether the offer `i` satisfies every filter set in `q` (ranges inclusive).

    GPU filters do not apply to GPU-less offers when `q.min_gpu_count == 0`; disk filters do not
    apply to offers with an unknown disk size; `min_cuda` matches NVIDIA GPU offers only, and
    those whose provider does not say their CUDA version; compute capability only matches known
    NVIDIA GPUs. A GPU name that gives the memory ("A100 80GB"), form factor ("H100 SXM") or
    count ("A100:8") matches that GPU with that memory, that form factor or an unknown one, and
    that many GPUs (`gpu_name_wanted`). `country` and `area` drop offers whose location the
    geography table does not know. A filter that cannot be right (a wrong type, a minimum above
    its maximum) raises TypeError/ValueError.
    """
    ensure_checked(q)
    if q.provider is not None and i.provider.lower() not in {p.lower() for p in q.provider}:
        return False
    if not _between(i.price, q.min_price, q.max_price):
        return False
    if q.spot is not None and i.spot != q.spot:
        return False
    if q.location is not None and not location_matches(i.location, q.location):
        return False
    if (q.country is not None or q.area is not None) and not geography.place_matches(
        geography.locate(i.provider, i.location), _upper(q.country), _lower(q.area)
    ):
        return False
    if q.min_cuda is not None:
        # A CUDA version asks for an NVIDIA GPU: CPU-only and other vendors' offers are out.
        if not i.gpu_count or i.gpu_vendor != AcceleratorVendor.NVIDIA:
            return False
        cuda = offer_cuda_version(i.provider_data)
        if cuda is not None and cuda < parse_version(q.min_cuda, "min_cuda"):  # type: ignore[operator]
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
        if q.gpu_name is not None and not gpu_name_wanted(
            i.gpu_name, i.gpu_memory, q.gpu_name, i.gpu_count, lambda: i.form_factor
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


def _upper(values: Iterable[str] | None) -> list[str] | None:
    # `matches` takes filters made by hand too, not only by `make_filter`: "de" means DE.
    return (
        None
        if values is None
        else [v.upper() for v in ([values] if isinstance(values, str) else values)]
    )


def _lower(values: Iterable[str] | None) -> list[str] | None:
    return (
        None
        if values is None
        else [v.lower() for v in ([values] if isinstance(values, str) else values)]
    )


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
    when within `VRAM_TOLERANCE` (7%) of it (drivers and clouds report a little less than the marketed size)."""
    memory_gib = memory_mib / 1024
    known = {a.memory for a in accelerators_named(gpu_name)}
    if known:
        closest = min(known, key=lambda m: abs(m - memory_gib))
        if closest and abs(closest - memory_gib) / closest < VRAM_TOLERANCE:
            return closest
    return round(memory_gib)


def is_nvidia_superchip(gpu_name: str) -> bool:
    """Whether the name is an NVIDIA Grace superchip (GH200, GB200, GB10, ...): GPU plus ARM CPU."""
    return re.match(r"^g[bh]\d+", gpu_name.lower()) is not None


def parse_version(value: Any, what: str = "version") -> tuple[int, int] | None:
    """A MAJOR.MINOR version as people write it - `9`, `"9"`, `9.0`, `"9.0"`, `(9, 0)`, `"12.8"` -
    as a tuple; None stays None. Anything else is a ValueError naming `what` was wrong."""
    if value is None:
        return None
    parts: Any = None
    if isinstance(value, (tuple, list)) and len(value) == 2:
        parts = value
    elif isinstance(value, (int, float, str)) and not isinstance(value, bool):
        text = str(value).strip()
        parts = text.split(".") if re.fullmatch(r"\d+(\.\d+)?", text) else None
        if parts is not None and len(parts) == 1:
            parts.append("0")
    if parts is not None and all(
        (isinstance(p, int) and not isinstance(p, bool)) or (isinstance(p, str) and p.isdigit())
        for p in parts
    ):
        major, minor = int(parts[0]), int(parts[1])
        if 0 <= major < 1000 and 0 <= minor < 1000:
            return major, minor
    raise ValueError(f"Invalid {what} {value!r}: expected MAJOR.MINOR such as 9.0, 9 or (9, 0)")


def parse_compute_capability(value: Any) -> tuple[int, int] | None:
    """`8`, `"8.0"`, `8.0` or `(8, 0)` -> `(8, 0)`; a clear ValueError otherwise."""
    return parse_version(value, "compute capability")


# The key under which an offer's `provider_data` says the newest CUDA version its host runs
# (RunPod: the `minCudaVersion` its prices were quoted for; Vast.ai: the host's `cuda_max_good`).
CUDA_KEY = "cuda_version"


def offer_cuda_version(provider_data: Any) -> tuple[int, int] | None:
    """The CUDA version an offer's host is known to run, or None when its provider does not say
    (or says something unreadable): such offers are kept by a `min_cuda` filter."""
    if not isinstance(provider_data, dict) or CUDA_KEY not in provider_data:
        return None
    try:
        return parse_version(provider_data[CUDA_KEY])
    except ValueError:
        return None


@lru_cache(maxsize=256)
def _location_pattern(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(fnmatch.translate(p) for p in patterns) or "(?!)", re.IGNORECASE)


def location_matches(location: str, patterns: Iterable[str]) -> bool:
    """Whether `location` is one of `patterns`: names or shell-style patterns (`"europe-*"`,
    `"us-central1-?"`), compared case-insensitively."""
    wanted = (patterns,) if isinstance(patterns, str) else tuple(patterns)
    return _location_pattern(wanted).match(location) is not None


def gpu_name_wanted(
    gpu_name: str | None,
    gpu_memory: float | None,
    wanted: Iterable[str],
    gpu_count: int | None = None,
    form_factor: Callable[[], str | None] | None = None,
) -> bool:
    """Whether an offer's GPU is one of the names `wanted`. A name is compared as written
    (case-insensitively); one that also gives the memory ("A100 80GB"), the form factor
    ("H100 SXM") or the count ("A100:8", `gpu_name_spec`) matches that GPU with that memory
    (within `VRAM_TOLERANCE`), that form factor or an unknown one (`form_factor()` gives the
    offer's), and exactly that many GPUs (`gpu_count`)."""
    if gpu_name is None:
        return False
    name = gpu_name.lower()
    generation = tpu_generation(name)  # "v5litepod-8": a slice of the v5litepod generation
    for w in wanted:
        if name == w.lower() or generation == w.lower():
            return True
        spec = gpu_name_spec(w)
        if spec is None or name != spec.name.lower():
            continue
        if spec.memory is not None and not memory_fits(gpu_memory, spec.memory):
            continue
        if spec.gpu_count is not None and gpu_count != spec.gpu_count:
            continue
        if spec.form_factor is not None and not form_factor_matches(
            form_factor() if form_factor is not None else None, spec.form_factor
        ):
            continue
        return True
    return False
