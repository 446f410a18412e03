"""An unfiltered phrase is one round trip: every source in one statement, empty sources
skipped, scores on the index scale, and profile still showing each source as a step."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from tests.support.embedders import FixedEmbedder
from tests.support.paths import filtered_call, phrase_call
from tests.support.spies import spy_read_transactions
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.graph.database import Database
from thalabus_graph.search import executor

pytestmark = pytest.mark.integration

DIMS = 384
TEXTS = {"rt-1": "the kitchen floor was wet", "rt-2": "a quiet winter garden",
         "rt-3": "kitchen knives and forks"}




def _unit(rng: np.random.Generator) -> npt.NDArray[np.float32]:
    v = rng.standard_normal(DIMS).astype(np.float32)
    return v / np.linalg.norm(v)


@pytest.fixture()
def corpus(clean_db: Database) -> tuple[Database, dict[str, npt.NDArray[np.float32]]]:
    """Three one-chapter documents (no paragraphs, summaries or keywords)."""
    rng = np.random.default_rng(7)
    vectors = {doc: _unit(rng) for doc in TEXTS}
    graph = ThalabusGraph(clean_db, settings=Settings.from_env())
    graph.ingest([{"documentid": doc, "chapters": [text], "paragraphs": [[]],
                   "categories": {"TAG": ["odd" if doc != "rt-2" else "even"]},
                   "embeddings": {f"{doc}-c1": vectors[doc].tolist()}}
                  for doc, text in TEXTS.items()], embed=False, progress=False)
    return clean_db, vectors


def _graph(db: Database, query: npt.NDArray[np.float32], monkeypatch: pytest.MonkeyPatch,
           **changes: Any) -> tuple[ThalabusGraph, list[str]]:
    """A graph on ``db`` and the names of the read transactions (round trips) its queries
    open. The graph's text languages are read first: a graph object reads them at most once
    a minute (``search.languages.TextLanguageState``), not per query."""
    # random vectors: on the calibrated scale every phrase is about nothing the graph holds
    # and returns nothing; these tests read the round trips, on the index scale
    settings = Settings.from_env().replace(**{"calibration_file": "none", **changes})
    embedder = FixedEmbedder({"kitchen": query})
    graph = ThalabusGraph(db, settings=settings, embedder=embedder)
    graph.queries.text_languages()
    # kept for the test: a slow or paused test process must not see it expire before the query
    monkeypatch.setattr(graph.queries.shared.text_languages, "recheck_seconds", float("inf"))
    return graph, spy_read_transactions(graph, monkeypatch)


def _steps(plan: dict[str, Any] | None) -> list[dict[str, Any]]:
    assert plan is not None
    steps: list[dict[str, Any]] = plan["tree"]["steps"]
    return steps


def _tree_steps(plan: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Every step of a profiled plan's tree, node by node (depth first)."""
    assert plan is not None
    out: list[dict[str, Any]] = []
    stack = [plan["tree"]]
    while stack:
        node = stack.pop()
        out += node["steps"]
        stack.extend(reversed(node.get("children", [])))
    return out


