"""Per-clause reranking on the real Neo4j: from the API, the CLI and the reranking stage, with
its flags stored on the derived dataset, a degraded clause flagged; and the fast path's
selection collected as a goal's own RAG fragments (``rag_fragments(goal=)``)."""

from __future__ import annotations

import asyncio
import json
import math

import pytest

from tests.integration.sample import graph_scored_by
from tests.support.loopback import (
    LoopbackServer,
    Request,
    Response,
    overlap_score,
    parse_score_request,
    score_handler,
    score_reply,
)
from thalabus_graph import ThalabusGraph
from thalabus_graph.cli import main
from thalabus_graph.datasets import Member
from thalabus_graph.goals import without_repeats
from thalabus_graph.graph.database import Database
from thalabus_graph.rerank import RerankingRetriever, ScoreApiReranker
from thalabus_graph.rerank.clauses import combined_on_scale
from thalabus_graph.retriever import ThalabusRetriever

pytestmark = pytest.mark.integration
QUERY = '"Bob the cat" AND "kitchen floor"'
CLAUSES = ("Bob the cat", "kitchen floor")


@pytest.fixture(scope="module")
def graph(db: Database, score_server: LoopbackServer) -> ThalabusGraph:
    return graph_scored_by(db, score_server.url)


def make_dataset(graph: ThalabusGraph, query: str, session: str) -> str:
    return graph.query(query, create_dataset=True, session=session,
                       return_documents=False).dataset_ids[0]


def expected_scores(graph: ThalabusGraph, parent: str, rule: str) -> dict[str, float]:
    """The loopback server's overlap score per clause, combined as the product combines."""
    texts = {m.fragmentid: m.rerank_text or m.text or "" for m in graph.datasets.members(parent)}
    tables = [{i: overlap_score(c, t) for i, t in texts.items()} for c in CLAUSES]
    return combined_on_scale(tables, rule)


@pytest.mark.parametrize("rule", ["geometric", "minimum"])
def test_a_dataset_reranks_per_clause_and_stores_how(graph: ThalabusGraph, rule: str) -> None:
    parent = make_dataset(graph, QUERY, f"clauses-{rule}")
    result = graph.rerank_dataset(parent, clauses=rule)
    assert result.reranked and result.reason is None and result.clauses == rule
    assert result.query == "Bob the cat AND kitchen floor"
    expected = expected_scores(graph, parent, rule)
    assert result.fragments
    for f in result.fragments:
        assert math.isclose(f.score, expected[f.fragmentid], abs_tol=1e-12)
    info = graph.datasets.get(result.dataset_id)
    assert info.clauses == rule and info.reranked and info.weight_scale == "reranker"
    joined = graph.rerank_dataset(parent, clauses="joined")
    assert joined.clauses == "joined" and graph.datasets.get(joined.dataset_id).clauses == \
        "joined"
    # the same members, judged differently: per clause is not the joined query's order
    assert {f.fragmentid: f.score for f in joined.fragments} != \
        {f.fragmentid: f.score for f in result.fragments}


def test_the_setting_is_the_default_and_one_clause_has_nothing_to_combine(
        graph: ThalabusGraph) -> None:
    minimum = ThalabusGraph(graph.db, settings=graph.settings.replace(rerank_clauses="minimum"),
                            embedder=graph.embedder, reranker=graph.reranker)
    parent = make_dataset(minimum, QUERY, "clauses-default")
    assert minimum.rerank_dataset(parent).clauses == "minimum"
    single = make_dataset(minimum, '"kitchen floor"', "clauses-default")
    assert minimum.rerank_dataset(single).clauses == "joined"


