"""A pure filter query streams its stubs from one statement.

On a generated graph of a few thousand category-only documents: a query made only of
categories runs as one ``search_filter_documents`` statement (no category's document list,
no NOT universe, no set algebra in Python), gives the reference evaluator's stubs and
contributions, keeps the Python process's peak allocation flat in the number of matching
documents while it is consumed, streams only the documents a query with a ``limit`` returns,
and a dataset created from the stream is written in pages.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable, Iterable
from typing import Any

import pytest

from tests.support.spies import spy_read_transactions
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.fragments import Fragment
from thalabus_graph.graph.database import Database

pytestmark = pytest.mark.integration

DOCUMENTS = 4000
FEW = 300  # documents having FEW=yes (and every document has ALL=yes)
LIMIT = 7


def _doc(i: int) -> dict[str, Any]:
    categories: dict[str, list[str]] = {"ALL": ["yes"], "PARITY": ["even" if i % 2 else "odd"]}
    if i < FEW:
        categories["FEW"] = ["yes"]
    return {"documentid": f"stream-{i:05d}", "categories": categories,
            "ontology": "half" if i % 2 else "other"}


@pytest.fixture(scope="module")
def graph(db: Database) -> ThalabusGraph:
    db.write("migrations_delete_data_nodes")
    engine = ThalabusGraph(db, settings=Settings.from_env())
    engine.ingest([_doc(i) for i in range(DOCUMENTS)], progress=False, embed=False)
    return engine


def _ids(where: Callable[[int], bool]) -> list[str]:
    return sorted(f"stream-{i:05d}" for i in range(DOCUMENTS) if where(i))


def _peak(consume: Callable[[], int]) -> tuple[int, int]:
    """(result of ``consume``, peak bytes Python allocated while it ran)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        count = consume()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return count, peak


def _count(fragments: Iterable[Fragment]) -> int:
    return sum(1 for _ in fragments)


@pytest.mark.parametrize(("query", "expected"), [
    ("FEW=yes", _ids(lambda i: i < FEW)),
    ("NOT FEW=yes", _ids(lambda i: i >= FEW)),
    ("ALL=yes AND NOT (FEW=yes OR PARITY=even)", _ids(lambda i: i >= FEW and i % 2 == 0)),
    ("FEW=yes OR NOT PARITY=odd", _ids(lambda i: i < FEW or i % 2 == 1)),
])
def test_a_pure_filter_is_one_streamed_statement(graph: ThalabusGraph, query: str,
                                                 expected: list[str]) -> None:
    result = graph.query(query, return_documents=False, profile=True)
    assert [f.documentid for f in result.fragments] == expected
    reference, _ = graph.evaluate(query, reference=True)
    assert [(f.fragmentid, f.contributions) for f in result.fragments] == \
        [(f.fragmentid, f.contributions) for f in reference]
    assert result.plan is not None
    tree = result.plan["tree"]
    (step,) = tree["steps"]
    assert step["cypher"] == "search_filter_documents" and step["streamed"] is True
    assert step["rows"] == len(expected)
    stack = list(tree.get("children", []))
    while stack:  # nothing else ran: no category list, no universe
        node = stack.pop()
        assert [s["kind"] for s in node["steps"]] == ["skipped"]
        stack.extend(node.get("children", []))
    explained = graph.explain(query)["plan"]
    assert [(s["kind"], s["cypher"]) for s in explained["steps"]] == \
        [("category", "search_filter_documents")]


