"""Comparing two catalogs. Offers are made up for the tests."""

from __future__ import annotations

from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.history import diff
from tests.helpers import item


def csv(*items) -> bytes:
    return csv_bytes(items)


def test_added_removed_changed_largest_first():
    old = {
        "aws": csv(
            item("aws", instance_name="p5.48xlarge", gpu_name="H100", gpu_count=8, price=98.32),
            item("aws", instance_name="g5.xlarge", gpu_name="A10G", price=1.006),
            item("aws", instance_name="g5.xlarge", gpu_name="A10G", price=0.3, spot=True),
            item("aws", instance_name="m5.large", gpu_count=0, price=0.096),
        ),
        "lambdalabs": csv(
            item("lambdalabs", instance_name="gpu_1x_a10", gpu_name="A10", price=0.75)
        ),
    }
    new = {
        "aws": csv(
            item("aws", instance_name="p5.48xlarge", gpu_name="H100", gpu_count=8, price=55.04),
            item("aws", instance_name="g5.xlarge", gpu_name="A10G", price=1.006),
            item("aws", instance_name="g5.xlarge", gpu_name="A10G", price=0.33, spot=True),
            item(
                "aws", instance_name="g5.xlarge", gpu_name="A10G", price=1.1, location="eu-west-1"
            ),
        ),
        "verda": csv(item("verda", instance_name="1H100.80S.30V", gpu_name="H100", price=2.19)),
    }
    d = diff.compare(old, new, old_name="v1", new_name="v2")
    assert [
        (c.offer.instance_name, c.old_price, c.new_price, c.change, c.percent) for c in d.changed
    ] == [
        ("p5.48xlarge", 98.32, 55.04, -43.28, -44.02),
        ("g5.xlarge", 0.3, 0.33, 0.03, 10.0),
    ]
    assert [(o.provider, o.instance_name, o.location) for o in d.added] == [
        ("aws", "g5.xlarge", "eu-west-1"),
        ("verda", "1H100.80S.30V", "us-east-1"),
    ]
    assert [(o.provider, o.instance_name) for o in d.removed] == [
        ("aws", "m5.large"),
        ("lambdalabs", "gpu_1x_a10"),
    ]
    summary = [(g.provider, g.gpu, g.added, g.removed, g.increased, g.decreased) for g in d.summary]
    assert summary == [
        ("aws", "H100", 0, 0, 0, 1),
        ("aws", "A10G", 1, 0, 1, 0),
        ("aws", "-", 0, 1, 0, 0),
        ("lambdalabs", "A10", 0, 1, 0, 0),
        ("verda", "H100", 1, 0, 0, 0),
    ]
    out = d.to_dict()
    assert out["changed"][0]["percent"] == -44.02 and out["changed"][0]["old_price"] == 98.32
    assert out["summary"][0]["largest_change_percent"] == -44.02
    assert out["old_providers"] == ["aws", "lambdalabs"] and out["new_providers"] == [
        "aws",
        "verda",
    ]


def test_same_catalog_has_no_changes():
    data = {"aws": csv(item("aws", price=1.0), item("aws", price=2.0))}  # same key twice: cheapest
    d = diff.compare(data, dict(data), old_name="a", new_name="b")
    assert (d.added, d.removed, d.changed, d.summary) == ([], [], [], [])
