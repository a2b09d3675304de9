"""The OpenAPI document: made from the parameter table and the `--json` columns."""

from __future__ import annotations

import json

from gpuhunt._internal.cli import render
from gpuhunt._internal.serve import openapi, parameters


def test_every_parameter_is_documented_with_its_schema():
    doc = openapi.document()
    documented = doc["components"]["parameters"]
    assert list(documented) == list(parameters.table())
    for name, p in parameters.table().items():
        assert documented[name]["schema"] == p.schema() and documented[name]["in"] == "query"
    assert documented["gpu"]["schema"]["type"] == "array" and documented["gpu"]["explode"]
    assert documented["sort"]["schema"]["enum"][0] == "price"
    assert documented["limit"]["schema"]["default"] == 100
    for path in ("/v1/offers", "/v1/explain"):
        refs = [r["$ref"].rsplit("/", 1)[1] for r in doc["paths"][path]["get"]["parameters"]]
        assert refs == list(parameters.table())


def test_offer_fields_are_the_json_rows_and_every_ref_resolves():
    doc = openapi.document()
    offer = doc["components"]["schemas"]["Offer"]["properties"]
    assert list(offer) == [*render.csv_header(), "locations"]
    assert all("type" in v for v in offer.values())  # a new --json field gets a type here
    text = json.dumps(doc)
    for ref in {r.split('"')[0] for r in text.split('"$ref": "#/')[1:]}:
        node = doc
        for part in ref.split("/"):
            node = node[part]
