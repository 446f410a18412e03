"""Filtered semantic search scoped to an ontology uses the ontology-filtered vector indexes
where the server has them (Neo4j 2026.01+, migration V0007) and falls back to the plain index
elsewhere, saying why; both give the exact-cosine answer, and explain shows the path run.

The graph: 600 one-chapter documents with random unit vectors in three ontologies (300 / 180 /
120) and a category on every other document. Small ``exact_search_max_candidates`` and
``vector_min_k`` make the index paths the planner's choice on this small graph (at scale they
are the default choice). Vectors are precomputed; the query vector comes from a lookup
embedder, and hybrid fusion is off, so the right answer is the exact cosine top 10 within
the filter, computed here with numpy. Every hit must pass the filter; the top 10 must match
the exact one with mean recall >= 0.9 (HNSW is approximate, and the tiny over-fetch here is
meant to force the index paths).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pytest

from tests.integration.test_migrations import REPO_MIGRATIONS
from tests.support.spies import spy_read_transactions
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.embeddings import Vectors
from thalabus_graph.graph.database import Database
from thalabus_graph.graph.migrations import HistoryDao, discover, placeholder_values

pytestmark = [pytest.mark.integration, pytest.mark.schema_changes]
DOCS = 600
ONTOLOGIES = {"wide": 300, "mid": 180, "narrow": 120}
TOP = 10


class LookupEmbedder:
    """Query vectors by phrase (the queries are ``q0``, ``q1``, ...)."""

    def __init__(self, vectors: np.ndarray[Any, Any]) -> None:
        self.vectors = vectors

    @property
    def dimensions(self) -> int:
        return int(self.vectors.shape[1])

    @property
    def model_id(self) -> str:
        return "lookup"

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return np.stack([self.vectors[int(t.removeprefix("q"))] for t in texts])

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        raise AssertionError("the test ingests precomputed vectors")


def unit(rng: np.random.Generator, n: int, dims: int) -> np.ndarray[Any, Any]:
    v = rng.standard_normal((n, dims)).astype(np.float32)
    out: np.ndarray[Any, Any] = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out


@pytest.fixture(scope="module")
def corpus(db: Database) -> Iterator[dict[str, Any]]:
    settings = Settings.from_env().replace(
        exact_search_max_candidates=10, vector_min_k=40, top_n_chapters=TOP,
        hybrid_all_queries=False, short_query_max_words=0,
        calibration_file="none")  # random vectors: recall against the exact cosine order
    rng = np.random.default_rng(23)
    vectors = unit(rng, DOCS, settings.embedding_dimensions)
    queries = unit(rng, 8, settings.embedding_dimensions)
    ontology = [name for name, n in ONTOLOGIES.items() for _ in range(n)]
    docs = [{"documentid": f"ii-{i}", "ontology": ontology[i], "chapters": [f"chapter {i}"],
             "paragraphs": [[]],
             "categories": {"KIND": ["even" if i % 2 == 0 else "odd"]},
             "embeddings": {"chapters": [vectors[i].tolist()]}} for i in range(DOCS)]
    db.write("migrations_delete_data_nodes")
    graph = ThalabusGraph(db, settings=settings, embedder=LookupEmbedder(queries))
    report = graph.ingest(docs, progress=False, embed=False)
    assert report.errors == [] and report.fragments == DOCS
    db.read("migrations_await_indexes", timeout=120)
    yield {"graph": graph, "vectors": vectors, "queries": queries, "ontology": ontology}
    db.write("migrations_delete_data_nodes")


def exact_top(corpus: dict[str, Any], q: int, keep: Any) -> list[str]:
    scores = corpus["vectors"] @ corpus["queries"][q]
    order = [i for i in np.argsort(-scores) if keep(int(i))]
    return [f"ii-{i}" for i in order[:TOP]]


def recall(found: list[str], truth: list[str]) -> float:
    return len(set(found) & set(truth)) / len(truth)


def chapter_step(result: Any) -> dict[str, Any]:
    steps = [s for s in result.plan["tree"]["steps"]
             if s["kind"] == "semantic" and s["source"] == "chapters"]
    assert len(steps) == 1, steps
    return dict(steps[0])


def server_line(db: Database) -> tuple[int, int]:
    line = HistoryDao(db).server()
    assert line is not None
    return line


@pytest.mark.parametrize("ontology", ["mid", "narrow"])
def test_an_ontology_scoped_phrase_takes_the_best_path_of_the_line(
        corpus: dict[str, Any], db: Database, ontology: str) -> None:
    graph: ThalabusGraph = corpus["graph"]
    in_line = server_line(db) >= (2026, 1)
    recalls = []
    for q in range(4):
        result = graph.query(f'"q{q}"', ontology_id=ontology, profile=True)
        found = [d.documentid for d in result.documents or []][:TOP]
        assert len(found) == TOP
        assert all(corpus["ontology"][int(d.removeprefix("ii-"))] == ontology for d in found)
        recalls.append(recall(found, exact_top(
            corpus, q, lambda i: corpus["ontology"][i] == ontology)))
        step = chapter_step(result)
        explained = graph.explain(f'"q{q}"', ontology_id=ontology)["plan"]["steps"]
        planned = next(s for s in explained
                       if s["kind"] == "semantic" and s["source"] == "chapters")
        assert (planned["path"], planned["cypher"]) == (step["path"], step["cypher"])
        if in_line:
            assert step["path"] == "in-index" and step["cypher"] == "search_vector_in_index"
            assert "filtered inside typical_rag_ontology" in step["reason"]
            share = ONTOLOGIES[ontology] / DOCS
            assert step["selectivity"] == pytest.approx(share, abs=1e-6)
            assert step["overfetch_k"] == 40  # max(10 x 1.5 / 1 (the whole ontology), 40)
        else:
            assert step["path"] == "index" and step["cypher"] == "search_vector"
            assert "not ONLINE (migration V0007 builds them on Neo4j 2026.01" in step["reason"]
            assert step["overfetch_k"] > 40  # over-fetched by the ontology's share
    assert sum(recalls) / len(recalls) >= 0.9, recalls


def test_other_restrictions_are_checked_on_the_in_index_candidates(
        corpus: dict[str, Any]) -> None:
    graph: ThalabusGraph = corpus["graph"]
    recalls = []
    for q in range(4, 8):
        result = graph.query(f'"q{q}" AND KIND=even', ontology_id="wide", profile=True)
        found = [d.documentid for d in result.documents or []][:TOP]
        assert len(found) == TOP
        assert all(corpus["ontology"][int(d.removeprefix("ii-"))] == "wide"
                   and int(d.removeprefix("ii-")) % 2 == 0 for d in found)
        recalls.append(recall(found, exact_top(
            corpus, q, lambda i: corpus["ontology"][i] == "wide" and i % 2 == 0)))
    assert sum(recalls) / len(recalls) >= 0.9, recalls


def test_an_ontology_scoped_phrase_asked_again_carries_its_vocabulary_read(
        corpus: dict[str, Any], db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    """Asked again, the scoped phrase's one search statement carries the vocabulary read:
    on the 2026 line that is the in-index statement, whose ``CYPHER 25`` line then leads the
    statement carrying it; the answer is the one read first gives."""
    base: ThalabusGraph = corpus["graph"]
    graph = ThalabusGraph(base.db, settings=base.settings, embedder=base.embedder)
    first = graph.query('"q2"', ontology_id="narrow")
    reads = spy_read_transactions(graph, monkeypatch)
    again = graph.query('"q2"', ontology_id="narrow")
    carried = [r for r in reads if r.endswith("(with category_vocabulary)")]
    assert len(carried) == 1 and "category_vocabulary" not in reads
    if server_line(db) >= (2026, 1):
        assert carried == ["search_vector_in_index (with category_vocabulary)"]
    assert [f.to_dict() for f in again.fragments] == [f.to_dict() for f in first.fragments]


def test_switched_off_the_plain_index_runs_and_explain_says_why(
        corpus: dict[str, Any]) -> None:
    base: ThalabusGraph = corpus["graph"]
    graph = ThalabusGraph(base.db, settings=base.settings.replace(vector_in_index_filter=False),
                          embedder=base.embedder)
    result = graph.query('"q1"', ontology_id="narrow", profile=True)
    step = chapter_step(result)
    assert step["path"] == "index"
    assert ("switched off (vector_in_index_filter)" in step["reason"]
            or "not ONLINE" in step["reason"])
    found = [d.documentid for d in result.documents or []][:TOP]
    assert all(corpus["ontology"][int(d.removeprefix("ii-"))] == "narrow" for d in found)
    assert recall(found, exact_top(corpus, 1, lambda i: corpus["ontology"][i] == "narrow")
                  ) >= 0.8


def test_a_dropped_filtered_index_falls_back_within_the_query(
        corpus: dict[str, Any], db: Database) -> None:
    """The indexes' state is trusted for a minute; a filtered index dropped meanwhile makes the
    in-index search fail, and that query takes the plain path and says why. On 5.26 the
    indexes never exist and the state says so."""
    graph: ThalabusGraph = corpus["graph"]
    state = graph.queries.in_index_filter("mid")
    if server_line(db) < (2026, 1):
        assert not state.available and "migration V0007" in state.why_not
        return
    assert state.available
    db.run_schema("DROP INDEX typical_rag_ontology")
    try:
        result = graph.query('"q2"', ontology_id="mid", profile=True)
        step = chapter_step(result)
        assert step["path"] == "index" and step["cypher"] == "search_vector"
        assert "the in-index search failed" in step["reason"]
        found = [d.documentid for d in result.documents or []][:TOP]
        assert len(found) == TOP
        assert all(corpus["ontology"][int(d.removeprefix("ii-"))] == "mid" for d in found)
    finally:
        v7 = next(m for m in discover(REPO_MIGRATIONS) if m.version == 7)
        for text in v7.render(placeholder_values(graph.settings)):
            db.run_schema(text)
        db.read("migrations_await_indexes", timeout=120)
    assert graph.queries.in_index_filter("mid").available


def test_a_scope_with_parent_datasets_stays_on_the_plain_index_and_says_why(
        corpus: dict[str, Any], db: Database) -> None:
    """The filtered index applies the ontology only; parent datasets are a pattern checked on
    the candidates, so a scope holding both takes the plain paths (and the answer stays in
    both)."""
    graph: ThalabusGraph = corpus["graph"]
    parent = graph.query("KIND=even", ontology_id="wide", create_dataset=True,
                         session="in-index-test").dataset_ids[0]
    result = graph.query('"q4"', ontology_id="wide", subset_of_datasetids=[parent],
                         profile=True)
    step = chapter_step(result)
    assert step["path"] == "index"  # 150 documents: more than the over-fetch of 60
    if server_line(db) >= (2026, 1):
        assert step["reason"].endswith("the scope also has parent datasets")
    found = [int(d.documentid.removeprefix("ii-")) for d in result.documents or []][:TOP]
    assert len(found) == TOP
    assert all(corpus["ontology"][i] == "wide" and i % 2 == 0 for i in found)
