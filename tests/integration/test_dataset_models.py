"""The neomodel mirrors read every property the engine writes on datasets and memberships.

A query's dataset (fragments, a category stub, a hidden member) and a partly failed rerank of
it (one batch refused, so one member keeps its retrieval weight, ``unscored``) are written by
the engine; each Dataset node and AGGREGATES relationship is then read twice, raw and through
``thalabus_graph.graph.models``, and every raw property must be a declared model field with
the same value.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from tests.adversarial.conftest import HashEmbedder
from tests.support.loopback import (
    LoopbackServer,
    Request,
    Response,
    overlap_score,
    parse_score_request,
    score_reply,
)
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.graph import models
from thalabus_graph.graph.database import Database
from thalabus_graph.rerank import ScoreApiReranker

pytestmark = pytest.mark.integration

REFUSED = "refused by the scorer"
DOCUMENTS = [
    {"documentid": "cat-1", "categories": {"TOPIC": "cats"},
     "chapters": ["the cat climbs a tree\n\nthe cat sleeps"]},
    {"documentid": "cat-2", "categories": {"TOPIC": "cats"},
     "chapters": [f"a cat that is {REFUSED}"]},
    {"documentid": "stub-1", "categories": {"TOPIC": "stubs"}},
]


def _refusing(request: Request) -> Response:
    """Scores like the loopback vLLM server, but refuses a batch holding ``REFUSED``."""
    query, texts = parse_score_request("vllm-score", request.json())
    if any(REFUSED in text for text in texts):
        return Response(status=400, json_body={"error": "refused"})
    return Response(json_body=score_reply("vllm-score", query, texts, overlap_score,
                                          random.Random(0)))


@pytest.fixture()
def graph(clean_db: Database) -> Iterator[ThalabusGraph]:
    settings = Settings.from_env(min_reranking_score_frag=0.0)
    with LoopbackServer(_refusing) as server:
        yield ThalabusGraph(clean_db, settings=settings,
                            embedder=HashEmbedder(settings.embedding_dimensions),
                            reranker=ScoreApiReranker(server.url, protocol="vllm-score",
                                                      batch_size=1, max_retries=0))


def _raw(db: Database, datasetid: str) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The Dataset node's properties and each member's AGGREGATES properties, by member id."""
    record = db.driver.execute_query(
        "MATCH (ds:Dataset {datasetid: $id}) "
        "RETURN properties(ds) AS node, [(ds)-[a:AGGREGATES]->(m) | "
        "[coalesce(m.fragmentid, m.documentid), properties(a)]] AS members",
        {"id": datasetid}, database_=db.database).records[0]
    node = dict(record["node"])
    node["created_at"] = node["created_at"].to_native()
    return node, {member: dict(props) for member, props in record["members"]}


def _through_models(datasetid: str) -> tuple[models.Dataset, dict[str, models.Aggregates]]:
    node = models.Dataset.nodes.get(datasetid=datasetid)
    members: dict[str, models.Aggregates] = {}
    for manager, key in ((node.fragments, "fragmentid"), (node.documents, "documentid")):
        for member in manager.all():
            members[getattr(member, key)] = manager.relationship(member)
    return node, members


def _same(model: Any, raw: dict[str, Any], declared: set[str]) -> None:
    assert set(raw) <= declared, f"written but not modelled: {set(raw) - declared}"
    assert {name: getattr(model, name) for name in raw} == raw


def test_every_dataset_and_membership_property_reads_through_the_models(
        graph: ThalabusGraph, clean_db: Database) -> None:
    graph.ingest(DOCUMENTS, progress=False, strict=True)
    parent = graph.query('"cat climbs tree" OR TOPIC=stubs', create_dataset=True,
                         session="models").dataset_ids[0]
    first = graph.datasets.members(parent)[0].fragmentid
    assert graph.datasets.hide(parent, [first]) == 1
    reranked = graph.rerank_dataset(parent, session="models")
    assert reranked.reranked and reranked.reason == "partial"

    models.bind(clean_db.driver, clean_db.database)
    dataset_fields = set(models.Dataset.defined_properties(rels=False))
    membership_fields = set(models.Aggregates.defined_properties())
    written: set[str] = set()
    for datasetid in (parent, reranked.dataset_id):
        raw_node, raw_members = _raw(clean_db, datasetid)
        node, members = _through_models(datasetid)
        _same(node, raw_node, dataset_fields)
        assert set(members) == set(raw_members)
        for member, props in raw_members.items():
            _same(members[member], props, membership_fields)
            written |= {f"AGGREGATES.{name}" for name in props}
        written |= set(raw_node)
    assert {"reranked", "reason", "weight_scale", "failures", "unscored", "capped",
            "source_query", "clauses", "AGGREGATES.hidden", "AGGREGATES.original_score",
            "AGGREGATES.unscored"} <= written
    assert "stub-1" in _through_models(parent)[1]
