"""The MCP server against a Neo4j that goes away, odd but valid credentials, and credentials
that try to leak: a tool call with Neo4j down is a prompt tool error (the server's driver has
bounded timeouts), the bearer scheme is matched in any letter case, and the user info of a
service URL never reaches a tool answer or a log line."""

from __future__ import annotations

import base64
import logging
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any
from urllib.parse import urlsplit

import anyio
import pytest
from mcp import Client

from tests.adversarial.conftest import HashEmbedder
from tests.support.loopback import LoopbackServer, Request, Response
from thalabus_graph import ThalabusGraph
from thalabus_graph.cli import mcp_cmd
from thalabus_graph.graph.connection import Connection
from thalabus_graph.graph.database import Database
from thalabus_graph.mcp import build_server
from thalabus_graph.mcp.server import BearerAuth, bearer_token
from thalabus_graph.settings import Settings

pytestmark = pytest.mark.integration


class Proxy:
    """A loopback TCP forwarder to Neo4j that can be taken down: its listener closes and its
    open connections are cut, so the port refuses as a stopped server's does. Counts the
    connections it accepted."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = []
        self.accepted = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            self.accepted += 1
            upstream = socket.create_connection(self.target)
            self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                with suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def down(self) -> None:
        with suppress(OSError):  # shutdown wakes the accept() (close alone does not)
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        for s in self.sockets:
            with suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()


def test_a_tool_call_with_neo4j_down_is_a_prompt_tool_error(
        db: Database, neo4j_connection: Connection) -> None:
    parts = urlsplit(neo4j_connection.uri)
    proxy = Proxy(parts.hostname or "127.0.0.1", parts.port or 7687)
    target = Connection(uri=f"bolt://127.0.0.1:{proxy.port}",
                        username=neo4j_connection.username,
                        password=neo4j_connection.password,
                        database=neo4j_connection.database)
    served = mcp_cmd.connect(target)
    driver: Any = served.driver
    assert driver._pool.pool_config.connection_timeout == mcp_cmd.FAIL_FAST["connection_timeout"]
    workspace = driver._default_workspace_config
    assert workspace.connection_acquisition_timeout == \
        mcp_cmd.FAIL_FAST["connection_acquisition_timeout"]
    assert workspace.max_transaction_retry_time == mcp_cmd.FAIL_FAST["max_transaction_retry_time"]
    assert max(mcp_cmd.FAIL_FAST.values()) <= 10
    graph = ThalabusGraph(served, embedder=HashEmbedder(384))

    async def run() -> None:
        async with Client(build_server(graph)) as client:
            up = await client.call_tool("categories", {}, read_timeout_seconds=120)
            assert not up.is_error, up.content
            proxy.down()
            down = await client.call_tool("categories", {}, read_timeout_seconds=120)
            assert down.is_error
            assert "not reachable" in down.content[0].text
            assert "neo4j start" in down.content[0].text
            listed = {t.name: t for t in (await client.list_tools()).tools}
            assert "CATEGORY=value1" in (listed["query"].description or "")  # placeholders

    try:
        anyio.run(run)
    finally:
        served.close()


def test_a_server_started_with_neo4j_down_answers_each_call_with_a_tool_error(
        caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with caplog.at_level(logging.WARNING, logger="thalabus_graph"):
        served = mcp_cmd.connect(Connection(uri=f"bolt://127.0.0.1:{port}"))
    assert "starts anyway" in caplog.text
    graph = ThalabusGraph(served, embedder=HashEmbedder(384))

    async def run() -> None:
        async with Client(build_server(graph)) as client:
            assert "query" in {t.name for t in (await client.list_tools()).tools}
            down = await client.call_tool("query", {"query": '"x"'}, read_timeout_seconds=120)
            assert down.is_error and "not reachable" in down.content[0].text

    try:
        anyio.run(run)
    finally:
        served.close()


@pytest.mark.parametrize("header", [b"Bearer s3cret-token", b"bearer s3cret-token",
                                    b"BEARER   s3cret-token", b"BeArEr s3cret-token"])
def test_the_bearer_scheme_is_matched_in_any_letter_case(header: bytes) -> None:
    assert bearer_token(header) == b"s3cret-token"


@pytest.mark.parametrize("header", [b"", b"Basic s3cret-token", b"Bearer", b"Bearers x",
                                    b"s3cret-token"])
def test_other_schemes_and_empty_tokens_are_refused(header: bytes) -> None:
    assert bearer_token(header) is None


def test_the_middleware_lets_a_lowercase_bearer_in_and_a_wrong_token_out() -> None:
    reached: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope["path"])

    async def request(header: bytes) -> int:
        sent: list[dict[str, Any]] = []

        async def send(message: Any) -> None:
            sent.append(message)

        async def receive() -> Any:
            return {"type": "http.request"}

        scope = {"type": "http", "path": "/mcp", "headers": [(b"authorization", header)]}
        await BearerAuth(app, "s3cret-token")(scope, receive, send)
        return int(sent[0]["status"]) if sent else 200

    assert anyio.run(request, b"bearer s3cret-token") == 200
    assert anyio.run(request, b"bearer wrong-token") == 401
    assert reached == ["/mcp"]


@contextmanager
def echoing_reranker() -> Iterator[str]:
    """A score server that refuses every request, echoing the user info it was sent (as the
    Basic header, and decoded): the reranker URL with user info."""
    def handle(request: Request) -> Response:
        auth = request.headers.get("Authorization", "")
        decoded = base64.b64decode(auth.split()[-1]).decode() if auth else ""
        return Response(status=401, raw=f"who is {decoded}? ({auth})".encode(),
                        headers={"Content-Type": "text/plain"})

    with LoopbackServer(handle) as server:
        yield server.url.replace("http://", "http://alice:pw@") + "/score"


def test_a_reranker_url_user_info_reaches_no_answer_and_no_log(
        clean_db: Database, caplog: pytest.LogCaptureFixture) -> None:
    with echoing_reranker() as url:
        settings = Settings.from_env().replace(
            reranker_url=url, reranker_protocol="vllm-score", reranker_max_retries=0)
        graph = ThalabusGraph(clean_db, settings=settings, embedder=HashEmbedder(384))
        graph.ingest([{"documentid": f"leak-{i}", "chapters": [f"chapter {i} about trains"],
                       "categories": {"KIND": ["x"]}} for i in range(3)], progress=False)
        caplog.set_level(logging.DEBUG)  # caplog's handler on the root logger stands for
        server = build_server(graph, allow_writes=True)  # the one the MCP SDK installs

        async def run() -> list[str]:
            async with Client(server) as client:
                made = await client.call_tool("query", {
                    "query": '"trains"', "create_dataset": True, "documents": False})
                assert not made.is_error, made.content
                out = await client.call_tool("rerank_dataset", {
                    "dataset_id": made.structured_content["dataset_id"]})
                shown = await client.call_tool("dataset_show", {
                    "dataset_id": out.structured_content["dataset_id"]})
                return [block.text for r in (out, shown) for block in r.content]

        texts = anyio.run(run)
    assert "HTTP 401" in caplog.text, (texts, caplog.text[-2000:])
    for text in [*texts, caplog.text]:
        assert "alice:pw" not in text and "YWxpY2U6cHc=" not in text
