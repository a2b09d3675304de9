"""`gpuhunt mcp`: tool arguments read as the HTTP parameters are, and the real server driven by
the MCP SDK's own stdio client spawning `python -m gpuhunt mcp` over a generated catalog."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from gpuhunt._internal.catalog import Catalog
from gpuhunt._internal.load.settings import Settings
from gpuhunt._internal.serve import mcp, parameters
from gpuhunt._internal.serve.answers import Service
from gpuhunt._internal.serve.parameters import ParameterError


def test_arguments_are_the_query_string_pairs():
    args = {"gpu": ["H100", "A100:8"], "max_price": 5, "spot": False, "country": "DE"}
    assert list(mcp.pairs(args)) == [
        ("gpu", "H100"),
        ("gpu", "A100:8"),
        ("max_price", "5"),
        ("spot", "false"),
        ("country", "DE"),
    ]
    with pytest.raises(ParameterError, match="max_price"):
        list(mcp.pairs({"max_price": {"lt": 5}}))


def test_the_tools_take_every_parameter():
    by_name = {t.name: t for t in mcp.tools()}
    assert set(by_name) == {"query_offers", "explain_query", "catalog_status", "price_history"}
    history = by_name["price_history"].input_schema["properties"]
    assert set(history) == set(parameters.history_table()) >= {"gpu", "since", "by"}
    props = by_name["query_offers"].input_schema["properties"]
    assert set(props) == set(parameters.table())
    assert props["gpu"]["type"] == "array" and props["max_price"]["type"] == "number"
    assert props["spot"]["type"] == "boolean" and props["limit"]["maximum"] == 10_000
    assert all(t.description and len(t.description) > 80 for t in by_name.values())


def test_a_call_answers_what_the_http_api_answers(published, tmp_path):
    with Catalog(catalog_url=str(published), settings=Settings(cache_dir=tmp_path)) as c:
        service = Service(c)
        request = parameters.parse([("gpu", "H100"), ("max_price", "20")])
        got = mcp.call(service, "query_offers", {"gpu": ["H100"], "max_price": 20})
        assert got.body == service.offers(request).body and got.body["total"] > 0
        assert mcp.call(service, "catalog_status", {}).body["version"] == "20261129-1"
        with pytest.raises(ParameterError, match="min_gpu_count"):
            mcp.call(service, "query_offers", {"min_gpu_count": -1})
        with pytest.raises(ParameterError, match="catalog_status takes no arguments"):
            mcp.call(service, "catalog_status", {"gpu": "H100"})


async def _session(catalog: Path, calls: list[tuple[str, dict[str, Any]]]) -> Any:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    server = StdioServerParameters(
        command=sys.executable, args=["-m", "gpuhunt", "mcp", "--catalog", str(catalog)]
    )
    with anyio.fail_after(120):  # a server that never answers fails the test, not the suite
        async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
            return await _calls(session, calls)


async def _calls(session: Any, calls: list[tuple[str, dict[str, Any]]]) -> Any:
    await session.initialize()
    listed = await session.list_tools()
    results = [await session.call_tool(name, arguments) for name, arguments in calls]
    return listed, results


@pytest.mark.slow
@pytest.mark.subprocess
def test_the_sdk_stdio_client_lists_the_tools_and_gets_offers(published, tmp_path, monkeypatch):
    monkeypatch.setenv("GPUHUNT_CACHE_DIR", str(tmp_path / "cache"))
    calls = [
        ("query_offers", {"gpu": ["H100"], "max_price": 20, "limit": 3}),
        ("query_offers", {"min_gpu_count": -1}),
        ("explain_query", {"gpu": ["H100"], "max_price": 1}),
        ("catalog_status", {}),
    ]
    listed, results = anyio.run(_session, published, calls)
    assert {t.name for t in listed.tools} == {
        "query_offers",
        "explain_query",
        "catalog_status",
        "price_history",
    }
    offers, bad, explained, status = results
    with Catalog(catalog_url=str(published), settings=Settings(cache_dir=tmp_path)) as c:
        want = Service(c).offers(parameters.parse([("gpu", "H100"), ("max_price", "20")]))
    body = json.loads(offers.content[0].text)
    assert not offers.is_error
    assert body["offers"] == want.body["offers"][:3] and body["total"] == want.body["total"]
    assert bad.is_error and json.loads(bad.content[0].text)["error"]["parameter"] == "min_gpu_count"
    assert (
        json.loads(explained.content[0].text)["explanation"]["emptied_by"]["filter"] == "max_price"
    )
    assert json.loads(status.content[0].text)["version"] == "20261129-1"


def test_price_history_answers_what_v1_history_answers(built, tmp_path):
    with Catalog(catalog_url=str(built), settings=Settings(cache_dir=tmp_path)) as c:
        service = Service(c)
        got = mcp.call(service, "price_history", {"gpu": ["H100"], "by": "gpu"})
        want = service.history(parameters.parse_history([("gpu", "H100"), ("by", "gpu")]))
        assert got.body == want.body and got.body["series"][0]["name"] == "H100"
        with pytest.raises(ParameterError, match="since"):
            mcp.call(service, "price_history", {"since": "soon"})
