"""A filtered query asked again is one round trip: it plans with the vocabulary row the last
same read returned, and its first statement reads the vocabulary again and runs the search
only when the counts are those planned with. When the graph changed in between, the search
does not run and the query plans again from the fresh row: its answer is always the one a
graph object seeing the query for the first time gives."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from tests.support.embedders import FixedEmbedder
from tests.support.paths import filtered_call
from tests.support.spies import spy_read_transactions
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.errors import DatasetInputError, UnknownCategoryError
from thalabus_graph.graph.database import Database

pytestmark = pytest.mark.integration

DIMS = 384


def carried(graph: ThalabusGraph) -> str:
    """The filtered phrase's statement carrying the vocabulary read (``filtered_call``)."""
    return f"{filtered_call(graph)} (with category_vocabulary)"

TEXTS = {"pv-1": "the kitchen floor was wet", "pv-2": "a quiet winter garden",
         "pv-3": "kitchen knives and forks", "pv-4": "a kitchen garden in winter"}


def _unit(rng: np.random.Generator) -> npt.NDArray[np.float32]:
    v = rng.standard_normal(DIMS).astype(np.float32)
    return v / np.linalg.norm(v)


def _document(doc: str, text: str, tag: str, rng: np.random.Generator) -> dict[str, Any]:
    return {"documentid": doc, "chapters": [text], "paragraphs": [[]],
            "categories": {"TAG": [tag]},
            "embeddings": {f"{doc}-c1": _unit(rng).tolist()}}


@pytest.fixture()
def graph(clean_db: Database) -> ThalabusGraph:
    """Four one-chapter documents, three of them TAG=odd, and a graph object whose text
    languages are read (a graph object reads them at most once a minute, not per query)."""
    rng = np.random.default_rng(41)
    settings = Settings.from_env().replace(calibration_file="none", hybrid_all_queries=True)
    ThalabusGraph(clean_db, settings=settings).ingest(
        [_document(doc, text, "even" if doc == "pv-2" else "odd", rng)
         for doc, text in TEXTS.items()], embed=False, progress=False)
    graph = ThalabusGraph(clean_db, settings=settings,
                          embedder=FixedEmbedder({"kitchen": _unit(rng)}))
    graph.queries.text_languages()
    return graph


def _fresh(graph: ThalabusGraph) -> ThalabusGraph:
    """A graph object on the same database that has read no vocabulary yet."""
    other = ThalabusGraph(graph.db, settings=graph.settings, embedder=graph.embedder)
    other.queries.text_languages()
    return other


def _answer(result: Any) -> tuple[Any, ...]:
    return ([f.to_dict() for f in result.fragments],
            [d.to_dict() for d in result.documents or []],
            [w.to_dict() for w in result.warnings])


