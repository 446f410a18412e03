"""EXPLAIN and PROFILE on the sample corpus: where filters go, which path a filtered vector
search takes, that explain runs no search and writes nothing, and that profiles add up."""

from __future__ import annotations

import math
from typing import Any

import pytest
from neo4j import ManagedTransaction

from tests.integration.sample import load_sample
from tests.support.paths import filtered_call
from tests.support.spies import count_calls
from thalabus_graph import Settings, ThalabusGraph, parse, serialize
from thalabus_graph.graph.database import Database

pytestmark = pytest.mark.integration


class ReadOnlyDatabase(Database):
    """Fails the test on any write: explain must only read."""

    def write_tx(self, work: Any, *, what: str = "write") -> Any:
        raise AssertionError(f"explain wrote: {what}")

    def read_tx(self, work: Any, *, what: str = "read") -> Any:
        def guarded(tx: ManagedTransaction) -> Any:
            return work(tx)

        with self.driver.session(database=self.database,
                                 default_access_mode="READ") as session:
            return session.execute_read(guarded)


@pytest.fixture(scope="module")
def graph(db: Database) -> ThalabusGraph:
    return load_sample(db)


def find(tree: dict[str, Any], op: str) -> dict[str, Any]:
    stack = [tree]
    while stack:
        node = stack.pop()
        if node["op"] == op:
            return node
        stack.extend(node.get("children", []))
    raise AssertionError(f"no {op} node")


def tuned(graph: ThalabusGraph, **changes: Any) -> ThalabusGraph:
    db = ReadOnlyDatabase(graph.db.driver, graph.db.database)
    return ThalabusGraph(db, settings=graph.settings.replace(**changes),
                         embedder=graph.embedder)


def test_the_filter_is_pushed_into_the_semantic_search(graph: ThalabusGraph) -> None:
    plan = tuned(graph).explain('"asylum seeker" AND COUNTRY_OF_ORIGIN=IQ')
    semantic = find(plan["plan"], "SEMANTIC")
    # As the run does it: the category is a pattern, counted (6 documents), never listed.
    assert semantic["pushed_restriction"] == "category pattern COUNTRY_OF_ORIGIN in ['IQ']"
    (count,) = [s for s in semantic["steps"] if s["kind"] == "category_count"]
    assert count["documents"] == 6
    chapters = next(s for s in semantic["steps"]
                    if s["kind"] == "semantic" and "filtered_documents" in s)
    assert chapters["source"] == "chapters" and chapters["path"] == "exact"
    assert chapters["filtered_documents"] == 6
    assert "<384 floats elided>" in str(chapters["params"])
    assert plan["ast"]["type"] == "AND"


def test_selective_filters_run_exact_and_broad_ones_use_the_index(
        graph: ThalabusGraph) -> None:
    g = tuned(graph, exact_search_max_candidates=5, index_max_k=100000,
              vector_overfetch_factor=2.0, vector_min_k=1, top_n_chapters=10)
    narrow = _filtered(find(g.explain("\"cat\" AND TAG='x}y'")["plan"], "SEMANTIC"))
    assert narrow["path"] == "exact" and narrow["selectivity"] < 0.05
    broad = _filtered(find(g.explain('"cat" AND NOT CHARACTER=Sammy')["plan"], "SEMANTIC"))
    chapters = graph.db.driver.execute_query("MATCH (c:Chapter) RETURN count(c) AS n",
                                             database_="neo4j").records[0]["n"]
    total = len(graph.datasets.db.read("universe_all_documents")[0]["documentids"])
    assert broad["path"] == "index" and "over-fetch" in broad["reason"]
    assert broad["overfetch_k"] == min(math.ceil(10 * 2 * total / (total - 1)), chapters) < chapters
    # NOT of a value no document has keeps every document: the pattern is still checked (as
    # the run does), on the index path at selectivity 1.
    everything = _filtered(find(g.explain('"cat" AND NOT COUNTRY_OF_ORIGIN=XX')["plan"],
                                "SEMANTIC"))
    assert everything["path"] == "index" and everything["selectivity"] == 1.0


def _filtered(node: dict[str, Any]) -> dict[str, Any]:
    """The first filtered vector search of a plan node (the chapters')."""
    return next(s for s in node["steps"] if s["kind"] == "semantic" and "selectivity" in s)


def test_explain_reads_only_and_changes_nothing(graph: ThalabusGraph) -> None:
    def counts() -> tuple[int, int]:
        rec = graph.db.driver.execute_query(
            "MATCH (n) WITH count(n) AS n MATCH ()-[r]->() RETURN n, count(r) AS r",
            database_="neo4j").records[0]
        return rec["n"], rec["r"]

    before = counts()
    tuned(graph).explain('("cat" OR \'tree\') AND NOT CHARACTER=Sammy AND TAG=home')
    assert counts() == before


