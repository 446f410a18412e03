"""Session fixtures giving integration tests a real Neo4j; nothing here fakes the database.

Order: ``$NEO4J_URI`` if set (with ``NEO4J_USERNAME``/``NEO4J_PASSWORD``/``NEO4J_DATABASE``,
as for the CLI); else a testcontainers Neo4j (``neo4j:5.26``, auth off) when a Docker engine
answers a ping and ``$THALABUS_NEO4J_VERSION`` is unset; else the project's local launcher
(``thalabus-graph neo4j``) on a temporary data dir, version ``$THALABUS_NEO4J_VERSION`` or
the launcher's default for a new store (2026.x with a JDK 21+, else 5.26 LTS), stopped at
session end (``make test-lts`` and ``make test-2026`` set the version to run one line).
Tests that need Neo4j are marked ``@pytest.mark.integration``.

The tests delete data and drop indexes, so they never touch a database they did not create:
a database seen for the first time must be empty (no nodes, no indexes or constraints but the
engine's own); the suite then writes a ``:__ThalabusTestMarker`` node and from then on treats
it as its own. Any other database makes the session stop with a one-line explanation.
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Iterator

import pytest
from neo4j import Driver, GraphDatabase

from thalabus_graph.graph.connection import Connection
from thalabus_graph.graph.database import Database

DOCKER_IMAGE = "neo4j:5.26"


def pytest_configure(config: pytest.Config) -> None:
    """Declare the marker here too, so a run from outside the project root knows it."""
    config.addinivalue_line("markers", "integration: needs a real Neo4j server")
    config.addinivalue_line(
        "markers", "fixed_version: starts its own Neo4j of a version it names, so the "
        "session's line does not change what it runs")
    config.addinivalue_line(
        "markers", "line_neutral: what it checks does not depend on the Neo4j line (a "
        "process, framework or output layer over engine calls, launcher flags, the test "
        "suite's own guard, the Python side's cost on very large queries); the statements it "
        "runs, other tests run on every line")
    config.addinivalue_line(
        "markers", "schema_changes: creates or drops indexes on the session's database, which "
        "empties Neo4j's plan cache (or empties it outright); such modules run last")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Move the modules marked ``schema_changes`` to the end, each in its own order.

    Creating or dropping an index empties the server's plan cache, and every statement a later
    test runs is planned again (0.1-2 s each on two cores); run last, they leave the rest of
    the session its plans."""
    items[:] = sorted(items, key=lambda item: item.get_closest_marker("schema_changes") is not None)


def _docker_answers(timeout: float = 1.0) -> bool:
    """True when a Docker engine answers ``GET /_ping`` within ``timeout`` seconds."""
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    request = b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n"
    try:
        if host.startswith("unix://"):
            path = host[len("unix://"):]
            if not os.path.exists(path):
                return False
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(timeout)
                sock.connect(path)
                sock.sendall(request)
                reply = sock.recv(64)
        elif host.startswith("tcp://"):
            address, _, port = host[len("tcp://"):].rstrip("/").rpartition(":")
            with socket.create_connection((address, int(port)), timeout=timeout) as sock:
                sock.settimeout(timeout)
                sock.sendall(request)
                reply = sock.recv(64)
        else:
            return False
    except (OSError, ValueError):
        return False
    return reply.startswith(b"HTTP/") and b" 200 " in reply.split(b"\r\n", 1)[0]


REFUSAL_EXIT_CODE = 3
_SCHEMA_NAME = re.compile(r"\bCREATE\s+(?:\w+\s+)?(?:INDEX|CONSTRAINT)\s+`?(\w+)", re.I)


def engine_schema_names() -> set[str]:
    """Names of the indexes and constraints the engine's migrations and bootstrap create."""
    from thalabus_graph.graph import cypher_library
    from thalabus_graph.graph.migrations import discover

    texts = [statement.text for migration in discover() for statement in migration.statements]
    texts.append(cypher_library.load("migrations_create_lock_constraint"))
    texts.append(cypher_library.load("migrations_create_history_constraint"))
    return {name for text in texts for name in _SCHEMA_NAME.findall(text)}


