"""The offer spec: one table of an offer's fields, and the readings every format takes from it
(pure: no I/O, no import of the model).

An offer has the fifteen fields of the contract (gpuhunt 0.1.x's `CatalogItem`), and the
library's own: what it knows about the offer beside what the provider said in `provider_data`
(the availability reading, when the price was read, the native price of a converted one, whose
machine a resale is, the host's CUDA version). `provider_data` is the provider's, byte for byte:
the library never writes a key into it. Each entry says the field's type and default, its CSV
column (published after `provider_data`, so gpuhunt 0.1.x, which takes columns by name, reads
the files as before), how the column files hold it, its key in the JSON row, its column in the
observations dataset and its field on the page. `CatalogItem` declares the fields (a test checks
them against this table); the CSV reader and writer, the JSON row (`rows.py`), the dataset and
the page take their names from here.

Inside a `query.table.Table` the library's own fields of an offer ride with its provider_data
text, as one "offer text": the provider's JSON text alone when the library knows nothing, else
that text and each own field's CSV cell joined by `SEP` (a character JSON text cannot hold
outside a string, nor inside one unescaped, and that `check_cell` refuses in a cell). So the
column files, the shapes and every loading path carry them without a column of their own.

Catalogs published before these columns existed wrote the library's keys inside
`provider_data`: a CSV without any of the own columns has them moved out (`migrate`).
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

SEP = "\x1f"


@dataclass(frozen=True)
class DatasetColumn:
    """A field's column in the observations dataset (`history.observations`): its place in
    the files (published files keep their order: readers such as DuckDB match columns of
    several files by position) and its Arrow type, as pyarrow names it."""

    at: int
    arrow: str


@dataclass(frozen=True)
class OfferField:
    """One field of an offer and its name in each format (None: not in that format)."""

    name: str
    type: str  # the Python type, as `CatalogItem` declares it
    default: Any
    csv: str | None  # the CSV column (the provider is the file's name)
    columns: str  # how a column file holds it
    json: str  # the key in the JSON row (`rows.offer_row`)
    dataset: DatasetColumn | None  # its column in the observations dataset, named as the field
    page: str | None  # the page's field (`site/marks.py`)
    own: bool = False  # the library's own (False: the contract's, as the provider gave it)


def _contract(
    name: str,
    type_: str,
    default: Any,
    columns: str,
    page: str | None,
    dataset: DatasetColumn | None = None,
) -> OfferField:
    csv = None if name == "provider" else name
    return OfferField(name, type_, default, csv, columns, name, dataset, page)


def _own(name: str, type_: str, dataset: DatasetColumn | None, page: str | None) -> OfferField:
    return OfferField(name, type_, None, name, "offer text cell", name, dataset, page, own=True)


_NONE = None
_D = DatasetColumn
FIELDS: tuple[OfferField, ...] = (
    _contract("provider", "str", _NONE, "provider code", "provider"),
    _contract("instance_name", "str", _NONE, "string code", "instance_name", _D(2, "string")),
    _contract("location", "str", _NONE, "string code", "location", _D(3, "string")),
    _contract("price", "float", _NONE, "float64", "price", _D(7, "double")),
    _contract("cpu", "int", _NONE, "int64", "cpu"),
    _contract("memory", "float", _NONE, "float64", "memory"),
    _contract("gpu_count", "int", _NONE, "int32", "gpu_count", _D(6, "int16")),
    _contract("gpu_name", "str | None", _NONE, "string code, -1 none", "gpu_name", _D(5, "string")),
    _contract("gpu_memory", "float | None", _NONE, "float64, NaN none", "gpu_memory"),
    _contract("spot", "bool", _NONE, "bool", "spot", _D(4, "bool")),
    _contract("disk_size", "float | None", _NONE, "float64, NaN none", "disk_size"),
    _contract("gpu_vendor", "AcceleratorVendor | None", None, "vendor index", "gpu_vendor"),
    _contract("flags", "list[str]", [], "string code", None),
    _contract("cpu_arch", "CPUArchitecture", "x86", "architecture index", "cpu_arch"),
    _contract("provider_data", "JSONObject", {}, "offer text", None),
    # The library's own. observed_at is a timezone-aware UTC datetime on the offer and ISO 8601
    # text with `Z` in every format (`iso_z`).
    _own("observed_at", "datetime | None", _D(0, "timestamp[s, tz=UTC]"), "observed_own"),
    _own("available", "bool | None", _D(8, "bool"), "available"),
    _own("resold_from", "str | None", None, "resold"),
    _own("currency", "str | None", None, "converted"),
    _own("price_native", "float | None", None, "converted"),
    _own("fx_rate", "float | None", None, "converted"),
    _own("fx_date", "str | None", None, "converted"),
    _own("cuda_version", "str | None", None, None),
    # What kind of fact the offer is (issue 48, `rentable.py`): the share of one GPU it sells
    # (None: whole GPUs); how its location is known ("listed": the provider's own listing sells
    # it there; "enumerated": a third-party catalog lists every type in every region it knows;
    # None: not said); whether it is a marketplace listing of another person's host, meaningful
    # for its provider's listing cadence only (`registry.ProviderSpec.listing_cadence_hours`).
    # Not in the observations dataset (what it records is price and availability over time);
    # on the page as the shapes' `share` and `hidden` columns (`site/data.py`).
    _own("gpu_fraction", "float | None", None, "share"),
    _own("location_source", "str | None", None, "hidden"),
    _own("momentary", "bool | None", None, "hidden"),
)
OWN: tuple[OfferField, ...] = tuple(f for f in FIELDS if f.own)
OWN_NAMES: tuple[str, ...] = tuple(f.name for f in OWN)
CSV_COLUMNS: list[str] = [f.csv for f in FIELDS if f.csv is not None]
OWN_COLUMNS: tuple[str, ...] = tuple(f.csv for f in OWN if f.csv is not None)
JSON_KEYS: tuple[str, ...] = tuple(f.json for f in FIELDS)
NO_OWN: tuple[Any, ...] = (None,) * len(OWN)


# --------------------------------------------------------------------------- cells


def iso_z(when: dt.datetime) -> str:
    """ISO 8601, UTC, whole seconds, with `Z` (`2026-12-02T08:00:00Z`); a naive time is UTC."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return when.astimezone(dt.timezone.utc).replace(microsecond=0, tzinfo=None).isoformat() + "Z"


