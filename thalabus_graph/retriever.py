"""``ThalabusRetriever``: the engine as an async ``Retriever``, so the reranking stage wraps it.

``scope`` is a mapping with ``ontology_id``, ``subset_of_datasetids``, ``required_filter`` and
``context`` (each optional; ``ThalabusGraph.query``'s arguments of those names), or None. The
query runs off the event loop (the driver is synchronous). Its ``rerank_query`` gives the
stage the query's positive semantic clauses, so the reranker never sees query syntax.

A hit is worth one slot of an LLM's context, so two hits of one document with the same text
(a one-paragraph chapter and its paragraph) are one hit (`distinct_texts`), and each hit
carries its document's title, language and categories (`Hit.document`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import Any

from thalabus_graph.engine import DocumentHit, ThalabusGraph
from thalabus_graph.errors import ConfigurationError
from thalabus_graph.fragments import Fragment, merge_contributions, sort_fragments
from thalabus_graph.query import parse, rerank_query, semantic_clauses
from thalabus_graph.rerank.stage import Hit, RetrievalResult

SCOPE_KEYS = frozenset({"ontology_id", "subset_of_datasetids", "required_filter", "context"})
"""What a scope may hold: the query's scope, its required filter and its graph context."""

GRAIN = ("chapters", "summaries", "questions", "paragraphs", "keywords")
"""Fragment sources from the coarsest to the finest grain: of two hits with the same text,
the one of the finer grain is dropped."""


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

    def rerank_clauses(self, query: str) -> list[str]:
        """The positive semantic clauses of ``query``, each once, for per-clause reranking.

        Raises:
            ThalabusSyntaxError: ``query`` is not a valid Thalabus query.
        """
        return semantic_clauses(parse(query))

    async def retrieve(self, query: str, *, scope: Any = None, k: int = 10) -> RetrievalResult:
        """At most ``k`` fragments for ``query`` within ``scope``, best first, no two of one
        document with the same text (`distinct_texts`), each with its document's details; the
        query's pools are sized to ``k`` (``ThalabusGraph.query``'s ``limit``), and to twice as
        many again while repeated texts leave fewer than ``k``."""
        if scope is not None and not isinstance(scope, Mapping):
            raise ConfigurationError("scope is a mapping with ontology_id, "
                                     "subset_of_datasetids, required_filter or context")
        scope = scope or {}
        unknown = set(scope) - SCOPE_KEYS
        if unknown:
            raise ConfigurationError(f"unknown scope keys: {sorted(unknown)}")
        return await asyncio.to_thread(self._retrieve, query, scope, k)

    def _retrieve(self, query: str, scope: Mapping[str, Any], k: int) -> RetrievalResult:
        # the pools are sized to the k hits asked for (the stage asks for its candidates);
        # when repeated texts leave fewer than k, the query is asked again for twice as many
        # (a fragment's score does not depend on the limit, so the first k stay the first)
        limit = k
        while True:
            result = self.graph.query(query, ontology_id=scope.get("ontology_id"),
                                      subset_of_datasetids=scope.get("subset_of_datasetids"),
                                      return_documents=False, limit=limit,
                                      required_filter=scope.get("required_filter"),
                                      context=scope.get("context"))
            fragments = distinct_texts(result.fragments)[:k]
            most = self.graph.settings.index_max_k
            if len(fragments) >= k or len(result.fragments) < limit or limit >= most:
                break
            limit = min(2 * limit, most)
        details = {d.documentid: document_details(d)
                   for d in self.graph.documents_of(fragments)}
        hits = tuple(Hit(f.fragmentid, f.documentid, f.text or "", f.score, None,
                         f.contributions, _details(details.get(f.documentid, {}), f))
                     for f in fragments)
        return RetrievalResult(hits, reranked=False)


def _details(document: dict[str, Any], fragment: Fragment) -> dict[str, Any]:
    """A hit's document details, with the fragment's graph context rows when asked."""
    if fragment.context is None:
        return document
    return {**document, "context": [dict(row) for row in fragment.context]}


def distinct_texts(fragments: Iterable[Fragment]) -> list[Fragment]:
    """One fragment per document and text (whitespace runs compared as one space), best first.

    Of two with the same text the coarser grain (`GRAIN`) stays, with the better of the two
    scores, both contributions and its own graph context rows: a chapter of one paragraph is
    found as the chapter and as the paragraph, and a reader gains nothing from reading it
    twice. Stubs (no text) are kept.

    Example:
        >>> a = Fragment("d-c1", "d", "One  paragraph.", 0.6, "chapters")
        >>> b = Fragment("d-p1", "d", "One paragraph.", 0.8, "paragraphs")
        >>> [(f.fragmentid, f.score) for f in distinct_texts([b, a])]
        [('d-c1', 0.8)]
    """
    kept: dict[tuple[str, str], Fragment] = {}
    for fragment in fragments:
        text = " ".join(fragment.text.split()) if fragment.text else None
        key = (fragment.documentid, text if text is not None else "\0" + fragment.fragmentid)
        other = kept.get(key)
        if other is None:
            kept[key] = fragment
            continue
        coarse = min(other, fragment, key=_grain)
        kept[key] = Fragment(coarse.fragmentid, coarse.documentid, coarse.text,
                             max(other.score, fragment.score), coarse.source,
                             merge_contributions(other.contributions, fragment.contributions),
                             context=coarse.context)
    return sort_fragments(kept.values())


def _grain(fragment: Fragment) -> tuple[int, str]:
    rank = GRAIN.index(fragment.source) if fragment.source in GRAIN else len(GRAIN)
    return rank, fragment.fragmentid


def document_details(document: DocumentHit) -> dict[str, Any]:
    """What a hit says of its document: ``title``, ``language``, ``categories`` (name ->
    sorted values) and ``ontology``; None for a title or language the document lacks."""
    return {"title": document.title, "language": document.properties.get("language"),
            "categories": {name: list(values) for name, values in document.categories.items()},
            "ontology": document.ontology}


__all__ = ["ThalabusRetriever", "distinct_texts"]
