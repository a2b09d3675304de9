"""The OpenAPI 3 document of `gpuhunt serve` (pure): its parameters come from the same table
the server reads requests with (`parameters.table()`), and an offer's fields from the columns
`gpuhunt query --csv` writes (`rows.keys`), so neither can drift from the code."""

from __future__ import annotations

from typing import Any

from gpuhunt._internal.rows import JSON_TYPES
from gpuhunt._internal.rows import keys as row_keys
from gpuhunt._internal.serve import parameters
from gpuhunt._version import __version__

# JSON types of the offer fields (`rows.offer_row`, from the offer spec).
_FIELD_TYPES: dict[str, Any] = JSON_TYPES


def _offer_schema() -> dict[str, Any]:
    props: dict[str, Any] = {}
    for name in row_keys():
        kind = _FIELD_TYPES.get(name)
        props[name] = {} if kind is None else {"type": kind}
    props["locations"] = {
        "type": "array",
        "items": {"type": "string"},
        "description": "with all_regions=false only: every location selling it, cheapest first",
    }
    return {"type": "object", "properties": props}


def _parameters(table: dict[str, parameters.Param] | None = None) -> list[dict[str, Any]]:
    out = []
    for p in (parameters.table() if table is None else table).values():
        entry: dict[str, Any] = {
            "name": p.name,
            "in": "query",
            "required": False,
            "schema": p.schema(),
        }
        if p.help:
            entry["description"] = p.help
        if p.repeatable:
            entry["style"], entry["explode"] = "form", True
        out.append(entry)
    return out


_ERROR = {"$ref": "#/components/responses/Error"}
_CATALOG = {
    "type": "object",
    "properties": {"version": {"type": "string"}, "source": {"type": "string"}},
}


def document() -> dict[str, Any]:
    """The OpenAPI 3.1 document."""

    def get(summary: str, description: str, schema: Any, params: bool) -> dict[str, Any]:
        op: dict[str, Any] = {
            "summary": summary,
            "description": description,
            "responses": {
                "200": {
                    "description": "the answer",
                    "headers": {
                        "ETag": {"schema": {"type": "string"}},
                        "Cache-Control": {"schema": {"type": "string"}},
                    },
                    "content": {"application/json": {"schema": schema}},
                },
                "304": {"description": "not modified (If-None-Match named the ETag)"},
                "400": _ERROR,
                "405": _ERROR,
                "503": _ERROR,
            },
        }
        if params:
            op["parameters"] = [
                {"$ref": f"#/components/parameters/{p['name']}"} for p in _parameters()
            ]
            op["responses"]["422"] = _ERROR
        return {"get": op}

    offers = {
        "type": "object",
        "properties": {
            "offers": {"type": "array", "items": {"$ref": "#/components/schemas/Offer"}},
            "total": {"type": "integer", "description": "every match, before limit"},
            "catalog": _CATALOG,
        },
    }
    explain = {
        "type": "object",
        "properties": {"explanation": {"type": "object"}, "catalog": _CATALOG},
    }
    history = get(
        "The cheapest price per day, per GPU model or instance",
        "`gpuhunt history --json`: from the price history published with the catalog (the "
        "loaded version's unless `version` is given).",
        {"type": "object"},
        False,
    )
    history["get"]["parameters"] = _parameters(parameters.history_table())
    history["get"]["responses"]["422"] = _ERROR
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "gpuhunt",
            "version": __version__,
            "description": "Cloud GPU and CPU offers with hourly prices (USD per hour), from "
            "one catalog across providers. Parameters mirror `gpuhunt query`'s options.",
        },
        "paths": {
            "/v1/offers": get(
                "Offers matching the filters, cheapest first",
                "The rows `gpuhunt query --json` prints for the same options, in the same "
                "order; all_regions=false gives one row per distinct offer.",
                offers,
                True,
            ),
            "/v1/explain": get(
                "Why the filters match what they match",
                "Offers left after each filter, the filter that removed the last, the "
                "cheapest near misses, who lists a GPU the catalog has no offer of.",
                explain,
                True,
            ),
            "/v1/history": history,
            "/v1/status": get(
                "The catalog being served",
                "Version, source, load time, offers per provider, errors.",
                {"type": "object"},
                False,
            ),
            "/openapi.json": get("This document", "OpenAPI 3.1", {"type": "object"}, False),
        },
        "components": {
            "parameters": {p["name"]: p for p in _parameters()},
            "schemas": {
                "Offer": _offer_schema(),
                "Error": {
                    "type": "object",
                    "properties": {
                        "error": {
                            "type": "object",
                            "properties": {
                                "status": {"type": "integer"},
                                "parameter": {"type": ["string", "null"]},
                                "message": {"type": "string"},
                            },
                        }
                    },
                },
            },
            "responses": {
                "Error": {
                    "description": "what was wrong, naming the parameter",
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/Error"}}
                    },
                }
            },
        },
    }