def parse_time(value: Any) -> dt.datetime | None:
    """An ISO 8601 text as an aware UTC datetime (no zone: UTC); None for anything else."""
    if isinstance(value, dt.datetime):
        when = value
    elif isinstance(value, str) and value:
        try:  # Python 3.10's fromisoformat does not read a trailing "Z"
            when = dt.datetime.fromisoformat(value[:-1] + "+00:00" if value[-1:] == "Z" else value)
        except ValueError:
            return None
    else:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return when.astimezone(dt.timezone.utc)


def _bool(text: str) -> bool:
    low = text.lower()
    if low not in ("true", "false"):
        raise ValueError(f"not a boolean: {text[:10]!r}")
    return low == "true"


def _time(text: str) -> dt.datetime:
    when = parse_time(text)
    if when is None:
        raise ValueError(f"not an ISO 8601 time: {text[:40]!r}")
    return when


def _float(text: str) -> float:
    x = float(text)
    if not math.isfinite(x) or x <= 0:
        raise ValueError(f"not a finite positive number: {text[:40]!r}")
    return x


def _text(text: str) -> str:
    return text


def _share(text: str) -> float:
    x = _float(text)
    if x > 1:
        raise ValueError(f"not a share of one GPU (0 < x <= 1): {text[:40]!r}")
    return x


LOCATION_SOURCES = ("listed", "enumerated")


def _location_source(text: str) -> str:
    if text not in LOCATION_SOURCES:
        raise ValueError(f"not one of {', '.join(LOCATION_SOURCES)}: {text[:40]!r}")
    return text


_READ: dict[str, Callable[[str], Any]] = {
    "available": _bool,
    "momentary": _bool,
    "gpu_fraction": _share,
    "location_source": _location_source,
    "observed_at": _time,
    "price_native": _float,
    "fx_rate": _float,
}


def read_cell(name: str, text: str) -> Any:
    """An own field's value from its CSV cell ("" is None); raises ValueError naming it."""
    if not text:
        return None
    try:
        return _READ.get(name, _text)(text)
    except ValueError as e:
        raise ValueError(f"{name} {e}") from None


def write_cell(name: str, value: Any) -> str:
    """An own field's CSV cell."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        return iso_z(value)
    return str(value)


def check_cell(name: str, text: str) -> str:
    """A cell as read from a CSV, checked to give a value; raises ValueError otherwise."""
    if SEP in text:
        raise ValueError(f"{name} holds a control character")
    read_cell(name, text)
    return text


def item_cells(item: Any) -> list[str]:
    """The own fields' CSV cells of an offer, in `OWN` order."""
    return [write_cell(f.name, getattr(item, f.name, None)) for f in OWN]


