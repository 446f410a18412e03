"""The application's graph in a query: categories defined by a Cypher pattern over the
application's own nodes, and a required filter no query text widens. Every answer is checked
against plain Cypher over the same graph."""

from __future__ import annotations

import json

import pytest

from tests.integration.sample import load_sample
from tests.support.permissions import READABLE_BY, grant
from thalabus_graph import ThalabusGraph
from thalabus_graph.cli import main
from thalabus_graph.errors import (
    CategoryDefinitionError,
    ConfigurationError,
    ContextError,
    GraphError,
    UnknownCategoryError,
)
from thalabus_graph.graph.database import Database

pytestmark = pytest.mark.integration

AS_STORED = "(document)-[:HAS_CATEGORY]->(:Category {name: 'COUNTRY_OF_ORIGIN', value: $value})"
PERMISSIONS = {"alice": ["docid-1001", "docid-1002", "docid-1003", "docid-1008",
                         "docid-1012", "docid-2002", "docid-2003"],
               "bob": ["docid-1003", "docid-1004", "docid-1006", "docid-2001", "docid-2003"]}
QUERIES = ['"asylum seeker converted to christianity"',
           '"Bob cleans the house"',
           "'Irak'",
           '"asylum" AND COUNTRY_OF_ORIGIN=IQ',
           '"asylum" OR "friends"',
           "NOT COUNTRY_OF_ORIGIN=AF",
           "",
           '"asylum" AND NOT (DECISION=granted OR YEAR=2020)']


@pytest.fixture(scope="module")
def graph(db: Database) -> ThalabusGraph:
    g = load_sample(db)
    grant(g, PERMISSIONS)
    g.define_category("ORIGIN", AS_STORED)
    return g


def readable(*users: str) -> set[str]:
    return {d for u in users for d in PERMISSIONS[u]}


def documents(result: object) -> set[str]:
    return {f.documentid for f in result.fragments}  # type: ignore[attr-defined]


def scored(result: object) -> list[tuple[str, float]]:
    return [(f.fragmentid, round(f.score, 9))
            for f in result.fragments]  # type: ignore[attr-defined]


def cypher_documents(db: Database, statement: str) -> set[str]:
    rows = db.read_tx(lambda tx: [r["id"] for r in tx.run(statement)])
    return set(rows)


@pytest.mark.parametrize("stored, defined", [
    ('"asylum" AND COUNTRY_OF_ORIGIN=IQ', '"asylum" AND ORIGIN=IQ'),
    ('"asylum" AND COUNTRY_OF_ORIGIN=IQ,AF', '"asylum" AND ORIGIN=IQ,AF'),
    ('"asylum" AND NOT COUNTRY_OF_ORIGIN=IQ', '"asylum" AND NOT ORIGIN=IQ'),
    ('"asylum" AND (COUNTRY_OF_ORIGIN=IQ OR DECISION=rejected)',
     '"asylum" AND (ORIGIN=IQ OR DECISION=rejected)'),
    ('COUNTRY_OF_ORIGIN=IR OR (YEAR=2021 AND NOT COUNTRY_OF_ORIGIN=IQ)',
     'ORIGIN=IR OR (YEAR=2021 AND NOT ORIGIN=IQ)'),
    ("'Iran' AND NOT COUNTRY_OF_ORIGIN=AF", "'Iran' AND NOT ORIGIN=AF"),
])
def test_a_defined_category_answers_as_the_stored_one_it_mirrors(
        graph: ThalabusGraph, stored: str, defined: str) -> None:
    want = graph.query(stored, return_documents=False)
    got = graph.query(defined, return_documents=False)
    assert want.fragments, stored
    assert scored(got) == scored(want)
    assert not [w for w in got.warnings if w.kind.startswith("unknown")]


@pytest.mark.parametrize("text, users", [
    ("READABLE_BY=alice", ("alice",)),
    ("READABLE_BY=alice,bob", ("alice", "bob")),
    ("READABLE_BY=alice AND READABLE_BY=bob", ()),
])
def test_a_defined_category_selects_what_the_reference_cypher_selects(
        graph: ThalabusGraph, db: Database, text: str, users: tuple[str, ...]) -> None:
    want = readable(*users) if users else readable("alice") & readable("bob")
    assert documents(graph.query(text, return_documents=False)) == want
    reference = cypher_documents(db, "MATCH (d:Document) WHERE NOT EXISTS { (d)<-[:CAN_READ]-"
                                 "(:User {name: 'alice'}) } RETURN d.documentid AS id")
    assert documents(graph.query("NOT READABLE_BY=alice", return_documents=False)) == reference
    phrase = graph.query('"asylum" AND READABLE_BY=alice', return_documents=False)
    assert documents(phrase) and documents(phrase) <= readable("alice")
    both = graph.query('("asylum" OR "friends") AND NOT READABLE_BY=bob',
                       return_documents=False)
    assert documents(both) and not documents(both) & readable("bob")


