"""The questions source end to end on the session's Neo4j line (5.26, or 2026.x with
``THALABUS_NEO4J_VERSION``): the migrations build its vector index (and, on 2026.01+, its
ontology-filtered twin), ingest writes ``-qN`` fragments (supplied vectors accepted, bad lines
reported), a phrase finds a document through the question it answers, explain and profile show
the source's step, its factor, cap and ``MIN_SCORE`` act, a dataset stores the question
fragment, re-ingest keeps its identity, and a graph migrated before the questions migration
keeps answering queries."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.sample import shared_embedder
from tests.integration.test_migrations import migrate_before, runner
from tests.support.paths import filtered_call, phrase_call
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.graph.database import Database
from thalabus_graph.graph.migrations import (
    STATE_APPLIED,
    STATE_WAITING,
    HistoryDao,
    MigrationRunner,
)

pytestmark = [pytest.mark.integration, pytest.mark.schema_changes]
__all__ = ["runner"]  # the fixture, imported so this module shares it
QUESTIONS_VERSION = 8
FILTERED_VERSION = 10
PHRASE = "may my landlord increase the rent while the lease is running"
SEMANTIC_ONLY = {"hybrid_all_queries": False, "short_query_max_words": 0}


def lease(questions: list[str]) -> dict[str, Any]:
    """A document whose chapter never speaks of rent: only its questions do."""
    return {"documentid": "qs-1", "ontology": "law", "title": "Tenancy",
            "categories": {"TOPIC": ["housing"]},
            "chapters": ["The agreement for the flat on Elm Street was signed in March by "
                         "both parties."],
            "summaries": ["A signed agreement for a flat."], "questions": questions}


LEASE_QUESTIONS = ["Can the landlord raise the rent during the lease?",
                   "Who pays for repairs to the heating?"]
OTHERS = [
    {"documentid": "qs-2", "ontology": "law", "categories": {"TOPIC": ["weather"]},
     "chapters": ["Heavy rain flooded the village square on Tuesday night."],
     "questions": ["What caused the flooding in the village?"]},
    {"documentid": "qs-3", "ontology": "music", "categories": {"TOPIC": ["music"]},
     "chapters": ["The orchestra rehearsed the symphony for three weeks before the "
                  "premiere."]},
]


def corpus() -> list[dict[str, Any]]:
    return [lease(LEASE_QUESTIONS), *OTHERS]


def engine(db: Database, **overrides: Any) -> ThalabusGraph:
    return ThalabusGraph(db, settings=Settings.from_env(**overrides), embedder=shared_embedder())


@pytest.fixture()
def graph(clean_db: Database) -> Iterator[ThalabusGraph]:
    graph = engine(clean_db)
    report = graph.ingest(corpus(), progress=False)
    assert report.errors == [] and report.documents == 3
    yield graph
    clean_db.write("migrations_delete_data_nodes")


def all_steps(tree: dict[str, Any]) -> list[dict[str, Any]]:
    """Every step of a plan tree, depth first."""
    out: list[dict[str, Any]] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        out += node.get("steps", [])
        stack += reversed(node.get("children", []))
    return out


def question_steps(tree: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in all_steps(tree) if s["kind"] == "semantic" and s["source"] == "questions"]


def node_ids(db: Database) -> dict[str, str]:
    """fragmentid -> elementId of every Question node."""
    records = db.driver.execute_query(
        "MATCH (q:Question) RETURN q.fragmentid AS id, elementId(q) AS eid",
        database_=db.database).records
    return {r["id"]: r["eid"] for r in records}


def server_line(db: Database) -> tuple[int, int]:
    line = HistoryDao(db).server()
    assert line is not None
    return line


def test_migrations_build_the_questions_index_and_its_twin_on_the_2026_line(
        db: Database, db_settings: Settings) -> None:
    dao = HistoryDao(db)
    rows = {row["name"]: row for row in dao.indexes()}
    plain = rows["questions"]
    assert (plain["type"], plain["state"], plain["labelsOrTypes"], plain["properties"]) == (
        "VECTOR", "ONLINE", ["Question"], ["embedding"])
    assert plain["options"]["indexConfig"] == rows["typical_rag"]["options"]["indexConfig"]
    assert rows["question_fragmentid"]["owningConstraint"] == "question_fragmentid"
    status = {r.version: r for r in MigrationRunner(db, db_settings).status()}
    assert status[QUESTIONS_VERSION].state == STATE_APPLIED
    if server_line(db) < (2026, 1):
        assert "questions_ontology" not in rows
        assert status[FILTERED_VERSION].state == STATE_WAITING
        return
    assert status[FILTERED_VERSION].state == STATE_APPLIED
    twin = rows["questions_ontology"]
    assert (twin["type"], twin["state"], twin["labelsOrTypes"], twin["properties"]) == (
        "VECTOR", "ONLINE", ["Question"], ["embedding", "ontologyid"])
    assert twin["options"]["indexConfig"] == plain["options"]["indexConfig"]


def test_a_phrase_finds_the_document_through_its_question(graph: ThalabusGraph) -> None:
    result = graph.query(f'"{PHRASE}"', return_documents=False)
    best = result.fragments[0]
    assert (best.fragmentid, best.documentid, best.source, best.text) == (
        "qs-1-q1", "qs-1", "questions", LEASE_QUESTIONS[0])
    assert "semantic:questions" in best.contributions
    chapter = next(f for f in result.fragments if f.fragmentid == "qs-1-c1")
    assert best.score > chapter.score
    documents = graph.query(f'"{PHRASE}"').documents or []
    assert documents[0].documentid == "qs-1"


def test_explain_and_profile_show_the_questions_step(graph: ThalabusGraph) -> None:
    call, path = phrase_call(graph)
    explained = question_steps(graph.explain(f'"{PHRASE}"')["plan"])
    assert len(explained) == 1
    assert (explained[0]["cypher"], explained[0]["top_n"], explained[0]["path"]) == (
        call, 200, path)
    profiled = question_steps(graph.query(f'"{PHRASE}"', profile=True).plan["tree"])
    assert [(s["cypher"], s["path"]) for s in profiled] == [(call, path)]
    assert profiled[0]["rows"] == 3  # every question in the graph, nearest first

    filtered = f'"{PHRASE}" AND TOPIC=housing'
    planned = question_steps(graph.explain(filtered)["plan"])
    ran = question_steps(graph.query(filtered, profile=True,
                                     return_documents=False).plan["tree"])
    assert [(s["path"], s["cypher"]) for s in planned] == [
        (s["path"], s["cypher"]) for s in ran]
    # with the phrase's other searches in one call
    assert (ran[-1]["path"], ran[-1]["cypher"]) == ("exact", filtered_call(graph))
    assert ran[-1]["rows"] == 2  # the housing document's two questions

    narrow = engine(graph.db, top_n_questions=1)
    step = question_steps(narrow.explain(f'"{PHRASE}"')["plan"])[0]
    assert step["top_n"] == 1


def test_factor_cap_and_min_score_act_on_question_scores(graph: ThalabusGraph) -> None:
    def question_score(**overrides: Any) -> float | None:
        found = engine(graph.db, **SEMANTIC_ONLY, **overrides).query(
            f'"{PHRASE}"', return_documents=False).fragments
        return next((f.score for f in found if f.fragmentid == "qs-1-q1"), None)

    raw = question_score()
    assert raw is not None and 0.5 < raw <= 1.0
    assert question_score(score_factor_questions=0.5) == pytest.approx(raw * 0.5)
    assert question_score(score_cap_questions=0.3) == pytest.approx(0.3)
    assert question_score(score_factor_questions=0.1, min_score=0.1) is None
    assert question_score(score_factor_summaries=0.1, min_score=0.1) == pytest.approx(raw)


def test_a_scoped_phrase_searches_the_questions_on_the_lines_best_path(
        graph: ThalabusGraph) -> None:
    # Questions outside the ontology, and a tiny over-fetch: the index paths beat exact.
    music = {**OTHERS[1], "questions": ["Who conducted the premiere?",
                                        "How long did the orchestra rehearse?"]}
    assert graph.ingest([music], progress=False).errors == []
    tiny = engine(graph.db, **SEMANTIC_ONLY, top_n_questions=1, vector_min_k=1,
                  vector_overfetch_factor=1, exact_search_max_candidates=0)
    result = tiny.query(f'"{PHRASE}"', ontology_id="law", profile=True,
                        return_documents=False)
    step = question_steps(result.plan["tree"])[0]
    if server_line(graph.db) >= (2026, 1):
        assert (step["path"], step["cypher"]) == ("in-index", "search_vector_in_index")
        assert "filtered inside questions_ontology" in step["reason"]
    else:  # on the index path, with the phrase's other sources in one call
        assert (step["path"], step["cypher"]) == ("index", "search_phrase_filtered")
    assert [f.fragmentid for f in result.fragments if f.source == "questions"] == ["qs-1-q1"]


def test_a_dataset_stores_the_question_and_reingest_keeps_it(
        graph: ThalabusGraph, clean_db: Database) -> None:
    result = graph.query(f'"{PHRASE}"', return_documents=False, create_dataset=True,
                         session="qs")
    datasetid = result.dataset_ids[0]
    members = {m.fragmentid: m for m in graph.datasets.members(datasetid)}
    assert {"qs-1-q1", "qs-1-q2", "qs-2-q1"} <= set(members)
    assert (members["qs-1-q1"].source, members["qs-1-q1"].text) == (
        "questions", LEASE_QUESTIONS[0])
    before = node_ids(clean_db)

    # Same questions and a new one: the nodes keep their identity, vectors are reused.
    again = graph.ingest([lease([*LEASE_QUESTIONS, "Is a deposit required?"])],
                         progress=False)
    assert again.fragments_deleted == 0 and again.members_dropped == {}
    assert again.embeddings_computed == 1
    after = node_ids(clean_db)
    assert {k: after[k] for k in before} == before and "qs-1-q3" in after
    assert {m.fragmentid for m in graph.datasets.members(datasetid)} == set(members)

    # The second question gone: its node and its membership go, the first stays.
    shorter = graph.ingest([lease(LEASE_QUESTIONS[:1])], progress=False)
    assert shorter.fragments_deleted == 2  # q2 and q3
    assert shorter.members_dropped == {datasetid: 1}
    assert node_ids(clean_db)["qs-1-q1"] == before["qs-1-q1"]
    assert {m.fragmentid for m in graph.datasets.members(datasetid)} == \
        set(members) - {"qs-1-q2"}


def test_supplied_question_vectors_are_stored_and_bad_lines_reported(
        clean_db: Database, tmp_path: Path) -> None:
    dims = Settings.from_env().embedding_dimensions
    vector = [1.0] + [0.0] * (dims - 1)
    good = {"documentid": "qv-1", "questions": ["Who signed?"],
            "embeddings": {"questions": [vector]}}
    path = tmp_path / "questions.jsonl"
    path.write_text("\n".join([
        json.dumps(good), json.dumps({"documentid": "qv-2", "questions": ["ok", None]}),
        json.dumps({"documentid": "qv-3", "questions": ["Too short?"],
                    "embeddings": {"qv-3-q1": vector[:3]}})]) + "\n", encoding="utf-8")
    report = ThalabusGraph(clean_db, settings=Settings.from_env()).ingest(
        path, progress=False, embed=False)
    assert report.documents == 1 and report.embeddings_supplied == 1
    assert [e.line_number for e in report.errors] == [2, 3]
    assert "questions[2] must be a string" in report.errors[0].message
    stored = clean_db.driver.execute_query(
        "MATCH (q:Question)-[:IN_DOCUMENT]->(:Document {documentid: 'qv-1'}) "
        "RETURN q.fragmentid AS id, q.embedding AS v, q.ordinal AS n",
        database_=clean_db.database).records
    assert [(r["id"], r["n"]) for r in stored] == [("qv-1-q1", 1)]
    assert stored[0]["v"] == pytest.approx(vector)


def test_a_graph_migrated_before_the_questions_index_keeps_answering(
        runner: MigrationRunner, db: Database, db_settings: Settings, tmp_path: Path) -> None:
    migrate_before(runner, db_settings, tmp_path, QUESTIONS_VERSION)
    assert "questions" not in {row["name"] for row in runner.dao.indexes()}
    # index scale: no chapter speaks of rent, so on the calibrated scale the phrase is about
    # nothing this graph holds until its questions are searchable
    old = engine(db, calibration_file="none")
    assert old.ingest([{**d, "questions": None} for d in corpus()],
                      progress=False).errors == []
    found = old.query(f'"{PHRASE}"', return_documents=False).fragments
    assert found and all(f.source != "questions" for f in found)
    steps = question_steps(old.query(f'"{PHRASE}"', profile=True).plan["tree"])
    assert [s["path"] for s in steps] == ["skipped"]
    scoped = old.query(f'"{PHRASE}"', ontology_id="law", profile=True)
    assert {d.documentid for d in scoped.documents or []} == {"qs-1", "qs-2"}
    assert old.explain(f'"{PHRASE}" AND TOPIC=housing', ontology_id="law")["plan"]

    runner.migrate()
    new = engine(db)
    assert new.ingest(corpus(), progress=False).errors == []
    assert new.query(f'"{PHRASE}"', return_documents=False).fragments[0].fragmentid == \
        "qs-1-q1"