def test_a_filtered_phrase_asked_again_is_one_round_trip(
        graph: ThalabusGraph, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(graph.queries.shared.text_languages, "recheck_seconds", float("inf"))
    reads = spy_read_transactions(graph, monkeypatch)
    first = graph.query('"kitchen" AND TAG=odd')
    assert reads == ["category_vocabulary", filtered_call(graph)]
    reads.clear()
    again = graph.query('"kitchen" AND TAG=odd')
    assert reads == [carried(graph)]
    assert _answer(again) == _answer(first)
    assert {f.documentid for f in again.fragments} == {"pv-1", "pv-3", "pv-4"}
    # a different filter is a different read: it is made first
    reads.clear()
    graph.query('"kitchen" AND NOT TAG=odd')
    assert reads == ["category_vocabulary", filtered_call(graph)]


def test_a_changed_graph_is_planned_again_from_the_fresh_counts(
        graph: ThalabusGraph, monkeypatch: pytest.MonkeyPatch) -> None:
    graph.query('"kitchen" AND TAG=odd')
    # another process adds a TAG=odd document: the counts the plan was made with are stale
    _fresh(graph).ingest([_document("pv-5", "kitchen tiles", "odd",
                                    np.random.default_rng(43))], embed=False, progress=False)
    monkeypatch.setattr(graph.queries.shared.text_languages, "recheck_seconds", float("inf"))
    reads = spy_read_transactions(graph, monkeypatch)
    after = graph.query('"kitchen" AND TAG=odd')
    # the carried read found other counts, so the search did not run; planned again
    assert reads == [carried(graph), filtered_call(graph)]
    assert "pv-5" in {f.documentid for f in after.fragments}
    assert _answer(after) == _answer(_fresh(graph).query('"kitchen" AND TAG=odd'))
    reads.clear()
    assert _answer(graph.query('"kitchen" AND TAG=odd')) == _answer(after)
    assert reads == [carried(graph)]


def test_warnings_come_from_the_read_made_with_the_search(
        graph: ThalabusGraph, monkeypatch: pytest.MonkeyPatch) -> None:
    first = graph.query('"kitchen" AND NOT TAG=Odd')
    assert [w.kind for w in first.warnings] == ["case_mismatch"]
    assert _answer(graph.query('"kitchen" AND NOT TAG=Odd')) == _answer(first)
    with pytest.raises(UnknownCategoryError):
        graph.query('"kitchen" AND NOT TAG=Odd', strict_categories=True)
    # the value now exists: the same query, planned with the old row, warns no more
    _fresh(graph).ingest([_document("pv-6", "winter tiles", "Odd",
                                    np.random.default_rng(47))], embed=False, progress=False)
    now = graph.query('"kitchen" AND NOT TAG=Odd')
    assert now.warnings == []
    assert _answer(now) == _answer(_fresh(graph).query('"kitchen" AND NOT TAG=Odd'))
    assert graph.query('"kitchen" AND NOT TAG=Odd', strict_categories=True).warnings == []


def test_a_query_with_no_statement_to_carry_it_reads_it_alone(
        graph: ThalabusGraph, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(graph.queries.shared.text_languages, "recheck_seconds", float("inf"))
    reads = spy_read_transactions(graph, monkeypatch)
    first = graph.query("TAG=odd")  # a pure filter streams its documents: read first
    reads.clear()
    again = graph.query("TAG=odd")
    assert reads[0] == "category_vocabulary" and carried(graph) not in reads
    assert _answer(again) == _answer(first)
    _fresh(graph).ingest([_document("pv-7", "kitchen sink", "odd",
                                    np.random.default_rng(53))], embed=False, progress=False)
    changed = graph.query("TAG=odd")
    assert "pv-7" in {f.documentid for f in changed.fragments}
    assert _answer(changed) == _answer(_fresh(graph).query("TAG=odd"))


def test_a_scoped_phrase_asked_again_is_one_round_trip(
        graph: ThalabusGraph, monkeypatch: pytest.MonkeyPatch) -> None:
    dataset = graph.query('"kitchen" AND TAG=odd', create_dataset=True).dataset_ids[0]
    monkeypatch.setattr(graph.queries.shared.text_languages, "recheck_seconds", float("inf"))
    reads = spy_read_transactions(graph, monkeypatch)
    first = graph.query('"kitchen"', subset_of_datasetids=[dataset])
    # the vocabulary read also counts the parent datasets that exist: no read of its own
    # and the fusion's fit takes its documents' languages from the details the searches read
    assert reads == ["category_vocabulary", "search_phrase_filtered"]
    reads.clear()
    again = graph.query('"kitchen"', subset_of_datasetids=[dataset])
    assert reads == ["search_phrase_filtered (with category_vocabulary)"]
    assert _answer(again) == _answer(first)
    assert {f.documentid for f in again.fragments} <= {"pv-1", "pv-3", "pv-4"}


def test_an_unknown_parent_dataset_is_an_error_first_and_again(
        graph: ThalabusGraph) -> None:
    dataset = graph.query('"kitchen" AND TAG=odd', create_dataset=True).dataset_ids[0]
    for _ in range(2):  # read first, then carried by the search
        with pytest.raises(DatasetInputError, match="no dataset 'missing'"):
            graph.query('"kitchen"', subset_of_datasetids=[dataset, "missing"])
    assert graph.query('"kitchen"', subset_of_datasetids=[dataset, dataset]).fragments


def test_a_profiled_query_reads_its_vocabulary_first(
        graph: ThalabusGraph, monkeypatch: pytest.MonkeyPatch) -> None:
    graph.query('"kitchen" AND TAG=odd')
    monkeypatch.setattr(graph.queries.shared.text_languages, "recheck_seconds", float("inf"))
    reads = spy_read_transactions(graph, monkeypatch)
    profiled = graph.query('"kitchen" AND TAG=odd', profile=True)
    assert reads == ["category_vocabulary", filtered_call(graph)]
    assert profiled.fragments == graph.query('"kitchen" AND TAG=odd').fragments
