"""An offer as a JSON row: what `gpuhunt query --json` and `--csv` print and what the HTTP and
MCP servers answer (pure). The keys and their order come from the offer spec (`offer_spec`),
with the values the library derives placed where callers have always found them."""

from __future__ import annotations

import enum
from typing import Any

from gpuhunt._internal import geography, offer_spec
from gpuhunt._internal.models import CatalogItem

# Derived per-offer values placed after a field's key (None: unknown), then after the contract.
_AFTER_LOCATION = ("country", "area")
_AFTER_PRICE = ("price_per_gpu",)
DERIVED = ("form_factor", "tflops_per_dollar")

_JSON_TYPE = {
    "str": "string",
    "int": "integer",
    "float": "number",
    "bool": "boolean",
    "list[str]": "array",
    "JSONObject": "object",
    "CPUArchitecture": "string",
    "AcceleratorVendor": "string",
    "datetime": "string",
}


def _json_type(type_text: str) -> Any:
    base, _, none = type_text.partition(" | ")
    kind = _JSON_TYPE[base]
    return [kind, "null"] if none else kind


def keys() -> list[str]:
    """The row's keys, in order."""
    out: list[str] = []
    for f in offer_spec.FIELDS:
        if f.own:
            continue
        out.append(f.json)
        out += _AFTER_LOCATION if f.name == "location" else ()
        out += _AFTER_PRICE if f.name == "price" else ()
    return [*out, *DERIVED, *(f.json for f in offer_spec.OWN)]


# JSON types of the row's keys (the OpenAPI document's offer schema).
JSON_TYPES: dict[str, Any] = {
    **{f.json: _json_type(f.type) for f in offer_spec.FIELDS},
    "country": ["string", "null"],
    "area": ["string", "null"],
    "price_per_gpu": ["number", "null"],
    "form_factor": ["string", "null"],
    "tflops_per_dollar": ["number", "null"],
}


def offer_row(i: CatalogItem) -> dict[str, Any]:
    """Every contract field in field order, with `country` and `area` (from the geography
    table; None when it does not place the location) after `location` and `price_per_gpu`
    after `price`, then `form_factor`, `tflops_per_dollar` and the library's own fields
    (`observed_at` as ISO 8601 UTC with `Z`); enums as their values."""
    out: dict[str, Any] = {}
    for f in offer_spec.FIELDS:
        if f.own:
            continue
        value = getattr(i, f.name)
        out[f.json] = value.value if isinstance(value, enum.Enum) else value
        if f.name == "location":
            place = geography.locate(i.provider, i.location)
            out["country"] = place.country if place else None
            out["area"] = place.area if place else None
        elif f.name == "price":
            ppg = i.price_per_gpu  # a share of a GPU counts as that share
            out["price_per_gpu"] = None if ppg is None else round(ppg, 6)
    out["form_factor"] = i.form_factor
    tpd = i.tflops_per_dollar
    out["tflops_per_dollar"] = None if tpd is None else round(tpd, 3)
    for f in offer_spec.OWN:
        value = getattr(i, f.name)
        out[f.json] = offer_spec.iso_z(value) if f.name == "observed_at" and value else value
    return out
