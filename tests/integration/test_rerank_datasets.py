"""Dataset reranking, selection tiers, hidden members, goal fill-up and lineage on the real
Neo4j, with the reranker speaking the vLLM /score wire format to a loopback HTTP server."""

from __future__ import annotations

import math
from typing import Any

import pytest

from tests.integration.sample import docs_where, graph_scored_by, has
from tests.support.loopback import LoopbackServer, Request, Response, score_handler
from thalabus_graph import ThalabusGraph
from thalabus_graph.errors import DatasetError
from thalabus_graph.fragments import Fragment
from thalabus_graph.graph.database import Database
from thalabus_graph.rerank import ScoreApiReranker
from thalabus_graph.results import attach

pytestmark = pytest.mark.integration
ROUND = 7


@pytest.fixture(scope="module")
def graph(db: Database, score_server: LoopbackServer) -> ThalabusGraph:
    return graph_scored_by(db, score_server.url, batch_size=4, max_reranking_input_frag=ROUND)


def make_dataset(graph: ThalabusGraph, query: str, session: str) -> str:
    return graph.query(query, create_dataset=True, session=session,
                       return_documents=False).dataset_ids[0]


def test_rounds_scores_and_lineage(graph: ThalabusGraph, db: Database) -> None:
    parent = make_dataset(graph, '"Bob the cat climbs a tree" AND CHARACTER=Bob', "rounds")
    members = graph.datasets.members(parent)
    result = graph.rerank_dataset(parent, session="rounds")
    assert result.reranked and result.query == "Bob the cat climbs a tree"
    assert result.rounds == math.ceil(len(members) / ROUND)
    assert result.dataset_id == "rounds#rerank_1"
    new = graph.datasets.members(result.dataset_id)
    assert [m.fragmentid for m in new] == [f.fragmentid for f in result.fragments]
    originals = {m.fragmentid: m.score for m in members}
    for m in new:
        words = set(["bob", "the", "cat", "climbs", "a", "tree"])
        text = next(x.text for x in members if x.fragmentid == m.fragmentid) or ""
        assert math.isclose(m.score, len(words & set(text.lower().split())) / len(words))
        assert math.isclose(m.original_score or 0.0, originals[m.fragmentid])
    rows = db.driver.execute_query(
        "MATCH (:Dataset {datasetid: $id})-[:DERIVED_FROM]->(p:Dataset) RETURN p.datasetid AS p",
        id=result.dataset_id, database_="neo4j").records
    assert [r["p"] for r in rows] == [parent]


def test_nothing_passes_the_threshold_still_covers_five_documents(
        db: Database, graph: ThalabusGraph) -> None:
    with LoopbackServer(score_handler("vllm-score", lambda q, t: 0.001)) as server:
        low = ThalabusGraph(db, settings=graph.settings, embedder=graph.embedder,
                            reranker=ScoreApiReranker(server.url, protocol="vllm-score"))
        parent = make_dataset(low, '"asylum decision"', "tiers")
        result = low.rerank_dataset(parent, session="tiers")
    docs = {f.documentid for f in result.fragments}
    assert result.reranked and len(docs) >= graph.settings.min_reranking_output_doc
    assert all(f.score < graph.settings.min_reranking_score_frag for f in result.fragments)


def test_hidden_members_are_skipped_by_readers_and_reranking(graph: ThalabusGraph) -> None:
    parent = make_dataset(graph, "CHARACTER=Jane OR '\"kitchen floor\"'", "hidden")
    before = graph.datasets.members(parent)
    hidden = [before[0].fragmentid]
    assert graph.datasets.hide(parent, hidden) == 1
    visible = graph.datasets.members(parent)
    assert hidden[0] not in {m.fragmentid for m in visible}
    assert len(graph.datasets.members(parent, include_hidden=True)) == len(before)
    result = graph.rerank_dataset(parent, '"kitchen floor"', session="hidden")
    assert hidden[0] not in {f.fragmentid for f in result.fragments}
    other = make_dataset(graph, "CHARACTER=Jane OR '\"kitchen floor\"'", "hidden")
    assert len(graph.datasets.members(other)) == len(before)  # hidden only in that dataset


def test_query_without_semantic_clause_keeps_the_order(graph: ThalabusGraph) -> None:
    parent = make_dataset(graph, "CHARACTER=Bob AND NOT \"dogs\"", "plain")
    result = graph.rerank_dataset(parent, session="plain")
    assert not result.reranked and result.reason == "no-semantic-query"
    ids = [m.fragmentid for m in graph.datasets.members(parent)]
    assert [f.fragmentid for f in result.fragments] == ids


def test_a_failing_reranker_degrades_and_says_so(db: Database, graph: ThalabusGraph) -> None:
    def fail(_: Request) -> Response:
        return Response(status=500, json_body={"error": "boom"})

    with LoopbackServer(fail) as server:
        broken = ThalabusGraph(db, settings=graph.settings, embedder=graph.embedder,
                               reranker=ScoreApiReranker(server.url, protocol="vllm-score",
                                                         max_retries=0))
        parent = make_dataset(broken, '"cat"', "broken")
        result = broken.rerank_dataset(parent, session="broken")
    assert not result.reranked and result.reason == "failed" and result.failures >= 1
    ids = [m.fragmentid for m in broken.datasets.members(parent)]
    assert [f.fragmentid for f in result.fragments] == ids


