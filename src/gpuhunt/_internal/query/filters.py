"""`Catalog.query`'s keywords into a `QueryFilter` (pure): values spelled as callers spell them
(a string or a list, "8.0", 8 or (8, 0), "NVIDIA"), GPU names completed with their canonical
spelling. Bad values raise ValueError naming the keyword."""

from __future__ import annotations

from typing import Any

from gpuhunt._internal import geography, validate
from gpuhunt._internal.constraints import parse_version
from gpuhunt._internal.gpu_names import canonical_gpu_name, gpu_name_spec
from gpuhunt._internal.models import AcceleratorVendor, CPUArchitecture, QueryFilter


def make_filter(**given: Any) -> QueryFilter:
    """The filter for `Catalog.query(**given)`; every keyword is a `QueryFilter` field."""
    q = QueryFilter(**given)
    q.provider = _as_list(q.provider)
    q.cpu_arch = CPUArchitecture.cast(q.cpu_arch) if q.cpu_arch else None
    q.gpu_vendor = AcceleratorVendor.cast(q.gpu_vendor) if q.gpu_vendor else None
    q.gpu_name = _with_canonical_names(_as_list(q.gpu_name))
    q.min_compute_capability = parse_version(q.min_compute_capability, "min_compute_capability")
    q.max_compute_capability = parse_version(q.max_compute_capability, "max_compute_capability")
    q.location = _as_list(q.location)
    q.min_cuda = parse_version(q.min_cuda, "min_cuda")
    country, area = _as_list(q.country), _as_list(q.area)
    q.country = None if country is None else geography.check_values("country", country)
    q.area = None if area is None else geography.check_values("area", area)
    validate.ensure_checked(q)  # the ranges; each field was checked as it was set
    return q


def _as_list(value: str | list[str] | None) -> list[str] | None:
    if value is None:
        return None
    return [value] if isinstance(value, str) else list(value)


def _with_canonical_names(names: list[str] | None) -> list[str] | None:
    """The names as given plus their canonical spelling, so "RTX 4090" finds "RTX4090" offers
    while a name only a provider uses still matches itself."""
    if names is None:
        return None
    out = list(names)
    for n in names:
        if gpu_name_spec(n) is not None:  # raises ValueError for a bad count or form factor
            # "A100 80GB", "H100 SXM", "A100:8": `matches` reads what the name gives; plain
            # "A100" would match every A100.
            continue
        c = canonical_gpu_name(n)
        if c is not None and c.lower() not in {x.lower() for x in out}:
            out.append(c)
    return out
