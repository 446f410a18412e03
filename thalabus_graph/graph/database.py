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

import base64
import binascii
import itertools
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import Any, TypeVar

import neo4j
from neo4j import (
    READ_ACCESS,
    Bookmarks,
    Driver,
    GraphDatabase,
    ManagedTransaction,
    Session,
    unit_of_work,
)
from neo4j.api import BookmarkManager
from neo4j.exceptions import AuthError, Neo4jError, ServiceUnavailable

from thalabus_graph.errors import (
    ConfigurationError,
    GraphError,
    InvalidTextError,
    QueryTimeout,
    UnknownDatabaseError,
)
from thalabus_graph.graph import cypher_library
from thalabus_graph.graph.auto_commit import AUTO_COMMIT_ATTEMPTS, AutoCommit, Runs
from thalabus_graph.graph.connection import check_uri, redact_uri

T = TypeVar("T")
Record = dict[str, Any]
AUTH_RATE_LIMIT = "Neo.ClientError.Security.AuthenticationRateLimit"
"""Neo4j's answer after repeated failed logins (not an ``AuthError`` in the driver)."""
STATEMENT_OPTIONS = "CYPHER expressionEngine=interpreted"
"""The query option leading every statement the engine runs (schema statements aside).

Neo4j plans a statement with interpreted expressions and, once the cached plan has been used
10 times, plans it again with expressions compiled to bytecode. That second planning costs
what the first did (0.1-2 s for the search statements on two cores), so queries slow down
again around a statement's tenth run. The engine's statements evaluate few expressions per
row (index calls, pattern reads, small aggregations): with the option, steady-state latency
is unchanged on the sample corpus and the late re-planning is gone (docs/architecture.md,
"Graph, ingest and migrations")."""


class _Brief(list[Any]):
    """A list parameter that the driver's debug line shows by its length (``sent``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<list of {len(self)}>"


class _BriefMap(dict[str, Any]):
    """A map parameter that the driver's debug line shows by its size (``sent``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<map of {len(self)}>"


def sent(params: Mapping[str, Any] | None) -> dict[str, Any]:
    """A statement's parameters as they are handed to the driver (schema statements as they
    are, the others inside ``arguments``' map): each list or map value wrapped (a shallow
    copy) so that its ``repr`` is one short word. The driver formats every
    statement's parameters with ``repr`` for its debug log even when that log is off, at
    about a microsecond a number: 0.4 ms for a query vector, 1.4 s for an ingest batch of
    5,000 embeddings (``tests/unit/test_database_params.py``). The values sent are the same."""
    out: dict[str, Any] = {}
    for key, value in (params or {}).items():
        if type(value) is list:
            value = _Brief(value)
        elif type(value) is dict:
            value = _BriefMap(value)
        out[key] = value
    return out


ARGUMENTS = "args"
"""The one map parameter a statement is sent with: ``$name`` in its text reads ``$args.name``.

Neo4j keys a cached plan by the statement's text and the type of each parameter, a list's or a
string's size class included: ``null`` against a string, an empty list against one of three
maps against one of fifty is a new plan each time (1-2 s for a search statement on two cores).
The engine's statements take up to twenty parameters that are null or lists of varying
length, so with plain parameters each new combination of a statement is planned again. A map
parameter is one type whatever it holds: one plan per statement text (docs/architecture.md,
"Graph, ingest and migrations")."""


@lru_cache(maxsize=4096)
def prepared(text: str) -> str:
    """The text sent for statement ``text``: led by ``STATEMENT_OPTIONS`` (a line of its own,
    before any ``CYPHER`` version line or ``PROFILE``: Neo4j reads leading options in any
    order), each ``$name`` read from the ``ARGUMENTS`` map (``arguments``)."""
    return f"{STATEMENT_OPTIONS}\n" + cypher_library.PARAMETER.sub(rf"${ARGUMENTS}.\1", text)