# --------------------------------------------------------------------------- offer texts


def join(provider_text: str, cells: list[str]) -> str:
    """The offer text of a provider_data text and the own fields' cells."""
    return SEP.join([provider_text, *cells]) if any(cells) else provider_text


def provider_text(text: str) -> str:
    """The provider_data JSON text of an offer text."""
    cut = text.find(SEP)
    return text if cut < 0 else text[:cut]


def own_values(text: str) -> tuple[Any, ...]:
    """The own fields' values of an offer text, in `OWN` order."""
    if SEP not in text:
        return NO_OWN
    return tuple(read_cell(f.name, c) for f, c in zip(OWN, _cells(text)))


def _cells(text: str) -> list[str]:
    """The own cells of an offer text holding some, as many as `OWN`: a text written before a
    later field existed (a column file of an older version) has fewer, the rest empty."""
    cells = text.split(SEP)[1:]
    return cells + [""] * (len(OWN) - len(cells))


def own_value(text: str, name: str) -> Any:
    """One own field's value of an offer text."""
    if SEP not in text:
        return None
    return own_values(text)[OWN_NAMES.index(name)]


def with_cell(text: str, name: str, cell: str, keep: bool = True) -> str:
    """An offer text with one own field's cell set (`keep`: not when it already has one)."""
    cells = _cells(text) if SEP in text else [""] * len(OWN)
    k = OWN_NAMES.index(name)
    if keep and cells[k]:
        return text
    cells[k] = cell
    return join(provider_text(text), cells)


def check_text(text: str, check_json: Callable[[str], str]) -> str:
    """An offer text (a column file's) checked whole; raises ValueError otherwise."""
    if SEP not in text:
        return check_json(text)
    parts = text.split(SEP)
    if len(parts) > len(OWN) + 1:
        raise ValueError("an offer text with the wrong number of cells")
    check_json(parts[0])
    for f, cell in zip(OWN, parts[1:]):
        read_cell(f.name, cell)
    return text


def offer_text(provider_json: str, get: Callable[[str], str | None]) -> str:
    """The offer text of a CSV row: `provider_json` (checked) and the own columns' cells
    (`get(column)` is None for a column the file does not have). A file with none of them was
    written before they existed: its provider_data has the library's keys moved out."""
    cells = [get(c) for c in OWN_COLUMNS]
    if all(c is None for c in cells):
        return migrate(provider_json)
    return join(provider_json, [check_cell(f.name, c or "") for f, c in zip(OWN, cells)])


# The keys catalogs written before the own columns carried inside provider_data: only these
# move out (a later field never was there, and a provider's own key of that name is its own).
MIGRATED = (
    "observed_at",
    "available",
    "resold_from",
    "currency",
    "price_native",
    "fx_rate",
    "fx_date",
    "cuda_version",
)
_migrated: dict[str, str] = {}  # a memo: catalogs repeat a few provider_data texts many times


def migrate(provider_json: str) -> str:
    """The offer text of an old catalog's provider_data text: the library's keys it carried
    (`available`, `observed_at`, ...) moved out into their cells, the rest written again as
    the writers wrote it (sorted keys, default separators). A value of the wrong type stays."""
    if not any(f'"{name}"' in provider_json for name in MIGRATED):
        return provider_json
    found = _migrated.get(provider_json)
    if found is not None:
        return found
    data = json.loads(provider_json)
    cells = [""] * len(OWN)
    for k, f in enumerate(OWN):
        if f.name not in data or f.name not in MIGRATED:
            continue
        value = data[f.name]
        if f.name == "observed_at":
            value = parse_time(value)
        elif f.name in _READ:
            ok = isinstance(value, bool) if f.name == "available" else _is_number(value)
            value = value if ok else None
        elif not isinstance(value, str) or not value or SEP in value:
            value = None
        if value is not None:
            cells[k] = write_cell(f.name, value)
            del data[f.name]
    # Nothing moved (a name inside a value, a value of the wrong type): the text as it was.
    found = join(json.dumps(data, sort_keys=True), cells) if any(cells) else provider_json
    if len(_migrated) < 100_000:
        _migrated[provider_json] = found
    return found


def _is_number(value: Any) -> bool:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    return ok and math.isfinite(value) and value > 0
