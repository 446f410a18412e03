"""Ingestion into the real Neo4j: whole documents, replacement without orphans, embedding
reuse, bad lines, precomputed vectors, and an embedding server failing mid-run."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.integration.sample import shared_embedder
from tests.support.loopback import LoopbackServer, Request, Response
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.embeddings import OpenAIEmbedder
from thalabus_graph.errors import IngestError, ServiceError
from thalabus_graph.graph.database import Database

pytestmark = [pytest.mark.integration, pytest.mark.schema_changes]


def count(db: Database, cypher: str, **params: Any) -> int:
    records = db.driver.execute_query(cypher, params, database_=db.database).records
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


def test_a_misspelt_field_is_said_where_it_would_be_silent(
        graph: ThalabusGraph, clean_db: Database, tmp_path: Path) -> None:
    path = tmp_path / "typos.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in [
        {"documentid": "typo-1", "chapter": "a chapter under a property's name"},
        {"documentid": "typo-2", "chapters": ["fine"], "keyword": ["k"]},
        {"documentid": "typo-3", "chapters": ["fine"], "author": "A. Writer"},
    ]) + "\n", encoding="utf-8")
    report = graph.ingest(path, progress=False)
    assert report.documents == 2
    assert [(e.line_number, "did you mean the field 'keywords'?" in e.message)
            for e in report.errors] == [(2, True)]
    assert report.warnings() == [
        "line 1: 'chapter' is stored as a Document property; did you mean the field "
        "'chapters'?"]
    assert report.to_dict()["warnings"] == report.warnings()
    assert count(clean_db, "MATCH (d:Document {documentid: 'typo-1'}) "
                           "RETURN count(d.chapter)") == 1


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


# --- re-ingest keeps dataset members ----------------------------------------------------------


def members(db: Database, datasetid: str) -> set[str]:
    rows = db.driver.execute_query(
        "MATCH (:Dataset {datasetid: $ds})-[:AGGREGATES]->(m) "
        "RETURN coalesce(m.fragmentid, m.documentid) AS id", {"ds": datasetid},
        database_=db.database).records
    return {r["id"] for r in rows}


ORCHARD = [
    "Apple trees in the orchard need pruning in late winter.\n\nPears ripen after apples.",
    "Cherry blossoms bring bees to the orchard.\n\nBees pollinate the fruit trees.",
    "Harvesting fruit by hand keeps the apples unbruised.\n\nCrates are stored cool.",
]


def test_reingest_keeps_dataset_members_and_reports_only_the_dropped_ones(
        graph: ThalabusGraph, clean_db: Database) -> None:
    graph.ingest([doc(1, ORCHARD, summaries=["an orchard year"]), doc(2, ["ships at sea"])],
                 progress=False)
    result = graph.query('"fruit trees in the orchard"', return_documents=False,
                         create_dataset=True, session="keep")
    datasetid = result.dataset_ids[0]
    before = members(clean_db, datasetid)
    assert {"ing-1-c3", "ing-1-p5", "ing-1-p6", "ing-1-c1"} <= before

    again = graph.ingest([doc(1, ORCHARD, summaries=["an orchard year"]),
                          doc(2, ["ships at sea"])], progress=False)
    assert members(clean_db, datasetid) == before
    assert again.members_dropped == {} and again.fragments_deleted == 0
    assert again.embeddings_computed == 0 and again.embeddings_reused == 12

    gone = {"ing-1-c3", "ing-1-p5", "ing-1-p6"}  # the last chapter and its paragraphs
    shorter = graph.ingest([doc(1, ORCHARD[:2], summaries=["an orchard year"])],
                           progress=False)
    assert shorter.fragments_deleted == 3
    assert shorter.members_dropped == {datasetid: len(before & gone)}
    assert shorter.to_dict()["dataset_members_dropped"] == {datasetid: 3}
    assert members(clean_db, datasetid) == before - gone
    assert any("3 members dropped" in w for w in shorter.warnings())
    assert count(clean_db, "MATCH (f:Fragment) WHERE NOT (f)-[:IN_DOCUMENT|IN_CHAPTER]->() "
                           "RETURN count(f)") == 0


def test_reingest_updates_fragments_in_place_and_relinks_moved_paragraphs(
        graph: ThalabusGraph, clean_db: Database) -> None:
    graph.ingest([doc(1, ["alpha\n\nbeta", "gamma"], keywords=["k1", "k2"])], progress=False)
    ids_before = {r["id"]: r["eid"] for r in clean_db.driver.execute_query(
        "MATCH (f:Fragment {documentid: 'ing-1'}) RETURN f.fragmentid AS id, "
        "elementId(f) AS eid", database_=clean_db.database).records}
    report = graph.ingest([doc(1, ["alpha", "beta\n\ngamma"], keywords=["k1"])],
                          progress=False)
    assert report.fragments_deleted == 1  # the second keyword
    rows = clean_db.driver.execute_query(
        "MATCH (p:Paragraph {documentid: 'ing-1'})-[:IN_CHAPTER]->(c:Chapter) "
        "RETURN p.fragmentid AS p, p.text AS text, collect(c.fragmentid) AS chapters "
        "ORDER BY p", database_=clean_db.database).records
    assert [(r["p"], r["text"], r["chapters"]) for r in rows] == [
        ("ing-1-p1", "alpha", ["ing-1-c1"]), ("ing-1-p2", "beta", ["ing-1-c2"]),
        ("ing-1-p3", "gamma", ["ing-1-c2"])]
    ids_after = {r["id"]: r["eid"] for r in clean_db.driver.execute_query(
        "MATCH (f:Fragment {documentid: 'ing-1'}) RETURN f.fragmentid AS id, "
        "elementId(f) AS eid", database_=clean_db.database).records}
    assert set(ids_after) == set(ids_before) - {"ing-1-k2"}
    assert all(ids_after[i] == ids_before[i] for i in ids_after)  # same nodes, updated
    text = clean_db.driver.execute_query("MATCH (c:Chapter {fragmentid: 'ing-1-c2'}) "
                                         "RETURN c.text AS t", database_=clean_db.database).records
    assert text[0]["t"] == "beta\n\ngamma"


# --- hostile input --------------------------------------------------------------------------


def unit_vector(dims: int, seed: int) -> list[float]:
    v = np.random.default_rng(seed).random(dims) + 0.01
    return (v / np.linalg.norm(v)).tolist()


def good(i: int, dims: int) -> dict[str, Any]:
    return {"documentid": f"good-{i}", "chapters": [f"good chapter {i}"],
            "categories": {"KIND": ["fine"]},
            "embeddings": {"chapters": [unit_vector(dims, i)],
                           "paragraphs": [unit_vector(dims, 100 + i)]}}


def deep(levels: int) -> Any:
    value: Any = []
    for _ in range(levels):
        value = [value]
    return value


BIG_NUMBER = "1" + "0" * 400
HOSTILE_LINES = {
    "400-digit embedding number":
        '{"documentid": "bad", "chapters": ["x"], "embeddings": {"bad-c1": ['
        + BIG_NUMBER + "]}}",
    "2**64 property": '{"documentid": "bad", "size": ' + str(2**64) + "}",
    "surrogate in a chapter": '{"documentid": "bad", "chapters": ["a \\ud800 b"]}',
    "surrogate in a category": '{"documentid": "bad", "categories": {"K": ["\\ud800"]}}',
    "surrogate in the id": '{"documentid": "bad\\ud800"}',
    "100k-deep nesting": '{"documentid": "bad", "x": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "documentid over the key limit": json.dumps({"documentid": "d" * 9000}),
    "category value over the key limit":
        json.dumps({"documentid": "bad", "categories": {"K": ["v" * 9000]}}),
}
HOSTILE_MESSAGES = {
    "400-digit embedding number": "too large for a float",
    "2**64 property": "64-bit",
    "surrogate in a chapter": "lone surrogate",
    "surrogate in a category": "lone surrogate",
    "surrogate in the id": "lone surrogate",
    "100k-deep nesting": "nested too deeply",
    "documentid over the key limit": "MAX_KEY_BYTES = 2048",
    "category value over the key limit": "MAX_KEY_BYTES = 2048",
}


def stored_ids(db: Database) -> list[str]:
    rows = db.driver.execute_query("MATCH (d:Document) RETURN d.documentid AS id ORDER BY id",
                                   database_=db.database).records
    return [r["id"] for r in rows]


@pytest.mark.parametrize("case", sorted(HOSTILE_LINES))
def test_a_hostile_line_is_reported_and_skipped_or_stops_a_strict_run(
        case: str, clean_db: Database, tmp_path: Path) -> None:
    settings = Settings.from_env()
    dims = settings.embedding_dimensions
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join([json.dumps(good(1, dims)), HOSTILE_LINES[case],
                               json.dumps(good(3, dims))]) + "\n", encoding="utf-8")
    graph = ThalabusGraph(clean_db, settings=settings)
    report = graph.ingest(path, progress=False, embed=False)
    assert [e.line_number for e in report.errors] == [2]
    assert HOSTILE_MESSAGES[case] in report.errors[0].message
    assert report.documents == 2 and stored_ids(clean_db) == ["good-1", "good-3"]

    clean_db.write("migrations_delete_data_nodes")
    with pytest.raises(IngestError, match=r"^line 2: ") as info:
        graph.ingest(path, strict=True, progress=False, embed=False)
    assert info.value.line_number == 2
    assert stored_ids(clean_db) == []  # the batch holding line 1 was not written either


HOSTILE_DICTS: dict[str, dict[str, Any]] = {
    "huge int in an embedding": {"documentid": "bad", "chapters": ["x"],
                                 "embeddings": {"bad-c1": [10 ** 400]}},
    "2**64 property": {"documentid": "bad", "size": 2**64},
    "surrogate in a chapter": {"documentid": "bad", "chapters": ["\ud800"]},
    "surrogate in a category": {"documentid": "bad", "categories": {"K": "\udfff"}},
    "surrogate in the id": {"documentid": "\ud800"},
    "100k-deep value": {"documentid": "bad", "chapters": [deep(100_000)]},
    "100k-deep category": {"documentid": "bad", "categories": {"K": deep(100_000)}},
    "documentid over the key limit": {"documentid": "é" * 5000},
    "non-string property name": {"documentid": "bad", 7: "x"},
}


@pytest.mark.parametrize("case", sorted(HOSTILE_DICTS))
def test_hostile_dicts_through_the_python_api_are_reported_and_skipped(
        case: str, clean_db: Database) -> None:
    settings = Settings.from_env()
    dims = settings.embedding_dimensions
    graph = ThalabusGraph(clean_db, settings=settings)
    report = graph.ingest([good(1, dims), HOSTILE_DICTS[case], good(3, dims)],
                          progress=False, embed=False)
    assert [e.line_number for e in report.errors] == [2], report.errors
    assert stored_ids(clean_db) == ["good-1", "good-3"]


def test_a_document_neo4j_refuses_at_write_time_is_isolated_and_reported(
        clean_db: Database) -> None:
    """Documents built directly skip the parser's checks: the write itself must cope."""
    settings = Settings.from_env(write_batch_size=100)
    dims = settings.embedding_dimensions
    from thalabus_graph.ingest.parsing import document_from_dict
    from thalabus_graph.ingest.source import SourceDocument

    too_long = SourceDocument(documentid="x" * 9000)           # Neo4j: too large to index
    unpackable = SourceDocument(documentid="big", properties={"n": 2**64})  # driver: overflow
    docs = [document_from_dict(good(1, dims)), too_long, unpackable,
            document_from_dict(good(4, dims))]
    graph = ThalabusGraph(clean_db, settings=settings)
    report = graph.ingest(docs, progress=False, embed=False)
    assert [e.line_number for e in report.errors] == [2, 3]
    assert "refused" in report.errors[0].message
    assert stored_ids(clean_db) == ["good-1", "good-4"]
    clean_db.write("migrations_delete_data_nodes")
    with pytest.raises(IngestError, match="lines 1-4"):
        graph.ingest(docs, progress=False, embed=False, strict=True)
    assert stored_ids(clean_db) == []


