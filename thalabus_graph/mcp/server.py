"""The MCP server: the tools registered with their descriptions, and its two transports.

stdio serves one agent host that started the process; streamable HTTP serves any client that
sends ``Authorization: Bearer <token>`` (the scheme in any letter case, RFC 7235; anything
else gets 401 before the MCP layer sees the request). The write tools (dataset creation,
reranking) exist only with ``allow_writes``.

The ``query`` and ``explain`` descriptions carry examples made of the graph's own vocabulary,
read at the first tool listing (``ThalabusServer.list_tools``). A call naming an argument the
tool does not have is refused with the ones it has, instead of being ignored. Log records
leave with credentials redacted (``RedactingFilter``).
"""

from __future__ import annotations

import difflib
import hmac
import inspect
import json
import logging
import sys
from collections.abc import Awaitable, Callable, Mapping, MutableMapping, Sequence
from typing import Any

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, InputRequiredResult, ToolAnnotations
from mcp.types import Tool as MCPTool

from thalabus_graph._http import redact
from thalabus_graph.engine import ThalabusGraph
from thalabus_graph.errors import ThalabusError
from thalabus_graph.mcp.budget import DEFAULT_OUTPUT_CHARS
from thalabus_graph.mcp.language import NEUTRAL, SERVER_INSTRUCTIONS, Sample
from thalabus_graph.mcp.tools import Tools
from thalabus_graph.mcp.views import VIEW, Views

logger = logging.getLogger(__name__)

AsgiScope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[AsgiScope, Receive, Send], Awaitable[None]]

QUERY_INTRO = """\
Search the document graph with a Thalabus query and get documents (default) or fragments,
best first. With create_dataset=true (server started with --allow-writes) every hit is
stored as a dataset whose id comes back in `dataset_id`, for dataset_show, rerank_dataset,
subset_of_datasetids of a later query, or a goal (goal_id). `warnings` says what the query
could not use or what was dropped from its results. A long answer is cut to the server's
output budget: `cut` says what was left out, `next_offset` where the next page starts.
A malformed query comes back as an error with the position and a caret under it; fix the
query and call again."""

EXPLAIN_INTRO = """\
Show how a Thalabus query would run, without running its searches: the canonical query, its
syntax tree, and the plan (each search with its estimated size and chosen path). Cheap; use
it to check a query's syntax and categories before `query`."""

CATEGORIES_DESCRIPTION = """\
List the graph's category names (for NAME=VALUE filters), each with its most common values
and how many documents have them, most documents first; and the ontologies (for
ontology_id). With ontology_id, the categories of that ontology's documents. Bounded by
max_names and max_values; `more_categories` / `more_values` count what was not listed."""

DATASET_DESCRIPTION = """\
Read a dataset (a stored result set): how it was made (query, kind, session), its weight
scale (retrieval scores or reranker scores), whether a rerank degraded (reason, failures,
unscored members), its lineage (the datasets it derives from, nearest first) and its best
members with their weights, a page at a time (limit, offset)."""

RERANK_DESCRIPTION = """\
Rerank a dataset's members with the configured reranker into a NEW dataset derived from it
(the parent stays). `degraded` is true when the reranker failed for some or all members:
those keep their retrieval order after the scored ones, and `reason` says why. Returns the
new dataset id and its best members (dataset_show pages through the rest)."""

GOAL_DESCRIPTION = """\
The fragments assembled for a goal from the datasets attached to it (query with
create_dataset=true and goal_id): members above their scale's threshold, best first, within
a character budget; when too few pass, the best below-threshold members fill up. Whole
fragments a page at a time: `next_offset` is where the next page starts."""


def descriptions(sample: Sample) -> dict[str, str]:
    """The descriptions of the tools whose text carries the query language's rules and
    examples, made of ``sample``."""
    rules = sample.rules()
    return {"query": f"{QUERY_INTRO}\n\n{rules}", "explain": f"{EXPLAIN_INTRO}\n\n{rules}"}


RENAMED = {"within_datasets": "subset_of_datasetids", "ontology": "ontology_id",
           "text": "query", "q": "query", "question": "query", "search": "query",
           "top_k": "limit", "k": "limit", "dataset": "dataset_id", "datasetid": "dataset_id",
           "goal": "goal_id", "goalid": "goal_id"}
"""Argument names agents may know from other spellings, and the tools' names for them."""


def parameters(fn: Callable[..., Any]) -> frozenset[str]:
    """The argument names a tool function takes."""
    return frozenset(inspect.signature(fn).parameters)


