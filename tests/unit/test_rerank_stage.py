"""The reranking stage: bounds, degradation, order rules, budget and tracing."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.loopback import LoopbackServer, Request, Response, score_handler
from thalabus_graph.errors import (
    CapabilityError,
    ConfigurationError,
    GraphError,
    ServiceReplyError,
    ServiceTimeout,
)
from thalabus_graph.rerank import (
    Budget,
    Hit,
    NoReranking,
    Passage,
    RecordingTracer,
    RerankFailure,
    RerankingRetriever,
    RerankReply,
    RetrievalResult,
    Retriever,
    ScoreApiReranker,
)
from thalabus_graph.rerank.tracing import DEGRADED, RERANKED

HITS = tuple(
    Hit(f"docid-{i}-c1", text=f"passage {i}", score=round(0.9 - i * 0.05, 2),
        contributions=("semantic",) if i % 2 else ("semantic", "text"))
    for i in range(12)
)


class Inner:
    """A fixed retriever that records what it was asked."""

    def __init__(self, hits: Sequence[Hit] = HITS, error: Exception | None = None) -> None:
        self.hits = tuple(hits)
        self.asked: list[tuple[str, Any, int]] = []
        self.error = error

    async def retrieve(self, query: str, *, scope: Any = None, k: int = 10) -> RetrievalResult:
        self.asked.append((query, scope, k))
        if self.error is not None:
            raise self.error
        return RetrievalResult(self.hits[:k])


class Table:
    """A reranker answering from a table (ids not in it are unscored)."""

    def __init__(self, table: Mapping[str, float], *, delay: float = 0.0,
                 error: Exception | None = None, available: bool = True,
                 failures: tuple[RerankFailure, ...] = ()) -> None:
        self.table = dict(table)
        self.delay = delay
        self.error = error
        self._available = available
        self.failures = failures
        self.calls = 0

    @property
    def available(self) -> bool:
        return self._available

    async def score(self, query: str, passages: Sequence[Passage]) -> RerankReply:
        self.calls += 1
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.error is not None:
            raise self.error
        return RerankReply(dict(self.table), failures=self.failures, usage={"total_tokens": 10})


def ids(result: RetrievalResult) -> list[str]:
    return [h.chunk_id for h in result.hits]


def run(stage: RerankingRetriever, query: str = "q", **kw: Any) -> RetrievalResult:
    return asyncio.run(stage.retrieve(query, **kw))


# --- construction ---------------------------------------------------------------------------


@pytest.mark.parametrize("candidates,top_n", [(5, 8), (0, 0), (3, 0), (-1, -2)])
def test_candidates_must_bound_top_n(candidates: int, top_n: int) -> None:
    with pytest.raises(ConfigurationError):
        RerankingRetriever(Inner(), NoReranking(), candidates=candidates, top_n=top_n)


def test_bad_timeout_and_k() -> None:
    with pytest.raises(ConfigurationError):
        RerankingRetriever(Inner(), NoReranking(), timeout_seconds=0)
    stage = RerankingRetriever(Inner(), NoReranking())
    with pytest.raises(ConfigurationError):
        run(stage, k=0)


def test_unavailable_reranker_is_refused_at_construction() -> None:
    with pytest.raises(CapabilityError):
        RerankingRetriever(Inner(), Table({}, available=False))
    with pytest.raises(CapabilityError):
        RerankingRetriever(Inner(), ScoreApiReranker("http://127.0.0.1:1", available=False))


def test_the_stage_is_a_retriever() -> None:
    stage = RerankingRetriever(Inner(), NoReranking())
    assert isinstance(stage, Retriever)
    outer = RerankingRetriever(stage, NoReranking(), candidates=8, top_n=3)
    assert ids(run(outer)) == ids(run(stage))[:3]


# --- fan-out --------------------------------------------------------------------------------


def test_fan_out_is_candidates_and_k_narrows_but_never_widens() -> None:
    inner = Inner()
    stage = RerankingRetriever(inner, Table({h.chunk_id: h.score for h in HITS}),
                               candidates=10, top_n=4)
    assert len(run(stage, k=2).hits) == 2
    assert len(run(stage, k=100).hits) == 4
    assert len(run(stage, scope="HANDBOOK").hits) == 4
    assert [k for _, _, k in inner.asked] == [10, 10, 10]
    assert inner.asked[-1][1] == "HANDBOOK"


def test_candidates_beyond_the_bound_are_not_reranked() -> None:
    class Greedy(Inner):
        async def retrieve(self, query: str, *, scope: Any = None,
                           k: int = 10) -> RetrievalResult:
            return RetrievalResult(self.hits)  # ignores k

    seen: list[int] = []

    class Counting(Table):
        async def score(self, query: str, passages: Sequence[Passage]) -> RerankReply:
            seen.append(len(passages))
            return await super().score(query, passages)

    stage = RerankingRetriever(Greedy(), Counting({"docid-11-c1": 1.0}), candidates=5, top_n=5)
    result = run(stage)
    assert seen == [5]
    assert "docid-11-c1" not in ids(result)


# --- order ----------------------------------------------------------------------------------


def test_scored_by_rerank_score_then_unscored_in_retrieved_order() -> None:
    table = {"docid-3-c1": 0.2, "docid-1-c1": 0.9, "docid-5-c1": 0.2, "ghost-1": 5.0}
    stage = RerankingRetriever(Inner(), Table(table), candidates=8, top_n=8)
    result = run(stage, k=8)
    assert result.reranked and result.degraded_reason is None
    assert ids(result) == ["docid-1-c1", "docid-3-c1", "docid-5-c1",
                           "docid-0-c1", "docid-2-c1", "docid-4-c1", "docid-6-c1", "docid-7-c1"]
    top = result.hits[0]
    assert (top.rerank_score, top.score, top.contributions) == (0.9, 0.85, ("semantic",))
    assert [h.rerank_score for h in result.hits[3:]] == [None] * 5
    assert "ghost-1" not in ids(result)


def test_no_reranking_keeps_the_order_and_still_sets_reranked() -> None:
    tracer = RecordingTracer()
    shuffled = list(reversed(HITS))
    stage = RerankingRetriever(Inner(shuffled), NoReranking(), candidates=10, top_n=10,
                               tracer=tracer)
    result = run(stage, k=10)
    assert result.reranked
    assert ids(result) == [h.chunk_id for h in shuffled[:10]]
    assert all(h.rerank_score == h.score for h in result.hits)
    assert tracer.named(DEGRADED) == []


def test_no_reranking_is_the_default_reranker() -> None:
    shuffled = [HITS[i] for i in (7, 2, 11, 0, 5, 9, 1, 3)]
    stage = RerankingRetriever(Inner(shuffled), candidates=8, top_n=6)
    assert isinstance(stage.reranker, NoReranking)
    result = run(stage, k=6)
    assert result.reranked and result.degraded_reason is None
    assert ids(result) == [h.chunk_id for h in shuffled[:6]]
    assert [h.rerank_score for h in result.hits] == [h.score for h in shuffled[:6]]
    assert [h.contributions for h in result.hits] == [h.contributions for h in shuffled[:6]]


def test_no_reranking_costs_nothing_against_a_budget() -> None:
    budget = Budget(max_calls=0)
    stage = RerankingRetriever(Inner(), NoReranking(), candidates=5, top_n=3, budget=budget)
    assert run(stage).reranked and budget.calls == 0


@settings(max_examples=50, deadline=None)
@given(
    st.permutations(list(range(12))),
    st.dictionaries(st.integers(0, 15), st.sampled_from([0.0, 0.1, 0.5, 0.9]), max_size=16),
)
def test_order_is_deterministic_and_follows_the_rules(
    order: list[int], scores: dict[int, float]
) -> None:
    hits = [HITS[i] for i in order]
    table = {f"docid-{i}-c1": s for i, s in scores.items()}
    stage = RerankingRetriever(Inner(hits), Table(table), candidates=12, top_n=12)
    first, second = run(stage, k=12), run(stage, k=12)
    assert first == second
    known = [h for h in hits if h.chunk_id in table]
    if not known:
        assert not first.reranked and ids(first) == [h.chunk_id for h in hits]
        return
    expected = sorted(known, key=lambda h: (-table[h.chunk_id], h.chunk_id))
    expected += [h for h in hits if h.chunk_id not in table]
    assert ids(first) == [h.chunk_id for h in expected]
    assert [h.score for h in first.hits] == [h.score for h in expected]


# --- degradation ----------------------------------------------------------------------------


def degraded(tracer: RecordingTracer) -> list[object]:
    return [e.attributes["reason"] for e in tracer.named(DEGRADED)]


def test_exhausted_budget_skips_the_reranker() -> None:
    tracer = RecordingTracer()
    reranker = Table({"docid-5-c1": 1.0})
    budget = Budget(max_calls=1)
    stage = RerankingRetriever(Inner(), reranker, candidates=6, top_n=3, budget=budget,
                               tracer=tracer)
    assert run(stage).reranked
    result = run(stage)
    assert (result.reranked, result.degraded_reason) == (False, "budget")
    assert ids(result) == ["docid-0-c1", "docid-1-c1", "docid-2-c1"]
    assert reranker.calls == 1
    assert degraded(tracer) == ["budget"]
    assert budget.calls == 1 and budget.tokens == 10


def test_timeout_degrades() -> None:
    tracer = RecordingTracer()
    stage = RerankingRetriever(Inner(), Table({"docid-5-c1": 1.0}, delay=2.0), candidates=6,
                               top_n=3, timeout_seconds=0.05, tracer=tracer)
    result = run(stage)
    assert (result.reranked, result.degraded_reason) == (False, "timeout")
    assert ids(result) == ["docid-0-c1", "docid-1-c1", "docid-2-c1"]
    assert all(h.rerank_score is None for h in result.hits)
    assert degraded(tracer) == ["timeout"]


def test_a_failing_reranker_degrades() -> None:
    tracer = RecordingTracer()
    stage = RerankingRetriever(Inner(), Table({}, error=RuntimeError("gpu on fire")),
                               candidates=6, top_n=3, tracer=tracer)
    result = run(stage)
    assert (result.reranked, result.degraded_reason) == (False, "failed")
    assert degraded(tracer) == ["failed"]
    assert "gpu on fire" in str(tracer.named(DEGRADED)[0].attributes["error"])


@pytest.mark.parametrize(
    "reranker,reason",
    [
        (Table({}), "empty"),
        (Table({"not-a-candidate": 1.0}), "empty"),
        (Table({}, failures=(RerankFailure(("docid-0-c1",), ServiceReplyError("prose")),)),
         "empty"),
        (Table({}, failures=(RerankFailure(("docid-0-c1",), ServiceTimeout("slow")),)),
         "timeout"),
    ],
)
def test_empty_or_invalid_replies_degrade(reranker: Table, reason: str) -> None:
    tracer = RecordingTracer()
    stage = RerankingRetriever(Inner(), reranker, candidates=6, top_n=3, tracer=tracer)
    result = run(stage)
    assert (result.reranked, result.degraded_reason) == (False, reason)
    assert ids(result) == ["docid-0-c1", "docid-1-c1", "docid-2-c1"]
    assert degraded(tracer) == [reason]


def test_inner_errors_and_cancellation_propagate() -> None:
    stage = RerankingRetriever(Inner(error=GraphError("neo4j down")), NoReranking())
    with pytest.raises(GraphError):
        run(stage)

    slow = RerankingRetriever(Inner(), Table({}, delay=5.0), timeout_seconds=10.0)

    async def cancel_it() -> None:
        task = asyncio.create_task(slow.retrieve("q"))
        await asyncio.sleep(0.05)
        task.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(cancel_it())


def test_no_candidates_returns_nothing_without_calling_the_reranker() -> None:
    reranker = Table({"x": 1.0})
    result = run(RerankingRetriever(Inner(()), reranker))
    assert result.hits == () and not result.reranked and reranker.calls == 0


def test_successful_rerank_is_traced() -> None:
    tracer = RecordingTracer()
    stage = RerankingRetriever(Inner(), Table({"docid-4-c1": 0.7}), candidates=6, top_n=2,
                               tracer=tracer)
    run(stage)
    (event,) = tracer.named(RERANKED)
    assert event.attributes == {"candidates": 6, "scored": 1, "unscored": 5, "failures": 0,
                                "returned": 2}


# --- against a real score server ------------------------------------------------------------


def test_stage_over_a_real_score_server_and_its_failures() -> None:
    hits = [Hit(f"docid-{i}-c1", text=t, score=0.5)
            for i, t in enumerate(["dog", "bob cat", "cat", "bob the cat sat"])]
    tracer = RecordingTracer()
    with LoopbackServer(score_handler("vllm-rerank")) as server:
        reranker = ScoreApiReranker(server.url, protocol="vllm-rerank", batch_size=2,
                                    max_retries=0)
        stage = RerankingRetriever(Inner(hits), reranker, candidates=4, top_n=4,
                                   timeout_seconds=0.5, tracer=tracer)
        good = run(stage, "bob cat")
        assert good.reranked
        assert ids(good) == ["docid-1-c1", "docid-3-c1", "docid-2-c1", "docid-0-c1"]
        assert good.usage["requests"] == 2

        def half_broken(request: Request) -> Response:
            if "dog" in request.json()["documents"]:
                return Response(raw=b"not json")
            return score_handler("vllm-rerank")(request)

        server.handler = half_broken
        partial = run(stage, "bob cat")
        assert partial.reranked  # the scored half leads, the unscored half follows in order
        assert ids(partial) == ["docid-3-c1", "docid-2-c1", "docid-0-c1", "docid-1-c1"]
        assert partial.hits[2].rerank_score is None

        server.handler = lambda request: Response(status=500)
        failed = run(stage, "bob cat")
        assert (failed.reranked, failed.degraded_reason) == (False, "failed")

        server.handler = score_handler("vllm-rerank", delay=1.0)
        slow = run(stage, "bob cat")
        assert (slow.reranked, slow.degraded_reason) == (False, "timeout")
        assert ids(slow) == [h.chunk_id for h in hits]
    assert degraded(tracer) == ["failed", "timeout"]


# --- budget ---------------------------------------------------------------------------------


def test_concurrent_calls_sharing_a_budget_never_overspend() -> None:
    reranker = Table({h.chunk_id: h.score for h in HITS}, delay=0.01)
    budget = Budget(max_calls=7)
    stage = RerankingRetriever(Inner(), reranker, candidates=5, top_n=3, budget=budget)

    async def many() -> list[RetrievalResult]:
        return list(await asyncio.gather(*(stage.retrieve("q") for _ in range(40))))

    results = asyncio.run(many())
    assert sum(r.reranked for r in results) == 7
    assert reranker.calls == 7 and budget.calls == 7 and budget.exhausted
    assert {r.degraded_reason for r in results if not r.reranked} == {"budget"}


def test_threads_sharing_a_budget_never_overspend() -> None:
    budget = Budget(max_calls=25, max_tokens=10_000)
    granted: list[bool] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(20):
            ok = budget.try_acquire()
            if ok:
                budget.record({"total_tokens": 3})
            with lock:
                granted.append(ok)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(granted) == 25 and budget.calls == 25 and budget.tokens == 75


def test_token_budget() -> None:
    budget = Budget(max_tokens=15)
    reranker = Table({"docid-1-c1": 1.0})
    stage = RerankingRetriever(Inner(), reranker, candidates=5, top_n=3, budget=budget)
    assert [run(stage).reranked for _ in range(3)] == [True, True, False]
    assert budget.usage == {"total_tokens": 20}
    with pytest.raises(ConfigurationError):
        Budget(max_calls=-1)
