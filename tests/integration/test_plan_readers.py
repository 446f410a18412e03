"""One plan, two readers: explain renders the plan the evaluator executes.

On every query of the sample-corpus suite (``sample_queries.SAMPLE_QUERIES``), explain's tree
and the profiled run's tree have the same nodes, restrictions, AND decisions and searches:
same kinds, sources, statements, paths and ``k`` (not timings or row counts). A search
restricted to a scored AND side's documents is shown by explain as decided at run time; the
profile shows the plan made when they were known, and the run made exactly those searches.
The fusion's language lookup (only for documents not seen yet) is run-time bookkeeping and
not compared.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.sample import load_sample
from tests.integration.sample_queries import SAMPLE_QUERIES
from thalabus_graph import ThalabusGraph
from thalabus_graph.graph.database import Database
from thalabus_graph.plan.searches import RUNTIME_PATH

pytestmark = pytest.mark.integration

RUNTIME_RESTRICTION = "documents of the other AND side (known at run time)"


@pytest.fixture(scope="module")
def graph(db: Database) -> ThalabusGraph:
    return load_sample(db)


def _signature(step: dict[str, Any]) -> tuple[Any, ...]:
    """What a step decided (not what it measured)."""
    return (step["kind"], step.get("source", step.get("index")), step.get("cypher", ""),
            step.get("path"), step.get("k", step.get("overfetch_k")),
            step.get("filtered_documents"), str(step.get("category_pattern")),
            step.get("ontology_pattern"), step.get("documents"))


def _searches(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [s for s in steps if s["kind"] not in ("fusion", "and", "skipped")]


def _decisions(node: dict[str, Any]) -> list[dict[str, Any]]:
    """An AND's decision and a node's reason not to run, as both readers show them."""
    return [s for s in node["steps"] if s["kind"] in ("and", "skipped")]


def _same_searches(planned: list[dict[str, Any]], ran: list[dict[str, Any]],
                   where: str) -> None:
    planned, ran = _searches(planned), _searches(ran)
    assert len(planned) == len(ran), (where, planned, ran)
    for plan, done in zip(planned, ran, strict=True):
        if plan.get("if_empty") == "skipped" and done.get("path") == "skipped":
            plan = {**plan, "path": "skipped"}  # the sizes came back with the search
        assert _signature(plan) == _signature(done), (where, plan, done)


def _pairs(explained: dict[str, Any], profiled: dict[str, Any]
           ) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    out, stack = [], [(explained, profiled)]
    while stack:
        a, b = stack.pop()
        out.append((a, b))
        kids_a, kids_b = a.get("children", []), b.get("children", [])
        assert len(kids_a) == len(kids_b), a["query"]
        stack.extend(zip(kids_a, kids_b, strict=True))
    return out


@pytest.mark.parametrize(("query", "scope"), SAMPLE_QUERIES,
                         ids=[f"{q!r} {s}" if s else repr(q) for q, s in SAMPLE_QUERIES])
def test_explain_shows_the_plan_the_profiled_run_executes(
        graph: ThalabusGraph, query: str, scope: dict[str, Any]) -> None:
    _assert_explain_is_the_run(graph, query, scope)


@pytest.mark.parametrize("fusion", ["convex", "max", "rrf"])
@pytest.mark.parametrize(("query", "scope"), [
    ('"asylum seeker" AND COUNTRY_OF_ORIGIN=IQ', {"ontology_id": "asylum"}),
    ('"kitchen floor" AND NOT TAG=home', {}),
    ('"kitchen floor" AND "cleanup"', {}),
])
def test_explain_is_the_run_for_every_fusion_rule(
        graph: ThalabusGraph, fusion: str, query: str, scope: dict[str, Any]) -> None:
    """The searches a fusion rule needs first (the semantic range of convex and max) are
    chosen with the phrase's other steps, so explain shows them too."""
    engine = ThalabusGraph(graph.db, settings=graph.settings.replace(fusion=fusion),
                           embedder=graph.embedder)
    _assert_explain_is_the_run(engine, query, scope)