# --- duplicate documentids ------------------------------------------------------------------


@pytest.mark.parametrize("batch_size", [1000, 1])
def test_a_repeated_documentid_takes_the_last_line_whole_and_is_reported(
        batch_size: int, clean_db: Database, tmp_path: Path) -> None:
    settings = Settings.from_env(write_batch_size=batch_size)
    embedder = shared_embedder()
    apples = unit_vector(settings.embedding_dimensions, 7)
    path = tmp_path / "dup.jsonl"
    path.write_text("\n".join([
        json.dumps({"documentid": "dup-1", "chapters": ["apples and pears"],
                    "paragraphs": [[]], "embeddings": {"dup-1-c1": apples}}),
        json.dumps({"documentid": "dup-1", "chapters": ["ships"], "paragraphs": [[]]}),
    ]) + "\n", encoding="utf-8")
    report = ThalabusGraph(clean_db, settings=settings, embedder=embedder).ingest(
        path, progress=False)
    rows = clean_db.driver.execute_query(
        "MATCH (c:Chapter {fragmentid: 'dup-1-c1'}) RETURN c.text AS text, "
        "c.embedding AS embedding", database_=clean_db.database).records
    assert len(rows) == 1 and rows[0]["text"] == "ships"
    ships = embedder.embed_passages(["ships"])[0]
    assert np.allclose(rows[0]["embedding"], ships, atol=1e-6)
    assert not np.allclose(rows[0]["embedding"], apples, atol=1e-3)
    assert [(d.documentid, d.line_number, d.replaced_by) for d in report.duplicates] == [
        ("dup-1", 1, 2)]
    assert report.to_dict()["duplicates"] == [
        {"documentid": "dup-1", "line": 1, "replaced_by": 2}]
    assert "line 1" in report.warnings()[0]


