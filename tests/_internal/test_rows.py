"""The JSON row of an offer: the keys callers have always read, in their order, then the new."""

from gpuhunt._internal import rows
from tests.helpers import item


def test_existing_keys_keep_their_order_and_new_ones_follow():
    row = rows.offer_row(item(observed_at="2026-12-02T08:00:00Z", available=True))
    keys = list(row)
    before = [
        "provider", "instance_name", "location", "country", "area", "price", "price_per_gpu",
        "cpu", "memory", "gpu_count", "gpu_name", "gpu_memory", "spot", "disk_size",
        "gpu_vendor", "flags", "cpu_arch", "provider_data", "form_factor",
        "tflops_per_dollar", "observed_at", "available", "resold_from",
    ]  # fmt: skip
    assert keys[: len(before)] == before
    assert keys[len(before) :] == [
        "currency",
        "price_native",
        "fx_rate",
        "fx_date",
        "cuda_version",
        "gpu_fraction",
        "location_source",
        "momentary",
    ]
    assert row["observed_at"] == "2026-12-02T08:00:00Z" and row["available"] is True
    assert row["provider_data"] == {} and row["gpu_vendor"] == "nvidia"
    assert rows.keys() == keys


def test_unknown_values_are_null():
    row = rows.offer_row(item())
    assert row["observed_at"] is None and row["available"] is None
