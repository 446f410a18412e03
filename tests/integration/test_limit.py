"""``limit`` on ``query`` and ``rag_fragments``: at most ``limit`` results, the pools sized to
it (explain and profile show them), the same ranking as the full pool when the sized pools
still hold every candidate, the adapters and the reranking stage passing their ``k``, and bad
limits refused before anything runs."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from tests.support.embedders import FixedEmbedder
from tests.support.paths import filtered_call, phrase_call
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.cli import main
from thalabus_graph.errors import ConfigurationError
from thalabus_graph.graph.database import Database
from thalabus_graph.integrations import langchain as lc
from thalabus_graph.integrations import llamaindex as li
from thalabus_graph.integrations.core import Source
from thalabus_graph.rerank import Passage, RerankReply
from thalabus_graph.search.vocabulary import PlannedVocabulary

pytestmark = pytest.mark.integration

DIMS = 384
DOCUMENTS = 40
WORDS = ["kitchen", "garden", "winter", "river", "floor", "window", "market", "bridge"]




class EveryPassage:
    """A reranker that scores every passage by its length (it only has to answer)."""

    billable = False

    @property
    def available(self) -> bool:
        return True

    async def score(self, query: str, passages: Sequence[Passage]) -> RerankReply:
        return RerankReply({p.fragmentid: float(len(p.text)) for p in passages})


def _unit(rng: np.random.Generator) -> npt.NDArray[np.float32]:
    v = rng.standard_normal(DIMS).astype(np.float32)
    return v / np.linalg.norm(v)


@pytest.fixture()
def corpus(clean_db: Database) -> Database:
    """Forty one-chapter documents of two words each, half of them tagged ``odd``."""
    rng = np.random.default_rng(21)
    graph = ThalabusGraph(clean_db, settings=Settings.from_env())
    docs = []
    for i in range(DOCUMENTS):
        doc = f"lim-{i:02d}"
        text = f"{WORDS[i % len(WORDS)]} {WORDS[(i * 3 + 1) % len(WORDS)]} number {i}"
        docs.append({"documentid": doc, "chapters": [text], "paragraphs": [[]],
                     "categories": {"TAG": ["odd" if i % 2 else "even"]},
                     "embeddings": {f"{doc}-c1": _unit(rng).tolist()}})
    graph.ingest(docs, embed=False, progress=False)
    return clean_db


def _graph(db: Database, **changes: Any) -> ThalabusGraph:
    # random vectors: every phrase is about nothing the graph holds, which the calibrated
    # scale silences; these tests read the pools and the round trips on the index scale
    settings = Settings.from_env().replace(limit_pool_factor=4.0, limit_min_k=100,
                                           calibration_file="none", **changes)
    query = _unit(np.random.default_rng(5))
    return ThalabusGraph(db, settings=settings, embedder=FixedEmbedder(
        {"kitchen floor": query, "kitchen": query}), reranker=None)


def _spy_limits(graph: ThalabusGraph, monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    """The ``limit`` of every ``graph.query`` call from now on (the calls still run)."""
    seen: list[int | None] = []
    real = graph.query

    def spy(text: str, **kwargs: Any) -> Any:
        seen.append(kwargs.get("limit"))
        return real(text, **kwargs)

    monkeypatch.setattr(graph, "query", spy)
    return seen


@pytest.mark.parametrize("query", ['"kitchen floor"', '"kitchen floor" AND TAG=odd',
                                   "'kitchen'"])
def test_limit_returns_at_most_limit_results(corpus: Database, query: str) -> None:
    graph = _graph(corpus)
    full = graph.query(query)
    assert full.documents is not None and len(full.documents) > 3
    for limit in (1, 3):
        documents = graph.query(query, limit=limit).documents
        assert documents is not None and 1 <= len(documents) <= limit
        fragments = graph.query(query, limit=limit, return_documents=False).fragments
        assert 1 <= len(fragments) <= limit
        rag = graph.rag_fragments(query, limit=limit).fragments
        assert 1 <= len(rag) <= limit


@pytest.mark.parametrize("query", ['"kitchen floor"', '"kitchen floor" AND TAG=odd'])
def test_pools_holding_every_candidate_rank_as_the_full_pool(corpus: Database,
                                                             query: str) -> None:
    # limit 10 x factor 4: pools of 40, every document of the corpus, so the fusion sees the
    # same candidates and the first ten are the full pool's first ten
    graph = _graph(corpus)
    full = graph.query(query)
    limited = graph.query(query, limit=10)
    assert full.documents is not None and limited.documents is not None
    assert [(d.documentid, round(d.score, 9)) for d in limited.documents] == [
        (d.documentid, round(d.score, 9)) for d in full.documents[:10]]


def _spy_reads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Every ``read_plain`` from now on: (document_details, documents asked) or (statement,
    whether its rows carry details) for a search statement; a batched call is two entries,
    its exact searches' and its other searches'."""
    asked: list[tuple[str, int]] = []
    real = Database.read_plain
    real_carried = PlannedVocabulary.carry

    def note(name: str, params: dict[str, Any]) -> None:
        if name == "document_details":
            asked.append((name, len(params["documentids"])))
        elif name == "search_phrase_filtered":  # a phrase's searches in one call
            asked.append(("exact searches", int(bool(params["exact_details"]))))
            asked.append((name, int(bool(params["details"]))))
        elif "details" in params:
            asked.append((name, int(bool(params["details"]))))

    def spy(self: Database, name: str, /, **params: Any) -> Any:
        note(name, params)
        return real(self, name, **params)

    def carried(self: PlannedVocabulary, name: str, params: dict[str, Any]
                ) -> Any:  # a statement carrying the query's vocabulary read
        note(name, params)
        return real_carried(self, name, params)

    monkeypatch.setattr(Database, "read_plain", spy)
    monkeypatch.setattr(PlannedVocabulary, "carry", carried)
    return asked


