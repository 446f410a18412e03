"""The MCP tools speak the graph's own vocabulary and fit their answers to the output budget:
the ``categories`` tool lists the stored names, values and ontologies with their document
counts; the ``query`` and ``explain`` descriptions quote only stored categories; a long
answer is cut to the budget and says how to get the rest, and the rest comes with ``offset``.
Driven in process through the SDK's client on a small corpus whose categories are COUNTRY
and TOPIC (none of the sample corpus's)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import anyio
import numpy as np
import numpy.typing as npt
import pytest
from mcp import Client

from tests.support.embedders import SeededEmbedder, text_seed
from thalabus_graph import ThalabusGraph
from thalabus_graph.graph.database import Database
from thalabus_graph.mcp import build_server
from thalabus_graph.mcp.budget import MIN_OUTPUT_CHARS
from thalabus_graph.query import category_predicates, parse

pytestmark = [pytest.mark.integration, pytest.mark.line_neutral]
COUNTRIES = ["DE", "FR", "DE", "CH", "DE", "FR", "IT", "DE"]
TOPICS = [["rail"], ["rail", "roads"], ["glaciers"], ["rail"], ["roads"], ["glaciers"],
          ["rail"], ["ferries"]]
LONG = "Der Zug fährt über die Alpen und hält in jedem Tal. " * 60


class HashEmbedder(SeededEmbedder):
    """A unit vector from the text's hash: no model (the tests search text and categories)."""

    name = "hash"

    def vector(self, text: str) -> npt.NDArray[np.float32]:
        row = np.random.default_rng(text_seed(text, "big")).standard_normal(self.dimensions)
        return (row / np.linalg.norm(row)).astype(np.float32)


def corpus() -> list[dict[str, Any]]:
    return [{"documentid": f"voc-{i}", "ontology": "transport" if i < 6 else "tourism",
             "title": f"Report {i}", "language": "de",
             "categories": {"COUNTRY": [country], "TOPIC": topics},
             "chapters": [f"{LONG} Bericht {i}."], "keywords": ["Zug", "melting glaciers"]}
            for i, (country, topics) in enumerate(zip(COUNTRIES, TOPICS, strict=True))]


@pytest.fixture(scope="module")
def graph(db: Database) -> Iterator[ThalabusGraph]:
    db.write("migrations_delete_data_nodes")
    graph = ThalabusGraph(db, embedder=HashEmbedder(384))
    report = graph.ingest(corpus(), progress=False)
    assert report.errors == []
    yield graph
    db.write("migrations_delete_data_nodes")


async def call(client: Client, name: str, **arguments: Any) -> Any:
    return await client.call_tool(name, arguments, read_timeout_seconds=120)


def text_size(result: Any) -> int:
    return sum(len(block.text) for block in result.content)


def test_descriptions_quote_only_the_graphs_categories(graph: ThalabusGraph) -> None:
    stored = {(name, value) for doc in corpus() for name, values in doc["categories"].items()
              for value in values}

    async def run() -> None:
        async with Client(build_server(graph)) as client:
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            for name in ("query", "explain"):
                description = listed[name].description or ""
                assert "COUNTRY_OF_ORIGIN" not in description
                assert "Verwaltungsgericht" not in description
                examples = description.split("Examples:\n", 1)[1].splitlines()
                used = {(p.name, value) for line in examples
                        for p in category_predicates(parse(line.strip())) for value in p.values}
                assert used and used <= stored, used - stored
                assert "COUNTRY=" in description or "TOPIC=" in description

    anyio.run(run)


