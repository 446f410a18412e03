"""Dataset reranking as seed 000 says it, on the real Neo4j: the output cap, degraded reranks
flagged on the Dataset node (and respected by goal_context), partial failures kept in order,
misconfiguration raised, the branch-level rule, and ``rag_fragments`` storing what it returns.
The reranker speaks the vLLM /score wire format to a loopback HTTP server."""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence

import pytest

from tests.integration.sample import graph_scored_by
from tests.support.loopback import (
    LoopbackServer,
    Request,
    Response,
    parse_score_request,
    score_handler,
    score_reply,
)
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.errors import ConfigurationError
from thalabus_graph.goals import without_repeats
from thalabus_graph.graph.database import Database
from thalabus_graph.query import parse
from thalabus_graph.rerank import CrossEncoderReranker, NoReranking, ScoreApiReranker, TopK
from thalabus_graph.rerank.branches import BranchRerank

pytestmark = pytest.mark.integration
ROUND = 7


@pytest.fixture(scope="module")
def graph(db: Database, score_server: LoopbackServer) -> ThalabusGraph:
    return graph_scored_by(db, score_server.url, batch_size=4, max_reranking_input_frag=ROUND)


def with_reranker(graph: ThalabusGraph, reranker: object, **settings: object) -> ThalabusGraph:
    chosen = Settings.from_env(max_reranking_input_frag=ROUND, **settings) if settings \
        else graph.settings
    return ThalabusGraph(graph.db, settings=chosen, embedder=graph.embedder,
                         reranker=reranker)  # type: ignore[arg-type]


def make_dataset(graph: ThalabusGraph, query: str, session: str) -> str:
    return graph.query(query, create_dataset=True, session=session,
                       return_documents=False).dataset_ids[0]


def node(db: Database, datasetid: str) -> dict[str, object]:
    rows = db.driver.execute_query("MATCH (d:Dataset {datasetid: $id}) RETURN d",
                                   id=datasetid, database_="neo4j").records
    return dict(rows[0]["d"])


def test_a_complete_rerank_is_flagged_reranker_scale(graph: ThalabusGraph, db: Database) -> None:
    parent = make_dataset(graph, '"Bob the cat climbs a tree"', "full")
    result = graph.rerank_dataset(parent, session="full")
    props = node(db, result.dataset_id)
    assert (props["reranked"], props["weight_scale"], props["failures"]) == (True, "reranker", 0)
    assert "reason" not in props  # a complete rerank has no reason
    assert graph.datasets.get(parent).weight_scale == "retrieval"
    assert result.to_dict()["weight_scale"] == "reranker"


def test_merged_rounds_are_capped_at_max_reranking_output_frag(
        graph: ThalabusGraph, db: Database) -> None:
    with LoopbackServer(score_handler("vllm-score", lambda q, t: 0.9)) as server:
        everyone = with_reranker(graph, ScoreApiReranker(server.url, protocol="vllm-score"),
                                 max_reranking_output_frag=6, min_reranking_output_doc=3)
        parent = make_dataset(everyone, '"asylum decision"', "cap")
        size = everyone.datasets.get(parent).members
        assert size > 6  # every member passes the threshold: only the cap can cut
        result = everyone.rerank_dataset(parent, session="cap")
    members = everyone.datasets.members(result.dataset_id)
    assert len(members) == len(result.fragments) == 6
    assert len({m.documentid for m in members}) >= 3  # the tier's documents survive the cap
    assert node(db, result.dataset_id)["capped"] == result.capped == size - 6


def test_a_failed_rerank_is_flagged_and_goal_context_keeps_its_scale(
        graph: ThalabusGraph, db: Database) -> None:
    def fail(_: Request) -> Response:
        return Response(status=500, json_body={"error": "boom"})

    with LoopbackServer(fail) as server:
        broken = with_reranker(graph, ScoreApiReranker(server.url, protocol="vllm-score",
                                                       max_retries=0),
                               min_reranking_score_frag=2.0)
        parent = make_dataset(broken, '"cat"', "failed")
        result = broken.rerank_dataset(parent, session="failed")
    props = node(db, result.dataset_id)
    assert props["reranked"] is False and props["reason"] == "failed"
    assert props["weight_scale"] == "retrieval" and int(props["failures"]) >= 1  # type: ignore[call-overload]
    shown = broken.datasets.get(result.dataset_id)
    assert (shown.reranked, shown.reason, shown.weight_scale) == \
        (False, "failed", "retrieval")
    # A reranker-scale threshold of 2.0 passes nothing; the retrieval weights of the degraded
    # dataset are held to the retrieval threshold (MIN_RERANKING_SCORE_DOC) instead.
    broken.datasets.use_for_goal("g-failed", result.dataset_id)
    ctx = broken.goal_context("g-failed", char_budget=10_000_000)
    passing = [m for m in broken.datasets.members(result.dataset_id)
               if m.score >= broken.settings.min_reranking_score_doc]
    expected = [m.fragmentid for m in without_repeats(passing)[0]]  # each text once
    assert not ctx.fill_up_used and ctx.weight_scales == {result.dataset_id: "retrieval"}
    assert sorted(m.fragmentid for m in ctx.fragments) == sorted(expected)
    assert len(expected) > broken.settings.max_reranking_output_doc


def test_a_query_without_semantic_clause_is_flagged(graph: ThalabusGraph, db: Database) -> None:
    parent = make_dataset(graph, "CHARACTER=Bob", "noclause")
    result = graph.rerank_dataset(parent, session="noclause")
    props = node(db, result.dataset_id)
    assert (props["reranked"], props["reason"], props["weight_scale"]) == \
        (False, "no-semantic-query", "retrieval")