def arguments(params: Mapping[str, Any] | None) -> dict[str, Any]:
    """The parameters sent with a ``prepared`` text: ``sent(params)`` as the one map."""
    return {ARGUMENTS: _BriefMap(sent(params))}


_DEADLINE: ContextVar[tuple[float, float] | None] = ContextVar("thalabus_deadline",
                                                              default=None)
"""(monotonic end, budget in seconds) of the query running in this context, if any."""
_OPEN_READ: ContextVar[tuple[ManagedTransaction, int] | None] = ContextVar(
    "thalabus_open_read", default=None)
"""The read transaction ``Database.one_read`` holds open in this context, with the id of the
thread that opened it (only that thread may run statements in it)."""
NOT_MIGRATED = ("the database is not migrated: run `thalabus-graph migrate` (in Python "
                "`g.migrate()`) first, which creates the indexes that ingest and the searches "
                "need")
"""What a caller is told about a database without the engine's schema (its migrations)."""
MISSING_INDEX_MESSAGES = ("There is no such vector schema index",
                          "There is no such fulltext schema index")
"""How Neo4j words a search on an index that does not exist: the schema was never migrated."""
TIMEOUT_CODES = ("Neo.ClientError.Transaction.TransactionTimedOut",
                 "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration")


@contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Run the block under a time budget: every ``read_tx`` in this context first checks that
    time is left (else ``QueryTimeout``) and runs with Neo4j's transaction timeout set to what
    is left. Reads started on other threads are not bound by it."""
    token = _DEADLINE.set(None if seconds is None else (time.monotonic() + seconds, seconds))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _time_left(what: str) -> float | None:
    """Seconds left of this context's budget (None without one); ``QueryTimeout`` if none."""
    current = _DEADLINE.get()
    if current is None:
        return None
    left = current[0] - time.monotonic()
    if left <= 0:
        raise QueryTimeout(_timeout_message(what, current[1]))
    return left


def _timeout_message(what: str, budget: float | None) -> str:
    spent = f" of {budget:g} s" if budget is not None else ""
    return (f"{what}: the query ran past its time budget{spent} (query_timeout_seconds, "
            "THALABUS_QUERY_TIMEOUT_SECONDS); narrow the query or raise the budget")


@contextmanager
def mapped_errors(what: str) -> Iterator[None]:
    """Turn neo4j driver exceptions into ``GraphError`` naming what was being done."""
    try:
        yield
    except ServiceUnavailable as exc:
        raise GraphError(f"{what}: Neo4j is not reachable ({exc}); is the server running, "
                         "and is this its URI? `thalabus-graph neo4j start` prints the URI "
                         "of the server it starts: pass it as --uri or NEO4J_URI") from exc
    except AuthError as exc:
        raise GraphError(f"{what}: authentication failed ({exc.message or exc}); check the "
                         "user name and password: connect(auth=(user, password)), else "
                         "NEO4J_USERNAME and NEO4J_PASSWORD") from exc
    except Neo4jError as exc:
        if exc.code in TIMEOUT_CODES:
            current = _DEADLINE.get()
            raise QueryTimeout(_timeout_message(what, current[1] if current else None)
                               ) from exc
        if any(text in (exc.message or "") for text in MISSING_INDEX_MESSAGES):
            raise GraphError(f"{what}: {NOT_MIGRATED} ({exc.message})") from exc
        if exc.code == "Neo.ClientError.Database.DatabaseNotFound":
            raise UnknownDatabaseError(f"{what}: the server has no such database ({exc.message});"
                                       " name one it has: --database or NEO4J_DATABASE "
                                       "(Community Edition has one, neo4j)") from exc
        if exc.code == AUTH_RATE_LIMIT:
            raise GraphError(f"{what}: authentication failed too often in a row, Neo4j refuses "
                             "this user for a few seconds (dbms.security.auth_lock_time); check "
                             "NEO4J_USERNAME and NEO4J_PASSWORD, then retry") from exc
        raise GraphError(f"{what}: {exc.code}: {exc.message}") from exc
    except neo4j.exceptions.DriverError as exc:
        raise GraphError(f"{what}: {exc}") from exc
    except UnicodeEncodeError as exc:  # the driver packing a str with a lone surrogate
        bad = exc.object[exc.start] if isinstance(exc.object, str) else "?"
        raise InvalidTextError(f"{what}: a text argument holds a lone surrogate "
                               f"(U+{ord(bad):04X}), which is not valid Unicode text") from exc


