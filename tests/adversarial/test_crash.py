"""SIGKILL of a launcher-started Neo4j in the middle of a re-ingest, then restart: every
document is whole (old or new version) or absent, no fragment is orphaned, dataset members
are intact. Its own server on its own temporary data dir: nothing else is touched."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.adversarial.conftest import HashEmbedder
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.errors import GraphError
from thalabus_graph.graph.database import Database
from thalabus_graph.graph.launcher import LocalNeo4j
from thalabus_graph.graph.migrations import MigrationRunner

pytestmark = [pytest.mark.integration, pytest.mark.stress]
DOCS = 300


def version(i: int, v: int) -> dict[str, Any]:
    """Version 2 rewrites every chapter and appends one: all version-1 fragment ids survive."""
    chapters = [f"doc {i} v{v} chapter {c} first\n\ndoc {i} v{v} chapter {c} second"
                for c in range(2 + (v - 1))]
    return {"documentid": f"kill-{i}", "version": v, "chapters": chapters,
            "categories": {"V": [str(v)]}}


def check_invariants(db: Database) -> dict[int, int]:
    """Every document whole for the version it claims, no orphans; documents per version."""
    rows = db.driver.execute_query(
        "MATCH (d:Document) RETURN d.documentid AS id, d.version AS v, "
        "[(d)-[:HAS_CATEGORY]->(c) | c.value] AS categories, "
        "[(d)<-[:IN_DOCUMENT]-(c:Chapter) | c.text] AS chapters, "
        "[(d)<-[:IN_DOCUMENT]-(:Chapter)<-[:IN_CHAPTER]-(p) | p.text] AS paragraphs, "
        "COUNT { MATCH (f:Fragment {documentid: d.documentid}) } AS fragments",
        database_=db.database).records
    per_version: dict[int, int] = {}
    for row in rows:
        want = version(int(row["id"].split("-")[1]), row["v"])
        paragraphs = [p for c in want["chapters"] for p in c.split("\n\n")]
        assert sorted(row["chapters"]) == sorted(want["chapters"]), row["id"]
        assert sorted(row["paragraphs"]) == sorted(paragraphs), row["id"]
        assert row["categories"] == [str(row["v"])], row["id"]
        assert row["fragments"] == len(want["chapters"]) + len(paragraphs), row["id"]
        per_version[row["v"]] = per_version.get(row["v"], 0) + 1
    orphans = db.driver.execute_query(
        "MATCH (f:Fragment) WHERE NOT (f)-[:IN_DOCUMENT|IN_CHAPTER]->() RETURN count(f) AS n",
        database_=db.database).records
    assert orphans[0]["n"] == 0
    return per_version


def dataset_members(db: Database, datasetid: str) -> set[str]:
    rows = db.driver.execute_query(
        "MATCH (:Dataset {datasetid: $ds})-[:AGGREGATES]->(m) RETURN m.fragmentid AS id",
        {"ds": datasetid}, database_=db.database).records
    return {r["id"] for r in rows}


def connect(uri: str, settings: Settings) -> ThalabusGraph:
    db = Database.connect(uri)
    MigrationRunner(db, settings).migrate()
    return ThalabusGraph(db, settings=settings,
                         embedder=HashEmbedder(settings.embedding_dimensions))


def test_sigkill_mid_ingest_leaves_whole_documents_and_intact_datasets(tmp_path: Path) -> None:
    settings = Settings.from_env(write_batch_size=20)
    data_dir = tmp_path / "neo4j"
    server = LocalNeo4j(data_dir=data_dir, exit_with_parent=True)
    started = time.monotonic()
    graph = connect(server.start(), settings)
    print(f"\nstart + migrate: {time.monotonic() - started:.1f} s")
    try:
        started = time.monotonic()
        graph.ingest([version(i, 1) for i in range(DOCS)], progress=False)
        print(f"ingest of {DOCS} documents: {time.monotonic() - started:.1f} s")
        result = graph.query('"chapter first"', return_documents=False, create_dataset=True,
                             session="crash")
        datasetid = result.dataset_ids[0]
        before = dataset_members(graph.db, datasetid)
        assert len(before) > 100

        failure: list[BaseException] = []

        def reingest() -> None:
            try:
                graph.ingest([version(i, 2) for i in range(DOCS)], progress=False)
            except GraphError as exc:
                failure.append(exc)

        writer = threading.Thread(target=reingest)
        writer.start()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and writer.is_alive():
            done = graph.db.driver.execute_query(
                "MATCH (d:Document {version: 2}) RETURN count(d) AS n",
                database_=graph.db.database).records[0]["n"]
            if done > 0:
                break
            time.sleep(0.02)
        pid = server.status().pid
        assert pid is not None and writer.is_alive(), "the re-ingest ended before the kill"
        os.kill(pid, signal.SIGKILL)
        writer.join(timeout=120)
        assert not writer.is_alive() and failure, "the writer did not see the server die"
        graph.db.close()

        started = time.monotonic()
        graph = connect(LocalNeo4j(data_dir=data_dir, exit_with_parent=True).start(), settings)
        print(f"restart after SIGKILL + migrate: {time.monotonic() - started:.1f} s")
        per_version = check_invariants(graph.db)
        print(f"after SIGKILL: {per_version} documents per version")
        assert sum(per_version.values()) == DOCS and per_version.get(2, 0) > 0
        assert per_version.get(1, 0) > 0  # the kill landed mid-run
        assert dataset_members(graph.db, datasetid) == before

        report = graph.ingest([version(i, 2) for i in range(DOCS)], progress=False)
        assert report.members_dropped == {} and report.errors == []
        assert check_invariants(graph.db) == {2: DOCS}
        assert dataset_members(graph.db, datasetid) == before
    finally:
        graph.db.close()
        LocalNeo4j(data_dir=data_dir).stop()
