"""`gpuhunt mcp`: the catalog as MCP tools on stdio (the official `mcp` SDK's low-level
server), for LLM agents asked "where do I run this job?".

Tools: `query_offers` and `explain_query` take the parameters of `/v1/offers` as arguments
(their JSON Schema is made from the same table, `parameters.table()`), `price_history` those of
`/v1/history` (`gpuhunt history`'s), `catalog_status` none.
Arguments are turned into the `name=value` text pairs a query string would carry and read by
the same `parameters.parse`, so a tool call and an HTTP request with the same values get the
same answer, the same body as JSON text. A bad argument is a tool error (`is_error`) whose
text names it, which an agent can read and correct.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from gpuhunt._internal.errors import GPUHuntError
from gpuhunt._internal.serve import parameters
from gpuhunt._internal.serve.answers import Reply, Service
from gpuhunt._internal.serve.parameters import ParameterError
from gpuhunt._version import __version__

INSTRUCTIONS = (
    "gpuhunt: one catalog of cloud GPU and CPU offers (instances with hourly prices in USD) "
    "across many providers. Use query_offers to find where to run a job (cheapest first), "
    "explain_query when it finds nothing or too little, catalog_status to see how fresh the data "
    "is. GPU names take any common spelling (H100, 'RTX 4090', 'A100 80GB', A100:8)."
)

QUERY_OFFERS = (
    "Find cloud offers (GPU or CPU instances with an hourly price in USD) matching filters, "
    'cheapest first. Every argument is optional; e.g. {"gpu": ["H100"], "max_price": 5} '
    'or {"gpu": ["A100:8"], "spot": false, "country": ["DE"]}. Returns JSON: '
    "`offers` (at most `limit`, default 100, each with provider, instance_name, location, "
    "price, gpu_count, gpu_name, gpu_memory, cpu, memory, spot, observed_at, ...), `total` "
    "(every match), the catalog version and `providers`: each listed provider's data age "
    "(collected_at, age_seconds). Offers a person cannot simply rent (restricted regions, a "
    "share of a GPU, stale marketplace listings, enumerated locations) are left out unless "
    "`include` names them. Set all_regions to false for one row per distinct offer."
)
EXPLAIN_QUERY = (
    "Explain why a query (the same arguments as query_offers) finds what it finds: how many "
    "offers each filter leaves, which filter removed the last, the cheapest offers failing "
    "only one filter, and which providers list a GPU the catalog has no offer of. Use it when "
    "query_offers returns nothing or less than expected."
)
PRICE_HISTORY = (
    "The cheapest price on each day, per GPU model (USD per GPU per hour) or per instance "
    "(by='instance', USD per hour), of the offers matching the filters, from the price history "
    'published with the catalog. E.g. {"gpu": ["H100"], "since": "2026-11-01"}. Use '
    "it to see whether prices are falling or rising, not to find offers (query_offers does)."
)
CATALOG_STATUS = (
    "The catalog being served: its version, where it came from, when it was loaded, how many "
    "offers each provider has, how old each provider's data is, and any load error."
)


def input_schema() -> dict[str, Any]:
    """The arguments of `query_offers` and `explain_query`: one property per parameter."""
    return {
        "type": "object",
        "properties": {p.name: p.schema() for p in parameters.table().values()},
        "additionalProperties": False,
    }


def tools() -> list[types.Tool]:
    schema = input_schema()
    read_only = types.ToolAnnotations(read_only_hint=True, open_world_hint=False)
    return [
        types.Tool(
            name="query_offers",
            description=QUERY_OFFERS,
            input_schema=schema,
            annotations=read_only,
        ),
        types.Tool(
            name="explain_query",
            description=EXPLAIN_QUERY,
            input_schema=schema,
            annotations=read_only,
        ),
        types.Tool(
            name="price_history",
            description=PRICE_HISTORY,
            input_schema={
                "type": "object",
                "properties": {p.name: p.schema() for p in parameters.history_table().values()},
                "additionalProperties": False,
            },
            annotations=read_only,
        ),
        types.Tool(
            name="catalog_status",
            description=CATALOG_STATUS,
            input_schema={"type": "object", "properties": {}, "additionalProperties": False},
            annotations=read_only,
        ),
    ]


def pairs(arguments: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """Tool arguments as the `name=value` pairs of a query string: a list is the parameter
    repeated, `true`/`false` and numbers as written in JSON."""
    for name, value in arguments.items():
        for one in value if isinstance(value, list) else [value]:
            if isinstance(one, bool):
                yield name, "true" if one else "false"
            elif isinstance(one, (int, float, str)):
                yield name, str(one)
            else:
                raise ParameterError(name, f"{name}: {json.dumps(one)[:80]} is not a value")


def call(service: Service, name: str, arguments: dict[str, Any] | None) -> Reply:
    """One tool call's answer (what `/v1/...` answers for the same values)."""
    if name == "catalog_status":
        if arguments:
            raise ParameterError(next(iter(arguments)), "catalog_status takes no arguments")
        return service.status()
    if name == "price_history":
        return service.history(parameters.parse_history(pairs(arguments or {})))
    request = parameters.parse(pairs(arguments or {}))
    if name == "query_offers":
        return service.offers(request)
    if name == "explain_query":
        return service.explain(request)
    raise ParameterError(None, f"unknown tool {name!r}")


def _text(body: Any, error: bool = False) -> types.CallToolResult:
    text = json.dumps(body, separators=(",", ":"), allow_nan=False)
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=error)


def build(service: Service) -> Server[Any]:
    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools())

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        try:
            reply = await anyio.to_thread.run_sync(call, service, params.name, params.arguments)
        except ParameterError as e:
            return _text(e.as_dict(), error=True)
        except GPUHuntError as e:
            return _text({"error": {"status": 503, "parameter": None, "message": str(e)}}, True)
        return _text(reply.body)

    return Server(
        "gpuhunt",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def run(service: Service) -> None:
    """Serve MCP on this process's stdin and stdout until the client closes them."""
    server = build(service)

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
