"""Degenerate vectors: refused at ingest as line errors, and harmless when already stored."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.adversarial.conftest import HashEmbedder
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.embeddings.base import Vectors
from thalabus_graph.graph.database import Database

pytestmark = pytest.mark.integration
DIMS = Settings.from_env().embedding_dimensions


def line(documentid: str, vector: list[float], ontology: str = "adv") -> str:
    return json.dumps({"documentid": documentid, "ontology": ontology,
                       "categories": {"KIND": "x"}, "chapters": [f"zebra {documentid}"],
                       "embeddings": {f"{documentid}-c1": vector}})


def good_vector(seed: int) -> list[float]:
    row = np.random.default_rng(seed).standard_normal(DIMS)
    return [float(x) for x in row / np.linalg.norm(row)]


def stored_ids(db: Database) -> list[str]:
    rows = db.driver.execute_query("MATCH (d:Document) RETURN d.documentid AS id ORDER BY id",
                                   database_=db.database).records
    return [r["id"] for r in rows]


def test_bad_supplied_vectors_are_line_errors_and_the_rest_is_ingested(
        clean_db: Database, tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join([
        line("ok-1", good_vector(1)),
        line("zero", [0.0] * DIMS),
        line("tiny", [1e-200] * DIMS),
        line("huge", [1e300] * DIMS),
        line("short", good_vector(2)[:-1]),
        line("ok-2", good_vector(3)),
    ]) + "\n", encoding="utf-8")
    graph = ThalabusGraph(clean_db, settings=Settings.from_env())
    report = graph.ingest(path, progress=False)
    assert report.documents == 2
    errors = {e.line_number: e.message for e in report.errors}
    assert sorted(errors) == [2, 3, 4, 5]
    assert "zero vector" in errors[2] and "zero vector" in errors[3]
    assert "not a finite float32" in errors[4]
    assert f"the graph uses {DIMS}" in errors[5]
    assert stored_ids(clean_db) == ["ok-1", "ok-2"]


class ZeroForSomeTexts(HashEmbedder):
    """Returns an all-zero vector for passages containing "void" (a broken embedding server)."""

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        out = super().embed_passages(texts)
        for i, text in enumerate(texts):
            if "void" in text:
                out[i] = 0.0
        return out


def test_a_computed_zero_vector_is_a_line_error(clean_db: Database) -> None:
    graph = ThalabusGraph(clean_db, settings=Settings.from_env(),
                          embedder=ZeroForSomeTexts(DIMS))
    docs: list[dict[str, Any]] = [
        {"documentid": "c-1", "chapters": ["plain text"]},
        {"documentid": "c-2", "chapters": ["into the void"]},
    ]
    report = graph.ingest(docs, progress=False)
    assert [(e.line_number, "zero vector" in e.message) for e in report.errors] == [(2, True)]
    assert stored_ids(clean_db) == ["c-1"]


@pytest.mark.parametrize("bad", [[0.0] * DIMS, [1e-200] * DIMS, [1e300] * DIMS],
                         ids=["zero", "tiny", "huge"])
def test_queries_survive_a_degenerate_vector_already_stored(
        clean_db: Database, bad: list[float]) -> None:
    """Data written before ingest checked vectors: set directly, then query the exact path."""
    settings = Settings.from_env().replace(vector_in_index_filter=False)
    graph = ThalabusGraph(clean_db, settings=settings, embedder=HashEmbedder(DIMS))
    graph.ingest([json.loads(line("z", good_vector(4))), json.loads(line("a", good_vector(5))),
                  json.loads(line("other", good_vector(6), ontology="elsewhere"))],
                 progress=False)
    clean_db.driver.execute_query(
        "MATCH (c:Chapter {fragmentid: 'z-c1'}) SET c.embedding = $bad", bad=bad,
        database_=clean_db.database)
    explained = json.dumps(graph.explain('"zebra" AND KIND=x', ontology_id="adv"))
    assert "exact" in explained
    result = graph.query('"zebra" AND KIND=x', ontology_id="adv", return_documents=False,
                         profile=True)
    assert "a" in {f.documentid for f in result.fragments}
    assert "repair-vectors" in json.dumps(result.plan)
    result = graph.query('"zebra"', ontology_id="adv", return_documents=False)
    assert "a" in {f.documentid for f in result.fragments}
