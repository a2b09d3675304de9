"""What matches: the one definition of whether an offer satisfies a filter (pure).

Both `matches` and the fast path (`query/table.py`) read the filter's parsed form
(`query/parsed.py`); a property test compares the two over random catalogs and filters, and
another over the bundled catalog with filters written as people write them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from typing import Any

from gpuhunt._internal import geography, rentable
from gpuhunt._internal.accelerators import get_compute_capability
from gpuhunt._internal.form_factor import form_factor_matches
from gpuhunt._internal.gpu_names import GpuNameSpec, memory_fits, tpu_generation
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem, QueryFilter
from gpuhunt._internal.offer_state import cuda_version_of
from gpuhunt._internal.query import spec
from gpuhunt._internal.query.parsed import ParsedQuery, location_pattern, parsed


def matches(i: CatalogItem, q: QueryFilter | ParsedQuery) -> bool:
    """Whether the offer `i` satisfies every filter set in `q` (ranges inclusive).

    GPU filters do not apply to GPU-less offers when `q.min_gpu_count == 0`; disk filters do not
    apply to offers with an unknown disk size; `min_cuda` matches NVIDIA GPU offers only, and
    those whose provider does not say their CUDA version; compute capability only matches known
    NVIDIA GPUs. A GPU name that gives the memory ("A100 80GB"), form factor ("H100 SXM") or
    count ("A100:8") matches that GPU with that memory, that form factor or an unknown one, and
    that many GPUs (`gpu_name_wanted`). `country` and `area` drop offers whose location the
    geography table does not know; `max_age` drops offers of unknown age. A filter that cannot
    be right (a wrong type, a minimum above its maximum, an unknown provider) raises
    TypeError/ValueError, as `Catalog.query` does for it.
    """
    p = parsed(q)
    if p.providers is not None and i.provider.lower() not in p.providers:
        return False
    if not _between(i.price, p.min_price, p.max_price):
        return False
    if p.spot is not None and i.spot != p.spot:
        return False
    if p.location_pattern is not None and p.location_pattern.match(i.location) is None:
        return False
    if p.wants_place and not geography.place_matches(
        geography.locate(i.provider, i.location),
        None if p.countries is None else list(p.countries),
        None if p.areas is None else list(p.areas),
    ):
        return False
    if p.min_cuda is not None:
        # A CUDA version asks for an NVIDIA GPU: CPU-only and other vendors' offers are out.
        if not i.gpu_count or i.gpu_vendor != AcceleratorVendor.NVIDIA:
            return False
        cuda = cuda_version_of(i.cuda_version)
        if cuda is not None and cuda < p.min_cuda:
            return False
    if p.cpu_arch is not None and p.cpu_arch != i.cpu_arch:
        return False
    if not _between(i.cpu, p.min_cpu, p.max_cpu):
        return False
    if not _between(i.memory, p.min_memory, p.max_memory):
        return False
    if not (p.min_gpu_count == 0 and i.gpu_count == 0):
        if p.gpu_vendor is not None and p.gpu_vendor != i.gpu_vendor:
            return False
        if not _between(i.gpu_count, p.min_gpu_count, p.max_gpu_count):
            return False
        if p.gpu_names is not None and not _gpu_name_matches(i, p):
            return False
        if p.min_compute_capability is not None or p.max_compute_capability is not None:
            if i.gpu_vendor != AcceleratorVendor.NVIDIA or not i.gpu_name:
                return False
            cc = get_compute_capability(i.gpu_name)
            if not cc or not _between(cc, p.min_compute_capability, p.max_compute_capability):
                return False
        has_gpu_memory = i.gpu_count > 0 and i.gpu_memory is not None
        gpu_memory = i.gpu_memory if has_gpu_memory else 0
        if not _between(gpu_memory, p.min_gpu_memory, p.max_gpu_memory):
            return False
        total = i.gpu_count * i.gpu_memory if has_gpu_memory else 0  # type: ignore[operator]
        if not _between(total, p.min_total_gpu_memory, p.max_total_gpu_memory):
            return False
    if i.disk_size is not None and not _between(i.disk_size, p.min_disk_size, p.max_disk_size):
        return False
    if p.allowed_flags is not None and not all(flag in p.allowed_flags for flag in i.flags):
        return False
    for name, value in p.own:
        if not PREDICATES[name](i, value):
            return False
    # A lone offer carries no interruption band (the catalog holds them beside its CSVs,
    # `masks.interruption_mask`): its risk is unknown, and an unknown risk is not a low one.
    if p.max_interruption is not None and i.spot:
        return False
    return _offer_state_matches(i, p, None)


def _offer_state_matches(i: CatalogItem, p: ParsedQuery, now: dt.datetime | None) -> bool:
    """The filters on the library's own fields of an offer: its availability reading, its
    age, whether it is a resale."""
    if p.available is not None and i.available is not p.available:
        return False
    if p.resale is not None and bool(i.resold_from) is not p.resale:
        return False
    if p.max_age is not None:
        seen = i.observed_at
        if seen is None or seen < p.max_age_cutoff(now):
            return False
    return True


def _memory_per_gpu(i: CatalogItem) -> float | None:
    return i.memory / i.gpu_count if i.gpu_count > 0 else None


# The quantities of the spec's `own` range filters, by name: `min_X` keeps an offer whose
# quantity is at least the value, `max_X` at most; None never matches. Its predicate is made of
# it, and the page filters on it too (`site.controls.page_filters`).
QUANTITIES: dict[str, Callable[[CatalogItem], float | None]] = {
    "min_memory_per_gpu": _memory_per_gpu,
}


def _bounded(name: str) -> Callable[[CatalogItem, Any], bool]:
    quantity, at_least = QUANTITIES[name], name.startswith("min_")

    def predicate(i: CatalogItem, bound: Any) -> bool:
        q = quantity(i)
        return q is not None and (q >= bound if at_least else q <= bound)

    return predicate


def _include(i: CatalogItem, value: Any) -> bool:
    # One offer at a time: an enumerated location is out unless asked. That an answer with no
    # listed offer shows its enumerated ones is the answer's rule (`masks.select`).
    return rentable.hidden_kind(i, spec.include_hidden(value)) is None


# The predicates of the spec's `own` filters (`spec.OWN`), by name: `matches` asks each set one.
PREDICATES: dict[str, Callable[[CatalogItem, Any], bool]] = {
    **{name: _bounded(name) for name in QUANTITIES},
    "include": _include,
}


def _between(value: Any, low: Any, high: Any) -> bool:
    return (low is None or value >= low) and (high is None or value <= high)


def _gpu_name_matches(i: CatalogItem, p: ParsedQuery) -> bool:
    assert p.gpu_names is not None
    if i.gpu_name is None:
        return False
    name = i.gpu_name.lower()
    # "v5litepod-8" (GCP names the TPU slice) is a slice of the generation "v5litepod".
    if name in p.gpu_names or tpu_generation(name) in p.gpu_names:
        return True
    return any(
        spec_matches(s, name, i.gpu_memory, i.gpu_count, lambda: i.form_factor) for s in p.gpu_specs
    )


def spec_matches(
    spec: GpuNameSpec,
    name_lower: str,
    gpu_memory: float | None,
    gpu_count: int | None,
    form_factor: Callable[[], str | None] | None,
) -> bool:
    """Whether an offer's GPU (lower-case name) is what a name like "A100 80GB SXM:8" gives."""
    if name_lower != spec.name.lower():
        return False
    if spec.memory is not None and not memory_fits(gpu_memory, spec.memory):
        return False
    if spec.gpu_count is not None and gpu_count != spec.gpu_count:
        return False
    return spec.form_factor is None or form_factor_matches(
        form_factor() if form_factor is not None else None, spec.form_factor
    )


def gpu_name_wanted(
    gpu_name: str | None,
    gpu_memory: float | None,
    wanted: Iterable[str],
    gpu_count: int | None = None,
    form_factor: Callable[[], str | None] | None = None,
) -> bool:
    """Whether an offer's GPU is one of the names `wanted` (a name or a list of them), read as
    a `gpu_name` filter reads them (`query/parsed.py`)."""
    if gpu_name is None:
        return False
    p = parsed(QueryFilter(gpu_name=[wanted] if isinstance(wanted, str) else list(wanted)))
    assert p.gpu_names is not None
    name = gpu_name.lower()
    return (
        name in p.gpu_names
        or tpu_generation(name) in p.gpu_names
        or any(spec_matches(s, name, gpu_memory, gpu_count, form_factor) for s in p.gpu_specs)
    )


def location_matches(location: str, patterns: Iterable[str]) -> bool:
    """Whether `location` is one of `patterns`: names or shell-style patterns (`"europe-*"`,
    `"us-central1-?"`), compared case-insensitively."""
    wanted = (patterns,) if isinstance(patterns, str) else tuple(patterns)
    return location_pattern(wanted).match(location) is not None
