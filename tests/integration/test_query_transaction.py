"""A query's vocabulary check, counts and searches run in one read transaction
(``Database.one_read``): a filtered phrase, fused or not, opens one transaction, and its
results are those of the same evaluation run a transaction per statement (``evaluate``)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.test_limit import _graph, corpus  # noqa: F401  (the fixture)
from tests.support.paths import filtered_call, phrase_call
from tests.support.spies import spy_read_transactions, spy_transactions
from thalabus_graph.fragments import Fragment
from thalabus_graph.graph.database import Database

pytestmark = pytest.mark.integration

SEMANTIC_ONLY = {"hybrid_all_queries": False, "short_query_max_words": 0}


def _same(a: list[Fragment], b: list[Fragment]) -> None:
    assert [f.fragmentid for f in a] == [f.fragmentid for f in b]
    for x, y in zip(a, b, strict=True):
        assert x.score == pytest.approx(y.score, abs=1e-9)
        assert x.contributions == y.contributions


@pytest.mark.parametrize("changes", [{}, SEMANTIC_ONLY], ids=["fused", "semantic"])
@pytest.mark.parametrize("query", ['"kitchen floor" AND TAG=odd',
                                   '"kitchen floor" AND NOT TAG=odd',
                                   '"kitchen floor" AND (TAG=odd OR TAG=even)'])
def test_a_filtered_phrase_is_one_transaction(corpus: Database,  # noqa: F811
                                              monkeypatch: pytest.MonkeyPatch, query: str,
                                              changes: dict[str, Any]) -> None:
    graph = _graph(corpus, **changes)
    transactions = spy_transactions(graph, monkeypatch)
    statements = spy_read_transactions(graph, monkeypatch)
    result = graph.query(query, return_documents=False)
    assert transactions == ["query"]
    # the vocabulary check (with the counts) and the searches, all inside it
    assert statements[0] == "category_vocabulary" and len(statements) >= 2
    assert any(s.startswith("search_vector") or s == filtered_call(graph)
               for s in statements)
    # the same evaluation, one transaction per statement
    transactions.clear()
    separate, _ = graph.evaluate(query)
    assert len(transactions) >= 1 and "query" not in transactions
    _same(result.fragments, separate)
    assert result.fragments


def test_documents_and_a_limit_stay_in_the_one_transaction(
        corpus: Database, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    graph = _graph(corpus)
    transactions = spy_transactions(graph, monkeypatch)
    result = graph.query('"kitchen floor" AND TAG=odd', limit=3)
    # the filtered searches bring their documents' details: nothing is read afterwards
    assert transactions == ["query"]
    assert result.documents is not None and len(result.documents) == 3


def test_phrases_started_together_keep_their_own_transactions(
        corpus: Database, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    graph = _graph(corpus)
    transactions = spy_transactions(graph, monkeypatch)
    result = graph.query('"kitchen floor" OR "kitchen"', return_documents=False)
    # two unfiltered phrases are prefetched on other threads, each in its own transaction
    assert transactions.count("query") == 1
    assert transactions.count(phrase_call(graph)[0]) == 2
    separate, _ = graph.evaluate('"kitchen floor" OR "kitchen"')
    _same(result.fragments, separate)


@pytest.mark.parametrize("query", ['"kitchen floor"', '"kitchen floor" AND TAG=odd', "TAG=odd",
                                   '"kitchen floor" OR "kitchen"'])
def test_a_query_leaves_no_cycle_of_its_own(corpus: Database, query: str) -> None:  # noqa: F811
    """The evaluation's objects (executor, runner, hits, details) go by reference counting
    when the query returns; a cycle among them would keep every hit and document detail
    until the cycle collector runs, a pause that grows with the result."""
    import gc

    from thalabus_graph.search.executor import SearchExecutor
    from thalabus_graph.search.runner import Runner

    graph = _graph(corpus)
    graph.query(query)  # caches and the driver's pool warm
    gc.collect()
    gc.disable()
    try:
        graph.query(query)
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        left = [type(o).__name__ for o in gc.garbage if isinstance(o, SearchExecutor | Runner)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert left == []


def test_a_pure_filter_streams_inside_the_querys_one_session(
        corpus: Database, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """A pure filter's stream is one more statement of the query's open read transaction:
    the query opens one session, not a second one for its stream."""
    graph = _graph(corpus)
    expected = {f.documentid for f in graph.stream("TAG=odd")}  # its own session, outside
    sessions: list[dict[str, Any]] = []
    real = Database.session

    def spy(self: Database, **config: Any) -> Any:
        sessions.append(config)
        return real(self, **config)

    monkeypatch.setattr(Database, "session", spy)
    result = graph.query("TAG=odd", return_documents=False)
    assert len(sessions) == 1
    assert {f.documentid for f in result.fragments} == expected and expected


def test_a_phrase_without_a_text_search_detects_no_language(
        corpus: Database, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Language detection serves a phrase's text searches only: a phrase that runs none
    (hybrid off) never asks for its language."""
    from thalabus_graph.search.languages import TextLanguages

    asked: list[str] = []
    real = TextLanguages.choose

    def spy(self: TextLanguages, text: str) -> Any:
        asked.append(text)
        return real(self, text)

    monkeypatch.setattr(TextLanguages, "choose", spy)
    _graph(corpus, **SEMANTIC_ONLY).query('"kitchen floor"', return_documents=False)
    _graph(corpus, **SEMANTIC_ONLY).query('"kitchen floor" AND TAG=odd')
    assert asked == []
    _graph(corpus).query('"kitchen floor"', return_documents=False)  # fused: detected
    assert asked