def test_explain_and_profile_show_the_defined_lookup(graph: ThalabusGraph) -> None:
    explained = graph.explain('"asylum" AND READABLE_BY=alice')
    assert "defined_category_documents" in str(explained)
    assert explained["warnings"] == []
    result = graph.query('"asylum" AND READABLE_BY=alice', profile=True)
    assert result.plan is not None and "defined_category_documents" in str(result.plan["tree"])


@pytest.mark.parametrize("text", QUERIES)
def test_a_required_filter_is_never_widened(db: Database, graph: ThalabusGraph,
                                            text: str) -> None:
    held = ThalabusGraph(db, embedder=graph.embedder, required_filter="READABLE_BY=bob")
    result = held.query(text, return_documents=True)
    assert documents(result) <= readable("bob")
    assert {d.documentid for d in result.documents or []} <= readable("bob")
    unheld = graph.query(text, return_documents=False)
    inside = [(f.fragmentid, round(f.score, 9)) for f in unheld.fragments
              if f.documentid in readable("bob")]
    if text.strip() and "NOT" not in text:
        # held to the filter, a result scores as it does without it
        # the same fragments, each with its score (near-ties may swap: a restricted search
        # computes the cosine exactly where the unrestricted one reads the index's float32)
        got = dict(scored(held.query(text, return_documents=False)))
        assert got.keys() == dict(inside).keys()
        assert got == pytest.approx(dict(inside), abs=1e-5)
    fast = held.rag_fragments(text or '"asylum"')
    assert documents(fast) <= readable("bob")
    assert {f.documentid for f in held.stream(text)} <= readable("bob")
    wide = graph.query(text, return_documents=False, required_filter="READABLE_BY=bob")
    assert documents(wide) <= readable("bob")


def test_no_query_text_escapes_the_required_filter(db: Database, graph: ThalabusGraph) -> None:
    held = ThalabusGraph(db, embedder=graph.embedder, required_filter="READABLE_BY=alice")
    for text in ('"asylum" OR NOT READABLE_BY=alice', "NOT READABLE_BY=alice",
                 "READABLE_BY=bob OR NOT READABLE_BY=bob", "COUNTRY_OF_ORIGIN=AF", ""):
        result = held.query(text, return_documents=False, create_dataset=True)
        assert documents(result) <= readable("alice"), text
        members = held.datasets.members(result.dataset_ids[0])
        assert {m.documentid for m in members} <= readable("alice"), text
    assert documents(held.query("NOT READABLE_BY=alice", return_documents=False)) == set()
    explained = held.explain('"asylum"')
    assert "READABLE_BY" in str(explained)
    assert held.explain("")["query"] == "READABLE_BY=alice"


def test_a_view_tells_nothing_of_the_graph_outside_it(db: Database,
                                                      graph: ThalabusGraph) -> None:
    # unheld, a misspelt value gets its "did you mean" and a value outside alice's view none
    assert graph.query("COUNTRY_OF_ORIGIN=IQQ").warnings
    for held, extra in ((ThalabusGraph(db, embedder=graph.embedder,
                                       required_filter="READABLE_BY=alice"), {}),
                        (graph, {"required_filter": "READABLE_BY=alice"})):
        answers = {text: held.query(text, strict_categories=True, **extra)
                   for text in ("COUNTRY_OF_ORIGIN=IQQ", "COUNTRY_OF_ORIGIN=ZZ",
                                "COUNTRY_OF_ORIGIN=IQ", "READABLE_BY=bob",
                                "READABLE_BY=nobody", "NOPE=1")}
        assert all(not answer.warnings and {d.documentid for d in answer.documents or ()}
                   <= readable("alice") for answer in answers.values()), answers
        absent = held.query('"chocolate cake recipe"', **extra).warnings
        assert absent and all(w.to_dict().get("best_cosine") is None for w in absent)
        plan = held.explain('"asylum" AND (COUNTRY_OF_ORIGIN=IQ OR PROCEDURE=Dublin)',
                            strict_categories=True, **extra)
        assert plan["warnings"] == []
        assert not {"documents", "selectivity", "filtered_documents", "k"} & set(
            key for key in _keys(plan["plan"])), plan["plan"]


