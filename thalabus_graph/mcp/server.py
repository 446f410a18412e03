"""The MCP server: the tools registered with their descriptions, and its two transports.

stdio serves one agent host that started the process; streamable HTTP serves any client that
sends ``Authorization: Bearer <token>`` (anything else gets 401 before the MCP layer sees the
request). The write tools (dataset creation, reranking) exist only with ``allow_writes``.
"""

from __future__ import annotations

import hmac
import json
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

from thalabus_graph.engine import ThalabusGraph
from thalabus_graph.mcp.language import QUERY_RULES, SERVER_INSTRUCTIONS
from thalabus_graph.mcp.tools import Tools

AsgiScope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[AsgiScope, Receive, Send], Awaitable[None]]

QUERY_DESCRIPTION = f"""\
Search the document graph with a Thalabus query and get documents (default) or fragments,
best first. With create_dataset=true (server started with --allow-writes) every hit is
stored as a dataset whose id comes back in `dataset_id`, for dataset_show, rerank_dataset,
within_datasets of a later query, or a goal (goal_id).
A malformed query comes back as an error with the position and a caret under it; fix the
query and call again.

{QUERY_RULES}"""

EXPLAIN_DESCRIPTION = f"""\
Show how a Thalabus query would run, without running its searches: the canonical query, its
syntax tree, and the plan (each search with its estimated size and chosen path). Cheap; use
it to check a query's syntax and categories before `query`.

{QUERY_RULES}"""

DATASET_DESCRIPTION = """\
Read a dataset (a stored result set): how it was made (query, kind, session), its weight
scale (retrieval scores or reranker scores), whether a rerank degraded (reason, failures,
unscored members), its lineage (the datasets it derives from, nearest first) and its best
members with their weights."""

RERANK_DESCRIPTION = """\
Rerank a dataset's members with the configured reranker into a NEW dataset derived from it
(the parent stays). `degraded` is true when the reranker failed for some or all members:
those keep their retrieval order after the scored ones, and `reason` says why. Returns the
new dataset id and its best members."""

GOAL_DESCRIPTION = """\
The fragments assembled for a goal from the datasets attached to it (query with
create_dataset=true and goal_id): members above their scale's threshold, best first, within
a character budget; when too few pass, the best below-threshold members fill up."""


def build_server(graph: ThalabusGraph, *, allow_writes: bool = False) -> MCPServer[Any]:
    """An MCP server with the Thalabus tools over ``graph`` (``rerank_dataset`` only when
    ``allow_writes``; without it, ``query`` refuses ``create_dataset``)."""
    tools = Tools(graph, allow_writes=allow_writes)
    server: MCPServer[Any] = MCPServer(name="thalabus-graph", title="Thalabus retrieval",
                                       instructions=SERVER_INSTRUCTIONS)
    reads = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    server.add_tool(tools.query, name="query", title="Thalabus query",
                    description=QUERY_DESCRIPTION, structured_output=True,
                    annotations=ToolAnnotations(read_only_hint=not allow_writes,
                                                destructive_hint=False,
                                                open_world_hint=False))
    server.add_tool(tools.explain, name="explain", title="Explain a query",
                    description=EXPLAIN_DESCRIPTION, structured_output=True, annotations=reads)
    server.add_tool(tools.dataset_show, name="dataset_show", title="Show a dataset",
                    description=DATASET_DESCRIPTION, structured_output=True, annotations=reads)
    server.add_tool(tools.goal_context, name="goal_context", title="A goal's context",
                    description=GOAL_DESCRIPTION, structured_output=True, annotations=reads)
    if allow_writes:
        server.add_tool(tools.rerank_dataset, name="rerank_dataset", title="Rerank a dataset",
                        description=RERANK_DESCRIPTION, structured_output=True,
                        annotations=ToolAnnotations(read_only_hint=False,
                                                    destructive_hint=False,
                                                    open_world_hint=False))
    return server


def serve_stdio(server: MCPServer[Any]) -> None:
    """Serve on stdin/stdout until the host closes them."""
    server.run("stdio")


class BearerAuth:
    """ASGI middleware: an HTTP request without ``Authorization: Bearer <token>`` gets 401
    (compared in constant time); lifespan events pass through."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        if not token:
            raise ValueError("an empty bearer token would let anyone in")
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                body = json.dumps({"error": "missing or wrong bearer token"}).encode()
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"www-authenticate", b'Bearer realm="thalabus-graph"'),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def serve_http(server: MCPServer[Any], *, token: str, host: str = "127.0.0.1",
               port: int = 8765, path: str = "/mcp") -> None:
    """Serve streamable HTTP at ``http://host:port/path`` behind the bearer check."""
    import uvicorn

    app = BearerAuth(server.streamable_http_app(streamable_http_path=path, host=host), token)
    print(f"thalabus-graph mcp: streamable HTTP on http://{host}:{port}{path}", file=sys.stderr,
          flush=True)
    uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning")).run()


__all__ = ["BearerAuth", "build_server", "serve_http", "serve_stdio"]
