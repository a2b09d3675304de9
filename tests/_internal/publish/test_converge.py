"""The converging gate's bookkeeping (`publish.converge`): an availability flip is never a
change for it, and a refused change waits as a candidate until collections agree."""

from __future__ import annotations

from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem
from gpuhunt._internal.publish import converge, gate
from gpuhunt._internal.publish.build import Collected


def _offers(available: bool | None, price: float = 2.99) -> bytes:
    items = []
    for n, location in enumerate(["us-east-1", "us-west-1", "eu-west-1", "me-west-1"]):
        data = {} if available is None else {"available": available if n % 2 else not available}
        items.append(
            CatalogItem(
                provider="lambdalabs",
                instance_name=f"gpu_{n + 1}x_h100_sxm5",
                location=location,
                price=price * (n + 1),
                cpu=26,
                memory=225.0,
                gpu_count=n + 1,
                gpu_name="H100",
                gpu_memory=80.0,
                spot=False,
                disk_size=None,
                gpu_vendor=AcceleratorVendor.NVIDIA,
                provider_data=data,
            )
        )
    return csv_bytes(items)


def test_an_availability_flip_is_no_change_for_the_gate():
    before, flipped, gone = _offers(True), _offers(False), _offers(None)
    assert before != flipped  # the bytes differ...
    assert gate.judge("lambdalabs", before, flipped).reason is None  # ...the offers do not
    assert gate.judge("lambdalabs", before, gone).reason is None
    # A real price change still is one.
    assert gate.judge("lambdalabs", before, _offers(True, price=29.9)).reason is not None


def test_collections_that_differ_only_in_availability_agree_and_confirm_a_change():
    # Prices x3 (beyond the gate's x2, within its x10 hard limit): refused, kept as pending.
    before, tripled = _offers(True), _offers(True, price=8.97)
    needed = 3  # lambdalabs' `confirmations` in the registry
    candidates: dict[str, bytes] = {}
    entry: dict[str, object] | None = None
    for n, available in enumerate([True, False, None], start=1):
        got = Collected(_offers(available, price=8.97), f"2026-12-02T0{n}:00:00+00:00")
        verdict = gate.judge("lambdalabs", before, got.data)
        assert verdict.reason is not None and verdict.broken is None
        why, pending, evidence = converge.confirm(
            "lambdalabs", f"V{n}", got, 4, verdict, entry, candidates
        )
        if n < needed:
            # Each later collection agrees with the last though every reading flipped.
            assert why is not None and evidence is None and pending is not None
            assert len(pending["collections"]) == n
            entry, candidates = {"pending": pending}, {"lambdalabs": got.data}
        else:
            assert why is None and evidence is not None and len(evidence) == needed
    assert tripled != before