def test_a_limited_query_reads_only_its_documents_details(
        corpus: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    # the searches of a limited query carry no details; the documents returned are read
    # afterwards in one statement, with the same details the full query returns. The
    # plugin's call reads the details of the best ten documents it found, so nothing is
    # read after it
    graph = _graph(corpus)
    full = graph.query('"kitchen floor"')
    asked = _spy_reads(monkeypatch)
    limited = graph.query('"kitchen floor"', limit=10)  # pools of 40: every candidate
    assert full.documents is not None and limited.documents is not None
    assert [d.to_dict() for d in limited.documents] == [
        d.to_dict() for d in full.documents[:10]]
    call, _ = phrase_call(graph)
    if call == "search_phrase_procedure":
        assert asked == [(call, 1)]
        return
    assert asked[-1] == ("document_details", 10)
    assert all(n == 0 for name, n in asked[:-1]), asked


def test_a_limited_exact_search_brings_its_documents_details(
        corpus: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    # an exact search's hits are few (the restricted documents' fragments, up to the pool):
    # they carry their documents' details, and no statement reads the documents afterwards
    graph = _graph(corpus)
    query = '"kitchen floor" AND TAG=odd'
    full = graph.query(query)
    asked = _spy_reads(monkeypatch)
    limited = graph.query(query, limit=10)
    assert full.documents is not None and limited.documents is not None
    assert [d.to_dict() for d in limited.documents] == [
        d.to_dict() for d in full.documents[:10]]
    if filtered_call(graph) == "search_phrase_procedure":  # the call reads them itself
        assert asked == [("search_phrase_procedure", 1)], asked
    else:
        assert ("exact searches", 1) in asked and ("search_phrase_filtered", 0) in asked
    assert not [a for a in asked if a[0] == "document_details"], asked
    # fragments only: no search reads details
    asked.clear()
    graph.query(query, limit=10, return_documents=False)
    assert asked and all(n == 0 for _, n in asked), asked


@pytest.mark.parametrize("query", ['"kitchen floor" AND \'garden\'',
                                   "'kitchen' AND 'garden'",
                                   '"kitchen floor" AND NOT \'garden\''])
def test_a_limit_does_not_size_pools_whose_combination_it_would_change(
        corpus: Database, query: str) -> None:
    # two scored sides of an AND keep what both pools hold, a NOT excludes what its pool
    # holds: pools of 4 would drop or let in documents, so these queries keep their pools
    graph = _graph(corpus)
    assert graph.explain(query, limit=1)["pools"]["chapters"] == 200
    full = graph.query(query)
    assert full.documents
    for limit in (1, 3):
        limited = graph.query(query, limit=limit)
        assert limited.documents is not None
        assert [(d.documentid, round(d.score, 9)) for d in limited.documents] == [
            (d.documentid, round(d.score, 9)) for d in full.documents[:limit]]


def test_explain_and_profile_show_the_sized_pools(corpus: Database) -> None:
    graph = _graph(corpus)
    pool = math.ceil(3 * 4.0)
    plan = graph.explain('"kitchen floor" AND TAG=odd', limit=3)
    assert plan["limit"] == 3
    assert plan["pools"]["chapters"] == pool and plan["pools"]["text"] == pool
    assert plan["pools"]["vector_min_k"] == 100
    assert graph.explain('"kitchen floor"')["pools"]["chapters"] == 200
    profiled = graph.query('"kitchen floor"', limit=3, profile=True).plan
    assert profiled is not None
    semantic = [s for s in profiled["tree"]["steps"] if s["kind"] == "semantic"]
    chapters = next(s for s in semantic if s["source"] == "chapters")
    assert chapters["top_n"] == pool and chapters["k"] == max(pool * 4, 100)
    text = [s for s in profiled["tree"]["steps"] if s["kind"] == "text"]
    assert text and all(s["k"] == pool for s in text)


def test_the_adapters_and_the_stage_pass_their_k(corpus: Database,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    graph = _graph(corpus)
    limits = _spy_limits(graph, monkeypatch)
    docs = lc.ThalabusLangChainRetriever(graph=graph, k=4).invoke("kitchen floor")
    assert limits == [4] and 1 <= len(docs) <= 4
    nodes = li.ThalabusLlamaIndexRetriever(graph, k=6).retrieve("kitchen floor")
    assert limits == [4, 6] and 1 <= len(nodes) <= 6
    # the reranking stage asks the engine for its candidates, and returns k of them
    hits = Source.of(graph, k=2, reranker=EveryPassage(), candidates=7).retrieve_sync(
        "kitchen floor")
    assert limits == [4, 6, 7] and len(hits.hits) == 2 and hits.reranked


@pytest.mark.parametrize("bad", [0, -3, 10**9])
def test_bad_limits_are_errors_before_anything_runs(corpus: Database, bad: int) -> None:
    graph = _graph(corpus)
    for call in (graph.query, graph.rag_fragments, graph.explain):
        with pytest.raises(ConfigurationError, match="limit must be between 1 and"):
            call('"kitchen floor"', limit=bad)


def test_cli_query_limit(corpus: Database, neo4j_uri: str,
                         capsys: pytest.CaptureFixture[str]) -> None:
    uri = ["--uri", neo4j_uri]
    assert main(["query", "'kitchen'", *uri, "--limit", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "2 documents" and len([line for line in out if "lim-" in line]) == 2
    assert main(["explain", "'kitchen'", *uri, "--limit", "2"]) == 0
    assert "(sized to limit 2)" in capsys.readouterr().out
    for bad in ("0", "-1", "100000000"):
        assert main(["query", "'kitchen'", *uri, "--limit", bad]) == 2
        assert "limit must be between 1 and" in capsys.readouterr().err