def test_goal_context_fill_up_under_a_tight_budget(graph: ThalabusGraph) -> None:
    with LoopbackServer(score_handler("vllm-score", lambda q, t: 0.001)) as server:
        low = ThalabusGraph(graph.db, settings=graph.settings, embedder=graph.embedder,
                            reranker=ScoreApiReranker(server.url, protocol="vllm-score"))
        parent = make_dataset(low, '"religious conversion"', "goal")
        reranked = low.rerank_dataset(parent, session="goal")
    graph.datasets.use_for_goal("g-fill", reranked.dataset_id)
    roomy = graph.goal_context("g-fill", char_budget=1_000_000)
    assert roomy.fill_up_used and len(roomy.fragments) == graph.settings.max_reranking_output_doc
    weights = [m.score for m in roomy.fragments]
    assert weights == sorted(weights, reverse=True)
    tight = graph.goal_context("g-fill", char_budget=600)
    assert tight.characters <= 600 and tight.truncated
    assert len(tight.fragments) < len(roomy.fragments)
    passing = graph.goal_context("g-fill", min_score=0.0)
    assert not passing.fill_up_used


def test_a_failed_dataset_write_leaves_nothing(graph: ThalabusGraph, db: Database) -> None:
    ghost = Fragment("docid-9999-c1", "docid-9999", "x", 0.5, "chapters")
    real = graph.query('"cat"', return_documents=False).fragments[:3]
    with pytest.raises(DatasetError):
        graph.datasets.create([*real, ghost], session="ghost")
    rows = db.driver.execute_query("MATCH (d:Dataset {session: 'ghost'}) RETURN count(d) AS n",
                                   database_="neo4j").records
    assert rows[0]["n"] == 0
    with pytest.raises(DatasetError):
        graph.rerank_dataset("nope#dataset_1")


def test_branch_level_reranking_rescores_each_branch_with_its_own_query(
        graph: ThalabusGraph) -> None:
    query = '"cat climbs tree" OR "squirrel"'
    plain = graph.query(query, return_documents=False).fragments
    reranked = graph.query(query, return_documents=False, automatically_rerank=True).fragments
    assert {f.fragmentid for f in reranked} == {f.fragmentid for f in plain}
    # each branch scores the fragments it found (MIN_SCORE applies per phrase)
    found = {branch: {f.fragmentid for f in graph.query(branch, return_documents=False)
                      .fragments} for branch in ('"cat climbs tree"', '"squirrel"')}
    by_id = {f.fragmentid: f for f in reranked}
    for f in plain:
        text = (f.text or "").lower().split()
        left = len({"cat", "climbs", "tree"} & set(text)) / 3
        right = 1.0 if "squirrel" in text else 0.0
        expected = max(left if f.fragmentid in found['"cat climbs tree"'] else 0.0,
                       right if f.fragmentid in found['"squirrel"'] else 0.0)
        assert math.isclose(by_id[f.fragmentid].score, expected), f.fragmentid


def test_datasets_read_back_through_the_neomodel_models(graph: ThalabusGraph) -> None:
    from thalabus_graph.graph import models

    parent = make_dataset(graph, '"kitchen floor" OR CHARACTER=Sammy', "neomodel")
    models.bind(graph.db.driver, graph.db.database)
    node = models.Dataset.nodes.get(datasetid=parent)
    expected = [(m.fragmentid, m.score, m.hidden) for m in graph.datasets.members(parent)]
    assert node.weighted_members() == expected
    assert any(isinstance(f, models.Chapter) for f in node.fragments.all())
    assert [d.documentid for d in node.documents.all()] == ["docid-2002"]


def test_a_not_within_several_parent_datasets_takes_the_documents_of_any_of_them(
        graph: ThalabusGraph) -> None:
    bob = make_dataset(graph, "CHARACTER=Bob", "universe")
    iraq = make_dataset(graph, '"asylum" AND COUNTRY_OF_ORIGIN=IQ', "universe")
    in_iraq = {m.documentid for m in graph.datasets.members(iraq)}
    assert in_iraq and in_iraq <= docs_where(has("COUNTRY_OF_ORIGIN", "IQ"))
    result = graph.query("NOT CHARACTER=Jane", subset_of_datasetids=[bob, iraq],
                         return_documents=False)
    expected = (docs_where(has("CHARACTER", "Bob")) | in_iraq) - \
        docs_where(has("CHARACTER", "Jane"))
    assert {f.documentid for f in result.fragments} == expected
    assert all(f.is_stub for f in result.fragments)
    one = graph.query("NOT CHARACTER=Jane", subset_of_datasetids=[bob],
                      return_documents=False)
    assert {f.documentid for f in one.fragments} < expected


def test_a_query_writes_its_dataset_before_it_aggregates_documents(
        graph: ThalabusGraph, monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[str] = []
    aggregate, write = attach.documents_of, graph.queries.datasets.create

    def aggregating(*args: Any, **kwargs: Any) -> Any:
        events.append("aggregate")
        return aggregate(*args, **kwargs)

    def writing(*args: Any, **kwargs: Any) -> Any:
        events.append("write")
        return write(*args, **kwargs)

    monkeypatch.setattr(attach, "documents_of", aggregating)
    monkeypatch.setattr(graph.queries.datasets, "create", writing)
    result = graph.query('"Bob the cat"', create_dataset=True, session="order")
    assert events == ["write", "aggregate"]
    assert result.documents and result.dataset_ids
    members = graph.datasets.members(result.dataset_ids[0])
    assert {m.documentid for m in members} == {d.documentid for d in result.documents}
