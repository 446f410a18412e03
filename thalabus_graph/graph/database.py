"""A thin wrapper over the neo4j driver: named statements, read/write routing, error mapping.

Every read runs in a read transaction (routed to secondaries in a cluster), every write in a
write transaction; neo4j exceptions become ``GraphError`` here and nowhere else.

Causal consistency: every session a ``Database`` opens shares one bookmark manager, so each
transaction waits until the server it runs on has applied every transaction this object
committed before (read-your-writes on a cluster, where a read may go to a secondary).
``bookmarks()`` hands that state to another process; ``wait_for`` there makes that object's
next transactions see the state such bookmarks name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

import neo4j
from neo4j import Bookmarks, Driver, GraphDatabase, ManagedTransaction, Session
from neo4j.api import BookmarkManager
from neo4j.exceptions import AuthError, Neo4jError, ServiceUnavailable

from thalabus_graph.errors import GraphError
from thalabus_graph.graph import cypher_library

T = TypeVar("T")
Record = dict[str, Any]
AUTH_RATE_LIMIT = "Neo.ClientError.Security.AuthenticationRateLimit"
"""Neo4j's answer after repeated failed logins (not an ``AuthError`` in the driver)."""


@contextmanager
def mapped_errors(what: str) -> Iterator[None]:
    """Turn neo4j driver exceptions into ``GraphError`` naming what was being done."""
    try:
        yield
    except ServiceUnavailable as exc:
        raise GraphError(f"{what}: Neo4j is not reachable ({exc}); is the server running? "
                         "(`thalabus-graph neo4j start`)") from exc
    except AuthError as exc:
        raise GraphError(f"{what}: authentication failed ({exc.message or exc}); check the "
                         "user name and password: connect(auth=(user, password)), else "
                         "NEO4J_USERNAME and NEO4J_PASSWORD") from exc
    except Neo4jError as exc:
        if exc.code == AUTH_RATE_LIMIT:
            raise GraphError(f"{what}: authentication failed too often in a row, Neo4j refuses "
                             "this user for a few seconds (dbms.security.auth_lock_time); check "
                             "NEO4J_USERNAME and NEO4J_PASSWORD, then retry") from exc
        raise GraphError(f"{what}: {exc.code}: {exc.message}") from exc
    except neo4j.exceptions.DriverError as exc:
        raise GraphError(f"{what}: {exc}") from exc


class Database:
    """Runs named statements against one database of one driver.

    Example:
        >>> db = Database.connect("bolt://127.0.0.1:7687")  # doctest: +SKIP
        >>> db.read("count_documents")  # doctest: +SKIP
    """

    def __init__(self, driver: Driver, database: str = "neo4j") -> None:
        self.driver = driver
        self.database = database
        self.bookmark_manager: BookmarkManager = GraphDatabase.bookmark_manager()
        """Shared by every session of this object (``session``): the causal chain."""

    @classmethod
    def connect(cls, uri: str, *, auth: tuple[str, str] | None = None,
                database: str = "neo4j") -> Database:
        """Open a driver (``bolt://`` or routing ``neo4j://``) and check it answers."""
        with mapped_errors(f"connecting to {uri}"):
            driver = GraphDatabase.driver(uri, auth=auth, notifications_min_severity="OFF")
            try:
                driver.verify_connectivity()
            except Exception:
                driver.close()
                raise
        return cls(driver, database)

    def session(self, **config: Any) -> Session:
        """A driver session on this database that shares the bookmark manager; the only
        way this project opens a session (``config``: other session options, e.g.
        ``fetch_size``)."""
        return self.driver.session(database=self.database,
                                   bookmark_manager=self.bookmark_manager, **config)

    def bookmarks(self) -> tuple[str, ...]:
        """The bookmarks of every transaction this object committed or waited for, sorted:
        the state another process passes to ``wait_for`` (or ``bookmarks=``) to see it."""
        return tuple(sorted(self.bookmark_manager.get_bookmarks()))

    def wait_for(self, bookmarks: Iterable[str]) -> None:
        """Wait until the server has applied ``bookmarks``, then keep them in the causal
        chain, so every later transaction sees that state too. A read transaction runs now
        with them: bookmarks the server does not know, or a state it does not reach in time,
        fail here (``GraphError``) and are not kept, so this object stays usable."""
        given = [b for b in bookmarks if b]
        if not given:
            return
        with mapped_errors("waiting for bookmarks"), self.session(
                bookmarks=Bookmarks.from_raw_values(given)) as session:
            session.execute_read(lambda tx: run(tx, "bookmarks_wait"))
        self.bookmark_manager.update_bookmarks((), given)

    def close(self) -> None:
        """Close the driver and its connection pool."""
        self.driver.close()

    def read(self, name: str, /, **params: Any) -> list[Record]:
        """Run the named statement in a read transaction; records as dicts."""
        return self.read_tx(lambda tx: run(tx, name, **params), what=name)

    def write(self, name: str, /, **params: Any) -> list[Record]:
        """Run the named statement in its own write transaction; records as dicts."""
        return self.write_tx(lambda tx: run(tx, name, **params), what=name)

    def read_plain(self, name: str, /, **params: Any) -> list[Record]:
        """``read`` for a statement returning plain values only (strings, numbers, lists and
        maps of them; no node): records skip the driver's recursive ``data()``, which costs
        milliseconds on long lists and maps (~10 ms on 200 rows with document details)."""
        text = cypher_library.load(name)
        return self.read_tx(lambda tx: plain_records(tx.run(text, params)), what=name)

    def read_profiled(self, name: str, /, **params: Any) -> tuple[list[Record], int]:
        """Run the named statement under ``PROFILE``; records and the total db hits."""
        def work(tx: ManagedTransaction) -> tuple[list[Record], int]:
            result = tx.run("PROFILE " + cypher_library.load(name), params)
            rows = [record.data() for record in result]
            return rows, _db_hits(result.consume().profile)

        return self.read_tx(work, what=name)

    def read_tx(self, work: Callable[[ManagedTransaction], T], *, what: str = "read") -> T:
        """Run ``work`` in one managed read transaction (retried by the driver if transient)."""
        with mapped_errors(what), self.session() as session:
            return session.execute_read(work)

    def write_tx(self, work: Callable[[ManagedTransaction], T], *, what: str = "write") -> T:
        """Run ``work`` in one managed write transaction: all of it commits or none of it."""
        with mapped_errors(what), self.session() as session:
            return session.execute_write(work)

    def run_schema(self, text: str, params: Mapping[str, Any] | None = None) -> None:
        """Run one schema statement in an auto-commit transaction (schema and data cannot mix)."""
        with mapped_errors("schema statement"), self.session() as session:
            session.run(text, dict(params or {})).consume()


def run(tx: ManagedTransaction, name: str, /, **params: Any) -> list[Record]:
    """Run a named statement inside an open transaction; records as dicts."""
    result = tx.run(cypher_library.load(name), params)
    return [record.data() for record in result]


def plain_records(result: neo4j.Result) -> list[Record]:
    """A result's records as dicts, values taken as the driver decoded them (no ``data()``).
    Only for statements returning plain values (no nodes or relationships)."""
    keys = result.keys()
    return [dict(zip(keys, record.values(), strict=True)) for record in result]


def _db_hits(profile: Any) -> int:
    """Total ``dbHits`` of a profile tree (0 when the server reports none)."""
    if not isinstance(profile, dict):
        return 0
    own = profile.get("dbHits") or profile.get("args", {}).get("DbHits") or 0
    return int(own) + sum(_db_hits(child) for child in profile.get("children", []))
