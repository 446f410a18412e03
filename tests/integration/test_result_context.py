"""A query's graph context against a real Neo4j: the rows of a user's read-only Cypher per
result (document or fragment), capped per result, in target order, with nodes and other
graph values as JSON; every refusal before anything runs (a refused writing context wrote
nothing); and the rows read inside the query's open read transaction, bounded by its time
budget."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.integration.sample import shared_embedder
from thalabus_graph import ThalabusGraph
from thalabus_graph.errors import ContextError, QueryTimeout
from thalabus_graph.graph.database import Database, deadline
from thalabus_graph.results.context import CONTEXT_ROWS, GraphContext

pytestmark = pytest.mark.integration

DOCUMENTS = [
    {"documentid": "ctx-1", "ontology": "context", "title": "One",
     "chapters": ["The kitchen floor was wet.", "The roof leaked in spring."]},
    {"documentid": "ctx-2", "ontology": "context", "title": "Two",
     "chapters": ["A decision on the tenancy."]},
    {"documentid": "ctx-3", "ontology": "context", "title": "Three",
     "chapters": ["Nobody reads this one."]},
]
APPLICATION = """
MATCH (one:Document {documentid: 'ctx-1'}), (two:Document {documentid: 'ctx-2'}),
      (c1:Fragment {fragmentid: 'ctx-1-c1'}), (c2:Fragment {fragmentid: 'ctx-1-c2'})
CREATE (ann:User {name: 'ann', since: date('2021-03-04')})-[:CAN_READ {level: 2}]->(one),
       (bob:User {name: 'bob'})-[:CAN_READ {level: 1}]->(one),
       (ann)-[:CAN_READ {level: 1}]->(two),
       (one)-[:CITES {at: 'p. 4'}]->(:Decision {title: 'Ruling A', year: 2019}),
       (:Note {text: 'slippery'})-[:ON]->(c1),
       (:Note {text: 'roofer called'})-[:ON]->(c2)
