"""site.usage: what the page prices a usage and a job with (the arithmetic itself is checked
against `Catalog.query_costs` in a real browser: test_browser)."""

from __future__ import annotations

import json

from gpuhunt._internal.costs import transfer
from gpuhunt._internal.costs.terms import Term
from gpuhunt._internal.site import usage


def _doc() -> dict:
    return {
        "providers": ["aws", "lambdalabs"],
        "shapes": {"provider": [0, 1], "instance": ["g6.xlarge", "gpu_1x_a10"]},
        "locations": {"provider": [0, 1], "name": ["us-east-1", "us-west-1"]},
    }


def _term(name: str, location: str) -> Term:
    return Term("aws", name, location, "1y", "none", "standard", 0.5, 0.0, "test", None)


def test_terms_of_shown_machines_only_in_file_order():
    terms = [_term("g6.xlarge", "us-east-1"), _term("g6.xlarge", "eu-west-1"),
             _term("p5.48xlarge", "us-east-1")]  # fmt: skip
    got = usage.page_costs(_doc(), lambda p: terms if p == "aws" else None)
    assert got["terms"] == {"aws|g6.xlarge|us-east-1": [["1y", "none", 0.5, 0.0]]}
    assert got["hours_per_month"] == 730.0


def test_transfer_tables_are_transfers_with_unbounded_tiers_as_null():
    got = usage.page_costs(_doc(), lambda p: None)
    aws = next(e for e in transfer.EGRESS if e.provider == "aws")
    assert got["egress"][0] == ["aws", aws.region, aws.free_gb, [[10240.0, 0.09], [51200.0, 0.085], [153600.0, 0.07], [None, 0.05]]]  # fmt: skip
    assert {e[0] for e in got["egress"]} == {"aws", "lambdalabs"}  # providers shown only
    assert [s[0] for s in got["storage"]] == ["aws"]


def test_a_catalog_without_terms_adds_little():
    got = usage.page_costs(_doc(), lambda p: None)
    assert got["terms"] == {}
    assert len(json.dumps(got)) < 1000
