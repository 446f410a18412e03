"""The unfiltered phrases of one query are searched concurrently (``prefetch_phrases``).

An OR of two phrases made two ``search_phrase`` round trips one after the other, each an index
call of ~85 ms at 200,000 chapters. The evaluator now starts them together, each in its own
session, and the run takes their results as it reaches each phrase. The answer must not
change, and the calls must really overlap: a barrier that both calls must reach before
either may run fails the test when the second call only starts after the first has finished.
"""

from __future__ import annotations

import threading

import pytest

from tests.integration.sample import load_sample
from tests.support.paths import phrase_call
from tests.support.spies import spy_read_transactions
from thalabus_graph import ThalabusGraph
from thalabus_graph.graph.database import Database
from thalabus_graph.search.executor import SearchExecutor

QUERIES = ['"asylum seeker" OR "vegetable soup"',
           '"persecution of converts" OR ("cat" AND NOT CHARACTER=Jane) OR "family reunion"',
           '("asylum seeker" OR "vegetable soup") AND COUNTRY_OF_ORIGIN=IQ']


@pytest.fixture(scope="module")
def graph(db: Database) -> ThalabusGraph:
    return load_sample(db)


def _phrase_calls_meet(graph: ThalabusGraph, monkeypatch: pytest.MonkeyPatch,
                       parties: int) -> list[str]:
    """Make every phrase call's transaction (``search_phrase``, or the procedure plugin's)
    wait until ``parties`` of them are in flight (10 s at most, then the barrier breaks and
    the query fails). Returns the names of the read transactions, in order."""
    barrier = threading.Barrier(parties, timeout=10)
    call = phrase_call(graph)[0]

    def meet(what: str) -> None:
        if what == call:
            barrier.wait()

    return spy_read_transactions(graph, monkeypatch, before=meet)


def test_an_or_of_two_phrases_searches_both_at_once(
        graph: ThalabusGraph, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = graph.query('"asylum seeker" OR "vegetable soup"', profile=True)
    seen = _phrase_calls_meet(graph, monkeypatch, parties=2)
    result = graph.query('"asylum seeker" OR "vegetable soup"')
    assert seen.count(phrase_call(graph)[0]) == 2
    assert [(f.fragmentid, f.score, f.contributions) for f in result.fragments] == [
        (f.fragmentid, f.score, f.contributions) for f in expected.fragments]


@pytest.mark.parametrize("query", QUERIES)
def test_prefetching_changes_no_answer(graph: ThalabusGraph, monkeypatch: pytest.MonkeyPatch,
                                       query: str) -> None:
    with_prefetch = graph.query(query)
    monkeypatch.setattr(SearchExecutor, "prefetch_phrases", lambda self, phrases: None)
    without = graph.query(query)
    assert [(f.fragmentid, f.score, f.contributions) for f in with_prefetch.fragments] == [
        (f.fragmentid, f.score, f.contributions) for f in without.fragments], query
    assert [(d.documentid, d.score) for d in with_prefetch.documents or []] == [
        (d.documentid, d.score) for d in without.documents or []], query


def test_the_plan_lists_its_unfiltered_phrases(graph: ThalabusGraph,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # One phrase is handed over too (prefetch_phrases leaves a single call to the run).
    started: list[list[tuple[str, str, bool]]] = []
    real = SearchExecutor.prefetch_phrases

    def spy(self: SearchExecutor, calls: list[tuple[str, str, bool]]) -> None:
        started.append(list(calls))
        real(self, calls)

    call = phrase_call(graph)[0]
    monkeypatch.setattr(SearchExecutor, "prefetch_phrases", spy)
    graph.query('"asylum seeker"')
    graph.query('"asylum seeker" OR "vegetable soup"')
    assert started[0] == [(call, "asylum seeker", True)]
    assert [(c, p) for c, p, _ in started[1]] == [(call, "asylum seeker"),
                                                  (call, "vegetable soup")]
