"""The plugin's parallel reads (``procedure_parallel_reads``): a phrase's full-text searches in a
second transaction beside the vector searches, a filtered phrase's restricted searches beside
its unrestricted ones, its calibrated background beside its fusion.

They answer exactly as the same phrase read one step after the other; and a caller whose
transaction holds changes of its own is never read from another transaction, which would not
see them (Neo4j's full-text index answers a transaction's own uncommitted nodes).
"""

from __future__ import annotations

from functools import partial

import pytest

from benchmarks.procedures_conformance import difference, settled
from tests.integration.test_procedures_filtered import FILTERS, bucketed
from tests.integration.test_procedures_phrase import answer, slice_graph
from tests.integration.test_procedures_plugin import _not_the_launchers
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.graph.database import Database
from thalabus_graph.query.serialize import quote_double
from thalabus_graph.results.query_result import QueryResult

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def _the_launchers_server() -> None:
    """Every test here needs the plugin, which a server the launcher starts carries."""
    reason = _not_the_launchers()
    if reason is not None:
        pytest.skip(reason)


def both_ways(statements: ThalabusGraph) -> tuple[ThalabusGraph, ThalabusGraph]:
    """The graph on the plugin with parallel reads and without them."""
    parallel = ThalabusGraph(statements.db, settings=statements.settings.replace(
        procedures="on"), embedder=statements.embedder)
    serial = ThalabusGraph(statements.db, settings=parallel.settings.replace(
        procedure_parallel_reads=False), embedder=statements.embedder)
    return parallel, serial


def compared_alike(statements: ThalabusGraph, queries: list[str]) -> int:
    """Each query (with and without a limit) answered alike both ways: the same fragments,
    scores and documents; how many fragments were compared."""
    parallel, serial = both_ways(statements)
    compared = 0
    for query in queries:
        for limit in (None, 4):
            answers: dict[ThalabusGraph, QueryResult] = {}
            first, second = settled(partial(answer, answers, parallel, query, limit),
                                    partial(answer, answers, serial, query, limit))
            assert difference(first, second) is None, query
            assert [d.to_dict() for d in answers[parallel].documents] == \
                [d.to_dict() for d in answers[serial].documents]
            compared += len(first)
    return compared


def test_parallel_reads_answer_as_reads_one_after_the_other(
        clean_db: Database, db_settings: Settings) -> None:
    statements, vectors = slice_graph(clean_db, db_settings)
    assert compared_alike(statements, [quote_double(p) for p in list(vectors)[::3]]) > 100


def test_filtered_phrases_read_in_parallel_answer_alike(
        clean_db: Database, db_settings: Settings) -> None:
    statements, vectors = bucketed(clean_db, db_settings)
    queries = [f"{quote_double(phrase)} AND {FILTERS[number % len(FILTERS)]}"
               for number, phrase in enumerate(list(vectors)[::9])]
    assert compared_alike(statements, queries) > 20


@pytest.mark.parametrize("parallel", [True, False])
def test_a_transaction_with_changes_finds_its_own_text_hits(
        clean_db: Database, db_settings: Settings, parallel: bool) -> None:
    """A chapter created in the caller's transaction and not committed is a full-text hit of
    a phrase asked in that transaction, parallel reads allowed or not."""
    statements, vectors = slice_graph(clean_db, db_settings)
    phrase, vector = next(iter(vectors.items()))
    options = {"calibration": "none", "settings": {"procedure_parallel_reads": parallel}}

    def in_one_transaction(tx: object) -> tuple[list[str], list[str]]:
        run = tx.run  # type: ignore[attr-defined]
        call = ("CALL thalabus.phrase($text, $vector, $options) YIELD fragmentid "
                "RETURN collect(fragmentid) AS ids")
        before = run(call, text=phrase, vector=vector, options=options).single()["ids"]
        run("CREATE (:Chapter {fragmentid: 'uncommitted-c1', "
            "documentid: 'uncommitted', text: $text})", text=phrase).consume()
        after = run(call, text=phrase, vector=vector, options=options).single()["ids"]
        tx.rollback()  # type: ignore[attr-defined]
        return before, after

    with clean_db.session() as session:
        tx = session.begin_transaction()
        before, after = in_one_transaction(tx)
    assert "uncommitted-c1" not in before
    assert "uncommitted-c1" in after
    assert statements.query(quote_double(phrase)).fragments  # nothing was committed