def suggested(argument: str, known: frozenset[str]) -> str | None:
    """The known argument an unknown one most likely means (``RENAMED``, else the closest
    spelling), or None."""
    if RENAMED.get(argument) in known:
        return RENAMED[argument]
    close = difflib.get_close_matches(argument, sorted(known), 1, 0.6)
    return close[0] if close else None


class ThalabusServer(MCPServer[Any]):
    """``MCPServer`` with the tool descriptions made of the graph's vocabulary (read once, at
    the first listing; the placeholder examples while the graph cannot be read) and a check
    that refuses unknown argument names."""

    def __init__(self, tools: Tools, *, token_filters: Mapping[str, str | None] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tools = tools
        self.token_filters = dict(token_filters or {})
        """Each bearer token's required filter (``views.token_filters``; empty: one view)."""
        self.arguments: dict[str, frozenset[str]] = {}
        self._descriptions: dict[str, str] | None = None
        self._lock = anyio.Lock()

    def register(self, fn: Callable[..., Any], *, name: str, **kwargs: Any) -> None:
        """``add_tool``, remembering the tool's argument names for the check."""
        self.arguments[name] = parameters(fn)
        self.add_tool(fn, name=name, **kwargs)

    async def described(self) -> dict[str, str]:
        """The vocabulary-made descriptions, read from the graph once; a server that holds
        its agents to a filter (its own, or one per token) describes with placeholders, since
        one description serves every view and the graph's values may lie outside one."""
        if self.tools.graph.required_filter is not None or self.token_filters:
            return descriptions(NEUTRAL)
        async with self._lock:
            if self._descriptions is None:
                try:
                    sample = await anyio.to_thread.run_sync(self.tools.sample)
                except ThalabusError as exc:
                    logger.warning("the graph's vocabulary could not be read (%s); the tool "
                                   "descriptions use placeholder examples until it can",
                                   self.tools.redact(str(exc)))
                    return descriptions(NEUTRAL)
                self._descriptions = descriptions(sample)
            return self._descriptions

    async def list_tools(self) -> list[MCPTool]:
        """The tools, the query language's examples taken from the graph."""
        texts = await self.described()
        return [tool.model_copy(update={"description": texts[tool.name]})
                if tool.name in texts else tool for tool in await super().list_tools()]

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Context[Any, Any] | None = None
                        ) -> CallToolResult | InputRequiredResult:
        """Call a tool; an argument name it does not have is a tool error naming the ones
        it has (a misspelt scope would otherwise be dropped and widen the search)."""
        known = self.arguments.get(name)
        unknown = sorted(set(arguments) - known) if known is not None else []
        if unknown:
            hints = [f"{arg!r}" + (f" (did you mean {close!r}?)" if close else "")
                     for arg in unknown for close in [suggested(arg, known or frozenset())]]
            raise ToolError(f"{name}: unknown argument {', '.join(hints)}; its arguments are "
                            f"{', '.join(sorted(known or ()))}")
        view = VIEW.set(self.view_of(context))
        try:
            return await super().call_tool(name, arguments, context)
        finally:
            VIEW.reset(view)

    def view_of(self, context: Context[Any, Any] | None) -> str | None:
        """The required filter of the token the call came with (None: none beyond the
        server's). With token filters, a call without a known token is refused (the HTTP
        check lets none through; this holds for any transport)."""
        if not self.token_filters:
            return None
        request = None if context is None else context.request_context.request
        headers = getattr(request, "headers", None) or {}
        token = bearer_token(str(headers.get("authorization", "")).encode())
        if token is None or token.decode() not in self.token_filters:
            raise ToolError("this server gives each bearer token its own view; the call "
                            "came without a known token")
        return self.token_filters[token.decode()]