def _this_threads_read() -> ManagedTransaction | None:
    """The open transaction of a ``Database.one_read`` on this thread (None: none; a
    prefetch thread never shares it)."""
    open_read = _OPEN_READ.get()
    if open_read is not None and open_read[1] == threading.get_ident():
        return open_read[0]
    return None


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
        self.plugin: tuple[bool, str] | None = None
        """Whether the server runs this engine's procedure plugin, and why not, as
        ``search.procedure.ProcedureState`` read it: once per connection, whichever graph
        object on it asked first."""

    @classmethod
    def connect(cls, uri: str, *, auth: tuple[str, str] | None = None,
                database: str = "neo4j",
                driver_config: Mapping[str, Any] | None = None,
                verify: bool = True) -> Database:
        """Open a driver (``bolt://`` or routing ``neo4j://``) and check it answers.
        ``driver_config``: more driver options (e.g. the timeouts of a server that must fail
        fast when Neo4j is down); ``verify`` False: no check (a long-running server that
        answers each call with the error of the moment instead)."""
        check_uri(uri)
        with mapped_errors(f"connecting to {redact_uri(uri)}"):
            driver = GraphDatabase.driver(uri, auth=auth, notifications_min_severity="OFF",
                                          **dict(driver_config or {}))
            try:
                if verify:
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

    def wait_for(self, bookmarks: Iterable[str] | str) -> None:
        """Wait until the server has applied ``bookmarks``, then keep them in the causal
        chain, so every later transaction sees that state too. A read transaction runs now
        with them: bookmarks the server does not know, or a state it does not reach in time,
        fail here (``GraphError``) and are not kept, so this object stays usable; a value that
        is no bookmark, or one of the system database, fails before
        (``ConfigurationError``, ``checked_bookmarks``)."""
        given = checked_bookmarks(bookmarks)
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
        """Run the named statement in a read transaction (the open one of ``one_read``, if
        any); records as dicts."""
        return self._read(lambda tx: run(tx, name, **params), what=name)

    def write(self, name: str, /, **params: Any) -> list[Record]:
        """Run the named statement in its own write transaction; records as dicts."""
        return self.write_tx(lambda tx: run(tx, name, **params), what=name)

    def read_plain(self, name: str, /, **params: Any) -> list[Record]:
        """``read`` for a statement returning plain values only (strings, numbers, lists and
        maps of them; no node): records skip the driver's recursive ``data()``, which costs
        milliseconds on long lists and maps (~10 ms on 200 rows with document details)."""
        return self.read_text(cypher_library.load(name, params), params, plain=True, what=name)

    def read_text(self, text: str, params: dict[str, Any], *, plain: bool = False,
                  what: str) -> list[Record]:
        """Run a statement given as text (one the caller composed of named ones) as ``read``
        does; ``plain``: as ``read_plain`` does. ``what`` names it in errors."""
        def work(tx: Runs) -> list[Record]:
            result = tx.run(prepared(text), arguments(params))
            return plain_records(result) if plain else [record.data() for record in result]

        return self._read(work, what=what)

    def read_profiled(self, name: str, /, **params: Any) -> tuple[list[Record], int]:
        """Run the named statement under ``PROFILE``; records and the total db hits."""
        def work(tx: Runs) -> tuple[list[Record], int]:
            result = tx.run(prepared("PROFILE " + cypher_library.load(name, params)),
                            arguments(params))
            rows = [record.data() for record in result]
            return rows, _db_hits(result.consume().profile)

        return self._read(work, what=name)

    def one_read(self, work: Callable[[], T], *, what: str = "read") -> T:
        """Run ``work`` with every named read it makes on this thread (``read``,
        ``read_plain``, ``read_profiled``) inside one managed read transaction: the
        statements of a query share one transaction instead of a transaction (and a session)
        each. A statement that fails inside raises ``GraphError`` naming it (no retry); when
        the driver retries the transaction itself, ``work`` runs again, so it must start from
        nothing. Reads on other threads (prefetched calls) open their own transactions."""
        def inside(tx: ManagedTransaction) -> T:
            token = _OPEN_READ.set((tx, threading.get_ident()))
            try:
                return work()
            finally:
                _OPEN_READ.reset(token)

        return self.read_tx(inside, what=what)

    @contextmanager
    def streamed(self, text: str, params: dict[str, Any], *,
                 fetch_size: int) -> Iterator[Iterable[neo4j.Record]]:
        """The records of the read ``text`` as the driver fetches them (``fetch_size`` at a
        time): in this thread's open ``one_read`` transaction when there is one, so a query's
        stream is one more statement of its transaction, else in a session of its own."""
        tx = _this_threads_read()
        if tx is not None:
            _time_left("stream")
            yield tx.run(prepared(text), arguments(params))
            return
        with self.session(default_access_mode=READ_ACCESS, fetch_size=fetch_size) as session:
            yield session.run(prepared(text), arguments(params))

    def in_one_read(self) -> bool:
        """Whether this thread's reads run in the open transaction of a ``one_read``."""
        return _this_threads_read() is not None

    def _read(self, work: Callable[[Runs], T], *, what: str) -> T:
        """Run ``work`` (one statement) in the open read transaction of ``one_read`` when
        this thread holds one, else in its own (``read_alone``)."""
        tx = _this_threads_read()
        if tx is not None:
            _time_left(what)  # the transaction's timeout bounds the server; this, the client
            with mapped_errors(what):
                return work(tx)
        return self.read_alone(work, what=what)

    def read_alone(self, work: Callable[[Runs], T], *, what: str = "read") -> T:
        """Run ``work`` (one statement) in an auto-commit read transaction: one statement
        needs no BEGIN and COMMIT around it (two round trips, 1.2-1.8 ms a read on the local
        server). A failure the driver calls retryable (a leader switch, a lost connection, a
        transient error) is tried again, as the driver retries a managed transaction, up to
        ``AUTO_COMMIT_ATTEMPTS`` times while the budget lasts."""
        with mapped_errors(what):
            for attempt in itertools.count(1):
                left = _time_left(what)
                try:
                    with self.session(default_access_mode=READ_ACCESS) as session:
                        return work(AutoCommit(session, left))
                except (Neo4jError, neo4j.exceptions.DriverError) as exc:
                    if attempt >= AUTO_COMMIT_ATTEMPTS or not exc.is_retryable():
                        raise
                    time.sleep(0.1 * attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    def read_tx(self, work: Callable[[ManagedTransaction], T], *, what: str = "read") -> T:
        """Run ``work`` in one managed read transaction (retried by the driver if transient),
        bounded by the time left of a ``deadline`` block."""
        left = _time_left(what)
        if left is not None:
            work = unit_of_work(timeout=left)(work)
        with mapped_errors(what), self.session() as session:
            return session.execute_read(work)

    def write_tx(self, work: Callable[[ManagedTransaction], T], *, what: str = "write") -> T:
        """Run ``work`` in one managed write transaction: all of it commits or none of it."""
        with mapped_errors(what), self.session() as session:
            return session.execute_write(work)

    def run_schema(self, text: str, params: Mapping[str, Any] | None = None) -> None:
        """Run one schema statement in an auto-commit transaction (schema and data cannot mix)."""
        with mapped_errors("schema statement"), self.session() as session:
            session.run(text, sent(params)).consume()


def run(tx: Runs, name: str, /, **params: Any) -> list[Record]:
    """Run a named statement inside an open transaction; records as dicts."""
    result = tx.run(prepared(cypher_library.load(name, params)), arguments(params))
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


_BOOKMARK_SHAPE = re.compile(r"^[A-Z]{1,8}:[A-Za-z0-9+/_-]+=*$")
SYSTEM_DATABASE_ID = bytes(15) + b"\x01"
"""The id the ``system`` database has on every server (00000000-...-000000000001)."""
_BOOKMARK_ID_MARKER = b"\xcc\x10"
"""Packstream bytes(16): the database id that opens a decoded bookmark."""
MAX_BOOKMARKS = 1000
"""How many bookmarks one call takes: a causal chain needs one per database and server."""
MAX_BOOKMARK_CHARS = 4096
"""The length of one bookmark; the server issues a few dozen characters."""


def checked_bookmarks(bookmarks: Iterable[str] | str) -> list[str]:
    """The bookmarks to wait for, empty ones dropped; a ``str`` is one bookmark (not its
    characters). The driver sends any string on, and the server answers a malformed one
    with an internal error ("Range [3, 1) out of bounds") and accepts one of the ``system``
    database, which names no state of the graph's data: both are refused here.

    Raises:
        ConfigurationError: a value that is not a bookmark string the server issued (nor an
            iterable of them: an int or bytes), more than ``MAX_BOOKMARKS`` of them, or a
            bookmark of the ``system`` database (it orders no data: pass the bookmarks of a
            result of this graph, e.g. ``QueryResult.bookmarks``).
    """
    if isinstance(bookmarks, str):
        values = [bookmarks]
    elif isinstance(bookmarks, Iterable) and not isinstance(bookmarks, bytes | bytearray):
        values = list(itertools.islice(bookmarks, MAX_BOOKMARKS + 1))
    else:
        raise ConfigurationError(
            "bookmarks are a string a result carried (QueryResult.bookmarks) or a list of "
            f"them, not {type(bookmarks).__name__}")
    if len(values) > MAX_BOOKMARKS:
        raise ConfigurationError(f"more than {MAX_BOOKMARKS} bookmarks given: pass those of "
                                 "the results to wait for")
    out: list[str] = []
    for value in values:
        if not isinstance(value, str):
            raise ConfigurationError(
                f"a bookmark is a string a result carried (QueryResult.bookmarks), not "
                f"{type(value).__name__}")
        if not value:
            continue
        if len(value) > MAX_BOOKMARK_CHARS or not _BOOKMARK_SHAPE.fullmatch(value):
            raise ConfigurationError(
                f"{_short_bookmark(value)} is not a bookmark: pass the strings of a result's "
                "bookmarks (QueryResult.bookmarks, RerankResult.bookmarks, "
                "IngestReport.bookmarks) as they are")
        if _database_id(value) == SYSTEM_DATABASE_ID:
            raise ConfigurationError(
                f"bookmark {_short_bookmark(value)} is one of the system database, which orders no "
                "data of the graph: pass the bookmarks of a result of this graph")
        out.append(value)
    return out


def _database_id(bookmark: str) -> bytes | None:
    """The database id a bookmark opens with, when it has the form Neo4j 5 and later issue;
    None for any other form (the server judges it)."""
    payload = bookmark.split(":", 1)[1].replace("-", "+").replace("_", "/")
    try:
        raw = base64.b64decode(payload + "=" * (-len(payload) % 4))
    except (binascii.Error, ValueError):
        return None
    if len(raw) >= 19 and raw[1:3] == _BOOKMARK_ID_MARKER:
        return raw[3:19]
    return None


def _short_bookmark(value: str) -> str:
    return repr(value if len(value) <= 40 else value[:39] + "…")