def test_no_reranker_configured_is_flagged_not_reranked(graph: ThalabusGraph,
                                                        db: Database) -> None:
    plain = with_reranker(graph, NoReranking())
    parent = make_dataset(plain, '"cat"', "noreranker")
    result = plain.rerank_dataset(parent, session="noreranker")
    props = node(db, result.dataset_id)
    assert (props["reranked"], props["reason"], props["weight_scale"]) == \
        (False, "no-reranker", "retrieval")
    parent_ids = [m.fragmentid for m in plain.datasets.members(parent)]
    assert [f.fragmentid for f in result.fragments] == parent_ids


def test_a_partial_failure_keeps_unscored_members_after_the_scored_ones(
        graph: ThalabusGraph, db: Database) -> None:
    """Most batches failing must not write a small 'complete' rerank."""
    lock, seen = threading.Lock(), [0]

    def every_other(request: Request) -> Response:
        with lock:
            seen[0] += 1
            n = seen[0]
        if n % 3:
            return Response(status=400, json_body={"error": "bad batch"})
        query, texts = parse_score_request("vllm-score", request.json())
        import random
        return Response(json_body=score_reply("vllm-score", query, texts, lambda q, t: 0.5,
                                              random.Random(0)))

    with LoopbackServer(every_other) as server:
        flaky = with_reranker(graph, ScoreApiReranker(server.url, protocol="vllm-score",
                                                      batch_size=2, max_retries=0,
                                                      max_parallelism=1))
        parent = make_dataset(flaky, '"cat"', "partial")
        result = flaky.rerank_dataset(parent, session="partial", policy=TopK(1))
    parent_members = flaky.datasets.members(parent)
    members = flaky.datasets.members(result.dataset_id)
    props = node(db, result.dataset_id)
    assert result.reranked and result.reason == "partial" and result.failures >= 1
    assert (props["reason"], props["weight_scale"]) == ("partial", "mixed")
    assert props["unscored"] == result.unscored > 0 and props["failures"] == result.failures
    scored = [m for m in members if not m.unscored]
    unscored = [m for m in members if m.unscored]
    assert members == scored + unscored and len(scored) >= 1
    order = [m.fragmentid for m in parent_members]
    assert [m.fragmentid for m in unscored] == [i for i in order
                                                if i in {m.fragmentid for m in unscored}]
    weights = {m.fragmentid: m.score for m in parent_members}
    assert all(m.score == weights[m.fragmentid] for m in unscored)
    assert len(members) == len(scored) + result.unscored


def test_a_configuration_error_is_raised_and_nothing_is_written(
        graph: ThalabusGraph, db: Database) -> None:
    class Short:
        def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
            return [0.5] * (len(pairs) - 1)

    bad = with_reranker(graph, CrossEncoderReranker(Short()))
    parent = make_dataset(bad, '"cat"', "misconfigured")
    with pytest.raises(ConfigurationError, match="scores for"):
        bad.rerank_dataset(parent, session="misconfigured")
    assert [r["datasetid"] for r in bad.datasets.list_datasets("misconfigured")] == [parent]


def test_branch_reranking_puts_unscored_fragments_at_the_branch_floor(
        graph: ThalabusGraph) -> None:
    """One scale per branch: a category stub of a reranked branch takes the float just below
    the branch's lowest reranker score, so it never outranks a scored fragment, not on a
    retrieval score of 1.0 nor by its id on a tie."""
    branch = parse('"Bob the cat" OR CHARACTER=Jane')
    fragments, _ = graph.evaluate(branch)
    stubs = [f for f in fragments if f.is_stub]
    assert stubs and len(stubs) < len(fragments)
    rescored = BranchRerank(graph.reranker, graph.settings)(branch, fragments)
    by_id = {f.fragmentid: f.score for f in rescored}
    scored = [by_id[f.fragmentid] for f in fragments if not f.is_stub]
    floor = min(scored)
    assert all(by_id[s.fragmentid] == math.nextafter(floor, -math.inf) for s in stubs)
    assert max(scored) <= 1.0 and floor < 1.0


def test_rag_fragments_stores_what_the_fast_path_returned(graph: ThalabusGraph) -> None:
    small = with_reranker(graph, NoReranking(), max_fragments_per_doc=1, max_rag_output_frag=4)
    raw = small.query('"asylum"', return_documents=False).fragments
    result = small.rag_fragments('"asylum"', create_dataset=True, session="rag")
    assert len(raw) > 4 and len(result.fragments) == 4
    members = small.datasets.members(result.dataset_ids[0])
    assert [(m.fragmentid, m.score) for m in members] == \
        [(f.fragmentid, f.score) for f in result.fragments]


def test_the_stage_over_thalabus_retriever_reranks_the_clauses_only(
        graph: ThalabusGraph) -> None:
    """The README's example: the reranker sees 'cat', never the category predicate."""
    import asyncio

    from thalabus_graph.rerank import Passage, RerankingRetriever, RerankReply
    from thalabus_graph.retriever import ThalabusRetriever

    class Recording:
        available = True

        def __init__(self) -> None:
            self.queries: list[str] = []

        async def score(self, query: str, passages: Sequence[Passage]) -> RerankReply:
            self.queries.append(query)
            return RerankReply({p.fragmentid: float(len(p.text)) for p in passages})

    reranker = Recording()
    stage = RerankingRetriever(ThalabusRetriever(graph), reranker, candidates=20, top_n=5)
    found = asyncio.run(stage.retrieve('"cat" AND CHARACTER=Bob AND NOT \'snow\''))
    assert reranker.queries == ["cat"] and found.reranked and found.hits
    plain = asyncio.run(stage.retrieve("CHARACTER=Bob"))
    assert (plain.reranked, plain.degraded_reason) == (False, "no-semantic-query")
    assert reranker.queries == ["cat"] and len(plain.hits) == 5
