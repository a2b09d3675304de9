"""The orders an answer can be sorted in (`spec.SORTS`: `gpuhunt query --sort`, the servers'
`sort`) (pure)."""

from __future__ import annotations

from gpuhunt._internal.models import CatalogItem


def tflops_per_dollar_order(i: CatalogItem) -> tuple[float, float]:
    """Sort key of `tflops-per-dollar`: most TFLOPS per USD/hour first, offers without a
    published figure last (by price among themselves)."""
    tpd = i.tflops_per_dollar
    return (-tpd if tpd is not None else float("inf"), i.price)


def sort_offers(offers: list[CatalogItem], how: str) -> None:
    """Sort `offers` in place by `how`, one of `spec.SORTS` (an answer is already by price)."""
    if how == "price-per-gpu":
        offers.sort(key=lambda i: (i.price / i.gpu_count) if i.gpu_count else float("inf"))
    elif how == "gpu-memory":
        offers.sort(key=lambda i: (-(i.gpu_memory or 0) * i.gpu_count, i.price))
    elif how == "tflops-per-dollar":
        offers.sort(key=tflops_per_dollar_order)
