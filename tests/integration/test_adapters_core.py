"""The adapters' shared core without a server: scope, phrase quoting, the clause query the
reranker reads, sync calls from inside a running event loop, and the rule that drops a
repeated text of a document.

The retriever here is a recording `Retriever` (the protocol the reranking stage wraps), not a
database: what is checked is what the core hands it and how it runs it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

import pytest

from thalabus_graph.errors import ConfigurationError, QueryNodeError
from thalabus_graph.fragments import Fragment
from thalabus_graph.integrations.core import Source, hit_metadata, run_sync
from thalabus_graph.query import Semantic, parse
from thalabus_graph.rerank import Hit, Passage, RerankReply, RetrievalResult
from thalabus_graph.retriever import distinct_texts


class Recording:
    """A `Retriever` that remembers its calls and the thread each ran on."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any, int, str]] = []

    async def retrieve(self, query: str, *, scope: Any = None, k: int = 10) -> RetrievalResult:
        self.calls.append((query, scope, k, threading.current_thread().name))
        return RetrievalResult((Hit("doc-1-c1", text="t", score=0.5),), reranked=False)


class Asked:
    """A reranker that records the query it was asked and scores every passage 1.0."""

    billable = False

    def __init__(self) -> None:
        self.queries: list[str] = []

    @property
    def available(self) -> bool:
        return True

    async def score(self, query: str, passages: Sequence[Passage]) -> RerankReply:
        self.queries.append(query)
        return RerankReply({p.fragmentid: 1.0 for p in passages})


def test_scope_k_and_phrase_mode_reach_the_retriever() -> None:
    inner = Recording()
    source = Source(inner, ontology_id="asylum", subset_of_datasetids=("s#dataset_1",), k=3)
    run_sync(source.retrieve('  say "hi" \\ bye AND NOT x=1 '))
    query, scope, k, _ = inner.calls[0]
    assert parse(query) == Semantic('say "hi" \\ bye AND NOT x=1')
    run_sync(Source(inner, query_syntax=True).retrieve('"hi" AND x=1'))
    assert inner.calls[1][0] == '"hi" AND x=1'
    with pytest.raises(QueryNodeError):
        run_sync(source.retrieve("   "))
    assert scope == {"ontology_id": "asylum", "subset_of_datasetids": ["s#dataset_1"]}
    assert k == 3
    assert Source(inner).scope() == {}
    with pytest.raises(ConfigurationError, match="k must be at least 1"):
        Source(inner, k=0)


def test_sync_call_inside_a_running_loop_runs_on_a_worker_thread() -> None:
    inner = Recording()
    source = Source(inner)

    async def notebook_cell() -> RetrievalResult:
        return source.retrieve_sync('"x"')  # a sync API called from async code

    result = asyncio.run(notebook_cell())
    assert [h.chunk_id for h in result.hits] == ["doc-1-c1"]
    assert inner.calls[0][3] != threading.main_thread().name
    source.retrieve_sync('"x"')
    assert inner.calls[1][3] == threading.main_thread().name


def test_metadata_names_every_field_and_only_present_ones() -> None:
    hit = Hit("doc-7-p2", text="t", score=0.25, rerank_score=3.5,
              contributions=("semantic:paragraphs", "text:chapters"))
    assert hit_metadata(hit, RetrievalResult((hit,), reranked=True)) == {
        "fragment_id": "doc-7-p2", "document_id": "doc-7", "score": 0.25,
        "contributions": ["semantic:paragraphs", "text:chapters"], "reranked": True,
        "title": None, "language": None, "categories": {}, "rerank_score": 3.5}
    plain = Hit("doc-7-p2", score=0.25)
    degraded = RetrievalResult((plain,), reranked=False, degraded_reason="timeout")
    assert hit_metadata(plain, degraded) == {
        "fragment_id": "doc-7-p2", "document_id": "doc-7", "score": 0.25, "contributions": [],
        "reranked": False, "title": None, "language": None, "categories": {},
        "degraded_reason": "timeout"}
    described = Hit("doc-7-p2", document={"title": "T", "language": "en",
                                          "categories": {"A": ["x"]}, "ontology": "o"})
    metadata = hit_metadata(described, degraded)
    assert (metadata["title"], metadata["language"], metadata["categories"]) == (
        "T", "en", {"A": ["x"]})


def test_repeated_texts_of_a_document_keep_the_coarser_grain_and_the_better_score() -> None:
    chapter = Fragment("d-c1", "d", "One\n paragraph.", 0.6, "chapters", ("semantic:chapters",),
                       context=[{"reader": "bob"}])
    paragraph = Fragment("d-p1", "d", "One paragraph.", 0.8, "paragraphs",
                         ("semantic:paragraphs",))
    other_doc = Fragment("e-p1", "e", "One paragraph.", 0.7, "paragraphs")
    keyword = Fragment("d-k1", "d", "paragraph", 0.9, "keywords")
    stubs = [Fragment("f", "f", None, 1.0, "category"), Fragment("g", "g", None, 1.0, "category")]
    kept = distinct_texts([keyword, paragraph, other_doc, chapter, *stubs])
    assert [(f.fragmentid, f.score) for f in kept] == [
        ("f", 1.0), ("g", 1.0), ("d-k1", 0.9), ("d-c1", 0.8), ("e-p1", 0.7)]
    assert kept[3].contributions == ("semantic:chapters", "semantic:paragraphs")
    assert kept[3].text == "One\n paragraph."
    assert kept[3].context == [{"reader": "bob"}]
