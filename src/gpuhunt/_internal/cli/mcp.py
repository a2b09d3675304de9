"""`gpuhunt mcp`: the catalog as an MCP server on stdio (tools `query_offers`, `explain_query`,
`price_history`, `catalog_status`), for LLM agents. The server is `gpuhunt._internal.serve.mcp`; this module is
its command line."""

from __future__ import annotations

import argparse

from gpuhunt._internal.cli.commands import command
from gpuhunt._internal.cli.serve import catalog_option, missing_serve_extra, open_catalog

HELP = "serve the catalog to LLM agents over MCP (stdio)"
DESCRIPTION = (
    "An MCP server on stdin/stdout with the tools query_offers (the parameters of "
    "`gpuhunt query`), explain_query, price_history and catalog_status. An agent's configuration starts it "
    "as `gpuhunt mcp`. Needs: pip install 'gpuhunt[serve]'."
)


@command("mcp", help=HELP, description=DESCRIPTION, arguments=catalog_option)
def run(args: argparse.Namespace) -> int:
    try:
        from gpuhunt._internal.serve import mcp
        from gpuhunt._internal.serve.answers import Service
    except ImportError as e:
        return missing_serve_extra(e)
    with open_catalog(args.catalog) as catalog:
        service = Service(catalog)
        service.ready()
        mcp.run(service)
    return 0