def test_reingest_rebuilds_category_and_ontology_links(
        graph: ThalabusGraph, clean_db: Database) -> None:
    graph.ingest([doc(1, ["x"], categories={"A": ["1", "2"], "B": ["3"]})], progress=False)
    graph.ingest([doc(1, ["x"], ontology="other", categories={"A": ["2", "4"]})],
                 progress=False)
    rows = clean_db.driver.execute_query(
        "MATCH (d:Document {documentid: 'ing-1'}) RETURN "
        "[(d)-[:IN_ONTOLOGY]->(o) | o.ontologyid] AS ontologies, "
        "[(d)-[:HAS_CATEGORY]->(c) | [c.ontologyid, c.name, c.value]] AS categories",
        database_=clean_db.database).records
    assert rows[0]["ontologies"] == ["other"]
    assert sorted(rows[0]["categories"]) == [["other", "A", "2"], ["other", "A", "4"]]
    graph.ingest([{"documentid": "ing-1", "chapters": ["x"]}], progress=False)
    assert count(clean_db, "MATCH (:Document {documentid: 'ing-1'})-[r]->() "
                           "RETURN count(r)") == 0


def test_a_document_without_vectors_and_no_embedder_is_a_line_error(
        clean_db: Database) -> None:
    settings = Settings.from_env()
    dims = settings.embedding_dimensions
    graph = ThalabusGraph(clean_db, settings=settings)
    docs = [good(1, dims), {"documentid": "novec", "chapters": ["no vector"]}, good(3, dims)]
    report = graph.ingest(docs, progress=False, embed=False)
    assert [e.line_number for e in report.errors] == [2]
    assert "no embedder" in report.errors[0].message
    assert stored_ids(clean_db) == ["good-1", "good-3"]
    assert report.embeddings_supplied == 4
    with pytest.raises(IngestError, match=r"^line 2: "):
        graph.ingest(docs, progress=False, embed=False, strict=True)


def test_an_ingest_returns_once_the_index_work_it_caused_is_done(
        graph: ThalabusGraph, clean_db: Database, caplog: pytest.LogCaptureFixture) -> None:
    def states() -> set[str]:
        records = clean_db.driver.execute_query("SHOW INDEXES YIELD state RETURN state",
                                                database_=clean_db.database).records
        return {str(r["state"]) for r in records}

    # An index created just before the ingest populates while the documents are written.
    clean_db.driver.execute_query(
        "CREATE INDEX ingest_wait_probe IF NOT EXISTS FOR (d:Document) ON (d.title)",
        database_=clean_db.database)
    try:
        with caplog.at_level(logging.INFO, logger="thalabus_graph.ingest"):
            report = graph.ingest([doc(i, [f"chapter {i}"]) for i in range(30)],
                                  progress=False)
        assert states() == {"ONLINE"}
        assert 0 <= report.index_wait_seconds <= report.seconds
        assert report.to_dict()["index_wait_seconds"] == round(report.index_wait_seconds, 3)
        assert report.index_warning == "" and "waited" in caplog.text
    finally:
        clean_db.driver.execute_query("DROP INDEX ingest_wait_probe IF EXISTS",
                                      database_=clean_db.database)
