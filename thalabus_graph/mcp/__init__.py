"""An MCP (Model Context Protocol) server: Thalabus retrieval as tools for LLM agents.

``thalabus-graph mcp`` serves the tools over stdio (an agent host starts it) or streamable
HTTP with a bearer token. The package needs the ``mcp`` extra (``pip install
'thalabus-graph[mcp]'``); nothing else in thalabus_graph imports it.

Modules: ``language`` (the query language as an LLM reads it), ``schemas`` (typed tool
outputs), ``tools`` (the tool functions over one ``ThalabusGraph``), ``server`` (the MCP
server, its transports and the bearer check).
"""

from __future__ import annotations

from thalabus_graph.mcp.server import build_server, serve_http, serve_stdio

__all__ = ["build_server", "serve_http", "serve_stdio"]
