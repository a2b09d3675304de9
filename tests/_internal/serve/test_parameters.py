"""Request parameters: made from the query spec, as `gpuhunt query`'s options are, read into
the same values the command line gives, with errors naming the parameter."""

from __future__ import annotations

import argparse
import dataclasses

import pytest

from gpuhunt._internal.cli import query
from gpuhunt._internal.models import QueryFilter
from gpuhunt._internal.query import spec
from gpuhunt._internal.serve import parameters
from gpuhunt._internal.serve.parameters import ParameterError, parse


def cli_namespace(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    query.arguments(p)
    return p.parse_args(argv)


@pytest.mark.parametrize(
    ("pairs", "argv"),
    [
        ([("gpu", "H100"), ("gpu", "A100:8")], ["--gpu", "H100", "--gpu", "A100:8"]),
        (
            [("max_price", "4"), ("min_gpu_count", "2")],
            ["--max-price", "4", "--min-gpu-count", "2"],
        ),
        ([("spot", "false")], ["--on-demand"]),
        ([("spot", "TRUE")], ["--spot"]),
        ([("area", "Europe"), ("country", "de")], ["--area", "Europe", "--country", "de"]),
        (
            [("allow_flag", "oci-spot"), ("sort", "gpu-memory")],
            ["--allow-flag", "oci-spot", "--sort", "gpu-memory"],
        ),
        ([("min_cuda", "12.8"), ("cpu_arch", "arm")], ["--min-cuda", "12.8", "--cpu-arch", "arm"]),
    ],
)
def test_the_namespace_is_the_command_line_s(pairs, argv):
    got = parse(pairs).args
    want = cli_namespace(argv)
    fields = [f.name for f in dataclasses.fields(QueryFilter)]
    assert {f: getattr(got, f) for f in fields} == {f: getattr(want, f) for f in fields}
    assert got.sort == want.sort


def test_every_filter_of_the_command_line_is_a_parameter():
    dests = {p.dest for p in parameters.table().values()}
    assert {f.name for f in dataclasses.fields(QueryFilter)} <= dests
    assert {"sort", "all_regions", "limit"} <= set(parameters.table())
    assert not {"json", "csv", "online", "refresh", "catalog_url"} & set(parameters.table())


def test_a_filter_added_to_the_spec_is_a_parameter(monkeypatch):
    more = (
        spec.Option("max_wait", "age", "offers waited at most AGE (--max-wait 30d)", metavar="AGE"),
        spec.Option("verified", "flag", switches=(spec.Switch("--verified", True, None),)),
    )
    monkeypatch.setattr(spec, "FILTERS", spec.FILTERS + more)
    monkeypatch.setattr(spec, "NAMES", spec.NAMES + ("max_wait", "verified"))
    parameters.table.cache_clear()
    try:
        table = parameters.table()
        assert table["max_wait"].kind == "string" and "max_wait 30d" in table["max_wait"].help
        assert table["verified"].kind == "boolean"
        given = parameters._read([("max_wait", "30d"), ("verified", "false")], table)
        args = parameters._namespace(given, table, parameters._defaults())
        assert args.max_wait == "30d" and args.verified is False
    finally:
        parameters.table.cache_clear()


def test_the_state_filters_are_parameters():
    # `gpuhunt query --available/--max-age/--no-resales` are `/v1/offers` parameters too.
    args = parse([("available", "true"), ("max_age", "30d"), ("resale", "false")]).args
    assert args.available is True and args.max_age is not None
    assert args.resale is False


def test_defaults_and_limit():
    r = parse([])
    assert r.limit == 100 and r.args.all_regions is True and r.args.sort == "price"
    assert parse([("limit", "10000")]).limit == 10_000
    assert parse([("all_regions", "false")]).args.all_regions is False


@pytest.mark.parametrize(
    ("pairs", "status", "parameter"),
    [
        ([("limit", "0")], 422, "limit"),
        ([("limit", "x")], 400, "limit"),
        ([("nope", "1")], 400, "nope"),
        ([("gpu", "a\tb")], 400, "gpu"),
        ([("gpu\x00", "a")], 400, None),
        ([("x" * 1001, "a")], 400, None),
        ([("gpu", "y" * 1001)], 400, "gpu"),
        ([("gpu", "<b>H100</b>")], 400, "gpu"),
        ([("max_gpu_count", "-2")], 422, "max_gpu_count"),
        ([("min_gpu_memory", "80"), ("max_gpu_memory", "40")], 422, "min_gpu_memory"),
        ([("min_compute_capability", "x.y")], 422, "min_compute_capability"),
        ([("provider", "nosuch")], 422, "provider"),
        ([("area", "mars")], 400, "area"),
        ([("spot", "")], 400, "spot"),
        ([("spot", "yes")], 400, "spot"),
        ([("gpu", "H100")] * 101, 400, None),
    ],
)
def test_bad_input_names_the_parameter(pairs, status, parameter):
    with pytest.raises(ParameterError) as e:
        parse(pairs)
    assert (e.value.status, e.value.parameter) == (status, parameter)
    if parameter is not None:
        assert parameter in e.value.message
        assert "--" not in e.value.message  # parameters, not the command line's options
    assert e.value.as_dict()["error"]["message"] == e.value.message


def test_the_key_is_the_query_in_a_normal_form():
    a = parse([("gpu", "H100"), ("max_price", "4")]).key
    assert a == parse([("max_price", "4.0"), ("gpu", "H100")]).key
    assert a != parse([("gpu", "H100"), ("max_price", "4.5")]).key
    assert parse([]).key != parse([("spot", "false")]).key
    assert parse([]).key != parse([("limit", "5")]).key  # a different answer, a different tag
