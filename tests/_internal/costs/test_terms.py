"""Commitment terms: prices equal to their source rows, never invented, never offers."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import pytest

from gpuhunt._internal.costs import terms
from gpuhunt._internal.costs.terms import Term
from gpuhunt._internal.errors import ProviderError

DATA = Path(__file__).parent / "data"
WHEN = datetime(2026, 12, 7, tzinfo=timezone.utc)


def _lines(name: str) -> list[str]:
    return (DATA / name).read_text().splitlines(keepends=True)


def test_aws_real_sample_pairs_hourly_and_fee_rows():
    # The real price list sample has reserved rows for Windows with SQL Server only: select
    # those to check the pairing on real prices (m6id.2xlarge, ca-central-1).
    stats: Counter[str] = Counter()
    found = terms.parse_aws_reserved(
        _lines("aws_ec2_offer_index_sample.csv"),
        source="sample",
        selection={**terms.AWS_SELECTION, "Operating System": "Windows"},
        software=("SQL Std",),
        stats=stats,
    )
    got = {(t.term, t.payment, t.offering_class): (t.hourly, t.upfront) for t in found}
    assert got == {
        ("3y", "partial", "standard"): (0.76984, 20231.0),
        ("1y", "none", "standard"): (1.6614, 0.0),
        ("1y", "all", "standard"): (0.0, 14359.0),
        ("1y", "none", "convertible"): (1.71777, 0.0),
        ("3y", "none", "standard"): (1.55661, 0.0),
        ("1y", "partial", "convertible"): (0.8496, 7443.0),
    }
    # 1yr Partial Upfront standard: its fee row is not in the sample, so no term.
    assert stats["incomplete"] == 1
    assert {(t.instance_name, t.location, t.provider) for t in found} == {
        ("m6id.2xlarge", "ca-central-1", "aws")
    }
    assert found[0].observed_at == datetime(2025, 9, 12, 22, 53, 8, tzinfo=timezone.utc)


def test_aws_default_selection_keeps_linux_shared_only():
    assert terms.parse_aws_reserved(_lines("aws_ec2_offer_index_sample.csv"), source="s") == []


def test_aws_linux_terms_match_their_rows():
    found = terms.parse_aws_reserved(_lines("aws_price_list_g6_xlarge.csv"), source="pl")
    by_region = {t.location: t for t in found}
    assert len(found) == 19
    vantage = json.loads((DATA / "aws_vantage_g6_xlarge_reserved.json").read_text())
    for region, price in vantage.items():
        assert by_region[region].hourly == pytest.approx(price, abs=1e-9)
        assert (by_region[region].term, by_region[region].payment) == ("1y", "none")


def test_aws_file_without_the_columns_is_a_provider_error():
    lines = ["a\n"] * 5 + ['"SKU","TermType"\n']
    with pytest.raises(ProviderError, match="no 'OfferTermCode' column"):
        terms.parse_aws_reserved(lines, source="x")


def test_azure_unit_price_is_the_whole_term():
    page = json.loads((DATA / "azure_retail_prices_reservation_mix.json").read_text())
    found = terms.parse_azure_reservations(page["Items"], source="api", observed_at=WHEN)
    assert [(t.instance_name, t.location, t.term, t.upfront, t.hourly) for t in found] == [
        ("Standard_D8_v4", "westeurope", "1y", 2377.0, 0.0),
        ("Standard_D8_v4", "westeurope", "3y", 4594.0, 0.0),
    ]
    one_year = found[0]
    assert one_year.monthly_cost == pytest.approx(2377.0 / 12)
    assert one_year.effective_hourly == pytest.approx(2377.0 / 8760)


def test_azure_skips_other_currencies_and_keeps_the_lower_meter():
    item = {
        "type": "Reservation",
        "reservationTerm": "1 Year",
        "armSkuName": "Standard_X",
        "armRegionName": "r",
        "currencyCode": "USD",
        "unitPrice": 10.0,
    }
    stats: Counter[str] = Counter()
    found = terms.parse_azure_reservations(
        [item, {**item, "unitPrice": 9.0}, {**item, "currencyCode": "EUR"}],
        source="s",
        observed_at=None,
        stats=stats,
    )
    assert [t.upfront for t in found] == [9.0]
    assert stats["skipped"] == 1


def test_gcp_commitment_sku_is_a_resource_rate():
    page = json.loads((DATA / "gcp_billing_skus_page_2019.json").read_text())
    (rate,) = terms.parse_gcp_commitments(page["skus"])
    assert (rate.region, rate.resource_group, rate.term) == ("northamerica-northeast1", "CPU", "1y")
    assert rate.hourly == pytest.approx(0.021925)


@pytest.mark.parametrize(
    ("change", "message"),
    [({"term": "2y"}, "term '2y'"), ({"payment": "some"}, "payment"), ({"hourly": -1.0}, "hourly")],
)
def test_a_bad_term_names_what_is_wrong(change, message):
    base = dict(
        provider="aws",
        instance_name="g6.xlarge",
        location="us-east-1",
        term="1y",
        payment="none",
        offering_class="standard",
        hourly=0.5,
        upfront=0.0,
        source="s",
        observed_at=None,
    )
    with pytest.raises(ValueError, match=message):
        Term(**{**base, **change})
