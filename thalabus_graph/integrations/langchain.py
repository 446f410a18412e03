"""LangChain adapter: `ThalabusLangChainRetriever` is a ``langchain_core`` retriever.

Needs the ``langchain`` extra (``pip install 'thalabus-graph[langchain]'``). The input is the
user's question, searched by meaning (``query_syntax=True``: a Thalabus query). Each hit
becomes a ``Document`` whose ``page_content`` is the fragment text and whose metadata carries
the fragment id, document id, score, contributions, the document's title, language and
categories and, when a reranker ran, its verdict (see
`thalabus_graph.integrations.core.hit_metadata`).
"""

from __future__ import annotations

from typing import Any

from thalabus_graph.engine import ThalabusGraph
from thalabus_graph.integrations.core import RetrievalResult, Source, hit_metadata
from thalabus_graph.rerank.budget import BudgetPolicy
from thalabus_graph.rerank.protocol import Reranker
from thalabus_graph.rerank.tracing import Tracer

try:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForRetrieverRun,
        CallbackManagerForRetrieverRun,
    )
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from pydantic import ConfigDict, field_validator
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("thalabus_graph.integrations.langchain needs langchain-core: "
                      "pip install 'thalabus-graph[langchain]'") from exc

__all__ = ["ThalabusLangChainRetriever"]


class ThalabusLangChainRetriever(BaseRetriever):
    """A LangChain retriever: the input is a question, the output the fragments that answer it.

    Fields mirror `thalabus_graph.integrations.core.Source.of`: ``ontology_id`` and
    ``subset_of_datasetids`` scope the search, ``required_filter`` holds it to categories no
    input widens, ``context`` adds graph context rows to each hit, ``k`` bounds the result
    (no two hits of one document with the same text), ``query_syntax`` reads the input as a
    Thalabus query instead of one semantic phrase; with ``reranker`` the hits go through a
    `RerankingRetriever` (``candidates``, ``timeout_seconds``, ``budget``, ``tracer``), which
    degrades to the retrieved order (``metadata["reranked"]`` False) instead of failing.
    With ``query_syntax`` a malformed query raises `ThalabusSyntaxError`; an unknown field is
    a validation error.

    Example:
        >>> retriever = ThalabusLangChainRetriever(graph=g, k=5)  # doctest: +SKIP
        >>> docs = retriever.invoke("how do I clean a kitchen floor?")  # doctest: +SKIP
        >>> docs[0].metadata["title"], docs[0].metadata["score"]  # doctest: +SKIP
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    graph: ThalabusGraph
    ontology_id: str | None = None
    subset_of_datasetids: list[str] | None = None
    k: int = 10
    query_syntax: bool = False
    reranker: Reranker | None = None
    candidates: int | None = None
    timeout_seconds: float = 5.0
    budget: BudgetPolicy | None = None
    tracer: Tracer | None = None
    required_filter: str | None = None
    context: str | None = None

    @field_validator("subset_of_datasetids", mode="before")
    @classmethod
    def _one_id(cls, value: Any) -> Any:
        """A lone string is one dataset id, as everywhere in the API (not a validation
        error)."""
        return [value] if isinstance(value, str) else value

    def model_post_init(self, context: Any, /) -> None:
        """Check the settings now (``k``, the reranking stage's bounds), not at first use."""
        self.source()

    def source(self) -> Source:
        """The retrieval these fields describe (built per call, so edited fields apply)."""
        return Source.of(self.graph, ontology_id=self.ontology_id,
                         subset_of_datasetids=self.subset_of_datasetids, k=self.k,
                         query_syntax=self.query_syntax, reranker=self.reranker,
                         candidates=self.candidates, timeout_seconds=self.timeout_seconds,
                         budget=self.budget, tracer=self.tracer,
                         required_filter=self.required_filter, context=self.context)

    def _get_relevant_documents(self, query: str, *,
                                run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return to_documents(self.source().retrieve_sync(query))

    async def _aget_relevant_documents(
            self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun,
    ) -> list[Document]:
        return to_documents(await self.source().retrieve(query))


def to_documents(result: RetrievalResult) -> list[Document]:
    """One ``Document`` per hit, in the result's order, ids = fragment ids."""
    return [Document(page_content=hit.text, metadata=hit_metadata(hit, result), id=hit.chunk_id)
            for hit in result.hits]
