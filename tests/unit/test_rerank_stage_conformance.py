"""The reranking stage as seed 000 says it: the reranker sees the semantic clauses only, a query
without one is not reranked, misconfiguration raises, and each call is one traced span."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from tests.unit.test_rerank_stage import HITS, Inner, Table, ids
from thalabus_graph.errors import ConfigurationError
from thalabus_graph.query import parse, rerank_query
from thalabus_graph.rerank import (
    CrossEncoderReranker,
    Passage,
    RecordingTracer,
    RerankingRetriever,
    RerankReply,
)
from thalabus_graph.rerank.stage import RerankQueryRetriever
from thalabus_graph.rerank.tracing import DEGRADED, RERANK_SPAN


class Recording(Table):
    """A table reranker that records the query text it was asked."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.queries: list[str] = []

    async def score(self, query: str, passages: Sequence[Passage]) -> RerankReply:
        self.queries.append(query)
        return await super().score(query, passages)


class ClauseInner(Inner):
    """An inner retriever that, like ThalabusRetriever, names its rerank query."""

    def rerank_query(self, query: str) -> str:
        return rerank_query(parse(query))


SCORES = {h.chunk_id: i / 100 for i, h in enumerate(HITS)}


def test_the_reranker_is_asked_the_semantic_clauses_not_the_query_syntax() -> None:
    reranker = Recording(SCORES)
    stage = RerankingRetriever(ClauseInner(), reranker, candidates=6, top_n=3)
    assert isinstance(stage.inner, RerankQueryRetriever)
    found = asyncio.run(stage.retrieve(
        '"appeal" AND COUNTRY_OF_ORIGIN=IQ AND NOT "tax" OR ("review" AND \'court\')'))
    assert found.reranked
    assert reranker.queries == ["appeal AND review"]
    assert ids(found) == ["docid-5-c1", "docid-4-c1", "docid-3-c1"]


def test_a_query_without_a_semantic_clause_is_not_reranked() -> None:
    reranker, tracer = Recording(SCORES), RecordingTracer()
    stage = RerankingRetriever(ClauseInner(), reranker, candidates=6, top_n=3, tracer=tracer)
    found = asyncio.run(stage.retrieve("COUNTRY_OF_ORIGIN=IQ AND NOT \"tax\""))
    assert (found.reranked, found.degraded_reason) == (False, "no-semantic-query")
    assert ids(found) == [h.chunk_id for h in HITS[:3]]
    assert reranker.calls == 0
    assert [e.attributes["reason"] for e in tracer.named(DEGRADED)] == ["no-semantic-query"]


def test_a_retriever_without_rerank_query_has_its_query_sent_verbatim() -> None:
    reranker = Recording(SCORES)
    stage = RerankingRetriever(Inner(), reranker, candidates=6, top_n=3)
    asyncio.run(stage.retrieve("plain words"))
    assert reranker.queries == ["plain words"]


def test_a_configuration_error_is_raised_not_degraded() -> None:
    """Seed 001: a cross-encoder score-count mismatch raises ConfigurationError."""

    class Short:
        def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
            return [0.5] * (len(pairs) - 1)

    stage = RerankingRetriever(Inner(), CrossEncoderReranker(Short()), candidates=6, top_n=3)
    with pytest.raises(ConfigurationError, match="5 scores for 6 pairs"):
        asyncio.run(stage.retrieve("q"))


def test_each_call_is_one_span_with_its_outcome() -> None:
    tracer = RecordingTracer()
    ok = RerankingRetriever(Inner(), Table(SCORES), candidates=6, top_n=3, tracer=tracer)
    asyncio.run(ok.retrieve("q"))
    failing = RerankingRetriever(Inner(), Table({}, error=RuntimeError("down")), candidates=5,
                                 top_n=2, tracer=tracer)
    asyncio.run(failing.retrieve("q"))
    assert [s.name for s in tracer.spans] == [RERANK_SPAN, RERANK_SPAN]
    assert RERANK_SPAN not in [e.name for e in tracer.events]
    spans = [s.attributes for s in tracer.spans]
    assert spans == [
        {"candidates": 6, "kept": 3, "reranked": True, "usage.total_tokens": 10},
        {"candidates": 5, "kept": 2, "reranked": False, "degraded_reason": "failed"},
    ]
