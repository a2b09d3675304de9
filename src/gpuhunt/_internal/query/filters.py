"""`Catalog.query`'s keywords into a `QueryFilter` (pure): values spelled as callers spell them
(a string or a list, "8.0", 8 or (8, 0), "NVIDIA"), read once into the filter's parsed form
(`query/parsed.py`), which every path evaluates. Bad values raise TypeError/ValueError naming the
keyword."""

from __future__ import annotations

import dataclasses
from typing import Any

from gpuhunt._internal.gpu_names import canonical_gpu_name
from gpuhunt._internal.models import QueryFilter
from gpuhunt._internal.query import spec
from gpuhunt._internal.query.parsed import ParsedQuery, parsed


def make_filter(**given: Any) -> QueryFilter:
    """The filter for `Catalog.query(**given)`; every keyword is a `QueryFilter` field.

    Parsed here, at the door (`parsed(q)` answers from then on without reading it again), and
    its public fields rewritten in their normal spelling for online providers that read them
    (lists for names, the registry's provider names, enums, `(major, minor)` versions, the
    canonical spelling of each GPU name beside the name as given)."""
    q = QueryFilter(**given)
    p = parsed(q)
    # Straight into `__dict__`: the values come from the parsed form, so they need no check,
    # and setting them through `__setattr__` would drop the parsed form just made.
    q.__dict__.update(
        provider=None if p.providers is None else sorted(p.providers),
        cpu_arch=p.cpu_arch,
        gpu_vendor=p.gpu_vendor,
        gpu_name=_names(q.gpu_name, p),
        min_compute_capability=p.min_compute_capability,
        max_compute_capability=p.max_compute_capability,
        location=None if p.locations is None else list(p.locations),
        min_cuda=p.min_cuda,
        country=None if p.countries is None else list(p.countries),
        area=None if p.areas is None else list(p.areas),
    )
    return q


def _names(given: str | list[str] | None, p: ParsedQuery) -> list[str] | None:
    """The GPU names as given, then the canonical spellings the parsed form added."""
    if given is None:
        return None
    out = [given] if isinstance(given, str) else list(given)
    seen = {n.lower() for n in out}
    assert p.gpu_names is not None
    for n in sorted(p.gpu_names - seen):
        out.append(_canonical_spelling(n))
    return out


def _canonical_spelling(lower: str) -> str:
    return canonical_gpu_name(lower) or lower


def with_enumerated(q: QueryFilter) -> QueryFilter | None:
    """`q` with enumerated locations included, when it leaves them out (`include`), else None.
    The answer's rule (docs/decisions.md): where no listed offer matches, the enumerated ones
    are the answer there is, each saying `location_source`; asked of the whole answer, not of
    one offer, so `matches` and each table's mask leave them out and the query asks again."""
    if q.include is None or "enumerated" not in spec.include_hidden(q.include):
        return None
    kept = sorted(set(spec.INCLUDE_KINDS) - spec.include_hidden(q.include) | {"enumerated"})
    return make_filter(**{**_fields(q), "include": kept})


def _fields(q: QueryFilter) -> dict[str, Any]:
    return {f.name: getattr(q, f.name) for f in dataclasses.fields(q)}
