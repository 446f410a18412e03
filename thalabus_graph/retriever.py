"""``ThalabusRetriever``: the engine as an async ``Retriever``, so the reranking stage wraps it.

``scope`` is a mapping with ``ontology_id`` and/or ``subset_of_datasetids`` (or None). The
query runs off the event loop (the driver is synchronous). Its ``rerank_query`` gives the
stage the query's positive semantic clauses, so the reranker never sees query syntax.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from thalabus_graph.engine import ThalabusGraph
from thalabus_graph.errors import ConfigurationError
from thalabus_graph.query import parse, rerank_query
from thalabus_graph.rerank.stage import Hit, RetrievalResult


class ThalabusRetriever:
    """Retrieves fragment hits for a Thalabus query.

    Example:
        >>> stage = RerankingRetriever(ThalabusRetriever(graph), reranker)  # doctest: +SKIP
        >>> await stage.retrieve('"appeal"', scope={"ontology_id": "asylum"})  # doctest: +SKIP
    """

    def __init__(self, graph: ThalabusGraph) -> None:
        self.graph = graph

    def rerank_query(self, query: str) -> str:
        """The positive semantic clauses of ``query`` joined by " AND " ("" when none).

        ``'"appeal" AND COUNTRY_OF_ORIGIN=IQ'`` gives ``'appeal'``: category predicates and
        phrases under NOT are never sent to a reranker (docs/architecture.md, "Query language").

        Raises:
            ThalabusSyntaxError: ``query`` is not a valid Thalabus query.
        """
        return rerank_query(parse(query))

    async def retrieve(self, query: str, *, scope: Any = None, k: int = 10) -> RetrievalResult:
        """At most ``k`` fragments for ``query`` within ``scope``, best first."""
        if scope is not None and not isinstance(scope, Mapping):
            raise ConfigurationError("scope is a mapping with ontology_id and/or "
                                     "subset_of_datasetids")
        scope = scope or {}
        unknown = set(scope) - {"ontology_id", "subset_of_datasetids"}
        if unknown:
            raise ConfigurationError(f"unknown scope keys: {sorted(unknown)}")
        result = await asyncio.to_thread(
            self.graph.query, query, ontology_id=scope.get("ontology_id"),
            subset_of_datasetids=scope.get("subset_of_datasetids"), return_documents=False)
        hits = tuple(Hit(f.fragmentid, f.documentid, f.text or "", f.score, None,
                         f.contributions) for f in result.fragments[:k])
        return RetrievalResult(hits, reranked=False)


__all__ = ["ThalabusRetriever"]
