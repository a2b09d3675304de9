"""The library's own answers to what the page filters on, gathered in one place: where a
location is (the geography table), the board's form factor and a GPU's dense TFLOPS (the spec
table). The page shows and filters by exactly these, so its filters mean what the library's do."""

from __future__ import annotations

from gpuhunt._internal import geography
from gpuhunt._internal.gpu_specs import dense_tflops
from gpuhunt._internal.models import CatalogItem
from gpuhunt._internal.rentable import offer_gpu_fraction
from gpuhunt._internal.site.data import Facts


def _place(provider: str, location: str) -> tuple[str | None, str | None]:
    place = geography.locate(provider, location)
    return (place.country, place.area) if place is not None else (None, None)


def _form_factor(item: CatalogItem) -> str | None:
    return item.form_factor


def _tflops(item: CatalogItem) -> float | None:
    """Dense BF16 (FP16 where the GPU has none) TFLOPS of one of the offer's GPUs, as
    `CatalogItem.tflops_per_dollar` counts it: a share of a GPU has the share's."""
    if not item.gpu_count or not item.gpu_name:
        return None
    share = offer_gpu_fraction(item)
    if share is None:
        return dense_tflops(item.gpu_name, item.form_factor, item.gpu_memory)
    whole = dense_tflops(item.gpu_name, item.form_factor, None)
    return None if whole is None else whole * float(share)


def library_facts() -> Facts:
    return Facts(place=_place, form_factor=_form_factor, tflops=_tflops)
