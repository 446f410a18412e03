"""``thalabus-graph mcp`` as a subprocess, driven by the official MCP SDK client over stdio and
over streamable HTTP: the tool list, a query, an explain, a dataset and its rerank (the
reranker is the loopback vLLM /score server), errors as tool errors, the bearer token and the
read-only default. The answers are checked against the engine run in this process on the same
graph."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.integration.sample import load_sample
from tests.support.loopback import LoopbackServer
from thalabus_graph import ThalabusGraph
from thalabus_graph.graph.connection import Connection
from thalabus_graph.graph.database import Database

pytestmark = [pytest.mark.integration, pytest.mark.line_neutral]
TOKEN = "test-token-0123456789abcdef"
QUERY = '"asylum seeker converted to Christianity" AND COUNTRY_OF_ORIGIN=IQ'
ALL_TOOLS = {"categories", "query", "explain", "dataset_show", "goal_context", "rerank_dataset"}
CLI = ["-c", "import sys; from thalabus_graph.cli import main; sys.exit(main())", "mcp"]


@pytest.fixture(scope="module")
def graph(db: Database) -> ThalabusGraph:
    """The sample corpus, loaded once for the module (the servers only read it, or add
    datasets)."""
    return load_sample(db)


@pytest.fixture(scope="module")
def server_env(neo4j_connection: Connection, score_server: LoopbackServer) -> dict[str, str]:
    """The server process's environment: the test database, the loopback reranker."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEO4J_")}
    env.update(NEO4J_URI=neo4j_connection.uri, NEO4J_DATABASE=neo4j_connection.database,
               NEO4J_USERNAME=neo4j_connection.username,
               THALABUS_RERANKER_URL=score_server.url, THALABUS_RERANKER_PROTOCOL="vllm-score",
               MCP_BEARER_TOKEN=TOKEN)
    if neo4j_connection.password is not None:
        env["NEO4J_PASSWORD"] = neo4j_connection.password
    return env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def http_server(env: dict[str, str], *flags: str) -> Iterator[str]:
    """``thalabus-graph mcp --transport http`` on a free port; its endpoint URL."""
    port = free_port()
    process = subprocess.Popen([sys.executable, *CLI, "--transport", "http", "--port",
                                str(port), *flags], env=env, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert process.poll() is None, process.stderr.read().decode() if process.stderr \
                else "the server exited"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.2)
        else:
            pytest.fail("the MCP HTTP server did not listen within 60 s")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def stdio_params(env: dict[str, str], *flags: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[*CLI, *flags], env=env)


