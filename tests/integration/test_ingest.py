"""Ingestion into the real Neo4j: whole documents, replacement without orphans, embedding
reuse, bad lines, precomputed vectors, and an embedding server failing mid-run."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.integration.sample import shared_embedder
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.embeddings import OpenAIEmbedder
from thalabus_graph.errors import IngestError, ServiceError
from thalabus_graph.graph.database import Database
from thalabus_graph.rerank.testing import LoopbackServer, Request, Response

pytestmark = pytest.mark.integration


def count(db: Database, cypher: str, **params: Any) -> int:
    records = db.driver.execute_query(cypher, params, database_="neo4j").records
    return int(records[0][0])


def doc(i: int, chapters: list[str], **extra: Any) -> dict[str, Any]:
    return {"documentid": f"ing-{i}", "ontology": "test", "title": f"Doc {i}",
            "categories": {"KIND": ["a"]}, "chapters": chapters, **extra}


@pytest.fixture()
def graph(clean_db: Database) -> ThalabusGraph:
    return ThalabusGraph(clean_db, settings=Settings.from_env(), embedder=shared_embedder())


def test_reingest_replaces_a_document_whole_and_reuses_embeddings(
        graph: ThalabusGraph, clean_db: Database) -> None:
    first = graph.ingest([doc(1, ["one\n\ntwo", "three"], summaries=["s"], keywords=["k"])],
                         progress=False)
    assert first.documents == 1 and first.fragments == 7  # 2 chapters, 3 paragraphs, s, k
    assert first.embeddings_computed == 6
    second = graph.ingest([doc(1, ["one\n\ntwo"], categories={"KIND": ["b"]})],
                          progress=False)
    assert second.embeddings_computed == 0 and second.embeddings_reused == 3
    assert count(clean_db, "MATCH (f:Fragment {documentid: 'ing-1'}) RETURN count(f)") == 3
    assert count(clean_db, "MATCH (f:Fragment) WHERE NOT (f)--() RETURN count(f)") == 0
    assert count(clean_db, "MATCH (:Document {documentid: 'ing-1'})-[:HAS_CATEGORY]->(c) "
                           "RETURN count(c)") == 1
    found = graph.query("KIND=b", return_documents=False).fragments
    assert [f.documentid for f in found] == ["ing-1"]


def test_bad_lines_are_reported_with_their_number_or_stop_the_run(
        graph: ThalabusGraph, clean_db: Database, tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    lines = [json.dumps(doc(1, ["fine"])), "{not json", json.dumps({"documentid": ""}),
             json.dumps(doc(2, ["also fine"]))]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = graph.ingest(path, progress=False)
    assert report.documents == 2
    assert [e.line_number for e in report.errors] == [2, 3]
    clean_db.write("migrations_delete_data_nodes")
    with pytest.raises(IngestError) as info:
        graph.ingest(path, strict=True, progress=False)
    assert info.value.line_number == 2


def test_precomputed_embeddings_are_stored_and_a_wrong_dimension_is_a_line_error(
        graph: ThalabusGraph, clean_db: Database) -> None:
    vec = (np.ones(graph.settings.embedding_dimensions) / 10).tolist()
    good = doc(1, ["x"], paragraphs=[[]], embeddings={"ing-1-c1": vec})
    bad = doc(2, ["y"], paragraphs=[[]], embeddings={"ing-2-c1": vec[:5]})
    report = ThalabusGraph(clean_db, settings=graph.settings).ingest(
        [good, bad], progress=False, embed=False)
    assert report.embeddings_supplied == 1 and report.embeddings_computed == 0
    assert [e.line_number for e in report.errors] == [2]
    assert count(clean_db, "MATCH (c:Chapter {fragmentid: 'ing-1-c1'}) "
                           "WHERE size(c.embedding) = $d RETURN count(c)",
                 d=graph.settings.embedding_dimensions) == 1


def test_an_embedding_server_failing_mid_run_leaves_only_whole_documents(
        clean_db: Database) -> None:
    calls = {"n": 0}
    lock = threading.Lock()
    dims = 8

    def handler(request: Request) -> Response:
        body = request.json()
        with lock:
            calls["n"] += 1
            failing = calls["n"] == 3
        if failing:
            return Response(status=500, json_body={"error": "killed"})
        data = [{"object": "embedding", "index": i,
                 "embedding": [1.0 + len(t) % 3] + [0.5] * (dims - 1)}
                for i, t in enumerate(body["input"])]
        return Response(json_body={"object": "list", "data": data, "model": "m",
                                   "usage": {"prompt_tokens": 1, "total_tokens": 1}})

    settings = Settings.from_env(write_batch_size=4, embedding_dimensions=dims)
    docs = [doc(i, [f"chapter {i}"], paragraphs=[[]]) for i in range(6)]
    with LoopbackServer(handler) as server:
        embedder = OpenAIEmbedder(server.url, "m", dimensions=dims, max_retries=0,
                                  batch_size=2, max_concurrency=1)
        graph = ThalabusGraph(clean_db, settings=settings, embedder=embedder)
        with pytest.raises(ServiceError):
            graph.ingest(docs, progress=False)
        written = count(clean_db, "MATCH (d:Document) RETURN count(d)")
        whole = count(clean_db, "MATCH (d:Document)<-[:IN_DOCUMENT]-(:Chapter) RETURN count(d)")
        assert written == whole and written < 6
        report = graph.ingest(docs, progress=False)  # the re-run completes
    assert report.documents == 6
    assert report.embeddings_reused == written
    assert count(clean_db, "MATCH (c:Chapter) WHERE c.embedding IS NOT NULL "
                           "RETURN count(c)") == 6
