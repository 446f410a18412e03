"""End to end: the README's demo path (``make demo`` runs ``thalabus_graph.demo``) on the real
Neo4j, checking what it shows."""

from __future__ import annotations

import io

import pytest

from tests.integration.sample import shared_embedder
from thalabus_graph import demo
from thalabus_graph.graph.database import Database

pytestmark = [pytest.mark.integration, pytest.mark.line_neutral]


def test_demo_path_runs_and_shows_every_step(neo4j_uri: str, clean_db: Database) -> None:
    out = io.StringIO()
    summary = demo.run(neo4j_uri, out=out, embedder=shared_embedder())
    text = out.getvalue()
    assert summary["ingest"]["documents"] == 31 and not summary["ingest"]["errors"]
    german = summary["queries"]['"Konversion zum Christentum"'][:4]
    assert {"docid-1002", "docid-1003"} <= set(german)  # French and English hits
    filtered = summary["queries"]['"asylum seeker" AND COUNTRY_OF_ORIGIN=IQ']
    assert filtered and all(d in {"docid-1001", "docid-1008", "docid-1012", "docid-1018",
                                  "docid-1021", "docid-1026"} for d in filtered)
    assert summary["queries"]["COUNTRY_OF_ORIGIN=IQ,SY AND NOT DECISION=granted"] == [
        "docid-1008", "docid-1018", "docid-1026"]
    assert summary["rerank"]["reranked"] and summary["rerank"]["query"] == "religious conversion"
    assert summary["rerank"]["dataset_id"].startswith("demo#rerank_")
    assert summary["context"]["fragments"]
    assert "MATCH (ds:Dataset {datasetid: 'demo#dataset_" in text
    lineage = clean_db.driver.execute_query(
        "MATCH (:Dataset {datasetid: $id})-[:DERIVED_FROM]->(p:Dataset) RETURN p.datasetid AS p",
        id=summary["rerank"]["dataset_id"], database_="neo4j").records
    assert [r["p"] for r in lineage] == [summary["dataset"]]