def _keys(value: object) -> list[str]:
    if isinstance(value, dict):
        return [*value, *(k for v in value.values() for k in _keys(v))]
    return [k for v in value for k in _keys(v)] if isinstance(value, list) else []


def test_definitions_are_checked_when_defined(graph: ThalabusGraph, db: Database) -> None:
    bad = {
        "(document)<-[:CAN_READ]-(u:User {name: $value}) SET u.hacked = true": "",
        "(document) } MATCH (x) DETACH DELETE x //": "",
        "(document)<-[:CAN_READ]-(:User {name: $other})": "$other",
        "(document)<-[:CAN_READ]-(:User {name: $value}) WHERE document.x = $`other`": "$other",
        "(document) WHERE document.documentid IN $`ids` AND $value IS NOT NULL": "$ids",
        "(document)<-[:CAN_READ]-(:User {name: 'alice'})": "$value",
        "(d)<-[:CAN_READ]-(:User {name: $value})": "document",
        "(document)<-[:CAN_READ]-(:User {name: $value}) CALL db.labels() YIELD label": "CALL",
        "(document)<-[:CAN_READ]-(:User {name: $value}); MATCH (n) DELETE n": ";",
        "(document)<-[:CAN_READ-(:User {name: $value})": "",
        "": "empty",
    }
    for pattern, said in bad.items():
        with pytest.raises(CategoryDefinitionError) as caught:
            graph.define_category("BAD", pattern)
        assert said in str(caught.value), (pattern, str(caught.value))
    with pytest.raises(CategoryDefinitionError, match="stored category name"):
        graph.define_category("COUNTRY_OF_ORIGIN", READABLE_BY)
    with pytest.raises(CategoryDefinitionError, match="name"):
        graph.define_category("1BAD", READABLE_BY)
    assert cypher_documents(db, "MATCH (u:User) WHERE u.hacked RETURN u.name AS id") == set()
    assert "BAD" not in {d.name for d in graph.defined_categories()}
    assert {"READABLE_BY", "ORIGIN"} <= {d.name for d in graph.defined_categories()}


def test_a_defined_value_that_selects_nothing_is_said(graph: ThalabusGraph) -> None:
    result = graph.query('"asylum" OR READABLE_BY=alcie', return_documents=False)
    assert result.fragments
    assert [(w.kind, w.subject) for w in result.warnings] == [
        ("unknown_category_value", "READABLE_BY=alcie")]
    assert graph.query("READABLE_BY=alice").warnings == []
    misspelt = graph.query("READABLE_BYY=alice").warnings
    assert [(w.kind, w.suggestion) for w in misspelt] == [
        ("unknown_category_name", "READABLE_BY")]
    with pytest.raises(UnknownCategoryError, match="READABLE_BY=alcie"):
        graph.query("READABLE_BY=alcie", strict_categories=True, create_dataset=True)


def test_a_quoted_value_parameter_is_the_value(graph: ThalabusGraph) -> None:
    graph.define_category("QUOTED", "(document)<-[:CAN_READ]-(:User {name: $`value`})")
    try:
        assert documents(graph.query("QUOTED=bob", return_documents=False)) == readable("bob")
    finally:
        graph.drop_category("QUOTED")


def test_a_dollar_in_a_patterns_string_is_the_character(graph: ThalabusGraph,
                                                       db: Database) -> None:
    graph.define_category("PRICED", "(document) WHERE $value = 'a$b' OR $value = '$value'")
    try:
        every = cypher_documents(db, "MATCH (d:Document) RETURN d.documentid AS id")
        assert documents(graph.query("PRICED='a$b'", return_documents=False)) == every
        assert documents(graph.query("PRICED='$value'", return_documents=False)) == every
        assert documents(graph.query("PRICED=b", return_documents=False)) == set()
    finally:
        graph.drop_category("PRICED")


