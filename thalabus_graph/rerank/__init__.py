"""Reranking: the `Reranker` protocol and backends, selection policies, reranking in rounds and
the `RerankingRetriever` stage that wraps any retriever.

``__all__`` lists what callers use (backends, the protocol types a custom reranker or tracer
implements, policies, the stage, the round runners); helpers such as trace event names or the
clause-combination primitives stay importable from their own submodules.

Example (a synchronous caller)::

    from thalabus_graph.rerank import ThresholdWithTiers, rerank_fragments, reranker_from_settings
    result = rerank_fragments([("docid-1-c1", "text", 0.71), ...], '"bob" AND "cat"',
                              reranker_from_settings(settings),
                              ThresholdWithTiers.from_settings(settings))
    for f in result.fragments: print(f.fragmentid, f.score, f.original_score)
"""

from __future__ import annotations

from thalabus_graph.rerank.budget import Budget, BudgetPolicy
from thalabus_graph.rerank.cross_encoder import CrossEncoder, CrossEncoderReranker
from thalabus_graph.rerank.factory import reranker_from_settings
from thalabus_graph.rerank.model import ModelReranker
from thalabus_graph.rerank.policies import (
    Percentile,
    PerQueryNormalised,
    ScoredFragment,
    ScoreGap,
    Selection,
    SelectionPolicy,
    ThresholdWithTiers,
    TopK,
    combine_clause_scores,
)
from thalabus_graph.rerank.protocol import (
    NoReranking,
    Passage,
    Reranker,
    RerankFailure,
    RerankReply,
)
from thalabus_graph.rerank.rounds import (
    RoundsResult,
    rerank_fragments,
    rerank_in_rounds,
)
from thalabus_graph.rerank.score_api import ScoreApiReranker
from thalabus_graph.rerank.stage import (
    Hit,
    RerankingRetriever,
    RerankQueryRetriever,
    RetrievalResult,
    Retriever,
)
from thalabus_graph.rerank.tracing import (
    RecordingTracer,
    Span,
    SpanTracer,
    TraceEvent,
    Tracer,
)

__all__ = [
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