def build_server(graph: ThalabusGraph, *, allow_writes: bool = False,
                 output_chars: int = DEFAULT_OUTPUT_CHARS,
                 token_filters: Mapping[str, str | None] | None = None,
                 contexts: Mapping[str, str] | None = None) -> ThalabusServer:
    """An MCP server with the Thalabus tools over ``graph`` (``rerank_dataset`` only when
    ``allow_writes``; without it, ``query`` refuses ``create_dataset``); each answer fits in
    ``output_chars`` characters. ``token_filters``: each bearer token's required filter
    (``views``); ``contexts``: the operator's named graph contexts."""
    tools = Tools(graph, allow_writes=allow_writes, output_chars=output_chars,
                  views=Views(graph, contexts))
    server = ThalabusServer(tools, token_filters=token_filters, name="thalabus-graph",
                            title="Thalabus retrieval", instructions=SERVER_INSTRUCTIONS)
    install_log_redaction(tools.secrets)
    reads = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    placeholder = descriptions(NEUTRAL)
    server.register(tools.categories, name="categories", title="The graph's categories",
                    description=CATEGORIES_DESCRIPTION, structured_output=True,
                    annotations=reads)
    server.register(tools.query, name="query", title="Thalabus query",
                    description=placeholder["query"], structured_output=True,
                    annotations=ToolAnnotations(read_only_hint=not allow_writes,
                                                destructive_hint=False,
                                                open_world_hint=False))
    server.register(tools.explain, name="explain", title="Explain a query",
                    description=placeholder["explain"], structured_output=True,
                    annotations=reads)
    server.register(tools.dataset_show, name="dataset_show", title="Show a dataset",
                    description=DATASET_DESCRIPTION, structured_output=True, annotations=reads)
    server.register(tools.goal_context, name="goal_context", title="A goal's context",
                    description=GOAL_DESCRIPTION, structured_output=True, annotations=reads)
    if allow_writes:
        server.register(tools.rerank_dataset, name="rerank_dataset", title="Rerank a dataset",
                        description=RERANK_DESCRIPTION, structured_output=True,
                        annotations=ToolAnnotations(read_only_hint=False,
                                                    destructive_hint=False,
                                                    open_world_hint=False))
    return server


class RedactingFilter(logging.Filter):
    """A handler filter that redacts every record it passes: the configured credentials
    verbatim and anything shaped like one (URL user info, tokens), whoever logged it (an
    HTTP client logs the URL it requested, user info included)."""

    def __init__(self, secrets: Sequence[str]) -> None:
        super().__init__()
        self.secrets = list(secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message, self.secrets)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


def install_log_redaction(secrets: Sequence[str]) -> None:
    """Put a ``RedactingFilter`` on every handler of the root logger and of the package
    logger (the ones the MCP SDK and the CLI install), once each."""
    for handler in [*logging.getLogger().handlers, *logging.getLogger("thalabus_graph").handlers]:
        for old in [f for f in handler.filters if isinstance(f, RedactingFilter)]:
            handler.removeFilter(old)
        handler.addFilter(RedactingFilter(secrets))


def serve_stdio(server: MCPServer[Any]) -> None:
    """Serve on stdin/stdout until the host closes them."""
    server.run("stdio")


def bearer_token(header: bytes) -> bytes | None:
    """The token of an ``Authorization: Bearer <token>`` header value, the scheme matched in
    any letter case (RFC 7235 2.1) with any spaces after it; None for another scheme."""
    scheme, _, token = header.strip().partition(b" ")
    if scheme.lower() != b"bearer":
        return None
    return token.strip(b" ") or None


class BearerAuth:
    """ASGI middleware: an HTTP request without ``Authorization: Bearer <token>`` gets 401
    (the token compared in constant time); lifespan events pass through."""

    def __init__(self, app: ASGIApp, token: str | Sequence[str]) -> None:
        tokens = [token] if isinstance(token, str) else list(token)
        if not tokens or not all(tokens):
            raise ValueError("an empty bearer token would let anyone in")
        self.app = app
        self.expected = [t.encode() for t in tokens]

    def known(self, given: bytes) -> bool:
        """Whether ``given`` is one of the tokens, each compared in constant time."""
        return any([hmac.compare_digest(given, token) for token in self.expected])

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = bearer_token(dict(scope.get("headers") or []).get(b"authorization", b""))
            if given is None or not self.known(given):
                body = json.dumps({"error": "missing or wrong bearer token"}).encode()
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"www-authenticate", b'Bearer realm="thalabus-graph"'),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def serve_http(server: MCPServer[Any], *, token: str | Sequence[str], host: str = "127.0.0.1",
               port: int = 8765, path: str = "/mcp") -> None:
    """Serve streamable HTTP at ``http://host:port/path`` behind the bearer check (``token``:
    the one token, or every token of the server's token filters)."""
    import uvicorn

    app = BearerAuth(server.streamable_http_app(streamable_http_path=path, host=host), token)
    print(f"thalabus-graph mcp: streamable HTTP on http://{host}:{port}{path}", file=sys.stderr,
          flush=True)
    uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning")).run()


__all__ = ["BearerAuth", "RedactingFilter", "ThalabusServer", "bearer_token", "build_server",
           "descriptions", "install_log_redaction", "serve_http", "serve_stdio"]
