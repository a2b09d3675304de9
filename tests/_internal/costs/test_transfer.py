"""A job's total, computed by hand for three providers; unknown parts stay unknown. The hourly
prices other than AWS's p5.48xlarge are arithmetic inputs, not catalog facts."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpuhunt._internal.costs import transfer

GIB = 1.073741824


def _one(provider: str, region: str, price: float, **kw: float) -> transfer.JobCosts:
    return transfer.job_costs([provider], [region], [price], **kw)


def test_aws_us_east_1_by_hand():
    # p5.48xlarge on demand $55.04/h (the price list's row), 10 h, 2,000 GB out, 500 GB gp3.
    c = _one("aws", "us-east-1", 55.04, job_hours=10, egress_gb=2000, storage_gb=500)
    assert c.compute[0] == pytest.approx(550.4)
    assert c.egress[0] == pytest.approx((2000 - 100) * 0.09)  # 171.00, 100 GB free
    assert c.storage[0] == pytest.approx(500 * 0.08 * 10 / 730)  # 0.5479
    assert c.total[0] == pytest.approx(550.4 + 171.0 + 0.547945, abs=1e-6)


def test_gcp_us_central1_by_hand():
    c = _one("gcp", "us-central1", 3.0, job_hours=10, egress_gb=500, storage_gb=100)
    assert c.egress[0] == pytest.approx((500 / GIB - 1) * 0.12)  # 464.66 GiB x $0.12 = 55.76
    assert c.storage[0] == pytest.approx(100 / GIB * 0.10 * 10 / 730)  # 0.1276
    assert c.total[0] == pytest.approx(30 + 55.7592 + 0.12758, abs=1e-3)


def test_runpod_by_hand_free_egress_is_a_recorded_zero():
    small = _one("runpod", "EU-RO-1", 2.69, job_hours=10, egress_gb=2000, storage_gb=500)
    assert small.egress[0] == 0.0
    assert small.storage[0] == pytest.approx(500 * 0.07 * 10 / 730)  # 0.4795
    assert small.total[0] == pytest.approx(26.9 + 0.479452, abs=1e-6)
    big = _one("runpod", "EU-RO-1", 2.69, job_hours=10, storage_gb=1500)
    assert big.storage[0] == pytest.approx(1500 * 0.05 * 10 / 730)
    assert transfer.egress_price("runpod", "x").source.url.startswith("https://docs.runpod.io")  # type: ignore[union-attr]


def test_aws_tiers_cross():
    price = transfer.egress_price("aws", "us-east-1")
    # 100 free, 10,140 at 0.09, then 1,000 at 0.085.
    assert transfer.egress_cost(price, 11_240) == pytest.approx(10_140 * 0.09 + 1_000 * 0.085)
    assert transfer.egress_cost(price, 50) == 0.0


def test_unknown_parts_are_unknown_not_free():
    c = transfer.job_costs(
        ["azure", "lambdalabs", "gcp", "aws"],
        ["westeurope", "us-east-1", "us-central1", "eu-west-1"],
        [1.0, 2.0, 3.0, 4.0],
        job_hours=10,
        egress_gb=2000,
        storage_gb=500,
    )
    assert list(c.compute) == [10.0, 20.0, 30.0, 40.0]
    # Azure: nothing recorded. Lambda: free egress, storage price unknown. GCP: 2,000 GB is past
    # the documented 1 TiB tier. AWS eu-west-1: no entry of its own.
    assert np.isnan(c.egress[0]) and np.isnan(c.storage[0])
    assert c.egress[1] == 0.0 and np.isnan(c.storage[1])
    assert np.isnan(c.egress[2])
    assert np.isnan(c.egress[3]) and np.isnan(c.storage[3])
    assert all(math.isnan(t) for t in c.total)


def test_parts_not_asked_for_cost_nothing_anywhere():
    c = transfer.job_costs(["azure"], ["westeurope"], [1.5], job_hours=4)
    assert (c.compute[0], c.egress[0], c.storage[0], c.total[0]) == (6.0, 0.0, 0.0, 6.0)


def test_every_entry_has_a_source_and_a_date():
    for entry in (*transfer.EGRESS, *transfer.STORAGE):
        assert entry.source.url.startswith("https://")
        assert entry.source.read_on == "2026-12-07"


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"job_hours": 0}, "job_hours"),
        ({"job_hours": 1, "egress_gb": -1}, "egress_gb"),
    ],
)
def test_bad_input_is_named(kw, message):
    with pytest.raises(ValueError, match=message):
        transfer.job_costs(["aws"], ["us-east-1"], [1.0], **kw)


def test_mismatched_lengths_are_named():
    with pytest.raises(ValueError, match="differ in length"):
        transfer.job_costs(["aws", "aws"], ["us-east-1", "x"], [1.0], job_hours=1)
