"""Causal consistency over a ``neo4j://`` routing URI: one bookmark manager per graph object,
bookmarks on every writing result, and the hand-off of those bookmarks to another graph object.

A single Community server answers the routing protocol, so the driver takes its routed path
(routing table, read and write access modes) as on a cluster; what a single server cannot show
(a read sent to a lagging secondary) is covered by checking that every session carries the
shared manager and that the server really receives the bookmarks it holds.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.adversarial.conftest import HashEmbedder
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.errors import ConfigurationError, GraphError
from thalabus_graph.graph.connection import Connection
from thalabus_graph.graph.database import Database
from thalabus_graph.rerank import NoReranking

pytestmark = pytest.mark.integration
DOCUMENTS = [{"documentid": f"bm-{i}", "categories": {"KIND": ["cat" if i % 2 else "dog"]},
              "chapters": [f"chapter one of document {i} about a {'cat' if i % 2 else 'dog'}",
                           f"chapter two of document {i}, the end"]} for i in range(6)]


def routing_uri(uri: str) -> str:
    """The routing form of the test server's URI (``bolt`` -> ``neo4j``, TLS kept)."""
    scheme, sep, rest = uri.partition("://")
    return ("neo4j" + scheme[len("bolt"):] if scheme.startswith("bolt") else scheme) + sep + rest


def connect(target: Connection, bookmarks: tuple[str, ...] = ()) -> ThalabusGraph:
    """A graph object with its own driver on the routing URI (no model loaded)."""
    return ThalabusGraph.connect(routing_uri(target.uri), auth=target.auth,
                                 database=target.database, settings=Settings.from_env(),
                                 embedder=HashEmbedder(384), reranker=NoReranking(),
                                 bookmarks=bookmarks)


@pytest.fixture()
def writer(clean_db: Database, neo4j_connection: Connection) -> Iterator[ThalabusGraph]:
    """A graph object on the routing URI, over the session's emptied database."""
    with connect(neo4j_connection) as graph:
        assert graph.db.driver.__class__.__name__ == "Neo4jDriver"  # the routing driver
        yield graph


def spy_sessions(graph: ThalabusGraph, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The keyword arguments of every session the graph object opens from now on."""
    calls: list[dict[str, Any]] = []
    real = graph.db.driver.session

    def spy(**config: Any) -> Any:
        calls.append(config)
        return real(**config)

    monkeypatch.setattr(graph.db.driver, "session", spy)
    return calls


def test_every_session_shares_the_graphs_bookmark_manager(
        writer: ThalabusGraph, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = spy_sessions(writer, monkeypatch)
    writer.ingest(DOCUMENTS, progress=False)
    created = writer.query('"a cat" OR KIND=dog', create_dataset=True, session="bm")
    list(writer.stream("KIND=cat"))  # the pure filter's streamed statement
    writer.explain('"a cat" AND NOT KIND=dog')
    writer.rerank_dataset(created.dataset_ids[0])
    writer.datasets.members(created.dataset_ids[0])
    assert len(calls) >= 8
    strays = [c for c in calls if c.get("bookmark_manager") is not writer.db.bookmark_manager]
    assert strays == []
    assert all(c.get("database") == writer.db.database for c in calls)


def test_writing_results_carry_bookmarks_that_advance(writer: ThalabusGraph) -> None:
    report = writer.ingest(DOCUMENTS, progress=False)
    assert report.bookmarks and report.bookmarks == writer.bookmarks
    created = writer.query("KIND=cat", create_dataset=True, session="bm",
                           return_documents=False)
    assert created.bookmarks and created.bookmarks != report.bookmarks
    reranked = writer.rerank_dataset(created.dataset_ids[0])
    assert reranked.bookmarks and reranked.bookmarks != created.bookmarks
    for result in (report, created, reranked):
        assert json.loads(json.dumps(result.to_dict()))["bookmarks"] == list(result.bookmarks)


def test_handed_bookmarks_make_a_second_objects_first_read_see_the_dataset(
        writer: ThalabusGraph, neo4j_connection: Connection,
        monkeypatch: pytest.MonkeyPatch) -> None:
    writer.ingest(DOCUMENTS, progress=False)
    created = writer.query("KIND=cat", create_dataset=True, session="handoff",
                           return_documents=False)
    datasetid = created.dataset_ids[0]
    with connect(neo4j_connection, bookmarks=created.bookmarks) as reader:
        assert set(created.bookmarks) <= set(reader.bookmarks)
        calls = spy_sessions(reader, monkeypatch)
        members = reader.datasets.members(datasetid)  # the reader's first transaction
        assert calls and calls[0]["bookmark_manager"] is reader.db.bookmark_manager
    assert sorted(m.fragmentid for m in members) == sorted(f.fragmentid
                                                            for f in created.fragments)
    assert {m.documentid for m in members} == {"bm-1", "bm-3", "bm-5"}


def test_wait_for_sends_the_bookmarks_to_the_server(
        writer: ThalabusGraph, neo4j_connection: Connection) -> None:
    created = writer.query("KIND=cat", create_dataset=True, session="wait",
                           return_documents=False)
    with connect(neo4j_connection) as reader:
        reader.wait_for(created.bookmarks)
        assert reader.datasets.get(created.dataset_ids[0]).members == len(created.fragments)
        forged = "FB:bm90LWEtYm9va21hcms"  # the shape of one, not one the server issued
        with pytest.raises(GraphError, match=r"(?i)bookmark"):
            reader.wait_for([forged])  # the server refuses what it cannot parse
        assert forged not in reader.bookmarks  # not kept: the object stays usable
        assert reader.datasets.get(created.dataset_ids[0]).members == len(created.fragments)
    with pytest.raises(GraphError, match=r"(?i)bookmark"):
        connect(neo4j_connection, bookmarks=(forged,))


def test_a_value_that_is_no_bookmark_is_refused_before_the_server(
        writer: ThalabusGraph, neo4j_connection: Connection) -> None:
    created = writer.query("KIND=cat", create_dataset=True, session="one",
                           return_documents=False)
    (bookmark,) = created.bookmarks
    with connect(neo4j_connection) as reader:
        reader.wait_for(bookmark)  # a lone string is one bookmark, not its characters
        assert bookmark in reader.bookmarks
        for bad in ("F", "not-a-bookmark", ["x" * 5000], [3]):
            with pytest.raises(ConfigurationError, match="bookmark"):
                reader.wait_for(bad)  # type: ignore[arg-type]


def test_a_bookmark_of_the_system_database_is_refused(
        writer: ThalabusGraph, neo4j_connection: Connection) -> None:
    with writer.db.driver.session(database="system") as session:
        session.run("SHOW DATABASES YIELD name").consume()  # a read: nothing changes
        (system,) = session.last_bookmarks().raw_values
    with pytest.raises(ConfigurationError, match="system database"):
        writer.wait_for([system])
    with pytest.raises(ConfigurationError, match="system database"):
        connect(neo4j_connection, bookmarks=(system,))