def test_the_cli_option_reranks_per_clause(graph: ThalabusGraph, neo4j_uri: str,
                                           score_server: LoopbackServer,
                                           monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("THALABUS_RERANKER_URL", score_server.url)
    monkeypatch.setenv("THALABUS_RERANKER_PROTOCOL", "vllm-score")
    parent = make_dataset(graph, QUERY, "clauses-cli")
    assert main(["rerank", parent, "--clauses", "geometric", "--uri", neo4j_uri,
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["clauses"] == "geometric" and out["reranked"]
    assert graph.datasets.get(out["dataset_id"]).clauses == "geometric"
    expected = expected_scores(graph, parent, "geometric")
    assert all(math.isclose(f["score"], expected[f["fragmentid"]], abs_tol=1e-12)
               for f in out["fragments"])
    assert main(["rerank", parent, "--clauses", "minimum", "--uri", neo4j_uri]) == 0
    assert "clauses minimum" in capsys.readouterr().out
    with pytest.raises(SystemExit) as refused:
        main(["rerank", parent, "--clauses", "maximum", "--uri", neo4j_uri])
    assert refused.value.code == 2


def failing_for(clause: str, *, marker: str | None = None) -> LoopbackServer:
    """A /score server that answers with overlap scores but fails (500) for ``clause``: every
    batch, or only the batches holding a text that contains ``marker``."""
    def handle(request: Request) -> Response:
        query, texts = parse_score_request("vllm-score", request.json())
        if query == clause and (marker is None or any(marker in t for t in texts)):
            return Response(status=500, json_body={"error": "clause failed"})
        return Response(json_body=score_reply("vllm-score", query, texts, overlap_score))

    return LoopbackServer(handle)


def test_a_failing_clause_keeps_the_order_and_is_flagged(graph: ThalabusGraph) -> None:
    parent = make_dataset(graph, QUERY, "clauses-failed")
    with failing_for("kitchen floor") as server:
        broken = ThalabusGraph(graph.db, settings=graph.settings, embedder=graph.embedder,
                               reranker=ScoreApiReranker(server.url, protocol="vllm-score",
                                                         max_retries=0))
        result = broken.rerank_dataset(parent, clauses="geometric")
    assert not result.reranked and result.reason == "failed" and result.failures >= 1
    assert [f.fragmentid for f in result.fragments] == \
        [m.fragmentid for m in graph.datasets.members(parent)]
    info = graph.datasets.get(result.dataset_id)
    assert (info.reranked, info.reason, info.weight_scale, info.clauses) == \
        (False, "failed", "retrieval", "geometric")


def test_a_partly_failing_clause_leaves_its_batch_unscored_and_flagged(
        graph: ThalabusGraph) -> None:
    parent = make_dataset(graph, QUERY, "clauses-partial")
    members = graph.datasets.members(parent)
    marker = (members[-1].rerank_text or members[-1].text or "")[:40]
    assert marker
    with failing_for("Bob the cat", marker=marker) as server:
        flaky = ThalabusGraph(graph.db, settings=graph.settings, embedder=graph.embedder,
                              reranker=ScoreApiReranker(server.url, protocol="vllm-score",
                                                        batch_size=4, max_retries=0))
        result = flaky.rerank_dataset(parent, clauses="minimum")
    assert result.reranked and result.reason == "partial" and result.failures >= 1
    assert 1 <= result.unscored <= 4 * result.failures
    assert result.weight_scale == "mixed"
    unscored = [m for m in graph.datasets.members(result.dataset_id) if m.unscored]
    assert members[-1].fragmentid in {m.fragmentid for m in unscored}
    assert len(unscored) == result.unscored
    info = graph.datasets.get(result.dataset_id)
    assert (info.reason, info.unscored, info.weight_scale, info.clauses) == \
        ("partial", result.unscored, "mixed", "minimum")


def test_the_stage_reranks_a_thalabus_query_per_clause(graph: ThalabusGraph) -> None:
    stage = RerankingRetriever(ThalabusRetriever(graph), graph.reranker, candidates=20,
                               top_n=5, clauses="geometric")
    found = asyncio.run(stage.retrieve(QUERY, k=5))
    assert found.reranked and found.clauses == "geometric" and found.hits
    scores = [h.rerank_score for h in found.hits]
    assert all(s is not None for s in scores)
    assert scores == sorted(scores, reverse=True)
    with LoopbackServer(score_handler("vllm-score")) as server:
        joined = RerankingRetriever(ThalabusRetriever(graph),
                                    ScoreApiReranker(server.url, protocol="vllm-score"),
                                    candidates=20, top_n=5)
        assert asyncio.run(joined.retrieve(QUERY, k=5)).clauses == "joined"


def test_rag_fragments_with_a_goal_become_the_goals_own_fragments(
        graph: ThalabusGraph) -> None:
    result = graph.rag_fragments('"kitchen floor"', goal="g-rag-own")
    assert result.fragments
    context = graph.goal_context("g-rag-own")
    kept, repeats = without_repeats([Member(f.fragmentid, f.documentid, f.text, f.score,
                                            f.source) for f in result.fragments])
    assert context.rag_fragments == len(kept) and not context.datasets  # each text once
    assert context.repeats == repeats
    picked = {f.fragmentid: f.score for f in kept}
    own = {m.fragmentid: m.score for m in context.fragments[:len(picked)]}
    assert own == pytest.approx(picked)
    assert any(line.startswith(f"[{result.fragments[0].fragmentid}]")
               for line in context.lines)
    # a dataset of the same goal adds only what the goal does not hold already
    parent = make_dataset(graph, '"kitchen floor"', "rag-own")
    graph.datasets.use_for_goal("g-rag-own", parent)
    both = graph.goal_context("g-rag-own", min_retrieval_score=0.0)
    ids = [m.fragmentid for m in both.fragments]
    kept_own = [i for i in own if i in ids]
    assert len(ids) == len(set(ids)) and ids[:len(kept_own)] == kept_own
    said = [" ".join((m.text or "").split()) for m in both.fragments]
    for m in context.fragments[:len(picked)]:  # an own fragment a member's text holds
        if m.fragmentid not in ids:
            assert any(" ".join((m.text or "").split()) in text for text in said)


def test_rag_fragments_with_a_goal_and_a_filter_give_category_lines(
        graph: ThalabusGraph) -> None:
    result = graph.rag_fragments("CHARACTER=Bob", goal="g-rag-stubs")
    assert result.fragments and all(f.source == "category" for f in result.fragments)
    context = graph.goal_context("g-rag-stubs")
    assert context.rag_fragments == len({f.documentid for f in result.fragments})
    assert {line.split("]")[0][1:] for line in context.lines} == \
        {f.documentid for f in result.fragments}
    empty = graph.rag_fragments('"kitchen floor" AND CHARACTER=Nobody', goal="g-rag-empty")
    assert not empty.fragments
    assert graph.goal_context("g-rag-empty").fragments == []  # the goal exists, empty
