"""The public names of thalabus_graph.rerank are pinned so the API never grows by accident.

Only what callers import is exported; helpers (trace event names, clause-combination
primitives, the round splitter) are imported from their submodules."""

from __future__ import annotations

import thalabus_graph.rerank as rerank

EXPECTED = [
    "Budget",
    "BudgetPolicy",
    "CrossEncoder",
    "CrossEncoderReranker",
    "Hit",
    "ModelReranker",
    "NoReranking",
    "Passage",
    "PerQueryNormalised",
    "Percentile",
    "RecordingTracer",
    "RerankFailure",
    "RerankQueryRetriever",
    "RerankReply",
    "Reranker",
    "RerankingRetriever",
    "RetrievalResult",
    "Retriever",
    "RoundsResult",
    "ScoreApiReranker",
    "ScoreGap",
    "ScoredFragment",
    "Selection",
    "SelectionPolicy",
    "Span",
    "SpanTracer",
    "ThresholdWithTiers",
    "TopK",
    "TraceEvent",
    "Tracer",
    "combine_clause_scores",
    "rerank_fragments",
    "rerank_in_rounds",
    "reranker_from_settings",
]


def test_exported_members() -> None:
    assert rerank.__all__ == EXPECTED
    for name in EXPECTED:
        assert getattr(rerank, name) is not None


def test_backends_satisfy_the_protocol() -> None:
    from tests.support.loopback import overlap_score

    class Model:
        def score(self, pairs: list[tuple[str, str]]) -> list[float]:
            return [overlap_score(q, t) for q, t in pairs]

    for backend in (
        rerank.NoReranking(),
        rerank.ScoreApiReranker("http://127.0.0.1:1"),
        rerank.CrossEncoderReranker(Model()),
        rerank.ModelReranker("http://127.0.0.1:1", model="m"),
    ):
        assert isinstance(backend, rerank.Reranker)
        assert backend.available
