"""``thalabus-graph mcp``: serve the retrieval tools to LLM agents over the Model Context
Protocol (stdio for an agent host that starts the process, or streamable HTTP with a bearer
token). Needs the ``mcp`` extra; without it the command says how to install it."""

from __future__ import annotations

import argparse
import logging
import os
from typing import Any

from neo4j.exceptions import ServiceUnavailable

from thalabus_graph.cli import common
from thalabus_graph.engine import ThalabusGraph
from thalabus_graph.errors import ConfigurationError, GraphError
from thalabus_graph.graph.connection import Connection
from thalabus_graph.graph.database import Database
from thalabus_graph.settings import Settings

logger = logging.getLogger(__name__)
DEFAULT_PORT = 8765
FAIL_FAST: dict[str, float] = {"connection_timeout": 5.0,
                               "connection_acquisition_timeout": 10.0,
                               "max_transaction_retry_time": 3.0}
"""The server's driver timeouts (seconds): with Neo4j down, a tool call answers with a tool
error within seconds instead of the driver's defaults (30 s connecting, 60 s waiting for a
pooled connection, 30 s retrying a transaction), which outlast an agent's patience and the
query budget. A busy Neo4j still gets its transient errors retried, for 3 s."""
DEFAULT_OUTPUT_CHARS, MIN_OUTPUT_CHARS = 8000, 1000
"""``mcp.budget``'s defaults, stated here too: this module must import without the SDK."""
DEFAULT_TOKEN_ENV = "MCP_BEARER_TOKEN"
INSTALL_HINT = ("the MCP server needs the official MCP SDK: pip install 'thalabus-graph[mcp]' "
                "(or pip install 'mcp~=2.3')")

EXAMPLES = f"""\
examples:
  thalabus-graph mcp                                   # stdio, read-only
  thalabus-graph mcp --allow-writes                    # stdio, datasets and reranking allowed
  export {DEFAULT_TOKEN_ENV}=$(openssl rand -hex 32)
  thalabus-graph mcp --transport http --port {DEFAULT_PORT} --allow-writes

HTTP clients send "Authorization: Bearer <token>" to http://HOST:PORT/mcp; any other request
gets 401. The token comes from the environment variable named by --token-env, never from the
command line (other users can read a process's arguments).
"""


def register(subparsers: Any) -> None:
    """Add the ``mcp`` sub-command."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "mcp", help="serve query, explain, categories, datasets, reranking and goal context as MCP "
        "tools",
        description="Serve Thalabus retrieval as Model Context Protocol tools for LLM agents: "
        "query, explain, categories, dataset_show, goal_context and (with --allow-writes) "
        "rerank_dataset and query's create_dataset.", epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio",
                   help="stdio (default; the agent host starts this process) or streamable "
                   "HTTP")
    p.add_argument("--allow-writes", action="store_true",
                   help="enable the write tools: query's create_dataset and rerank_dataset "
                   "(default: read-only)")
    p.add_argument("--host", default="127.0.0.1", help="HTTP: address to bind (default "
                   "127.0.0.1)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"HTTP: port (default {DEFAULT_PORT})")
    p.add_argument("--path", default="/mcp", help="HTTP: endpoint path (default /mcp)")
    p.add_argument("--output-chars", type=int, default=DEFAULT_OUTPUT_CHARS, metavar="N",
                   help=f"character budget of one tool answer (default {DEFAULT_OUTPUT_CHARS}, "
                   f"at least {MIN_OUTPUT_CHARS}): longer answers are cut to snippets and "
                   "pages, and say what was cut and how to get more")
    p.add_argument("--required-filter", default=None, metavar="FILTER",
                   help="categories (stored or graph-defined) every tool call is held to, "
                   "e.g. READABLE_BY=alice: no query of an agent widens it")
    p.add_argument("--token-filters", default=None, metavar="FILE.json",
                   help="HTTP: a JSON object mapping each bearer token to its own required "
                   "filter (or null), one view per agent; replaces --token-env")
    p.add_argument("--context", action="append", default=[], metavar="NAME=FILE.cypher",
                   help="a named graph context agents may ask for by name (read-only Cypher "
                   "over `document` and `fragment`), repeatable; agents never send Cypher")
    p.add_argument("--token-env", default=DEFAULT_TOKEN_ENV, metavar="NAME",
                   help=f"HTTP: environment variable holding the bearer token (default "
                   f"{DEFAULT_TOKEN_ENV}); required for HTTP")
    common.add_common_options(p)
    p.set_defaults(handler=_mcp)


def connect(target: Connection) -> Database:
    """The server's connection to ``target``: a driver with the ``FAIL_FAST`` timeouts. A
    Neo4j that does not answer at start is said on stderr and the server starts anyway: each
    tool call then answers with the error of the moment, as when Neo4j goes away later; a
    wrong password or URI still stops the start."""
    try:
        return Database.connect(target.uri, auth=target.auth, database=target.database,
                                driver_config=FAIL_FAST)
    except GraphError as exc:
        if not isinstance(exc.__cause__, ServiceUnavailable):
            raise
        logger.warning("%s; the MCP server starts anyway, and its tools answer with an error "
                       "until Neo4j answers", exc)
        return Database.connect(target.uri, auth=target.auth, database=target.database,
                                driver_config=FAIL_FAST, verify=False)


def _mcp(args: argparse.Namespace) -> int:
    try:
        from thalabus_graph.mcp import build_server, serve_http, serve_stdio, views
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] != "mcp":
            raise
        raise ConfigurationError(INSTALL_HINT) from exc
    if args.output_chars < MIN_OUTPUT_CHARS:
        raise ConfigurationError(f"--output-chars {args.output_chars}: give at least "
                                 f"{MIN_OUTPUT_CHARS} (one hit and the note on what was cut)")
    if args.transport == "stdio" and args.password_stdin:
        raise ConfigurationError("--password-stdin cannot be used with --transport stdio (stdin "
                                 "carries the MCP messages); set NEO4J_PASSWORD instead")
    filters = None if args.token_filters is None else views.token_filters(args.token_filters)
    if filters is not None and args.transport != "http":
        raise ConfigurationError("--token-filters needs --transport http (a view per token)")
    contexts = views.named_contexts(args.context)
    tokens: str | list[str] = ""
    if filters is not None:
        tokens = list(filters)
    elif args.transport == "http":
        tokens = os.environ.get(args.token_env, "")
        if not tokens:
            raise ConfigurationError(f"--transport http needs a bearer token in ${args.token_env}"
                                     " (e.g. export "
                                     f"{args.token_env}=$(openssl rand -hex 32))")
    if args.transport == "http" and not 0 < args.port < 65536:
        raise ConfigurationError(f"--port {args.port}: not a TCP port")
    db = connect(common.connection(args))
    try:
        graph = ThalabusGraph(db, settings=Settings.from_env(),
                              required_filter=args.required_filter)
        server = build_server(graph, allow_writes=args.allow_writes,
                              output_chars=args.output_chars, token_filters=filters,
                              contexts=contexts)
        if args.transport == "http":
            serve_http(server, token=tokens, host=args.host, port=args.port, path=args.path)
        else:
            serve_stdio(server)
    finally:
        db.close()
    return common.EXIT_OK
