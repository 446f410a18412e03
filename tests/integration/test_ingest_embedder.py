"""Ingest touches the embedder only when a fragment needs a vector.

An ingest whose vectors are all supplied must succeed with an embedder that cannot embed
passages (a query-only service, or one that is down); when a fragment does need a vector, the
in-process model is loaded once, just before, with the progress paused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from tests.adversarial.conftest import HashEmbedder
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.embeddings.base import Vectors
from thalabus_graph.errors import ServiceError
from thalabus_graph.graph.database import Database
from thalabus_graph.ingest import LOAD_PASSAGE

pytestmark = pytest.mark.integration


class QueryOnlyEmbedder(HashEmbedder):
    """Embeds queries; refuses passages as a query-only service would."""

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        raise ServiceError("this service embeds queries only")


class CountingEmbedder(HashEmbedder):
    """Records every batch of passages it is asked for."""

    def __init__(self, dimensions: int) -> None:
        super().__init__(dimensions)
        self.calls: list[list[str]] = []

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        return super().embed_passages(texts)


def _supplied(documentid: str, dimensions: int) -> dict[str, Any]:
    """A one-chapter document (one paragraph) with both of its vectors supplied."""
    vector = np.full(dimensions, 1.0 / np.sqrt(dimensions)).tolist()
    return {"documentid": documentid, "chapters": [f"text of {documentid}"],
            "embeddings": {"chapters": [vector], "paragraphs": [vector]}}


def test_supplied_vectors_never_reach_the_embedder(clean_db: Database) -> None:
    settings = Settings.from_env()
    graph = ThalabusGraph(clean_db, settings=settings,
                          embedder=QueryOnlyEmbedder(settings.embedding_dimensions))
    docs = [_supplied(f"sup-{n}", settings.embedding_dimensions) for n in range(3)]
    report = graph.ingest(docs, progress=True, strict=True)
    assert (report.documents, report.embeddings_supplied, report.embeddings_computed) == (
        3, 6, 0)


def test_the_model_loads_once_when_the_first_fragment_needs_a_vector(
        clean_db: Database) -> None:
    settings = Settings.from_env()
    embedder = CountingEmbedder(settings.embedding_dimensions)
    graph = ThalabusGraph(clean_db, settings=settings, embedder=embedder)
    docs = [_supplied("sup-1", settings.embedding_dimensions),
            {"documentid": "own-1", "chapters": ["needs a vector"]}]
    report = graph.ingest(docs, progress=True, strict=True)
    assert report.embeddings_computed == 2
    assert embedder.calls[0] == [LOAD_PASSAGE]
    assert [LOAD_PASSAGE] not in embedder.calls[1:]
    assert sorted(t for call in embedder.calls[1:] for t in call) == ["needs a vector"] * 2
