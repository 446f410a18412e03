"""What a re-ingest does to the application's own graph around our nodes.

Applications link their nodes to ours (``(:User)-[:CAN_READ]->(:Document)``,
``(:Decision)-[:CITES]->(:Chapter)``) and put their own properties and labels on them. A
re-ingest replaces the document's content whole, but it must not take the application's graph
with it: whatever hangs on the Document and on every fragment that still exists (same fragment
id, the node is updated in place) stays; only a fragment that is gone takes its relationships
along. The properties the input gave are the input's, replaced whole by the next line; the
rest of the Document's properties are the application's and stay.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.sample import shared_embedder
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.graph.database import Database

pytestmark = pytest.mark.integration

DOCID = "app-1"
FRAGMENT_IDS = [f"{DOCID}-{suffix}" for suffix in
                ("c1", "c2", "c3", "p1", "p2", "p3", "p4", "p5", "s1", "s2", "q1", "k1", "k2")]


def rows(db: Database, cypher: str, **params: Any) -> list[dict[str, Any]]:
    records = db.driver.execute_query(cypher, params, database_=db.database).records
    return [r.data() for r in records]


def version_1() -> dict[str, Any]:
    """Three chapters (five paragraphs), two summaries, a question, two keywords."""
    return {"documentid": DOCID, "ontology": "test", "title": "Orchard notes",
            "court": "BVGer", "year": 2020, "categories": {"KIND": ["a"]},
            "chapters": ["apples ripen\n\npears follow", "bees visit\n\nblossoms open",
                         "crates stay cool"],
            "summaries": ["an orchard year", "fruit and bees"],
            "questions": ["when do pears ripen?"], "keywords": ["orchard", "bees"]}


def version_2() -> dict[str, Any]:
    """Chapter 2's second paragraph edited, a fourth chapter added, the second summary gone,
    title, extra properties (``court`` dropped, ``year`` changed) and categories changed."""
    doc = version_1()
    del doc["court"]
    doc.update(title="Orchard notes, revised", year=2021,
               categories={"KIND": ["b"], "STATUS": ["final"]},
               chapters=["apples ripen\n\npears follow", "bees visit\n\nblossoms open early",
                         "crates stay cool", "cider is pressed"],
               summaries=["an orchard year"])
    return doc


@pytest.fixture()
def graph(clean_db: Database) -> ThalabusGraph:
    return ThalabusGraph(clean_db, settings=Settings.from_env(), embedder=shared_embedder())


def add_app_graph(db: Database) -> None:
    """The application's graph: relationships into and out of the Document, a citation of
    every fragment, its own property and label on the Document and on a chapter."""
    db.driver.execute_query(
        "MATCH (d:Document {documentid: $doc}) "
        "SET d.customer = 'acme', d:Confidential "
        "CREATE (:User {userid: 'u1'})-[:CAN_READ {since: 2024}]->(d) "
        "CREATE (d)-[:OWNED_BY]->(:Team {teamid: 't1'}) "
        "CREATE (dec:Decision {decisionid: 'dec-1'}) "
        "WITH d, dec "
        "UNWIND $ids AS id "
        "MATCH (f:Fragment {fragmentid: id}) "
        "CREATE (dec)-[:CITES {note: id}]->(f)",
        {"doc": DOCID, "ids": FRAGMENT_IDS}, database_=db.database)
    db.driver.execute_query(
        "MATCH (c:Chapter {fragmentid: $id}) SET c.reviewed = true, c:Reviewed",
        {"id": f"{DOCID}-c1"}, database_=db.database)


def document(db: Database) -> dict[str, Any]:
    """The Document's properties, labels and the application's relationships (type, other
    end's id, relationship properties)."""
    found = rows(db, "MATCH (d:Document {documentid: $doc}) RETURN properties(d) AS props, "
                     "labels(d) AS labels, "
                     "[(u:User)-[r:CAN_READ]->(d) | [u.userid, r.since]] AS readers, "
                     "[(d)-[:OWNED_BY]->(t:Team) | t.teamid] AS owners", doc=DOCID)
    assert len(found) == 1
    return found[0]


def citations(db: Database) -> dict[str, tuple[str, str, str]]:
    """Fragment id -> (its node's element id, the citation's note, the fragment's text)."""
    return {r["id"]: (r["eid"], r["note"], r["text"]) for r in rows(
        db, "MATCH (:Decision {decisionid: 'dec-1'})-[r:CITES]->(f:Fragment) "
            "RETURN f.fragmentid AS id, elementId(f) AS eid, r.note AS note, f.text AS text")}


def orphans(db: Database) -> int:
    return int(rows(db, "MATCH (f:Fragment) WHERE NOT (f)-[:IN_DOCUMENT|IN_CHAPTER]->() "
                        "RETURN count(f) AS n")[0]["n"])


def test_an_unchanged_reingest_keeps_the_applications_graph_whole(
        graph: ThalabusGraph, clean_db: Database) -> None:
    graph.ingest([version_1()], progress=False, strict=True)
    add_app_graph(clean_db)
    doc_before, cited_before = document(clean_db), citations(clean_db)
    assert set(cited_before) == set(FRAGMENT_IDS)  # every fragment kind is cited

    report = graph.ingest([version_1()], progress=False, strict=True)

    assert report.fragments_deleted == 0
    doc_after = document(clean_db)
    assert doc_after["props"]["customer"] == "acme"
    assert doc_after["props"] == doc_before["props"]
    assert sorted(doc_after["labels"]) == ["Confidential", "Document"]
    assert doc_after["readers"] == [["u1", 2024]] and doc_after["owners"] == ["t1"]
    assert citations(clean_db) == cited_before  # same nodes, same relationships
    reviewed = rows(clean_db, "MATCH (c:Reviewed {fragmentid: $id}) RETURN c.reviewed AS r",
                    id=f"{DOCID}-c1")
    assert reviewed == [{"r": True}]


def test_a_changed_reingest_keeps_the_applications_graph_but_on_removed_fragments(
        graph: ThalabusGraph, clean_db: Database) -> None:
    graph.ingest([version_1()], progress=False, strict=True)
    add_app_graph(clean_db)
    cited_before = citations(clean_db)

    report = graph.ingest([version_2()], progress=False, strict=True)

    assert report.fragments_deleted == 1  # the second summary
    doc_after = document(clean_db)
    props = doc_after["props"]
    assert props["customer"] == "acme"  # the application's property stays
    assert props["title"] == "Orchard notes, revised" and props["year"] == 2021
    assert "court" not in props  # the input's own properties are replaced whole
    assert sorted(doc_after["labels"]) == ["Confidential", "Document"]
    assert doc_after["readers"] == [["u1", 2024]] and doc_after["owners"] == ["t1"]

    cited_after = citations(clean_db)
    removed = f"{DOCID}-s2"
    assert set(cited_after) == set(FRAGMENT_IDS) - {removed}
    assert rows(clean_db, "MATCH (f:Fragment {fragmentid: $id}) RETURN f", id=removed) == []
    assert rows(clean_db, "MATCH (d:Decision) RETURN d.decisionid AS id") == [{"id": "dec-1"}]
    for fragmentid, (eid, note, text) in cited_after.items():
        assert (eid, note) == cited_before[fragmentid][:2], fragmentid  # the same node
        if fragmentid in (f"{DOCID}-c2", f"{DOCID}-p4"):  # edited: same node, new text
            assert text != cited_before[fragmentid][2]
        else:
            assert text == cited_before[fragmentid][2]
    assert cited_after[f"{DOCID}-p4"][2] == "blossoms open early"

    assert rows(clean_db, "MATCH (c:Reviewed {fragmentid: $id}) RETURN c.reviewed AS r",
                id=f"{DOCID}-c1") == [{"r": True}]
    categories = rows(clean_db, "MATCH (:Document {documentid: $doc})-[:HAS_CATEGORY]->(c) "
                                "RETURN c.name AS name, c.value AS value ORDER BY name",
                      doc=DOCID)
    assert categories == [{"name": "KIND", "value": "b"}, {"name": "STATUS", "value": "final"}]
    assert orphans(clean_db) == 0
    stored = rows(clean_db, "MATCH (f:Fragment {documentid: $doc}) RETURN count(f) AS n",
                  doc=DOCID)
    assert stored == [{"n": 4 + 6 + 1 + 1 + 2}]  # chapters, paragraphs, summary, question, kw


def test_a_fragment_is_its_id_so_a_relationship_follows_the_position_not_the_text(
        graph: ThalabusGraph, clean_db: Database) -> None:
    """Paragraphs are numbered through the document: a paragraph inserted in chapter 1 moves
    every later paragraph's text one id on, and a citation of ``p2`` then cites the new text."""
    graph.ingest([version_1()], progress=False, strict=True)
    add_app_graph(clean_db)
    cited_before = citations(clean_db)
    longer = version_1()
    longer["chapters"] = ["apples ripen\n\nplums come first\n\npears follow",
                          *longer["chapters"][1:]]

    graph.ingest([longer], progress=False, strict=True)

    cited_after = citations(clean_db)
    assert set(cited_after) == set(FRAGMENT_IDS)  # p6 is new and uncited
    assert cited_after[f"{DOCID}-p2"][0] == cited_before[f"{DOCID}-p2"][0]
    assert cited_before[f"{DOCID}-p2"][2] == "pears follow"
    assert cited_after[f"{DOCID}-p2"][2] == "plums come first"
    assert cited_after[f"{DOCID}-p3"][2] == "pears follow"
    assert orphans(clean_db) == 0


def test_a_property_the_input_takes_over_is_the_inputs_from_then_on(
        graph: ThalabusGraph, clean_db: Database) -> None:
    """A name the application wrote and a later line also gives is overwritten by the line,
    and goes when a still later line drops it; other application properties stay."""
    graph.ingest([version_1()], progress=False, strict=True)
    add_app_graph(clean_db)
    clean_db.driver.execute_query("MATCH (d:Document {documentid: $doc}) SET d.region = 'EU'",
                                  {"doc": DOCID}, database_=clean_db.database)

    graph.ingest([{**version_1(), "customer": "globex"}], progress=False, strict=True)
    assert document(clean_db)["props"]["customer"] == "globex"

    graph.ingest([version_1()], progress=False, strict=True)
    props = document(clean_db)["props"]
    assert "customer" not in props
    assert props["region"] == "EU" and props["court"] == "BVGer"


def test_a_document_written_before_the_record_keeps_every_property_it_cannot_tell_apart(
        graph: ThalabusGraph, clean_db: Database) -> None:
    """Without ``ingest_properties`` (a graph ingested before it was recorded) only the named
    fields (title, language, ontology) are known to be the input's: a re-ingest removes those
    its line drops, keeps every other property, and records the line's names from then on."""
    graph.ingest([version_1()], progress=False, strict=True)
    add_app_graph(clean_db)
    clean_db.driver.execute_query("MATCH (d:Document {documentid: $doc}) "
                                  "REMOVE d.ingest_properties", {"doc": DOCID},
                                  database_=clean_db.database)
    untitled = {key: value for key, value in version_2().items() if key != "title"}

    graph.ingest([untitled], progress=False, strict=True)
    props = document(clean_db)["props"]
    assert "title" not in props
    assert props["customer"] == "acme" and props["court"] == "BVGer"  # not known as input's
    assert props["year"] == 2021

    graph.ingest([{key: value for key, value in untitled.items() if key != "year"}],
                 progress=False, strict=True)
    props = document(clean_db)["props"]
    assert "year" not in props
    assert props["customer"] == "acme" and props["court"] == "BVGer"


def test_query_results_show_the_applications_properties_but_not_the_record(
        graph: ThalabusGraph, clean_db: Database) -> None:
    graph.ingest([version_1()], progress=False, strict=True)
    add_app_graph(clean_db)
    graph.ingest([version_2()], progress=False, strict=True)
    stored = document(clean_db)["props"]
    assert stored["ingest_properties"] == ["documentid", "ontology", "title", "year"]

    found = graph.query("KIND=b").documents
    assert [d.documentid for d in found] == [DOCID]
    properties = found[0].properties
    assert properties["customer"] == "acme" and properties["year"] == 2021
    assert "ingest_properties" not in properties
