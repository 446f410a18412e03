"""A conjunction of category filters is found from its smallest literal (``plan.seeds``): a
phrase held to a small category under a large one, and a pure filter of the two, do work
bounded by the small category whatever the large one's size or the written order; the
answer is the written-out query's and the reference evaluator's. Work is counted (Neo4j's
db hits of the profiled statements), never timed."""

from __future__ import annotations

import math
from typing import Any

import pytest

from tests.adversarial.conftest import HashEmbedder
from tests.support.paths import force_index_path
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.graph.database import Database
from thalabus_graph.plan.cost import pool_fields
from thalabus_graph.query import parse

pytestmark = pytest.mark.integration

DOCUMENTS = 400
SMALL = "SKEW=v10"
"""40 documents; SKEW=v50 has 200 and SKEW=v25 100, none of them shared (one SKEW value a
document). REGION=r1 is every fourth document, across the SKEW values."""


def _skew(i: int) -> str:
    return "v50" if i % 20 < 10 else "v25" if i % 20 < 15 else "v10" if i % 20 < 17 else "o"


def _documents() -> list[dict[str, Any]]:
    return [{"documentid": f"seed-{i:03d}", "title": f"seed {i}",
             "chapters": [f"asylum claim number {i}", f"a chapter on winter gardens {i}"],
             "categories": {"SKEW": [_skew(i)], "REGION": ["r1" if i % 4 == 0 else "r2"]}}
            for i in range(DOCUMENTS)]


@pytest.fixture(scope="module")
def graph(db: Database) -> ThalabusGraph:
    db.write("migrations_delete_data_nodes")
    # pools larger than the graph: the reference evaluator's unrestricted top-N then holds
    # every fragment, and its answer is comparable with the plan's
    settings = Settings.from_env().replace(calibration_file="none",
                                           **dict.fromkeys(pool_fields(Settings()), 2000))
    graph = ThalabusGraph(db, settings=settings, embedder=HashEmbedder(384))
    report = graph.ingest(_documents(), progress=False)
    assert not report.errors, report.errors
    return graph


def _held(graph: ThalabusGraph, required: str) -> ThalabusGraph:
    return ThalabusGraph(graph.db, settings=graph.settings, embedder=graph.embedder,
                         required_filter=required)


def _steps(tree: dict[str, Any]) -> list[dict[str, Any]]:
    out, stack = [], [tree]
    while stack:
        node = stack.pop()
        out += node.get("steps", [])
        stack += node.get("children", [])
    return out


def _profiled(graph: ThalabusGraph, text: str) -> tuple[list[Any], list[dict[str, Any]]]:
    result = graph.query(text, profile=True, return_documents=False)
    assert result.plan is not None
    return [(f.fragmentid, f.score) for f in result.fragments], _steps(result.plan["tree"])


def _db_hits(steps: list[dict[str, Any]]) -> int:
    return sum(int(s.get("db_hits", 0)) for s in steps)


def _scored(fragments: Any) -> list[tuple[str, float]]:
    return [(f.fragmentid, f.score) for f in fragments]


def _assert_reference(graph: ThalabusGraph, text: str) -> list[tuple[str, float]]:
    """The compiled plan's fragments of ``text``, checked to be the reference evaluator's:
    the same ids in the same order, the same scores (to 1e-5: the two may read a score by
    different paths, the index's and the exact cosine)."""
    compiled = _scored(graph.evaluate(parse(text))[0])
    reference = _scored(graph.evaluate(parse(text), reference=True)[0])
    assert [i for i, _ in compiled] == [i for i, _ in reference], text
    assert all(math.isclose(a, b, abs_tol=1e-5)
               for (_, a), (_, b) in zip(compiled, reference, strict=True)), text
    return compiled


