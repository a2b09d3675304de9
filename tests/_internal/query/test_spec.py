"""The query spec drives every door: `QueryFilter`, `Catalog.query`, the CLI's options, the HTTP
parameters, the OpenAPI document and the MCP tools' input schemas all list its filters, with
its names, types, choices and documentation."""

from __future__ import annotations

import argparse
import dataclasses
import inspect

import pytest

from gpuhunt._internal import validate
from gpuhunt._internal.catalog import Catalog
from gpuhunt._internal.cli import commands
from gpuhunt._internal.cli import query as cli_query
from gpuhunt._internal.models import QueryFilter
from gpuhunt._internal.query import masks, match, spec
from gpuhunt._internal.query.parsed import ParsedQuery, parsed
from gpuhunt._internal.serve import openapi, parameters


def test_query_filter_fields_are_the_spec_s():
    # In QueryFilter's own order (0.1.x's, then each added one at the end), the spec's being
    # the order `gpuhunt query --help` lists them.
    names = [f.name for f in dataclasses.fields(QueryFilter)]
    assert sorted(names) == sorted(spec.NAMES) and names[-1] == "include"
    assert all(f.default is None for f in dataclasses.fields(QueryFilter))


def test_catalog_query_keywords_are_the_spec_s_in_query_filter_s_order():
    params = inspect.signature(Catalog.query).parameters
    keywords = [n for n, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    assert keywords == [f.name for f in dataclasses.fields(QueryFilter)]
    assert sorted(keywords) == sorted(spec.NAMES)
    assert all(params[n].default is None for n in keywords)


def test_every_check_kind_is_known_and_every_own_filter_has_its_predicate_and_mask():
    assert {
        o.check for o in (*spec.FILTERS, *spec.COSTS, *spec.VIEWS, *spec.HISTORY)
    } <= spec.CHECKS
    own = {o.name for o in spec.OWN}
    assert own == set(match.PREDICATES) == set(masks.MASKS)
    # The others are read into ParsedQuery fields of their own (or as given).
    fields = {f.name for f in dataclasses.fields(ParsedQuery)}
    assert own.isdisjoint(fields)


def test_validate_s_sets_come_from_the_spec():
    assert {o.name for o in spec.FILTERS if o.check == "count"} == validate.COUNTS
    assert "min_memory_per_gpu" in validate.SIZES
    assert validate.RANGES == spec.RANGES
    assert "compute_capability" in spec.RANGES and "cuda" not in spec.RANGES


def test_an_own_filter_reaches_the_parsed_form():
    assert parsed(QueryFilter(min_memory_per_gpu=16)).own == (("min_memory_per_gpu", 16),)
    assert parsed(QueryFilter()).own == ()


def _cli_actions() -> dict[str, list[argparse.Action]]:
    p = commands.Parser(prog="gpuhunt query")
    cli_query.arguments(p)
    out: dict[str, list[argparse.Action]] = {}
    for a in p._actions:
        out.setdefault(a.dest, []).append(a)
    return out


def test_the_cli_options_are_the_spec_s():
    actions = _cli_actions()
    for o in (*spec.FILTERS, *spec.COSTS, *spec.VIEWS):
        got = actions[o.name]
        assert tuple(s for a in got for s in a.option_strings) == o.labels, o.name
        if o.switches:
            assert [a.const for a in got] == [s.value for s in o.switches]
            assert [a.help for a in got] == [s.doc for s in o.switches]
            continue
        (a,) = got
        assert a.help == o.doc and a.metavar == o.metavar, o.name
        assert (tuple(a.choices) if a.choices else None) == o.choices
        assert isinstance(a, argparse._AppendAction) == o.repeatable
        assert a.default == o.default


def test_the_http_parameters_are_the_spec_s():
    table = parameters.table()
    wanted = [o.wire for o in (*spec.FILTERS, *spec.COSTS, *spec.VIEWS)]
    assert list(table) == [*wanted, "limit"]
    for o in (*spec.FILTERS, *spec.COSTS, *spec.VIEWS):
        p = table[o.wire]
        assert (p.dest, p.kind, p.repeatable, p.choices) == (
            o.name,
            o.wire_type,
            o.repeatable,
            o.choices,
        )
        if o.switches:
            assert p.consts == tuple(s.value for s in o.switches)
        else:
            assert p.help == (o.doc or "").replace("--", "").replace("-area", "_area")
    assert [p.name for p in parameters.history_table().values()] == [o.wire for o in spec.HISTORY]


def test_the_openapi_document_and_the_mcp_schemas_are_the_spec_s():
    doc = openapi.document()
    offers = doc["paths"]["/v1/offers"]["get"]["parameters"]
    names = [ref["$ref"].rsplit("/", 1)[1] for ref in offers]
    assert names == [*(o.wire for o in (*spec.FILTERS, *spec.COSTS, *spec.VIEWS)), "limit"]
    schemas = doc["components"]["parameters"]
    for o in (*spec.FILTERS, *spec.COSTS, *spec.VIEWS):
        schema = schemas[o.wire]["schema"]
        kind = schema["items"]["type"] if o.repeatable else schema["type"]
        assert kind == o.wire_type and (schema["type"] == "array") == o.repeatable
    pytest.importorskip("mcp")
    from gpuhunt._internal.serve import mcp

    props = mcp.input_schema()["properties"]
    assert list(props) == names
    assert all(props[n] == schemas[n]["schema"] for n in names)


def test_the_new_filter_is_on_every_door():
    # Added through its spec entry, its QueryFilter field and keyword, predicate and mask.
    flags = {s for a in _cli_actions()["min_memory_per_gpu"] for s in a.option_strings}
    assert flags == {"--min-memory-per-gpu"}
    assert parameters.table()["min_memory_per_gpu"].kind == "number"
    r = parameters.parse([("min_memory_per_gpu", "16")])
    assert r.filters["min_memory_per_gpu"] == 16.0
    assert "min_memory_per_gpu" in spec.GPU_FILTERS


def test_cost_options_are_no_filters_and_max_interruption_is_a_filter():
    # The usage of issue 49 prices an answer (`Catalog.query_costs`): never a `QueryFilter`
    # field, so a 0.1.x query is what it was. `max_interruption` filters (issue 49), then
    # `include` (issue 48): the last two fields, in the spec's order.
    fields = [f.name for f in dataclasses.fields(QueryFilter)]
    assert set(fields).isdisjoint(spec.COST_NAMES)
    assert [o.name for o in spec.FILTERS[-2:]] == fields[-2:] == ["max_interruption", "include"]
