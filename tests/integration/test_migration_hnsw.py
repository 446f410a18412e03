"""V0005 on a database migrated before it: vector indexes rebuilt with the HNSW settings.

A database created with V0001-V0004 holds vector indexes at Neo4j's HNSW defaults (m 16,
ef_construction 100) and already has embeddings in them. Migrating it with the shipped folder
must apply V0005 (and the later versions its server line runs), leave the nodes as they were,
and end with the same three indexes ONLINE at the configured ``vector_hnsw_m`` /
``vector_hnsw_ef_construction``, still finding the stored chapters. The ``runner`` fixture
restores the suite's schema and history after.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.integration.test_migrations import (
    REPO_MIGRATIONS,
    VECTOR_INDEXES,
    migrate_before,
    runner,
)
from thalabus_graph import ThalabusGraph
from thalabus_graph.graph.database import Database
from thalabus_graph.graph.migrations import MigrationRunner, SettingsMismatch, discover
from thalabus_graph.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.schema_changes]
__all__ = ["runner"]  # the fixture, imported so this module shares it
HNSW_VERSION = 5
CHAPTERS = 40


def vector_configs(db: Database) -> dict[str, dict[str, Any]]:
    """indexConfig of every vector index, by name."""
    rows = db.read("migrations_list_indexes")
    return {r["name"]: r["options"]["indexConfig"] for r in rows if r["type"] == "VECTOR"}


def documents(dims: int) -> list[dict[str, Any]]:
    """``CHAPTERS`` one-chapter documents with random unit vectors (fixed seed)."""
    rng = np.random.default_rng(5)
    vectors = rng.standard_normal((CHAPTERS, dims)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return [{"documentid": f"hnsw-{i}", "chapters": [f"chapter {i}"], "paragraphs": [[]],
             "embeddings": {"chapters": [vectors[i].tolist()]}} for i in range(CHAPTERS)]


def nearest(db: Database, vector: list[float]) -> str:
    """The fragment id the ``typical_rag`` index ranks first for ``vector``."""
    rows = db.read("search_vector", index="typical_rag", k=10, top_n=1, vector=vector,
                   documentids=None, ontologyid=None, name=None, values=None, negated=False,
                   filter=None, datasetids=None, details=False)
    return str(rows[0]["fragmentid"])


def test_database_from_before_v0005_migrates_to_the_hnsw_settings(
        runner: MigrationRunner, db: Database, db_settings: Settings, tmp_path: Path) -> None:
    migrate_before(runner, db_settings, tmp_path, HNSW_VERSION)
    old = vector_configs(db)
    assert set(VECTOR_INDEXES) <= set(old)
    assert {(old[n]["vector.hnsw.m"], old[n]["vector.hnsw.ef_construction"])
            for n in VECTOR_INDEXES} == {(16, 100)}

    docs = documents(db_settings.embedding_dimensions)
    report_in = ThalabusGraph(db, settings=db_settings).ingest(docs, progress=False, embed=False)
    assert report_in.errors == [] and report_in.fragments == CHAPTERS, report_in
    probes = [d["embeddings"]["chapters"][0] for d in docs]
    assert [nearest(db, p) for p in probes] == [f"hnsw-{i}-c1" for i in range(CHAPTERS)]
    nodes_before = db.read("test_guard_survey")[0]["nodes"]

    report = runner.migrate()

    server = runner.dao.server()
    assert [s.version for s in report.applied] == [
        m.version for m in discover(REPO_MIGRATIONS)
        if m.version >= HNSW_VERSION and not m.waits_for(server)]
    new = vector_configs(db)
    for name in VECTOR_INDEXES:
        assert new[name]["vector.hnsw.m"] == db_settings.vector_hnsw_m
        assert new[name]["vector.hnsw.ef_construction"] == db_settings.vector_hnsw_ef_construction
        assert new[name]["vector.dimensions"] == old[name]["vector.dimensions"]
    states = {r["name"]: r["state"] for r in db.read("migrations_list_indexes")}
    assert all(states[name] == "ONLINE" for name in VECTOR_INDEXES)
    # Nothing but one history record written; every chapter found again in the rebuilt index.
    assert db.read("test_guard_survey")[0]["nodes"] == nodes_before + len(report.applied)
    assert [nearest(db, p) for p in probes] == [f"hnsw-{i}-c1" for i in range(CHAPTERS)]
    recorded = next(a for a in runner.dao.history() if a.version == HNSW_VERSION)
    assert recorded.placeholders["VECTOR_HNSW_M"] == str(db_settings.vector_hnsw_m)

    other = db_settings.replace(vector_hnsw_m=db_settings.vector_hnsw_m + 1)
    with pytest.raises(SettingsMismatch, match="VECTOR_HNSW_M was"):
        MigrationRunner(db, other, migrations_dir=REPO_MIGRATIONS).migrate()
    db.write("migrations_delete_data_nodes")