def test_profile_rows_and_times_add_up(graph: ThalabusGraph) -> None:
    result = graph.query('"kitchen floor" AND CHARACTER=Jane OR TAG=winter',
                         return_documents=False, profile=True)
    assert result.plan is not None
    tree = result.plan["tree"]
    assert tree["rows"] == len(result.fragments)
    assert result.plan["embed_ms"] >= 0
    and_node = find(tree, "AND")
    # The category side is pushed into the phrase: it never runs (no rows).
    assert [c["steps"][0].get("reason") for c in and_node["children"]] == [
        None, "pushed into the phrase as a pattern"]
    assert and_node["rows"] <= sum(c["rows"] or 0 for c in and_node["children"])
    stack = [tree]
    while stack:
        node = stack.pop()
        kids = node.get("children", [])
        assert node["ms"] + 1e-6 >= sum(c["ms"] for c in kids)
        stack.extend(kids)
    semantic = find(tree, "SEMANTIC")
    # The category is pushed as a pattern: counted (2 documents), never listed; the count
    # rides with the query's vocabulary check (one round trip for both).
    assert semantic["pushed_restriction"] == "category pattern CHARACTER in ['Jane']"
    count = next(s for s in semantic["steps"] if s["kind"] == "category_count")
    assert count["documents"] == 2 and count["cypher"] == "category_vocabulary"
    pushed = [s for s in semantic["steps"] if "category_pattern" in s]
    assert pushed and all(s.get("filtered_documents", 2) == 2 for s in pushed)
    # the statements' work; inside a procedure plugin call Neo4j's profile counts none
    assert any(step.get("db_hits", 0) > 0 for step in semantic["steps"]) or (
        filtered_call(graph) == "search_phrase_procedure")
    assert Settings().exact_search_max_candidates > 0


def _plan_nodes(tree: dict[str, Any]) -> tuple[int, int]:
    """(node count, depth) of a plan tree, iteratively."""
    count = deepest = 0
    stack = [(tree, 1)]
    while stack:
        node, level = stack.pop()
        count, deepest = count + 1, max(deepest, level)
        stack.extend((child, level + 1) for child in node.get("children", []))
    return count, deepest


def _flat_or(terms: int) -> str:
    kinds = ("CHARACTER=Sammy", "'tree'", '"cat on the floor"', "TAG='x}y'", "@'Bob'")
    return " OR ".join(f"{kinds[i % len(kinds)]}" if i % 7 else f'"t{i}"'
                       for i in range(terms))


def test_explain_of_a_flat_10000_term_or_is_complete_and_linear(graph: ThalabusGraph) -> None:
    plan = graph.explain(_flat_or(10_000))
    assert _plan_nodes(plan["plan"]) == (19_999, 10_000)
    assert len(plan["plan"]["query"]) <= 200 and plan["plan"]["query"].endswith("…")
    assert plan["query"] == serialize(parse(_flat_or(10_000)))
    graph.explain(_flat_or(2_000))  # caches filled before counting
    small = count_calls(lambda: graph.explain(_flat_or(2_000)))
    large = count_calls(lambda: graph.explain(_flat_or(10_000)))
    print(f"explain 2,000 terms {small:,} calls, 10,000 terms {large:,} calls "
          f"(x{large / small:.2f} for x5 terms)")
    assert large <= small * 5 * 1.1  # linear; quadratic labelling is ~x25


def _deep(levels: int) -> str:
    return "".join(f'"t{i}" AND NOT (' for i in range(levels)) + "CHARACTER=Sammy" + \
        ")" * levels


@pytest.mark.line_neutral
def test_explain_of_a_1000_deep_query(graph: ThalabusGraph) -> None:
    plan = graph.explain(_deep(1_000))
    count, deepest = _plan_nodes(plan["plan"])
    assert (count, deepest) == (3_001, 2_001)
    assert plan["ast"]["type"] == "AND"


def test_profile_of_a_1000_deep_query(graph: ThalabusGraph) -> None:
    query = "NOT " * 1_000 + "CHARACTER=Sammy"
    result = graph.query(query, profile=True, return_documents=False)
    assert result.plan is not None
    assert _plan_nodes(result.plan["tree"]) == (1_001, 1_001)
    assert {f.documentid for f in result.fragments} == {"docid-2002"}


class CountingDatabase(Database):
    """Counts the named statements read."""

    names: list[str]

    def read(self, name: str, /, **params: Any) -> list[dict[str, Any]]:
        self.names.append(name)
        return super().read(name, **params)


def test_explain_reads_all_category_filters_in_one_round_trip(graph: ThalabusGraph) -> None:
    db = CountingDatabase(graph.db.driver, graph.db.database)
    db.names = []
    db.plugin = graph.db.plugin  # the server's plugin state, read once per connection
    g = ThalabusGraph(db, settings=graph.settings, embedder=graph.embedder)
    query = " OR ".join([*(f"TAG=t{i}" for i in range(500)), "CHARACTER=Sammy,Bob"])
    plan = g.explain(f'"cat" AND NOT ({query})')
    assert db.names.count("explain_category_documents") == 1
    assert len(db.names) <= 5, db.names
    last = find(plan["plan"], "NOT")["children"][0]["children"][1]
    assert last["steps"][-1]["documents"] == len(
        graph.query("CHARACTER=Sammy,Bob", return_documents=False).fragments) > 1