def test_semantic_phrase_is_one_round_trip_with_index_scale_scores(
        corpus: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    db, vectors = corpus
    query = _unit(np.random.default_rng(11))
    graph, reads = _graph(db, query, monkeypatch, hybrid_all_queries=False,
                          short_query_max_words=0, calibration_file="none")
    result = graph.query('"kitchen"', return_documents=False, profile=True)
    call, path = phrase_call(graph)
    assert reads == [call]
    expected = {f"{d}-c1": (1 + float(v @ query)) / 2 for d, v in vectors.items()}
    got = {f.fragmentid: f.score for f in result.fragments}
    assert got.keys() == {k for k, s in expected.items() if s >= graph.settings.min_score}
    for fragmentid, score in got.items():
        assert score == pytest.approx(expected[fragmentid], abs=1e-6)
    steps = {s["source"]: s for s in _steps(result.plan)}
    assert steps["chapters"]["path"] == path and steps["chapters"]["rows"] == 3
    s = graph.settings
    assert steps["chapters"]["k"] == max(s.top_n_chapters * s.vector_k_factor, s.vector_min_k)
    assert steps["chapters"]["cypher"] == call
    for empty in ("paragraphs", "summaries", "questions"):
        assert steps[empty]["path"] == "skipped" and steps[empty]["rows"] == 0


def test_fused_phrase_adds_text_in_the_same_round_trip(
        corpus: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    db, _ = corpus
    graph, reads = _graph(db, _unit(np.random.default_rng(3)), monkeypatch,
                          hybrid_all_queries=True)
    result = graph.query('"kitchen"', return_documents=False, profile=True)
    call = phrase_call(graph)[0]
    assert reads == [call]
    # by source: the English text (detected at ingest) is searched in the english indexes
    text = {s["index"].split("_fulltext")[0]: s for s in _steps(result.plan)
            if s["kind"] == "text"}
    assert text["chapters"]["rows"] == 2 and text["chapters"]["analyzer"] == "english"
    assert text["keywords"]["path"] == "skipped"
    assert all(call in s["round_trip"] for s in _steps(result.plan)
               if s.get("path") != "skipped" and s["kind"] in ("semantic", "text"))
    hits = {f.fragmentid: f for f in result.fragments}
    assert {"rt-1-c1", "rt-3-c1"} <= {fragmentid for fragmentid, f in hits.items()
                                      if "text:chapters" in f.contributions}


def test_explain_names_the_round_trip_statement(
        corpus: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    db, _ = corpus
    graph, _ = _graph(db, _unit(np.random.default_rng(5)), monkeypatch)
    steps = graph.explain('"kitchen"')["plan"]["steps"]
    assert {s["cypher"] for s in steps if s["kind"] in ("semantic", "text")} == {
        phrase_call(graph)[0]}


def test_filtered_fused_phrase_reads_its_normalisation_in_one_call(
        corpus: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    db, _ = corpus
    graph, reads = _graph(db, _unit(np.random.default_rng(9)), monkeypatch,
                          hybrid_all_queries=True)
    fragments, _ = graph.evaluate('"kitchen" AND TAG=odd')
    # the category and its count; then one call: the phrase's unrestricted searches
    # (semantic range, best text scores, node counts), exact cosine over the two documents'
    # chapters and the chapters full-text search restricted to them (paragraphs, summaries,
    # keywords: empty, not searched), through the procedure plugin where the server has it
    assert reads == ["category_vocabulary", filtered_call(graph)]
    reference, _ = graph.evaluate('"kitchen" AND TAG=odd', reference=True)
    assert [f.fragmentid for f in fragments] == [f.fragmentid for f in reference]
    for a, b in zip(fragments, reference, strict=True):
        assert a.score == pytest.approx(b.score, abs=1e-6)
    assert {f.documentid for f in fragments} == {"rt-1", "rt-3"}


@pytest.mark.parametrize("query", ['"kitchen" AND TAG=odd', '"kitchen" AND NOT TAG=odd'])
def test_a_filtered_phrase_runs_its_searches_in_one_call_as_one_by_one(
        corpus: Any, monkeypatch: pytest.MonkeyPatch, query: str) -> None:
    db, _ = corpus
    graph, reads = _graph(db, _unit(np.random.default_rng(11)), monkeypatch,
                          hybrid_all_queries=True, procedures="off")  # the engine's batch
    batched = graph.query(query, profile=True)
    assert reads == ["category_vocabulary", "search_phrase_filtered"]
    steps = [s for s in _tree_steps(batched.plan) if s["kind"] in ("semantic", "text")
             and s.get("cypher")]
    assert steps and {s["cypher"] for s in steps} == {"search_phrase_filtered"}
    assert sum(s["ms"] > 0 for s in steps) == 1  # the call's time, on its first step
    # the same searches run one statement each give the same answer
    monkeypatch.setattr(executor, "batched", lambda plan: ())
    reads.clear()
    alone = graph.query(query, profile=True)
    assert len(reads) > 2 and "search_phrase_filtered" not in reads
    assert [f.to_dict() for f in batched.fragments] == [f.to_dict() for f in alone.fragments]
    assert batched.documents is not None and alone.documents is not None
    assert [d.to_dict() for d in batched.documents] == [d.to_dict() for d in alone.documents]
    assert [(s["kind"], s.get("path"), s.get("rows")) for s in _tree_steps(batched.plan)] == [
        (s["kind"], s.get("path"), s.get("rows")) for s in _tree_steps(alone.plan)]


def test_documents_come_with_the_search_round_trip(
        corpus: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    db, _ = corpus
    graph, reads = _graph(db, _unit(np.random.default_rng(13)), monkeypatch,
                          hybrid_all_queries=True)
    result = graph.query('"kitchen"')
    # the searches read their documents' details too: no document_details call
    call = phrase_call(graph)[0]
    assert reads == [call]
    assert result.documents is not None
    # the same documents, details and categories as the separate statement reads them
    separate = graph.documents_of(result.fragments)
    assert reads == [call, "document_details"]
    assert [d.to_dict() for d in result.documents] == [d.to_dict() for d in separate]
    assert {d.documentid: d.categories for d in separate} == {
        "rt-1": {"TAG": ["odd"]}, "rt-2": {"TAG": ["even"]}, "rt-3": {"TAG": ["odd"]}}
    # fragments only: the searches read no details
    fragments_only = graph.query('"kitchen"', return_documents=False)
    assert len(reads) == 3 and fragments_only.documents is None


def test_documents_of_a_filtered_query_are_read_in_one_statement(
        corpus: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    db, _ = corpus
    graph, _ = _graph(db, _unit(np.random.default_rng(17)), monkeypatch,
                      hybrid_all_queries=False,
                      short_query_max_words=0)
    result = graph.query('"kitchen" AND TAG=odd')
    assert result.documents is not None
    assert {d.documentid: d.categories for d in result.documents} == {
        "rt-1": {"TAG": ["odd"]}, "rt-3": {"TAG": ["odd"]}}
    assert all(d.properties["documentid"] == d.documentid for d in result.documents)