@pytest.mark.parametrize("limit", [None, 3])
def test_a_lone_phrase_on_the_plugin_is_one_statement_without_a_transaction_around_it(
        corpus: Database, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
        limit: int | None) -> None:
    """With the plugin, a lone phrase's call brings the details of the documents it returns
    (the best ``limit`` of them with a limit): the query is one statement, run as an
    auto-commit transaction of its own, with the results of the same evaluation run a
    transaction per statement. Without the plugin the query holds its one transaction
    open."""
    graph = _graph(corpus)
    full = graph.query('"kitchen floor"')  # the connection's plugin state is known from here
    call, _ = phrase_call(graph)
    transactions = spy_transactions(graph, monkeypatch)
    statements = spy_read_transactions(graph, monkeypatch)
    result = graph.query('"kitchen floor"', limit=limit)
    if call == "search_phrase_procedure":
        assert transactions == [call] and statements == [call]
    else:
        assert transactions == ["query"]
    assert result.documents and all(d.properties for d in result.documents)
    assert [(d.documentid, d.properties) for d in result.documents] == \
        [(d.documentid, d.properties) for d in full.documents][:limit]
    if limit is None:
        separate, _ = graph.evaluate('"kitchen floor"')
        _same(result.fragments, separate)


def test_a_read_of_its_own_is_tried_again_after_a_retryable_failure(
        corpus: Database, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """An auto-commit read the driver calls retryable (a lost session) is tried again, as a
    managed transaction would be; a failure that is not retryable raises at once."""
    import neo4j

    from thalabus_graph.errors import GraphError
    from thalabus_graph.graph import auto_commit

    real = auto_commit.AutoCommit.run
    failures = [neo4j.exceptions.SessionExpired("the routing table changed")]
    tries: list[int] = []

    def flaky(self: Any, query: str, parameters: Any = None) -> Any:
        tries.append(1)
        if failures:
            raise failures.pop()
        return real(self, query, parameters)

    monkeypatch.setattr(auto_commit.AutoCommit, "run", flaky)
    rows = corpus.read_plain("document_details", documentids=["d1"])
    assert len(tries) == 2 and rows
    tries.clear()
    failures.append(neo4j.exceptions.ClientError("not retryable"))
    with pytest.raises(GraphError):
        corpus.read_plain("document_details", documentids=["d1"])
    assert len(tries) == 1