def http_transport(url: str, token: str) -> Any:
    return streamable_http_client(url, http_client=httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"}, timeout=120))


async def call(client: Client, name: str, **arguments: Any) -> Any:
    return await client.call_tool(name, arguments, read_timeout_seconds=120)


async def exercise(client: Client, graph: ThalabusGraph, goal: str) -> None:
    """What an agent does, with every answer checked against the in-process engine."""
    listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(listed) == ALL_TOOLS
    assert all(tool.output_schema and tool.description for tool in listed.values())
    assert "COUNTRY_OF_ORIGIN=" in (listed["query"].description or "")  # the graph's own
    assert "query" in listed["query"].input_schema["required"]

    found = await call(client, "query", query=QUERY, limit=50)
    assert not found.is_error, found.content
    expected = graph.query(QUERY)
    got = found.structured_content
    assert got["total"] == len(expected.documents or [])
    assert [d["documentid"] for d in got["documents"]] == \
        [d.documentid for d in (expected.documents or [])]
    assert got["documents"] and all("IQ" in d["categories"]["COUNTRY_OF_ORIGIN"]
                                    for d in got["documents"])

    explained = await call(client, "explain", query=QUERY)
    assert not explained.is_error
    assert explained.structured_content["query"] == graph.explain(QUERY)["query"]
    assert explained.structured_content["plan"]

    malformed = await call(client, "query", query="asylum AND COUNTRY_OF_ORIGIN=IQ")
    assert malformed.is_error
    assert "bare word" in malformed.content[0].text and "^" in malformed.content[0].text
    unknown = await call(client, "query", query='"asylum" AND COUNTRY_OF_ORIGN=IQ')
    assert unknown.is_error and "COUNTRY_OF_ORIGN" in unknown.content[0].text

    created = await call(client, "query", query=QUERY, create_dataset=True, session="mcp-t",
                         documents=False, limit=5)
    assert not created.is_error, created.content
    parent = created.structured_content["dataset_id"]
    assert created.structured_content["bookmarks"]
    shown = await call(client, "dataset_show", dataset_id=parent)
    assert shown.structured_content["members_total"] == created.structured_content["total"]
    assert shown.structured_content["lineage"] == []

    reranked = await call(client, "rerank_dataset", dataset_id=parent)
    assert not reranked.is_error, reranked.content
    out = reranked.structured_content
    assert out["parent_id"] == parent and out["reranked"] and not out["degraded"]
    child = await call(client, "dataset_show", dataset_id=out["dataset_id"])
    assert child.structured_content["lineage"] == [parent]
    assert child.structured_content["weight_scale"] == "reranker"
    assert [m["fragmentid"] for m in child.structured_content["members"]] == \
        [m.fragmentid for m in graph.datasets.members(out["dataset_id"], limit=20)]
    missing = await call(client, "dataset_show", dataset_id="no-such#1")
    assert missing.is_error and "no-such#1" in missing.content[0].text

    attached = await call(client, "query", query=QUERY, create_dataset=True, session="mcp-g",
                          goal_id=goal, documents=False)
    expected_context = graph.goal_context(goal)
    paged: list[str] = []
    offset: int | None = 0
    while offset is not None:  # whole fragments, a page per output budget
        context = await call(client, "goal_context", goal_id=goal, offset=offset)
        assert not context.is_error, context.content
        assert context.structured_content["datasets"] == \
            [attached.structured_content["dataset_id"]]
        assert context.structured_content["fragments"]
        paged += [m["fragmentid"] for m in context.structured_content["fragments"]]
        offset = context.structured_content["next_offset"]
    assert paged == [m.fragmentid for m in expected_context.fragments]


def test_stdio_lists_queries_explains_writes_and_reports_errors(
        graph: ThalabusGraph, server_env: dict[str, str]) -> None:
    async def run() -> None:
        async with Client(stdio_params(server_env, "--allow-writes")) as client:
            await exercise(client, graph, "goal-stdio")

    anyio.run(run)


def test_http_lists_queries_explains_writes_and_reports_errors(
        graph: ThalabusGraph, server_env: dict[str, str]) -> None:
    with http_server(server_env, "--allow-writes") as url:
        async def run() -> None:
            async with Client(http_transport(url, TOKEN)) as client:
                await exercise(client, graph, "goal-http")

        anyio.run(run)


def test_http_refuses_a_missing_or_wrong_token(
        graph: ThalabusGraph, server_env: dict[str, str]) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    with http_server(server_env) as url:
        assert httpx.post(url, json=body).status_code == 401
        wrong = httpx.post(url, json=body, headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401 and wrong.headers["www-authenticate"].startswith("Bearer")
        lowercase = httpx.post(url, json=body, headers={"Authorization": f"bearer {TOKEN}"})
        assert lowercase.status_code != 401  # RFC 7235: the scheme is case-insensitive

        async def run() -> None:
            async with Client(http_transport(url, "wrong-" + TOKEN)) as client:
                await client.list_tools()

        with pytest.raises(ExceptionGroup) as refused:  # the SDK client's task groups
            anyio.run(run)
        assert refused.group_contains(MCPError, depth=None)  # the transport's 401, as MCP sees it


def test_read_only_is_the_default(graph: ThalabusGraph, server_env: dict[str, str]) -> None:
    async def run() -> None:
        async with Client(stdio_params(server_env)) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert names == ALL_TOOLS - {"rerank_dataset"}
            refused = await call(client, "query", query=QUERY, create_dataset=True)
            assert refused.is_error and "--allow-writes" in refused.content[0].text
            allowed = await call(client, "query", query="COUNTRY_OF_ORIGIN=IQ")
            assert not allowed.is_error and allowed.structured_content["dataset_id"] is None

    anyio.run(run)
