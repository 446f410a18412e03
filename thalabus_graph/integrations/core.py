"""What both framework adapters share: run a Thalabus retrieval and describe each hit.

A `Source` holds the retriever (the engine, optionally inside the reranking stage), the scope
and ``k``; it runs the async retrieval from sync callers too, and `hit_metadata` names every
hit's fields the same way in every framework.

A chain hands a retriever the user's question as it was typed, so by default the text is one
semantic phrase: a `Semantic` node built from it and written back by the serializer, never
text spliced into query syntax, whatever quotes or backslashes it holds. Thalabus query syntax
(``'"asylum seeker" AND COUNTRY_OF_ORIGIN=IQ'``) is the explicit choice ``query_syntax=True``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from thalabus_graph.engine import ThalabusGraph
from thalabus_graph.errors import ConfigurationError
from thalabus_graph.query import Semantic, serialize
from thalabus_graph.query.ast import id_list
from thalabus_graph.rerank._sync import run_sync
from thalabus_graph.rerank.budget import BudgetPolicy
from thalabus_graph.rerank.protocol import Reranker
from thalabus_graph.rerank.stage import Hit, RerankingRetriever, RetrievalResult, Retriever
from thalabus_graph.rerank.tracing import Tracer
from thalabus_graph.retriever import ThalabusRetriever

__all__ = ["RetrievalResult", "Source", "hit_metadata", "ranking_score",
           "run_sync"]



@dataclass(frozen=True)
class Source:
    """A Thalabus retrieval with a fixed scope and ``k``.

    Attributes:
        retriever: the engine as a `Retriever`, possibly wrapped in a `RerankingRetriever`.
        ontology_id: only documents of this ontology (None: all).
        subset_of_datasetids: only documents with a fragment in one of these datasets.
        k: fragments returned at most.
        query_syntax: the caller's text is a Thalabus query; False (the default): it is a
            question, searched as one semantic phrase.
        required_filter: categories every retrieval is held to (``ThalabusGraph.query``).
        context: a read-only Cypher graph context; its rows are each hit's ``context``.

    Example:
        >>> source = Source.of(graph, ontology_id="asylum", k=5)  # doctest: +SKIP
        >>> source.retrieve_sync("how do I appeal a refusal?")  # doctest: +SKIP

    Raises:
        ConfigurationError: ``k < 1``.
    """

    retriever: Retriever
    ontology_id: str | None = None
    subset_of_datasetids: tuple[str, ...] | None = None
    k: int = 10
    query_syntax: bool = False
    required_filter: str | None = None
    context: str | None = None

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ConfigurationError(f"k must be at least 1, got {self.k}")

    @classmethod
    def of(cls, graph: ThalabusGraph, *, ontology_id: str | None = None,
           subset_of_datasetids: Sequence[str] | None = None, k: int = 10,
           query_syntax: bool = False, reranker: Reranker | None = None,
           candidates: int | None = None,
           timeout_seconds: float = 5.0, budget: BudgetPolicy | None = None,
           tracer: Tracer | None = None, required_filter: str | None = None,
           context: str | None = None) -> Source:
        """A source on ``graph``; with ``reranker``, through a `RerankingRetriever` that takes
        ``candidates`` hits (default: ``max(50, k)``) and returns ``k`` (its construction
        checks apply: ``candidates >= k``); a lone string in ``subset_of_datasetids`` is one
        dataset id, not its characters."""
        retriever: Retriever = ThalabusRetriever(graph)
        if reranker is not None:
            pool = max(50, k) if candidates is None else candidates
            # ThalabusRetriever.rerank_query hands the stage the positive semantic clauses
            retriever = RerankingRetriever(retriever, reranker, candidates=pool,
                                           top_n=k, timeout_seconds=timeout_seconds,
                                           budget=budget, tracer=tracer)
        datasets = id_list(subset_of_datasetids, "subset_of_datasetids")
        return cls(retriever, ontology_id, None if datasets is None else tuple(datasets), k,
                   query_syntax, required_filter, context)

    def scope(self) -> dict[str, Any]:
        """The scope mapping `ThalabusRetriever.retrieve` takes."""
        scope: dict[str, Any] = {}
        if self.ontology_id is not None:
            scope["ontology_id"] = self.ontology_id
        if self.subset_of_datasetids is not None:
            scope["subset_of_datasetids"] = list(self.subset_of_datasetids)
        for key, value in (("required_filter", self.required_filter),
                           ("context", self.context)):
            if value is not None:
                scope[key] = value
        return scope

    def query_text(self, text: str) -> str:
        """The Thalabus query for the caller's text: the text itself with ``query_syntax``,
        else the serialized `Semantic` phrase of it (a blank question is a `QueryNodeError`)."""
        return text if self.query_syntax else serialize(Semantic(text.strip()))

    async def retrieve(self, text: str) -> RetrievalResult:
        """At most ``k`` hits for ``text``, best first."""
        return await self.retriever.retrieve(self.query_text(text), scope=self.scope(),
                                             k=self.k)

    def retrieve_sync(self, text: str) -> RetrievalResult:
        """`retrieve` for synchronous callers, also inside a thread that runs an event loop."""
        return run_sync(self.retrieve(text))


def hit_metadata(hit: Hit, result: RetrievalResult) -> dict[str, Any]:
    """The metadata every adapter attaches to a hit.

    ``fragment_id``, ``document_id``, ``score`` (retrieval), ``contributions`` (the searches
    that found it), ``reranked`` (whether a reranker ordered this result), the document's
    ``title``, ``language`` and ``categories`` (None, None, {} when the retriever read no
    details, as a retriever other than the engine's may); when a reranker
    scored the hit, ``rerank_score``; when the stage fell back to the retrieved order,
    ``degraded_reason`` (``budget``, ``timeout``, ``failed``, ``empty`` or
    ``no-semantic-query``); with a graph context, its rows as ``context``.
    """
    metadata: dict[str, Any] = {
        "fragment_id": hit.chunk_id,
        "document_id": hit.document_id,
        "score": hit.score,
        "contributions": list(hit.contributions),
        "reranked": result.reranked,
        "title": hit.document.get("title"),
        "language": hit.document.get("language"),
        "categories": dict(hit.document.get("categories") or {}),
    }
    if "context" in hit.document:
        metadata["context"] = hit.document["context"]
    if hit.rerank_score is not None:
        metadata["rerank_score"] = hit.rerank_score
    if result.degraded_reason is not None:
        metadata["degraded_reason"] = result.degraded_reason
    return metadata


def ranking_score(hit: Hit) -> float:
    """The score the hit is ordered by: the reranker's when it scored it, else retrieval's."""
    return hit.rerank_score if hit.rerank_score is not None else hit.score