@pytest.mark.parametrize("big", ["SKEW=v50", "SKEW=v25"])
def test_a_phrase_held_to_a_small_category_is_found_from_it(graph: ThalabusGraph,
                                                            big: str) -> None:
    # the statements' work, as their profile counts it (inside a plugin call it counts none)
    graph = ThalabusGraph(graph.db, settings=graph.settings.replace(procedures="off"),
                          embedder=graph.embedder)
    held = _held(graph, SMALL)
    query = f'"asylum" AND {big}'
    found, steps = _profiled(held, query)
    assert found == []  # no document has two SKEW values
    (count,) = [s for s in steps if s["kind"] == "category_count"]
    # the pattern starts from the small category: its seeds are SKEW=v10's 40 documents
    assert count["any_of"][0][0] == {"name": "SKEW", "values": ["v10"]}
    assert count["documents"] == DOCUMENTS // 10
    searched = [s for s in steps if s["kind"] == "semantic" and "filtered_documents" in s]
    assert searched and all(s["filtered_documents"] == DOCUMENTS // 10 for s in searched)
    # the work: the same whatever the large category's size, and the same as with the small
    # category written first
    _, small_first = _profiled(graph, f'("asylum" AND {SMALL}) AND ({big})')
    _, other_big = _profiled(held, '"asylum" AND SKEW=v50' if big != "SKEW=v50"
                             else '"asylum" AND SKEW=v25')
    assert _db_hits(steps) == _db_hits(small_first) == _db_hits(other_big) > 0


@pytest.mark.parametrize("required, query", [
    (SMALL, '"asylum" AND REGION=r1'),
    ("REGION=r1", '"asylum" AND SKEW=v50'),
    (f"{SMALL} OR SKEW=v25", '"asylum" AND (REGION=r1 AND NOT SKEW=v50)'),
    (SMALL, '"asylum" AND SKEW=v50'),
])
def test_a_held_query_answers_as_written_out_and_as_the_reference(
        graph: ThalabusGraph, required: str, query: str) -> None:
    written = f"({query}) AND ({required})"
    got = _scored(_held(graph, required).query(query, return_documents=False).fragments)
    assert got == _scored(graph.query(written, return_documents=False).fragments)
    assert [i for i, _ in got] == [i for i, _ in _assert_reference(graph, written)]
    if "v50" not in query or "REGION" in required:
        assert got  # a non-empty intersection: the same fragments, the same scores


def _stream_hits(graph: ThalabusGraph, text: str,
                 monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], Any, int]:
    """The documents of the pure filter ``text``, the seeds its streamed statement started
    from, and the db hits of that statement run again under PROFILE."""
    sent: list[dict[str, Any]] = []
    real = graph.db.streamed

    def spy(statement: str, params: dict[str, Any], **kwargs: Any) -> Any:
        sent.append(params)
        return real(statement, params, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(graph.db, "streamed", spy)
        found = [f.documentid for f in graph.query(text, return_documents=False).fragments]
    (params,) = sent
    _, hits = graph.db.read_profiled("search_filter_documents", **params)
    return found, params["seeds"], hits


def test_a_pure_filter_of_two_categories_walks_the_smaller(
        graph: ThalabusGraph, monkeypatch: pytest.MonkeyPatch) -> None:
    found, seeds, hits = _stream_hits(graph, f"SKEW=v50 AND {SMALL}", monkeypatch)
    assert found == [] and seeds == [["SKEW", "v10"]]
    for other in (f"{SMALL} AND SKEW=v50", f"SKEW=v25 AND {SMALL}"):
        assert _stream_hits(graph, other, monkeypatch)[1:] == (seeds, hits)
    # with matches: the documents of the reference, found from REGION=r1 (100 documents)
    # rather than SKEW=v50 (200)
    found, seeds, _ = _stream_hits(graph, "SKEW=v50 AND REGION=r1", monkeypatch)
    assert seeds == [["REGION", "r1"]]
    reference = [doc for doc, _ in _assert_reference(graph, "SKEW=v50 AND REGION=r1")]
    assert found == reference and len(found) == DOCUMENTS * 3 // 20


def test_a_conjunction_with_a_value_no_document_has_is_dropped(graph: ThalabusGraph) -> None:
    """A literal counted 0 empties its conjunction: the rest of the filter is searched as if
    it were not there, and a filter left with none searches nothing."""
    query = '"asylum" AND (SKEW=nosuch AND REGION=r1 OR SKEW=v10)'
    found, steps = _profiled(graph, query)
    (count,) = [s for s in steps if s["kind"] == "category_count"]
    assert count["any_of"] == [[{"name": "SKEW", "values": ["v10"]}]]
    assert found and found == _profiled(graph, f'"asylum" AND {SMALL}')[0]
    _assert_reference(graph, query)
    for nothing in ('"asylum" AND (REGION=r1 AND SKEW=nosuch)', '"asylum" AND SKEW=nosuch'):
        result = graph.query(nothing, profile=True, return_documents=False)
        assert result.plan is not None and result.fragments == []
        steps = _steps(result.plan["tree"])
        (count,) = [s for s in steps if s["kind"] == "category_count"]
        assert count["documents"] == 0 and count.get("any_of", []) == []
        # nothing more is read: the phrase is skipped, its searches never run
        assert not [s for s in steps if s["kind"] in ("semantic", "text", "fusion")], steps
        assert {"kind": "skipped", "reason": "the other AND side is empty"} in steps
        assert [w.kind for w in result.warnings] == ["unknown_category_value"]
        assert graph.evaluate(parse(nothing), reference=True)[0] == []


FIRST_K = 100
"""The k the index path below is first asked for: fewer candidates than the graph holds."""


@pytest.fixture
def index_path(graph: ThalabusGraph, monkeypatch: pytest.MonkeyPatch) -> ThalabusGraph:
    """The graph with every restricted vector search first on the index path, asked for
    ``FIRST_K`` candidates (the graph is small enough for exact search everywhere, so the
    path choice is overridden): what a large graph does with a filter of 10%."""
    force_index_path(monkeypatch, lambda scope, src: FIRST_K, "forced by the test")
    return graph


def test_an_empty_conjunction_asks_the_index_once_then_walks_the_small_category(
        index_path: ThalabusGraph) -> None:
    """No hit among the first candidates says the index would need more than exact search
    walks (the small category's documents): it is not asked again up to ``index_max_k``."""
    found, steps = _profiled(_held(index_path, SMALL), '"asylum" AND SKEW=v50')
    assert found == []
    semantic = [s for s in steps if s["kind"] == "semantic" and "category_pattern" in s
                and s["path"] != "none"]  # a source with no fragments is not searched
    assert semantic and all(s["path"] == "exact" and s["overfetch_k"] == FIRST_K
                            and "fell short" in s["reason"] for s in semantic), semantic
    # with hits, the same answer as the reference (the exact path is exact)
    query = f'("asylum" AND REGION=r1) AND ({SMALL})'
    assert [i for i, _ in _profiled(index_path, query)[0]] == [
        i for i, _ in _assert_reference(index_path, query)]