def test_a_failed_query_does_not_outlive_the_definition_that_failed_it(
        graph: ThalabusGraph) -> None:
    """The query's vocabulary row, kept for its next run, held the failing definition: the
    failure must not stay once the definition is replaced or dropped."""
    graph.define_category("FAILING", "(document)<-[:CAN_READ]-(:User) "
                                     "WHERE 1 / (size($value) - 3) >= 0")
    try:
        with pytest.raises(GraphError, match="by zero"):
            graph.query("FAILING=bob")
        graph.define_category("FAILING", READABLE_BY)
        assert documents(graph.query("FAILING=bob", return_documents=False)) == readable("bob")
        graph.drop_category("FAILING")
        result = graph.query("FAILING=bob", return_documents=False)
        assert documents(result) == set()
        assert [w.kind for w in result.warnings] == ["unknown_category_name"]
    finally:
        graph.drop_category("FAILING")


def test_a_defined_name_is_not_stored_and_an_unlinked_stored_name_may_be_defined(
        graph: ThalabusGraph, db: Database) -> None:
    report = graph.ingest([{"documentid": "x-defined", "ontology": "asylum", "title": "t",
                            "categories": {"READABLE_BY": ["mallory"]},
                            "chapters": ["A chapter."]}], progress=False)
    assert report.documents == 0 and "define_category" in report.errors[0].message
    assert cypher_documents(db, "MATCH (d:Document {documentid: 'x-defined'}) "
                                "RETURN d.documentid AS id") == set()
    # a Category node its documents no longer link to, as a re-ingest without it leaves
    db.write_tx(lambda tx: tx.run("CREATE (:Category {ontologyid: 'asylum', name: 'UNLINKED', "
                                  "value: 'v'})").consume())
    try:
        graph.define_category("UNLINKED", READABLE_BY)
        assert documents(graph.query("UNLINKED=bob", return_documents=False)) == readable("bob")
    finally:
        graph.drop_category("UNLINKED")
        db.write_tx(lambda tx: tx.run("MATCH (c:Category {name: 'UNLINKED'}) "
                                      "DELETE c").consume())


def test_a_definition_is_seen_by_another_connection_and_can_be_dropped(
        db: Database, graph: ThalabusGraph) -> None:
    other = ThalabusGraph(db, embedder=graph.embedder)
    other.define_category("CITED_BY", "(document)<-[:CAN_READ]-(:User {name: $value})")
    assert documents(graph.query("CITED_BY=bob", return_documents=False)) == readable("bob")
    assert graph.drop_category("CITED_BY") is True
    assert graph.drop_category("CITED_BY") is False
    result = graph.query("CITED_BY=bob", return_documents=False)
    assert documents(result) == set()
    assert [w.kind for w in result.warnings] == ["unknown_category_name"]


def test_a_required_filter_must_be_categories(db: Database, graph: ThalabusGraph) -> None:
    for text in ('"asylum"', "   ", "'text' AND READABLE_BY=bob"):
        with pytest.raises(ConfigurationError):
            ThalabusGraph(db, embedder=graph.embedder, required_filter=text)
    with pytest.raises(ConfigurationError):
        graph.query('"asylum"', required_filter='"phrase"')