@pytest.mark.parametrize("query", ["NOT FEW=yes", "FEW=yes OR NOT PARITY=odd"])
def test_a_limited_pure_filter_streams_only_the_documents_it_returns(
        graph: ThalabusGraph, query: str) -> None:
    every = graph.query(query, return_documents=False)
    documents = graph.query(query)
    assert documents.documents is not None and len(every.fragments) > 2 * LIMIT
    cut = graph.query(query, return_documents=False, limit=LIMIT, profile=True)
    assert [(f.fragmentid, f.contributions) for f in cut.fragments] == \
        [(f.fragmentid, f.contributions) for f in every.fragments[:LIMIT]]
    assert cut.plan is not None
    (step,) = cut.plan["tree"]["steps"]
    assert (step["rows"], step["limit"]) == (LIMIT, LIMIT)  # not every match
    limited = graph.query(query, limit=LIMIT)
    assert limited.documents is not None
    assert [(d.documentid, d.ontology, d.categories) for d in limited.documents] == \
        [(d.documentid, d.ontology, d.categories) for d in documents.documents[:LIMIT]]
    assert graph.explain(query, limit=LIMIT)["plan"]["steps"][0]["limit"] == LIMIT
    # a dataset holds every raw fragment, whatever the limit
    written = graph.query(query, limit=LIMIT, create_dataset=True, session="stream-limit")
    assert written.documents is not None and len(written.documents) == LIMIT
    assert graph.datasets.get(written.dataset_ids[0]).members == len(every.fragments)


def test_a_streamed_filter_keeps_its_scope(graph: ThalabusGraph) -> None:
    found = list(graph.stream("NOT FEW=yes", ontology_id="half"))
    assert [f.documentid for f in found] == _ids(lambda i: i >= FEW and i % 2 == 1)
    parent = graph.query("FEW=yes", create_dataset=True, session="stream").dataset_ids[0]
    within = list(graph.stream("PARITY=even", subset_of_datasetids=[parent],
                               ontology_id="half"))
    assert [f.documentid for f in within] == _ids(lambda i: i < FEW and i % 2 == 1)


def test_consuming_a_pure_filter_stream_is_flat_in_its_length(graph: ThalabusGraph) -> None:
    small, small_peak = _peak(lambda: _count(graph.stream("FEW=yes")))
    large, large_peak = _peak(lambda: _count(graph.stream("ALL=yes")))
    listed, listed_peak = _peak(lambda: len(graph.evaluate("ALL=yes")[0]))
    print(f"\npeak bytes: {small} stubs streamed {small_peak}, {large} streamed {large_peak}, "
          f"{listed} as a list {listed_peak}")
    assert (small, large, listed) == (FEW, DOCUMENTS, DOCUMENTS)
    # 13x the documents: the stream's peak stays within a small factor (the driver holds one
    # fetch of STREAM_FETCH_SIZE records), while the list's grows with its length.
    assert large_peak < 3 * small_peak
    assert listed_peak > 2 * large_peak


def test_a_dataset_is_written_from_the_stream_in_pages(
        graph: ThalabusGraph, monkeypatch: pytest.MonkeyPatch) -> None:
    import thalabus_graph.datasets as datasets_module

    pages: list[int] = []
    real_run = datasets_module.run

    def counting_run(tx: Any, name: str, /, **params: Any) -> Any:
        if name == "dataset_add_documents":
            pages.append(len(params["rows"]))
        return real_run(tx, name, **params)

    monkeypatch.setattr(datasets_module, "run", counting_run)
    monkeypatch.setattr(datasets_module, "_WRITE_CHUNK", 1000)
    datasetid = graph.datasets.create(graph.stream("ALL=yes"), session="stream",
                                      query="ALL=yes")
    assert pages == [1000] * 4
    assert graph.datasets.get(datasetid).members == DOCUMENTS
    assert sorted(m.documentid for m in graph.datasets.members(datasetid)) == \
        _ids(lambda i: True)


def test_a_pure_filter_query_returns_documents_in_two_round_trips(
        graph: ThalabusGraph, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = spy_read_transactions(graph, monkeypatch)
    result = graph.query("FEW=yes AND NOT PARITY=odd")
    assert result.documents is not None
    assert [d.documentid for d in result.documents] == _ids(lambda i: i < FEW and i % 2 == 1)
    for document in result.documents:  # the details came with the streamed rows
        assert document.ontology == "half"
        assert document.categories == {"ALL": ["yes"], "FEW": ["yes"], "PARITY": ["even"]}
    # The vocabulary check; the stream runs on its own session (not a read transaction).
    assert seen == ["category_vocabulary"]
