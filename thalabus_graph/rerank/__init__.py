"""Reranking: the `Reranker` protocol and backends, selection policies, reranking in rounds and
the `RerankingRetriever` stage that wraps any retriever.

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
    geometric_mean,
    normalise_min_max,
    weighted_minimum,
)
from thalabus_graph.rerank.protocol import (
    NoReranking,
    Passage,
    Reranker,
    RerankFailure,
    RerankReply,
    document_id,
)
from thalabus_graph.rerank.rounds import (
    RoundsResult,
    rerank_fragments,
    rerank_in_rounds,
    rerank_in_rounds_sync,
    rounds_of,
)
from thalabus_graph.rerank.score_api import PROTOCOLS, ScoreApiReranker
from thalabus_graph.rerank.stage import (
    Hit,
    RerankingRetriever,
    RerankQueryRetriever,
    RetrievalResult,
    Retriever,
)
from thalabus_graph.rerank.tracing import (
    DEGRADED,
    RERANK_SPAN,
    RERANKED,
    RecordingTracer,
    Span,
    SpanTracer,
    TraceEvent,
    Tracer,
)

__all__ = [
    "DEGRADED",
    "PROTOCOLS",
    "RERANKED",
    "RERANK_SPAN",
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
    "document_id",
    "geometric_mean",
    "normalise_min_max",
    "rerank_fragments",
    "rerank_in_rounds",
    "rerank_in_rounds_sync",
    "reranker_from_settings",
    "rounds_of",
    "weighted_minimum",
]