def foreign_schema(db: Database) -> list[str]:
    """Indexes and constraints that are neither the engine's nor Neo4j's token lookups."""
    ours = engine_schema_names()
    names = [r["name"] for r in db.read("migrations_list_indexes")
             if r["type"] != "LOOKUP" and r["name"] not in ours]
    names += [r["name"] for r in db.read("migrations_list_constraints") if r["name"] not in ours]
    return sorted(set(names))


def guard_database(db: Database, where: str) -> None:
    """Proceed on a database the suite created (marked, or empty and now marked); else stop.

    Stopping is ``pytest.exit`` with one line naming what was found and what to do, before
    any test could delete a node.
    """
    survey = db.read("test_guard_survey")[0]
    if survey["markers"]:
        return
    foreign = foreign_schema(db)
    if survey["nodes"] == 0 and not foreign:
        db.write("test_guard_mark", note="created by the thalabus-graph test suite")
        return
    found = f"{survey['nodes']} nodes" + (f", indexes/constraints {foreign}" if foreign else "")
    pytest.exit(
        f"refusing to run the integration tests on {where}: it holds data they did not "
        f"create ({found}) and no test marker; the tests delete data and drop indexes. Unset "
        "NEO4J_URI to let them start their own Neo4j, or point it at an empty database.",
        returncode=REFUSAL_EXIT_CODE,
    )


def _container_uri() -> Iterator[str]:
    """A Neo4j container with auth off, removed at session end."""
    try:
        from testcontainers.community.neo4j import Neo4jContainer
    except ImportError:  # older testcontainers
        from testcontainers.neo4j import Neo4jContainer

    class _NoAuthNeo4j(Neo4jContainer):
        def _configure(self) -> None:
            self.with_env("NEO4J_AUTH", "none")

    with _NoAuthNeo4j(DOCKER_IMAGE) as container:
        yield container.get_connection_url()


def _launcher_uri(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The local launcher on a temporary data dir, stopped at session end."""
    from thalabus_graph.errors import LauncherError
    from thalabus_graph.graph.launcher import LocalNeo4j, default_version

    server = LocalNeo4j(
        version=default_version(), data_dir=tmp_path_factory.mktemp("neo4j"),
        exit_with_parent=True,
    )
    try:
        uri = server.start()
    except LauncherError as exc:
        pytest.fail(f"no Neo4j for integration tests (set NEO4J_URI to use one): {exc}")
    try:
        yield uri
    finally:
        server.stop()


@pytest.fixture(scope="session")
def neo4j_connection(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Connection]:
    """Where the session's Neo4j is and how to log in (see the module docstring).

    A server given by ``NEO4J_URI`` is checked by ``guard_database`` before any test runs.
    """
    configured = os.environ.get("NEO4J_URI")
    if configured:
        target = Connection.resolve()
        _guard(target)
        yield target
    elif not os.environ.get("THALABUS_NEO4J_VERSION") and _docker_answers():
        for uri in _container_uri():
            yield Connection(uri=uri)
    else:
        for uri in _launcher_uri(tmp_path_factory):
            yield Connection(uri=uri)


def _guard(target: Connection) -> None:
    with GraphDatabase.driver(target.uri, auth=target.auth) as driver:
        guard_database(Database(driver, target.database), f"NEO4J_URI={target.uri}")


@pytest.fixture(scope="session")
def neo4j_uri(neo4j_connection: Connection) -> str:
    """Bolt URI of the session's real Neo4j."""
    return neo4j_connection.uri


@pytest.fixture(scope="session")
def neo4j_driver(neo4j_connection: Connection) -> Iterator[Driver]:
    """A driver on the session's Neo4j with its credentials, closed at session end."""
    with GraphDatabase.driver(neo4j_connection.uri, auth=neo4j_connection.auth) as driver:
        driver.verify_connectivity()
        yield driver