WITH one
UNWIND range(1, 30) AS i
CREATE (:Crowd {n: i})-[:CAN_READ {level: 0}]->(one)
"""
READERS = ("MATCH (document)<-[r:CAN_READ]-(u:User) "
           "RETURN u.name AS reader, r.level AS level ORDER BY reader")


@pytest.fixture()
def graph(clean_db: Database, tmp_path: Path) -> Database:
    """Three documents ingested as users ingest them, and the application's own nodes around
    them: readers, a cited decision, notes on two chapters, a crowd of 30 on one document."""
    source = tmp_path / "context.jsonl"
    source.write_text("".join(json.dumps(d) + "\n" for d in DOCUMENTS), encoding="utf-8")
    ThalabusGraph(clean_db, embedder=shared_embedder()).ingest(source, progress=False,
                                                               strict=True)
    clean_db.driver.execute_query(APPLICATION, database_=clean_db.database)
    return clean_db


def snapshot(db: Database) -> list[str]:
    """Every node and relationship with its labels or type and its properties (vectors
    left out), sorted: what a write would change."""
    records = db.driver.execute_query(
        "MATCH (n) RETURN 'node' AS kind, labels(n) AS what, properties(n) AS props "
        "UNION ALL MATCH ()-[r]->() RETURN 'rel' AS kind, [type(r)] AS what, "
        "properties(r) AS props", database_=db.database).records
    return sorted(json.dumps([r["kind"], sorted(r["what"]),
                              {k: v for k, v in r["props"].items() if k != "embedding"}],
                             sort_keys=True, default=str) for r in records)


def test_rows_per_document_in_target_order(graph: Database) -> None:
    context = GraphContext.compile(graph, "MATCH (document)<-[r:CAN_READ]-(u:User) "
                                   "RETURN u.name AS reader, r.level AS level ORDER BY reader")
    assert context.columns == ("reader", "level")
    rows = context.rows(graph, [("ctx-2", None), ("ctx-1", None), ("ctx-3", None),
                                ("ctx-2", "ctx-2-c1")])
    assert rows == [[{"reader": "ann", "level": 1}],
                    [{"reader": "ann", "level": 2}, {"reader": "bob", "level": 1}],
                    [],
                    [{"reader": "ann", "level": 1}]]
    assert [list(row) for row in rows[1]] == [["reader", "level"]] * 2  # the user's order


def test_rows_per_fragment_see_the_fragment_and_null_for_a_document(graph: Database) -> None:
    context = GraphContext.compile(
        graph, "OPTIONAL MATCH (fragment)<-[:ON]-(n:Note) "
        "RETURN document.documentid AS doc, fragment.fragmentid AS id, n.text AS note")
    rows = context.rows(graph, [("ctx-1", "ctx-1-c2"), ("ctx-1", "ctx-1-c1"), ("ctx-1", None),
                                ("ctx-1", "ctx-1-c9"), ("ctx-2", "ctx-2-c1")])
    assert rows == [[{"doc": "ctx-1", "id": "ctx-1-c2", "note": "roofer called"}],
                    [{"doc": "ctx-1", "id": "ctx-1-c1", "note": "slippery"}],
                    [{"doc": "ctx-1", "id": None, "note": None}],
                    [{"doc": "ctx-1", "id": None, "note": None}],  # a fragment that is gone
                    [{"doc": "ctx-2", "id": "ctx-2-c1", "note": None}]]


def test_rows_are_capped_per_result(graph: Database) -> None:
    everyone = "MATCH (document)<-[:CAN_READ]-(x) RETURN coalesce(x.name, x.n) AS who"
    rows = GraphContext.compile(graph, everyone).rows(graph, [("ctx-1", None),
                                                              ("ctx-2", None)])
    assert [len(r) for r in rows] == [CONTEXT_ROWS, 1]  # 32 readers of ctx-1, capped
    small = GraphContext.compile(graph, READERS, cap=1)
    assert small.rows(graph, [("ctx-1", None), ("ctx-2", None)]) == [
        [{"reader": "ann", "level": 2}], [{"reader": "ann", "level": 1}]]


def test_targets_without_rows_get_empty_lists(graph: Database) -> None:
    context = GraphContext.compile(graph, READERS)
    assert context.rows(graph, []) == []
    assert context.rows(graph, [("no-such-document", None), ("ctx-3", "ctx-3-c1")]) == [[], []]


def test_graph_values_become_json(graph: Database) -> None:
    context = GraphContext.compile(
        graph, "OPTIONAL MATCH p = (document)-[c:CITES]->(d:Decision) "
        "OPTIONAL MATCH (document)<-[:CAN_READ]-(u:User {name: 'ann'}) "
        "RETURN d.title AS cites, d AS node, c AS citation, p AS path, u.since AS since, "
        "'costs $usd' AS text")
    assert context.columns == ("cites", "node", "citation", "path", "since", "text")
    one, three = context.rows(graph, [("ctx-1", None), ("ctx-3", None)])
    path = one[0].pop("path")
    assert one == [{"cites": "Ruling A", "node": {"title": "Ruling A", "year": 2019},
                    "citation": {"at": "p. 4", "type": "CITES"},
                    "since": "2021-03-04", "text": "costs $usd"}]
    assert [node.get("title") for node in path] == ["One", "Ruling A"]
    assert path[0]["documentid"] == "ctx-1" and path[1] == {"title": "Ruling A", "year": 2019}
    assert three == [{"cites": None, "node": None, "citation": None, "path": None,
                      "since": None, "text": "costs $usd"}]
    json.dumps([one, three])


def test_subqueries_are_allowed(graph: Database) -> None:
    context = GraphContext.compile(graph, """
        CALL (document) {
          MATCH (document)<-[:CAN_READ]-(u:User)
          RETURN count(u) AS users
        }
        RETURN users, COUNT { (document)<-[:CAN_READ]-(:Crowd) } AS crowd""")
    assert context.rows(graph, [("ctx-1", None), ("ctx-3", None)]) == [
        [{"users": 2, "crowd": 30}], [{"users": 0, "crowd": 0}]]


@pytest.mark.parametrize("cypher", [
    "CREATE (x:Injected) RETURN x AS x",
    "MERGE (x:Injected {n: 1}) RETURN x AS x",
    "SET document.title = 'changed' RETURN document.title AS title",
    "MATCH (document)<-[r:CAN_READ]-() DELETE r RETURN 1 AS one",
    "DETACH DELETE document RETURN 1 AS one",
    "REMOVE document.title RETURN 1 AS one",
    "FOREACH (i IN [1] | CREATE (:Injected)) RETURN 1 AS one",
    "CALL (document) { CREATE (x:Injected) RETURN x } RETURN x AS x",
    "OPTIONAL MATCH (fragment)<-[:ON]-(n:Note) SET n.text = 'x' RETURN n.text AS note",
])
def test_a_writing_context_is_refused_and_writes_nothing(graph: Database, cypher: str) -> None:
    before = snapshot(graph)
    with pytest.raises(ContextError, match=r"writes to the graph .* a context may only read"):
        GraphContext.compile(graph, cypher)
    assert snapshot(graph) == before


@pytest.mark.parametrize(("cypher", "said"), [
    ("", "the context is empty"),
    ("CALL db.labels() YIELD label RETURN label", "calls a procedure"),
    ("CALL (document) { CALL db.labels() YIELD label RETURN label } RETURN label",
     "calls a procedure"),
    ("LOAD CSV FROM 'file:///etc/passwd' AS line RETURN line", "loads a file (LOAD CSV)"),
    ("USE system RETURN 1 AS one", "selects a graph (USE)"),
    ("MATCH (u:User {name: $name}) RETURN u.name AS n", "uses a parameter"),
    ("RETURN 1 AS one } MATCH (n) DETACH DELETE n WITH 1 AS z CALL { RETURN 2 AS two",
     "closes a bracket `}` it did not open"),
    ("RETURN 1 AS one; MATCH (n) DETACH DELETE n", "holds `;`"),
    ("RETURN 1 AS one /* } MATCH (n) DETACH DELETE n", "ends inside a /* comment */"),
    ("RETURN 1 AS one\u200b", "invisible character U+200B"),
    ("CYPHER runtime=slotted RETURN 1 AS one", "begins with CYPHER"),
    ("MATCH (document)<-[:CAN_READ]-(u:User)\nRETURN nosuch(u) AS n",
     "does not compile: Unknown function 'nosuch' (at line 2, column 8)"),
    ("MATCH (document)<-[:CAN_READ]-(u:User)\nRETURN v.name AS n",
     "does not compile: Variable `v` not defined (at line 2, column 8)"),
    ("MATCH (document)<-[:CAN_READ]-(u:User) RETURN u.name",
     "must be aliased (use AS) (at line 1, column 47)"),
    ("RETURN document", "returns a column named `document`"),
    ("MATCH (x) RETURN x AS fragment", "returns a column named `fragment`"),
    ("CALL () { RETURN 1 AS document } RETURN 1 AS one",
     "`document` and `fragment` are the variables a context sees"),
    ("MATCH (document)<-[:CAN_READ]-(u:User) FINISH", "returns no columns"),
])
def test_every_refusal_says_why_and_nothing_changes(graph: Database, cypher: str,
                                                    said: str) -> None:
    before = snapshot(graph)
    with pytest.raises(ContextError) as caught:
        GraphContext.compile(graph, cypher)
    assert said in str(caught.value)
    assert snapshot(graph) == before


def test_return_star_takes_the_columns_the_server_names(graph: Database) -> None:
    """``RETURN *`` in a subquery lists the subquery's own variables on Neo4j 2026 (the
    server's order); Neo4j 5.26 lists the imported ones too, which it refuses as declared
    twice."""
    try:
        context = GraphContext.compile(graph, "MATCH (document)<-[:CAN_READ]-(u:User) "
                                       "WITH u.name AS name, u.since AS since RETURN *")
    except ContextError as refused:
        assert "`document` and `fragment` are the variables a context sees" in str(refused)
        return
    assert context.columns == ("name", "since")
    assert context.rows(graph, [("ctx-2", None)]) == [[{"name": "ann",
                                                        "since": "2021-03-04"}]]


@pytest.mark.parametrize("cap", [0, -1, 1.5, True, None])
def test_a_cap_that_is_no_count_of_rows_is_refused(graph: Database, cap: Any) -> None:
    with pytest.raises(ContextError, match="cap is the most context rows per result"):
        GraphContext.compile(graph, READERS, cap=cap)


def test_rows_run_in_the_open_read_transaction(graph: Database,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Inside ``one_read`` the rows are one more statement of the query's transaction (no
    transaction of their own), and a context refused there leaves that transaction usable:
    compiling runs its EXPLAIN in a transaction of its own."""
    context = GraphContext.compile(graph, READERS)
    opened: list[str] = []
    real = graph.read_tx

    def read_tx(work: Any, *, what: str = "read") -> Any:
        opened.append(what)
        return real(work, what=what)

    monkeypatch.setattr(graph, "read_tx", read_tx)

    def work() -> list[list[list[dict[str, Any]]]]:
        first = context.rows(graph, [("ctx-2", None)])
        with pytest.raises(ContextError, match="does not compile"):
            GraphContext.compile(graph, "RETURN nosuch() AS n")
        return [first, context.rows(graph, [("ctx-1", None)])]

    first, second = graph.one_read(work, what="query")
    assert first == [[{"reader": "ann", "level": 1}]]
    assert [r["reader"] for r in second[0]] == ["ann", "bob"]
    assert opened == ["query", "context"]  # the query's transaction and the refused EXPLAIN


def test_rows_are_bounded_by_the_query_time_budget(graph: Database) -> None:
    slow = GraphContext.compile(graph, "UNWIND range(1, 2000000000) AS i "
                                "WITH count(i) AS n RETURN n AS n")
    with deadline(0.001):
        time.sleep(0.01)
        with pytest.raises(QueryTimeout):
            slow.rows(graph, [("ctx-1", None)])
    started = time.monotonic()
    with deadline(1.0), pytest.raises(QueryTimeout):
        graph.one_read(lambda: slow.rows(graph, [("ctx-1", None)]), what="query")
    assert time.monotonic() - started < 30


def test_a_context_failing_on_the_data_is_a_context_error(graph: Database) -> None:
    context = GraphContext.compile(graph, "RETURN 1 / (size(document.title) - 3) AS x")
    assert context.rows(graph, [("ctx-3", None)]) == [[{"x": 0}]]  # "Three"
    with pytest.raises(ContextError, match="failed on the graph: / by zero"):
        context.rows(graph, [("ctx-1", None)])  # "One"