def _assert_explain_is_the_run(graph: ThalabusGraph, query: str,
                               scope: dict[str, Any]) -> None:
    explained = graph.explain(query, **scope)["plan"]
    result = graph.query(query, profile=True, return_documents=False, **scope)
    assert result.plan is not None
    runtime = 0
    for plan, run in _pairs(explained, result.plan["tree"]):
        where = f"{query} / {plan['op']} {plan['query']}"
        for key in ("op", "query", "pushed_restriction", "pure_filter"):
            assert plan.get(key) == run.get(key), (where, key)
        assert _decisions(plan) == _decisions(run), where
        if plan["pushed_restriction"].startswith(RUNTIME_RESTRICTION) and \
                plan["op"] in ("SEMANTIC", "TEXT"):
            runtime += 1
            assert any(s.get("path") == RUNTIME_PATH for s in plan["steps"]), where
            if run.get("rows") is not None:  # it ran: with the plan made at run time
                _same_searches(run["planned_at_run_time"], run["steps"], where)
            continue
        planned = [s for s in plan["steps"] if not (s.get("when") and not run["rows"])]
        _same_searches(planned, run["steps"], where)
    if "\"kitchen floor\" AND \"cleanup\"" in query:
        assert runtime == 1  # the second phrase is restricted to the first's documents


def test_the_pure_filter_rule_is_decided_once_per_node(graph: ThalabusGraph) -> None:
    plan = graph.explain('"cat" AND NOT ("tree" OR TAG=home) AND CHARACTER=Jane')["plan"]
    # the chain's two filters are gathered into one side of its phrase
    assert plan["query"] == '"cat" AND (NOT ("tree" OR TAG=home) AND CHARACTER=Jane)'
    assert plan["pure_filter"] is False
    assert _decisions(plan)[0]["evaluated_first"] == "right side"
    assert _decisions(plan)[0]["first_is_pure_filter"] is True
    filters = plan["children"][1]
    assert filters["pure_filter"] is True
    negation = filters["children"][0]
    assert negation["op"] == "NOT" and negation["pure_filter"] is True
    # NOT is a filter even over a phrase: it runs first, the phrase inside it within the
    # universe (known now), so its path is planned, not left to run time.
    tree = negation["children"][0]["children"][0]
    assert tree["op"] == "SEMANTIC" and tree["pushed_restriction"].endswith("documents")
    assert all(s.get("path") != RUNTIME_PATH for s in tree["steps"])


def _profiled_nodes(tree: dict[str, Any]) -> int:
    count, stack = 0, [tree]
    while stack:
        node = stack.pop()
        count += 1
        stack.extend(node.get("children", []))
    return count


@pytest.mark.line_neutral
def test_a_10000_term_query_is_explained_and_profiled(graph: ThalabusGraph) -> None:
    query = " OR ".join([*(f"TAG=t{i}" for i in range(9_999)), '"cat"'])
    explained = graph.explain(query)["plan"]
    result = graph.query(query, profile=True, return_documents=False)
    assert result.plan is not None
    assert _profiled_nodes(explained) == _profiled_nodes(result.plan["tree"]) == 19_999
    assert result.fragments and any(not f.is_stub for f in result.fragments)


@pytest.mark.line_neutral
def test_a_deep_query_with_phrases_is_profiled_as_explained(graph: ThalabusGraph) -> None:
    # 300 levels (a search per level: 1,000 cost 40 s); test_explain profiles 1,000 NOTs.
    query = '"cat" AND NOT (' * 300 + "CHARACTER=Sammy" + ")" * 300
    explained = graph.explain(query)["plan"]
    result = graph.query(query, profile=True, return_documents=False)
    assert result.plan is not None
    pairs = _pairs(explained, result.plan["tree"])
    assert len(pairs) == 901
    assert all(a["pushed_restriction"] == b["pushed_restriction"] for a, b in pairs)


@pytest.mark.line_neutral
def test_a_5000_deep_pushed_filter_is_explained_and_profiled(graph: ThalabusGraph) -> None:
    # NOT NOT ... CHARACTER=Sammy is one filter pattern; its 5,000 NOTs run on the hits.
    query = '"cat" AND ' + "NOT " * 5_000 + "CHARACTER=Sammy"
    explained = graph.explain(query)["plan"]
    result = graph.query(query, profile=True, return_documents=False)
    reference, _ = graph.evaluate(query, reference=True)
    assert result.plan is not None
    assert len(_pairs(explained, result.plan["tree"])) == 5_003
    assert [(f.fragmentid, f.contributions) for f in result.fragments] == \
        [(f.fragmentid, f.contributions) for f in reference]
    assert {f.documentid for f in result.fragments} == {"docid-2002"}
