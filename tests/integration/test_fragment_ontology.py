"""Embedded fragments carry their document's ontology (``ontologyid``), the property the
2026.x vector indexes filter on: written by ingest, moved by re-ingest, and backfilled by
migration V0006 on a graph ingested before it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.integration.sample import shared_embedder
from tests.integration.test_migrations import migrate_before, runner
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.graph.database import Database
from thalabus_graph.graph.migrations import MigrationRunner

pytestmark = [pytest.mark.integration, pytest.mark.schema_changes]
__all__ = ["runner"]  # the fixture, imported so this module shares it
BACKFILL_VERSION = 6


def fragment_ontologies(db: Database) -> dict[str, str | None]:
    """fragmentid -> ontologyid of every fragment node (keywords included: they carry none)."""
    records = db.driver.execute_query(
        "MATCH (f:Fragment) RETURN f.fragmentid AS id, f.ontologyid AS ontologyid",
        database_=db.database).records
    return {r["id"]: r["ontologyid"] for r in records}


def doc(i: int, ontology: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"documentid": f"onto-{i}", "chapters": ["one\n\ntwo", "three"],
                           "summaries": ["short"], "keywords": ["kw"]}
    if ontology is not None:
        out["ontology"] = ontology
    return out


def expected(ontologies: dict[int, str | None]) -> dict[str, str | None]:
    """Every fragment of ``doc(i, o)`` with ``o`` on its embedded ones, none on keywords."""
    out: dict[str, str | None] = {}
    for i, ontology in ontologies.items():
        for suffix in ("c1", "c2", "p1", "p2", "p3", "s1"):
            out[f"onto-{i}-{suffix}"] = ontology
        out[f"onto-{i}-k1"] = None
    return out


@pytest.fixture()
def graph(clean_db: Database) -> ThalabusGraph:
    return ThalabusGraph(clean_db, settings=Settings.from_env(), embedder=shared_embedder())


def test_ingest_writes_and_reingest_moves_the_fragments_ontology(
        graph: ThalabusGraph, clean_db: Database) -> None:
    report = graph.ingest([doc(1, "law"), doc(2, None), doc(3, "tax")], progress=False)
    assert report.errors == []
    assert fragment_ontologies(clean_db) == expected({1: "law", 2: None, 3: "tax"})

    # Same texts, other ontologies: the fragments are updated in place and follow.
    report = graph.ingest([doc(1, "tax"), doc(2, "law"), doc(3, None)], progress=False)
    assert report.errors == [] and report.fragments_deleted == 0
    assert fragment_ontologies(clean_db) == expected({1: "tax", 2: "law", 3: None})


def test_v0006_backfills_a_graph_ingested_before_it(
        runner: MigrationRunner, db: Database, db_settings: Settings, tmp_path: Path) -> None:
    migrate_before(runner, db_settings, tmp_path, BACKFILL_VERSION)
    graph = ThalabusGraph(db, settings=db_settings, embedder=shared_embedder())
    docs = [doc(i, None if i % 3 == 0 else f"o{i % 2}") for i in range(1, 8)]
    assert graph.ingest(docs, progress=False).errors == []
    # The graph as ingest wrote it before V0006: no fragment carries an ontology.
    db.driver.execute_query("MATCH (f:Fragment) REMOVE f.ontologyid", database_=db.database)
    assert set(fragment_ontologies(db).values()) == {None}

    report = runner.migrate()

    assert BACKFILL_VERSION in [s.version for s in report.applied]
    assert fragment_ontologies(db) == expected(
        {i: None if i % 3 == 0 else f"o{i % 2}" for i in range(1, 8)})
    db.write("migrations_delete_data_nodes")
