"""The search statements never scan every document for a branch whose guard is false.

The statements that find a restriction's documents are UNIONs of branches guarded by
parameters (the id list, the category's documents, the seeds, the ontology, every document).
Neo4j planned ``MATCH (d:Document) WHERE <parameters only>`` as a scan of every document
followed by the filter, so a narrow category search paid a full label scan per call (200,000
db hits, ~20 ms at 200,000 chapters) for a branch that returns nothing. Each test profiles one
statement with a restriction that does not need the all-documents branch and checks that no
label scan of documents produced a row; the answer is checked too, so a guard that wrongly
skips a branch fails as well.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.sample import docs_where, has, load_sample
from thalabus_graph import ThalabusGraph
from thalabus_graph.graph import cypher_library
from thalabus_graph.graph.database import Database
from thalabus_graph.plan.steps import CategoryPattern, FilterPattern, category_key, pattern_params

IQ = docs_where(has("COUNTRY_OF_ORIGIN", "IQ"))
DIMENSIONS = 384


@pytest.fixture(scope="module")
def graph(db: Database) -> ThalabusGraph:
    return load_sample(db)


def _operators(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    stack = [plan]
    while stack:
        op = stack.pop()
        yield op
        stack.extend(op.get("children", []))


def _profiled(graph: ThalabusGraph, statement: str, params: dict[str, Any]
              ) -> tuple[list[Any], list[dict[str, Any]]]:
    """The statement's rows and the operators of its profile."""
    text = cypher_library.load(statement)
    with graph.db.driver.session(database=graph.db.database) as session:
        result = session.run("PROFILE " + text, params)
        rows = [record.values() for record in result]
        profile = result.consume().profile
    assert profile, statement
    return rows, list(_operators(profile))


def _details(op: dict[str, Any]) -> str:
    return str(op.get("args", {}).get("Details", ""))


def _profile(graph: ThalabusGraph, statement: str, scanned: str = "Document", /,
             **params: Any) -> tuple[list[Any], list[int]]:
    """The statement's rows and the rows of each label scan of ``scanned`` in its profile."""
    rows, ops = _profiled(graph, statement, params)
    return rows, [int(op.get("rows", 0)) for op in ops
                  if "LabelScan" in op["operatorType"] and f":{scanned}" in _details(op)]


def _rows_touching(graph: ThalabusGraph, statement: str, word: str, /,
                   **params: Any) -> tuple[list[Any], int]:
    """The statement's rows and the rows of every profiled scan, seek or expand whose details
    name ``word`` (a label or relationship type): the rows read through it."""
    rows, ops = _profiled(graph, statement, params)
    return rows, sum(int(op.get("rows", 0)) for op in ops
                     if any(kind in op["operatorType"] for kind in ("Scan", "Seek", "Expand"))
                     and word in _details(op))


def _scope(**overrides: Any) -> dict[str, Any]:
    return {"ontologyid": None, "datasetids": None, **overrides}


def _vector(graph: ThalabusGraph) -> list[float]:
    return [float(x) for x in graph.embedder.embed_queries(["asylum seeker"])[0]]


COUNTS = 4
"""The column of ``category_vocabulary`` that counts each pattern's documents."""
IQ_PATTERN = CategoryPattern("COUNTRY_OF_ORIGIN", ("IQ",))
IQ_FILTER = FilterPattern("", (), conjunctions=((IQ_PATTERN,),))


@pytest.mark.parametrize("category", [IQ_PATTERN, IQ_FILTER], ids=["pattern", "filter"])
def test_exact_search_of_a_category_scans_no_document(
        graph: ThalabusGraph, category: CategoryPattern) -> None:
    rows, scans = _profile(graph, "search_vector_exact", label="Chapter",
                           vector=_vector(graph), k=200, documentids=None, details=False,
                           max_text=100,
                           **_scope(), **pattern_params(category))
    assert rows and {r[1] for r in rows} <= IQ
    assert scans == [] or max(scans) == 0, scans


