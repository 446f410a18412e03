"""LlamaIndex adapter: `ThalabusLlamaIndexRetriever` is a ``llama_index.core`` retriever.

Needs the ``llamaindex`` extra (``pip install 'thalabus-graph[llamaindex]'``). The query string
is the user's question, searched by meaning (``query_syntax=True``: a Thalabus query). Each hit
becomes a ``NodeWithScore``: a ``TextNode`` with the fragment id as node id, the fragment text,
and the metadata of `thalabus_graph.integrations.core.hit_metadata` (the document's title,
language and categories are shown to the LLM, the ids and scores are not); its score is the
reranker's when the hit was reranked, else retrieval's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from thalabus_graph.engine import ThalabusGraph
from thalabus_graph.integrations.core import RetrievalResult, Source, hit_metadata, ranking_score
from thalabus_graph.rerank.budget import BudgetPolicy
from thalabus_graph.rerank.protocol import Reranker
from thalabus_graph.rerank.tracing import Tracer

try:
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("thalabus_graph.integrations.llamaindex needs llama-index-core: "
                      "pip install 'thalabus-graph[llamaindex]'") from exc

__all__ = ["ThalabusLlamaIndexRetriever"]

_NOT_EMBEDDED = ("fragment_id", "document_id", "score", "contributions", "reranked",
                 "rerank_score", "degraded_reason")
"""Metadata keys kept out of the text LlamaIndex shows an LLM or an embedder."""


class ThalabusLlamaIndexRetriever(BaseRetriever):
    """A LlamaIndex retriever: the query string is a question, the nodes the fragments that
    answer it.

    Arguments mirror `thalabus_graph.integrations.core.Source.of`: ``ontology_id`` and
    ``subset_of_datasetids`` scope the search, ``required_filter`` holds it to categories no
    input widens, ``context`` adds graph context rows to each hit, ``k`` bounds the result
    (no two hits of one document with the same text), ``query_syntax`` reads the query string
    as a Thalabus query instead of one semantic phrase; with ``reranker`` the hits go through a
    `RerankingRetriever`, which degrades to the retrieved order (``metadata["reranked"]``
    False) instead of failing. Other keyword arguments go to LlamaIndex's ``BaseRetriever``
    (``callback_manager``, ``verbose``...).

    Example:
        >>> retriever = ThalabusLlamaIndexRetriever(g, k=5)  # doctest: +SKIP
        >>> engine = RetrieverQueryEngine.from_args(retriever, llm=llm)  # doctest: +SKIP
        >>> engine.query("how do I clean a kitchen floor?").source_nodes  # doctest: +SKIP

    Raises:
        ConfigurationError: ``k < 1`` or reranking bounds that do not hold.
    """

    def __init__(self, graph: ThalabusGraph, *, ontology_id: str | None = None,
                 subset_of_datasetids: Sequence[str] | None = None, k: int = 10,
                 query_syntax: bool = False, reranker: Reranker | None = None,
                 candidates: int | None = None, timeout_seconds: float = 5.0,
                 budget: BudgetPolicy | None = None, tracer: Tracer | None = None,
                 required_filter: str | None = None, context: str | None = None,
                 **kwargs: Any) -> None:
        self.source = Source.of(graph, ontology_id=ontology_id,
                                subset_of_datasetids=subset_of_datasetids, k=k,
                                query_syntax=query_syntax, reranker=reranker, candidates=candidates,
                                timeout_seconds=timeout_seconds, budget=budget, tracer=tracer,
                                required_filter=required_filter, context=context)
        super().__init__(**kwargs)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return to_nodes(self.source.retrieve_sync(query_bundle.query_str))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return to_nodes(await self.source.retrieve(query_bundle.query_str))


def to_nodes(result: RetrievalResult) -> list[NodeWithScore]:
    """One ``NodeWithScore`` per hit, in the result's order."""
    return [NodeWithScore(node=TextNode(id_=hit.chunk_id, text=hit.text,
                                        metadata=hit_metadata(hit, result),
                                        excluded_llm_metadata_keys=list(_NOT_EMBEDDED),
                                        excluded_embed_metadata_keys=list(_NOT_EMBEDDED)),
                          score=ranking_score(hit))
            for hit in result.hits]
