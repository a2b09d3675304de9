"""The sort orders of an answer."""

from __future__ import annotations

from gpuhunt._internal.models import AcceleratorVendor, CatalogItem
from gpuhunt._internal.query import spec
from gpuhunt._internal.query.order import sort_offers


def _offer(name: str, price: float, gpus: int, memory: float | None) -> CatalogItem:
    return CatalogItem(
        provider="aws",
        instance_name=name,
        location="us-east-1",
        price=price,
        cpu=8,
        memory=32,
        gpu_count=gpus,
        gpu_name="A100" if gpus else None,
        gpu_memory=memory,
        spot=False,
        disk_size=None,
        gpu_vendor=AcceleratorVendor.NVIDIA if gpus else None,
    )


OFFERS = [_offer("cpu", 1.0, 0, None), _offer("one", 2.0, 1, 40), _offer("eight", 8.0, 8, 80)]


def _sorted(how: str) -> list[str]:
    offers = list(OFFERS)
    sort_offers(offers, how)
    return [o.instance_name for o in offers]


def test_each_order_of_the_spec():
    assert spec.SORTS[0] == "price"
    assert _sorted("price") == ["cpu", "one", "eight"]  # as given: answers are by price
    assert _sorted("price-per-gpu") == ["eight", "one", "cpu"]
    assert _sorted("gpu-memory") == ["eight", "one", "cpu"]
    assert _sorted("tflops-per-dollar")[-1] == "cpu"  # no figure: last