def test_exact_search_of_a_negated_category_still_reads_every_document(
        graph: ThalabusGraph) -> None:
    negated = CategoryPattern("COUNTRY_OF_ORIGIN", ("IQ",), negated=True)
    rows, scans = _profile(graph, "search_vector_exact", label="Chapter",
                           vector=_vector(graph), k=1000, documentids=None, details=False,
                           max_text=100,
                           **_scope(), **pattern_params(negated))
    assert rows and not {r[1] for r in rows} & IQ
    assert scans and max(scans) > 0  # the guard is true: the branch runs


def test_counting_a_category_at_run_time_scans_no_document(graph: ThalabusGraph) -> None:
    # The run-time count (SearchExecutor.category_count without a preloaded count): the
    # vocabulary statement with no names or pairs.
    rows, scans = _profile(graph, "category_vocabulary", names=[], values=[], exact_names=[],
                           exact_pairs=[], **_scope(), patterns=[pattern_params(IQ_PATTERN)])
    assert rows[0][COUNTS] == [len(IQ)]
    assert scans == [] or max(scans) == 0, scans


def _vocabulary(graph: ThalabusGraph, name: str, value: str,
                label: str) -> tuple[list[Any], list[int]]:
    return _profile(graph, "category_vocabulary", label, names=[name.lower()],
                    values=[value.lower()], exact_names=[name], exact_pairs=[[name, value]],
                    **_scope(), patterns=[pattern_params(IQ_PATTERN)])


def test_the_vocabulary_check_scans_no_document(graph: ThalabusGraph) -> None:
    rows, scans = _vocabulary(graph, "COUNTRY_OF_ORIGIN", "IQ", "Document")
    assert rows[0][COUNTS] == [len(IQ)]
    assert scans == [] or max(scans) == 0, scans


def test_a_query_spelt_as_stored_scans_no_category(graph: ThalabusGraph) -> None:
    rows, scans = _vocabulary(graph, "COUNTRY_OF_ORIGIN", "IQ", "Category")
    assert rows[0][0] == ["COUNTRY_OF_ORIGIN"] and rows[0][1] == [["COUNTRY_OF_ORIGIN", "IQ"]]
    assert scans == [] or max(scans) == 0, scans


def test_another_spelling_scans_the_categories_without_case(graph: ThalabusGraph) -> None:
    rows, scans = _vocabulary(graph, "country_of_origin", "iq", "Category")
    assert rows[0][0] == ["COUNTRY_OF_ORIGIN"] and rows[0][1] == [["COUNTRY_OF_ORIGIN", "IQ"]]
    assert scans and max(scans) > 0


def test_a_pure_filter_with_seeds_scans_no_document(graph: ThalabusGraph) -> None:
    rows, scans = _profile(graph, "search_filter_documents", filter=IQ_FILTER.param(),
                           seeds=IQ_FILTER.seeds(),
                           keys=[category_key("COUNTRY_OF_ORIGIN", "IQ")], details=False,
                           limit=len(IQ), **_scope())
    assert {r[0] for r in rows} == IQ
    assert scans == [] or max(scans) == 0, scans


@pytest.mark.parametrize("statement", ["search_vector", "search_fulltext"])
def test_a_scoped_search_without_a_category_reads_no_category(
        graph: ThalabusGraph, statement: str) -> None:
    """Written as ``$name IS NULL OR EXISTS {...}``, the category check ran for every
    candidate even without a category (on this graph Neo4j scanned every Category node per
    candidate); as a CASE it is not evaluated at all."""
    search: dict[str, Any] = (
        {"index": "typical_rag", "k": 100, "top_n": 20, "vector": _vector(graph)}
        if statement == "search_vector"
        else {"index": "chapters_fulltext", "k": 100, "query": "asylum"})
    rows, touched = _rows_touching(
        graph, statement, "Category", documentids=None, details=False, max_text=100,
        **_scope(ontologyid="asylum"), **pattern_params(None), **search)
    assert rows and {r[1] for r in rows} <= docs_where(lambda d: d.get("ontology") == "asylum")
    assert touched == 0