def test_categories_lists_names_values_and_document_counts(graph: ThalabusGraph) -> None:
    async def run() -> None:
        async with Client(build_server(graph)) as client:
            found = await call(client, "categories")
            assert not found.is_error, found.content
            out = found.structured_content
            assert out["documents"] == len(COUNTRIES)
            names = {c["name"]: c for c in out["categories"]}
            assert set(names) == {"COUNTRY", "TOPIC"}
            assert {v["value"]: v["documents"] for v in names["COUNTRY"]["values"]} == \
                dict(Counter(COUNTRIES))
            assert {v["value"]: v["documents"] for v in names["TOPIC"]["values"]} == \
                dict(Counter(t for topics in TOPICS for t in topics))
            assert names["TOPIC"]["documents"] == len(TOPICS)
            assert {o["ontologyid"]: o["documents"] for o in out["ontologies"]} == \
                {"transport": 6, "tourism": 2}

            bounded = (await call(client, "categories", max_names=1, max_values=1)
                       ).structured_content
            assert len(bounded["categories"]) == 1 and bounded["more_categories"] == 1
            first = bounded["categories"][0]
            assert len(first["values"]) == 1 and first["more_values"] == \
                len(names[first["name"]]["values"]) - 1

            scoped = (await call(client, "categories", ontology_id="tourism")
                      ).structured_content
            countries = {c["name"]: c for c in scoped["categories"]}["COUNTRY"]
            assert {v["value"]: v["documents"] for v in countries["values"]} == \
                dict(Counter(COUNTRIES[6:]))
            wrong = await call(client, "categories", ontology_id="Tourism")
            assert wrong.is_error and "'tourism'" in wrong.content[0].text

    anyio.run(run)


def test_long_answers_fit_the_budget_and_page_with_offset(graph: ThalabusGraph) -> None:
    budget = MIN_OUTPUT_CHARS * 3
    query = "'Zug'"
    expected = [d.documentid for d in graph.query(query).documents or []]
    assert len(expected) == len(COUNTRIES)

    async def run() -> None:
        async with Client(build_server(graph, output_chars=budget)) as client:
            seen: list[str] = []
            offset: int | None = 0
            while offset is not None:
                page = await call(client, "query", query=query, limit=50, offset=offset)
                assert not page.is_error, page.content
                assert text_size(page) <= budget
                out = page.structured_content
                assert (out["cut"] is not None and "offset=" in out["cut"]["note"]) \
                    or out["next_offset"] is None
                texts = [f["text"] for d in out["documents"] for f in d["fragments"]]
                assert all(len(t) < len(LONG) for t in texts)
                seen += [d["documentid"] for d in out["documents"]]
                assert out["documents"], "a page makes progress"
                offset = out["next_offset"]
            assert seen == expected

            explained = await call(client, "explain", query=" OR ".join(
                f"'word{i}'" for i in range(40)))
            assert not explained.is_error, explained.content
            assert text_size(explained) <= budget
            assert "thalabus-graph explain --json" in explained.structured_content["cut"]["note"]

    anyio.run(run)


def test_scope_argument_names_follow_the_python_api(graph: ThalabusGraph) -> None:
    parent = graph.query("COUNTRY=CH", create_dataset=True, session="voc").dataset_ids[0]

    async def run() -> None:
        async with Client(build_server(graph)) as client:
            scoped = await call(client, "query", query="COUNTRY=DE,CH",
                                subset_of_datasetids=[parent], ontology_id="transport")
            assert not scoped.is_error, scoped.content
            assert [d["documentid"] for d in scoped.structured_content["documents"]] == \
                ["voc-3"]
            old = await call(client, "query", query="COUNTRY=DE", within_datasets=[parent])
            assert old.is_error and "subset_of_datasetids" in old.content[0].text

    anyio.run(run)


def test_query_warnings_reach_the_tool_output(graph: ThalabusGraph) -> None:
    expected = graph.query("COUNTRY=DE OR COUNTRY=XX", strict_categories=False).warnings

    async def run() -> None:
        async with Client(build_server(graph)) as client:
            found = await call(client, "query", query="COUNTRY=DE OR COUNTRY=XX",
                               strict_categories=False)
            assert not found.is_error, found.content
            assert found.structured_content["warnings"] == [w.to_dict() for w in expected]
            assert json.loads(found.content[0].text)["warnings"]

    anyio.run(run)
