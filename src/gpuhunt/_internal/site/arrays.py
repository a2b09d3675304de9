"""The numpy work behind the page's document at a million offers (pure, no I/O): a table's
offers as integer codes, grouped and ordered without a sort per offer key, their prices rounded
as Python rounds them, and long numeric columns written as JSON text without a Python object
per value."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from gpuhunt._internal.query import answers
from gpuhunt._internal.query.table import Table, combine

PRICE_DIGITS = 6


class OfferRows(NamedTuple):
    """One table's offers with a price, as integer codes: the page's input from that table."""

    table: Table
    shape: np.ndarray  # each offer's shape number (`answers.prepare`)
    price: np.ndarray
    pair: np.ndarray  # each offer's (provider, location) as one code below `n_pairs`
    n_shapes: int
    n_pairs: int

    def per_provider(self) -> dict[str, int]:
        """Offers per provider name."""
        by_shape = self.table.by_shape
        if by_shape is None:
            return {}
        per_shape = np.bincount(self.shape, minlength=self.n_shapes)
        of_shape = np.asarray(by_shape.provider, dtype=np.int64)
        counts = np.bincount(of_shape, per_shape, minlength=len(self.table.providers))
        return {self.table.providers[p]: int(c) for p, c in enumerate(counts.tolist()) if c}


def offer_rows(tables: Sequence[Table]) -> list[OfferRows]:
    """`OfferRows` of each of `tables`, or of their `combine`d table where one provider's
    offers are in more than one of them (a shape's prices must then be ranked together)."""
    seen: set[str] = set()
    for t in tables:
        names = set(_providers_in(t))
        if names & seen:
            tables = [combine(list(tables))]
            break
        seen |= names
    return [_offer_rows(t) for t in tables]


def _providers_in(table: Table) -> list[str]:
    answers.prepare(table)
    by_shape = table.by_shape
    codes = np.unique(by_shape.provider).tolist() if by_shape is not None else []
    return [table.providers[p] for p in codes]


def _offer_rows(table: Table) -> OfferRows:
    parts = answers.prepare(table)
    shape, price = parts.shape_of_row, np.asarray(table.price, dtype=np.float64)
    location = table.location
    keep = np.isfinite(price)
    if not keep.all():
        shape, price, location = shape[keep], price[keep], location[keep]
    n_locations = max(len(table.locations), 1)
    if table.by_shape is None:  # no offers
        pair = np.zeros(0, dtype=np.int64)
    else:
        provider_of_shape = np.asarray(table.by_shape.provider, dtype=np.int64)
        pair = (provider_of_shape * n_locations)[shape] + location
    n_pairs = len(table.providers) * n_locations
    return OfferRows(table, shape, price, pair, len(parts.shapes), n_pairs)


def first_met(parts: Sequence[tuple[np.ndarray, int, np.ndarray]]) -> list[tuple[int, int]]:
    """For `parts` (per table: a code per row below a count, and the rows' prices), each
    (table, code) held by some row, in the order of the first rows holding them in the rows
    `combine` would join: by price, then table, then row (one table: its rows' order)."""
    tables, codes, firsts, prices = [], [], [], []
    for k, (code, n_codes, price) in enumerate(parts):
        first = first_index(code, n_codes)
        present = np.flatnonzero(first < len(code))
        tables.append(np.full(len(present), k, dtype=np.int64))
        codes.append(present)
        firsts.append(first[present])
        prices.append(price[first[present]])
    if not parts:
        return []
    table, code, row = np.concatenate(tables), np.concatenate(codes), np.concatenate(firsts)
    if len(parts) == 1:
        order = np.argsort(row, kind="stable")
    else:
        order = np.lexsort((row, table, np.concatenate(prices)))
    return list(zip(table[order].tolist(), code[order].tolist()))


def first_index(codes: np.ndarray, n_codes: int) -> np.ndarray:
    """Per code in `range(n_codes)`, the first index in `codes` that holds it (`len(codes)`
    where none does): one pass, no sort."""
    first = np.full(n_codes, len(codes), dtype=np.int64)
    np.minimum.at(first, codes, np.arange(len(codes)))
    return first


def ranks(names: list[str]) -> np.ndarray:
    """Each name's place in sorted order (equal names by position)."""
    out = np.empty(len(names), dtype=np.int64)
    out[np.argsort(np.array(names, dtype=object), kind="stable")] = np.arange(len(names))
    return out


def price_ranks(price: np.ndarray) -> np.ndarray:
    """Each price's rank among the distinct prices. A table's rows come in price order: the
    ranks are then counted in one pass instead of a sort."""
    if bool((price[1:] >= price[:-1]).all()):
        rank = np.zeros(len(price), dtype=np.int64)
        np.cumsum(price[1:] != price[:-1], out=rank[1:])
        return rank
    return np.unique(price, return_inverse=True)[1].reshape(-1).astype(np.int64)


def offer_order(page: np.ndarray, price_rank: np.ndarray, name_rank: np.ndarray) -> np.ndarray:
    """The regional offers' order: by page shape, within one cheapest first (`price_rank`:
    ranks comparable within a page shape), equal prices by location name. The three keys are
    packed into one integer where they fit: one sort of integers instead of a three-key
    `lexsort`, three to six times its speed. Offers equal in all three keys are one location
    at one price: their order changes nothing written."""
    if not len(page):
        return np.zeros(0, dtype=np.int64)
    n_prices, n_names = int(price_rank.max()) + 1, int(name_rank.max()) + 1
    page = page.astype(np.int64)
    if (int(page.max()) + 1) * n_prices * n_names >= 1 << 62:
        return np.lexsort((name_rank, price_rank, page))
    order: np.ndarray = np.argsort((page * n_prices + price_rank) * n_names + name_rank)
    return order


def rounded(prices: np.ndarray) -> np.ndarray:
    """Python's `round(x, 6)` of each price, which rounds the exact decimal value of `x`.
    numpy's `rint(x * 1e6) / 1e6` gives the same double except where `x * 1e6` lies within
    its rounding error of a tie (.5): those few are rounded by Python."""
    scaled = prices * 10.0**PRICE_DIGITS
    out: np.ndarray = np.rint(scaled) / 10.0**PRICE_DIGITS
    # The product's error is below 1.2e-16 of it: a margin of 1e-9 of it catches every tie.
    margin = 1e-9 * (1 + np.abs(scaled))
    near_tie = np.flatnonzero(np.abs(scaled - np.floor(scaled) - 0.5) < margin)
    for k in near_tie.tolist():
        out[k] = float(round(float(prices[k]), PRICE_DIGITS))
    return out


def json_bytes(doc: Any) -> bytes:
    """`json.dumps(doc, separators=(",", ":"), allow_nan=False)` as ASCII bytes, where `doc`
    may hold one-dimensional numpy arrays as values of its dicts: each is written as the JSON
    list of its `tolist()`, the same text, made from the array's digits instead of a Python
    object and a `repr` per value (a million prices: ~1.5 s through `json`)."""
    if isinstance(doc, np.ndarray):
        return _array_json(doc)
    if isinstance(doc, Mapping) and _holds_array(doc):
        parts = []
        for k, v in doc.items():
            if not isinstance(k, str):
                raise TypeError(f"a key of a dict holding arrays is not a string: {k!r}")
            parts.append(json.dumps(k).encode() + b":" + json_bytes(v))
        return b"{" + b",".join(parts) + b"}"
    return json.dumps(doc, separators=(",", ":"), allow_nan=False).encode()


def _holds_array(doc: Mapping[Any, Any]) -> bool:
    return any(
        isinstance(v, np.ndarray) or (isinstance(v, Mapping) and _holds_array(v))
        for v in doc.values()
    )


# Where a float's shortest round-trip text (Python's `repr`, which `json` writes) is its
# rounded decimal digits: below 2**33, a millionth is wider than the double's spacing, so no
# other decimal of at most six places reads back as the same double; from 1e-4 up, `repr`
# writes no exponent.
_FLOAT_LOW, _FLOAT_HIGH = 1e-4, 1e9


def _array_json(a: np.ndarray) -> bytes:
    if a.ndim != 1:
        raise TypeError(f"only one-dimensional arrays are written as JSON lists, not {a.shape}")
    if a.dtype.kind in "iu" and (not len(a) or int(a.min()) >= 0):
        return b"[" + _decimals(a.astype(np.int64), None) + b"]"
    if a.dtype == np.float64:
        scaled = np.rint(a * 10.0**PRICE_DIGITS)
        exact = (
            bool(np.isfinite(a).all())
            and not np.signbit(a).any()
            and bool(((a == 0) | ((a >= _FLOAT_LOW) & (a < _FLOAT_HIGH))).all())
            # The double nearest to its six-place decimal: what `round(x, 6)` gives.
            and bool((scaled / 10.0**PRICE_DIGITS == a).all())
        )
        if exact:
            whole, frac = np.divmod(scaled.astype(np.int64), 10**PRICE_DIGITS)
            return b"[" + _decimals(whole, frac) + b"]"
    return json.dumps(a.tolist(), separators=(",", ":"), allow_nan=False).encode()


def _decimals(whole: np.ndarray, frac: np.ndarray | None) -> bytes:
    """Each of `whole` (non-negative integers) in decimal, then, where `frac` is given, "." and
    its six-digit fraction `frac` without trailing zeros (at least one digit, as "2.0"); joined
    by commas. The digits are laid out in a byte matrix, one row per value, with a zero byte
    at each place not written (a leading zero, a trailing zero of the fraction), and the
    matrix read once without its zero bytes."""
    n = len(whole)
    if n == 0:
        return b""
    width = len(str(int(whole.max())))
    places = PRICE_DIGITS + 1 if frac is not None else 0
    text = np.empty((n, width + places + 1), dtype=np.uint8)
    digit = np.empty(n, dtype=np.uint8)
    rest = whole.astype(np.int32 if width < 10 else np.int64)  # narrower: faster division
    for j in range(width - 1, -1, -1):
        div = rest // 10
        np.subtract(rest, div * 10, out=digit, casting="unsafe")
        digit += ord("0")
        if j < width - 1:
            digit *= rest != 0  # what is left is 0: a leading zero
        text[:, j] = digit
        rest = div
    if frac is not None:
        text[:, width] = ord(".")
        rest = frac.astype(np.int32)
        written = np.zeros(n, dtype=bool)  # a non-zero digit at this place or after it
        for j in range(PRICE_DIGITS, 0, -1):
            div = rest // 10
            np.subtract(rest, div * 10, out=digit, casting="unsafe")
            if j > 1:  # the first fraction digit is always written
                written |= digit != 0
                digit += ord("0")
                digit *= written
            else:
                digit += ord("0")
            text[:, width + j] = digit
            rest = div
    text[:, -1] = ord(",")
    flat = text.reshape(-1)
    out: bytes = flat[flat != 0].tobytes()
    return out[:-1]
