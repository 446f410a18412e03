"""``thalabus-graph mcp`` holding every tool call to a required filter: one for the whole server
(stdio), and one per bearer token over HTTP (``--token-filters``). No query, dataset member or
goal line outside the caller's view ever comes back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.integration.sample import load_sample
from tests.integration.test_mcp import call, http_server, http_transport, stdio_params
from tests.integration.test_mcp import server_env as server_env
from tests.support.permissions import grant
from thalabus_graph import ThalabusGraph
from thalabus_graph.graph.database import Database
from thalabus_graph.mcp.views import Views

pytestmark = [pytest.mark.integration, pytest.mark.line_neutral]
READERS = {"alice": ["docid-1001", "docid-1002", "docid-1012", "docid-2003"],
           "bob": ["docid-1003", "docid-1004", "docid-2001", "docid-2003"]}
TOKENS = {"alice-token-0123456789": "READABLE_BY=alice",
          "bob-token-0123456789ab": "READABLE_BY=bob"}
QUERIES = ['"asylum"', "", "NOT READABLE_BY=bob", '"asylum" OR NOT COUNTRY_OF_ORIGIN=IQ',
           "COUNTRY_OF_ORIGIN=IQ OR COUNTRY_OF_ORIGIN=SY"]


@pytest.fixture(scope="module")
def graph(db: Database) -> ThalabusGraph:
    g = load_sample(db)
    grant(g, READERS)
    return g


def seen(answer: Any) -> set[str]:
    content = answer.structured_content
    hits = content.get("documents") or content.get("fragments") or content.get("members") or []
    return {hit["documentid"] for hit in hits}


async def agent_sees(client: Client, graph: ThalabusGraph, reader: str,
                     space: str = "") -> None:
    """Every query shape, a dataset made without a filter, and a goal built from it (both
    named in the agent's ``space``, as an operator may write them for it)."""
    allowed = set(READERS[reader])
    for text in QUERIES:
        for documents in (True, False):
            answer = await call(client, "query", query=text, documents=documents, limit=50)
            assert not answer.is_error, (text, answer.content)
            assert seen(answer) <= allowed, (reader, text)
    assert seen(await call(client, "query", query='"asylum"', limit=50))
    explained = await call(client, "explain", query='"asylum"')
    assert "READABLE_BY" in json.dumps(explained.structured_content)
    wide = graph.query('"asylum" OR "friends"', create_dataset=True, session=space + "wide",
                       return_documents=False)
    assert {f.documentid for f in wide.fragments} - allowed
    shown = await call(client, "dataset_show", dataset_id=wide.dataset_ids[0], limit=200)
    assert seen(shown) <= allowed and seen(shown)
    goal = f"goal-{reader}"
    graph.datasets.use_for_goal(space + goal, wide.dataset_ids[0])
    lines = await call(client, "goal_context", goal_id=goal)
    assert not lines.is_error, lines.content
    assert {m["documentid"] for m in lines.structured_content["fragments"]} <= allowed
    await categories_seen(client, graph, allowed)


async def categories_seen(client: Client, graph: ThalabusGraph, allowed: set[str]) -> None:
    """The categories an agent reads are those of its documents, counted among them, and the
    tool descriptions quote no value of the graph (one description serves every view)."""
    listed = (await call(client, "categories", max_names=50, max_values=50)).structured_content
    assert listed["documents"] == len(allowed)
    got = {(c["name"], v["value"]): v["documents"]
           for c in listed["categories"] for v in c["values"]}
    want = {(r["name"], r["value"]): r["n"] for r in graph.db.read_tx(lambda tx: list(tx.run(
        "MATCH (d:Document)-[:HAS_CATEGORY]->(k:Category) WHERE d.documentid IN $ids "
        "RETURN k.name AS name, k.value AS value, count(DISTINCT d) AS n",
        ids=sorted(allowed))))}
    assert got == want
    tools = {tool.name: tool.description or "" for tool in (await client.list_tools()).tools}
    assert "COUNTRY_OF_ORIGIN" not in tools["query"] and "CATEGORY=" in tools["query"]


def test_stdio_holds_every_tool_call_to_the_servers_required_filter(
        graph: ThalabusGraph, server_env: dict[str, str]) -> None:
    async def main() -> None:
        params = stdio_params(server_env, "--required-filter", "READABLE_BY=bob")
        async with Client(params) as client:
            await agent_sees(client, graph, "bob")

    anyio.run(main)


def test_http_gives_each_token_its_own_view(graph: ThalabusGraph, server_env: dict[str, str],
                                            tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    path.write_text(json.dumps(TOKENS), encoding="utf-8")

    async def main(url: str) -> None:
        for token, text in TOKENS.items():
            async with Client(http_transport(url, token)) as client:
                await agent_sees(client, graph, text.split("=")[1], Views.space(text))
        await agents_stay_in_their_views(url)

    with http_server(server_env, "--token-filters", str(path), "--allow-writes") as url:
        anyio.run(main, url)
        import httpx
        body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        wrong = httpx.post(url, json=body, headers={"Authorization": "Bearer " + "x" * 24})
        assert wrong.status_code == 401


async def agents_stay_in_their_views(url: str) -> None:
    """What one agent writes (a dataset, a goal) the other can neither read, rerank, extend
    nor use as a scope; each pages through its own dataset to the end."""
    alice, bob = list(TOKENS)
    async with Client(http_transport(url, bob)) as client:
        made = await call(client, "query", query='"asylum"', create_dataset=True,
                          session="bobsess", goal_id="bobgoal", limit=50)
        assert not made.is_error, made.content
        dataset = made.structured_content["dataset_id"]
        assert dataset.startswith(Views.space(TOKENS[bob]))
        assert not (await call(client, "dataset_show", dataset_id=dataset)).is_error
    async with Client(http_transport(url, alice)) as client:
        for tool, arguments in (("dataset_show", {"dataset_id": dataset}),
                                ("rerank_dataset", {"dataset_id": dataset}),
                                ("goal_context", {"goal_id": "bobgoal"}),
                                ("query", {"query": '"asylum"',
                                           "subset_of_datasetids": [dataset]})):
            answer = await call(client, tool, **arguments)
            text = answer.content[0].text
            assert answer.is_error and "bobsess" not in text.split(":", 1)[1].replace(
                dataset, ""), (tool, text)  # nothing of bob's beyond the id asked
        own = await call(client, "query", query='"asylum" OR "friends"', create_dataset=True,
                         session="bobsess", goal_id="bobgoal", documents=False, limit=1)
        mine = own.structured_content["dataset_id"]
        assert mine != dataset and mine.startswith(Views.space(TOKENS[alice]))
        pages, offset = [], 0
        while offset is not None:
            page = (await call(client, "dataset_show", dataset_id=mine, limit=1,
                               offset=offset)).structured_content
            pages += [m["documentid"] for m in page["members"]]
            offset = page["next_offset"]
            assert len(pages) <= page["members_total"]
        assert len(pages) == page["members_total"] and set(pages) <= set(READERS["alice"])


def test_an_agent_asks_for_the_operators_contexts_by_name(
        graph: ThalabusGraph, server_env: dict[str, str], tmp_path: Path) -> None:
    readers = tmp_path / "readers.cypher"
    readers.write_text("MATCH (document)<-[:CAN_READ]-(u:User) RETURN u.name AS reader "
                       "ORDER BY reader", encoding="utf-8")

    async def main() -> None:
        params = stdio_params(server_env, "--context", f"readers={readers}")
        async with Client(params) as client:
            answer = await call(client, "query", query='"asylum"', context="readers")
            assert not answer.is_error, answer.content
            found = answer.structured_content["documents"]
            assert found
            for document in found:
                want = [{"reader": u} for u, docs in sorted(READERS.items())
                        if document["documentid"] in docs]
                assert document["context"] == want
            unknown = await call(client, "query", query='"asylum"',
                                 context="MATCH (n) DETACH DELETE n")
            assert unknown.is_error and "unknown context" in unknown.content[0].text

    anyio.run(main)