def test_the_cli_defines_lists_drops_and_holds_queries_to_a_required_filter(
        graph: ThalabusGraph, neo4j_uri: str, capsys: pytest.CaptureFixture[str]) -> None:
    uri = ["--uri", neo4j_uri]
    pattern = "(document)<-[:CAN_READ]-(:User {name: $value})"
    assert main(["categories", "define", "SEEN_BY", pattern, *uri, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"name": "SEEN_BY", "pattern": pattern}
    assert main(["categories", "list", *uri, "--json"]) == 0
    assert {"name": "SEEN_BY", "pattern": pattern} in json.loads(capsys.readouterr().out)
    assert main(["query", "NOT COUNTRY_OF_ORIGIN=AF", "--required-filter", "SEEN_BY=bob",
                 "--fragments", *uri, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {f["documentid"] for f in out["fragments"]} == readable("bob") - {"docid-1003",
                                                                             "docid-1006"}
    assert main(["explain", '"asylum"', "--required-filter", "SEEN_BY=bob", *uri,
                 "--json"]) == 0
    assert "SEEN_BY" in capsys.readouterr().out
    assert main(["categories", "define", "BAD", "(document) SET document.x = 1", *uri]) == 2
    assert "pattern" in capsys.readouterr().err
    assert main(["query", '"asylum"', "--required-filter", '"phrase"', *uri]) == 2
    capsys.readouterr()
    assert main(["categories", "drop", "SEEN_BY", *uri, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"name": "SEEN_BY", "dropped": True}


def test_the_adapters_are_held_to_a_required_filter(graph: ThalabusGraph) -> None:
    from thalabus_graph.integrations.langchain import ThalabusLangChainRetriever
    from thalabus_graph.integrations.llamaindex import ThalabusLlamaIndexRetriever

    question = "an asylum seeker who converted to christianity"
    docs = ThalabusLangChainRetriever(graph=graph, k=10,
                                      required_filter="READABLE_BY=bob").invoke(question)
    assert docs and {d.metadata["document_id"] for d in docs} <= readable("bob")
    nodes = ThalabusLlamaIndexRetriever(graph, k=10, required_filter="READABLE_BY=alice",
                                        query_syntax=True).retrieve('"asylum" OR "friends"')
    assert nodes and {n.node.metadata["document_id"] for n in nodes} <= readable("alice")


READERS = "MATCH (document)<-[:CAN_READ]-(u:User) RETURN u.name AS reader ORDER BY reader"


def readers_of(documentid: str) -> list[dict[str, str]]:
    return [{"reader": u} for u in sorted(u for u, docs in PERMISSIONS.items()
                                          if documentid in docs)]


def test_context_rows_arrive_on_every_result(graph: ThalabusGraph) -> None:
    result = graph.query('"asylum"', limit=5, context=READERS)
    assert result.documents
    for document in result.documents:
        assert document.context == readers_of(document.documentid)
        assert document.to_dict()["context"] == document.context
    fragments = graph.query('"asylum" OR COUNTRY_OF_ORIGIN=IQ', return_documents=False,
                            context="OPTIONAL MATCH (fragment)-[:IN_DOCUMENT]->(d) "
                                    "RETURN fragment.fragmentid AS id, d.documentid AS doc")
    for f in fragments.fragments:
        assert f.context is not None and len(f.context) == 1
        if f.is_stub:
            assert f.context == [{"id": None, "doc": None}]
        elif f.source == "chapters":
            assert f.context == [{"id": f.fragmentid, "doc": f.documentid}]
    fast = graph.rag_fragments('"asylum"', context=READERS)
    assert fast.fragments and all(f.context == readers_of(f.documentid)
                                  for f in fast.fragments)
    held = graph.query('"asylum"', context=READERS, required_filter="READABLE_BY=bob",
                       create_dataset=True)
    assert held.documents and all(d.context == readers_of(d.documentid)
                                  for d in held.documents)
    assert graph.query('"asylum"').documents[0].context is None


def test_a_writing_or_broken_context_is_refused_before_anything_runs(
        graph: ThalabusGraph, db: Database) -> None:
    before = len(graph.datasets.list_datasets())
    for context in ("MATCH (document) SET document.hacked = true RETURN 1 AS x",
                    "MATCH (document) RETURN nosuch(document) AS x",
                    "CALL db.labels() YIELD label RETURN label",
                    "} MATCH (n) DETACH DELETE n WITH 1 AS x CALL { RETURN 1 AS y",
                    ""):
        with pytest.raises(ContextError):
            graph.query('"asylum"', context=context, create_dataset=True)
        with pytest.raises(ContextError):
            graph.rag_fragments('"asylum"', context=context, create_dataset=True)
    assert len(graph.datasets.list_datasets()) == before
    assert cypher_documents(db, "MATCH (d:Document) WHERE d.hacked "
                                "RETURN d.documentid AS id") == set()


def test_the_adapters_carry_the_context_in_their_metadata(graph: ThalabusGraph) -> None:
    from thalabus_graph.integrations.langchain import ThalabusLangChainRetriever
    from thalabus_graph.integrations.llamaindex import ThalabusLlamaIndexRetriever

    docs = ThalabusLangChainRetriever(graph=graph, k=5, context=READERS).invoke(
        "an asylum seeker who converted to christianity")
    assert docs and all(d.metadata["context"] == readers_of(d.metadata["document_id"])
                        for d in docs)
    # a chapter of one paragraph is found twice and kept once, with its own rows
    nodes = ThalabusLlamaIndexRetriever(graph, k=10, context=READERS).retrieve(
        "cleaning the house")
    kept = [n.node.metadata for n in nodes]
    assert any(len(m["contributions"]) > 1 for m in kept)
    assert all(m["context"] == readers_of(m["document_id"]) for m in kept)
