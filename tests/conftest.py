"""Session fixtures giving integration tests a real Neo4j; nothing here fakes the database.

Order: ``$NEO4J_URI`` if set; else a testcontainers Neo4j (``neo4j:5.26``, auth off) when a
Docker engine answers a ping; else the project's local launcher (``thalabus-graph neo4j``) on
a temporary data dir, version ``$THALABUS_NEO4J_VERSION`` or 5.26.31, stopped at session end.
Tests that need Neo4j are marked ``@pytest.mark.integration``.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from neo4j import Driver, GraphDatabase

DOCKER_IMAGE = "neo4j:5.26"


def pytest_configure(config: pytest.Config) -> None:
    """Declare the marker here too, so a run from outside the project root knows it."""
    config.addinivalue_line("markers", "integration: needs a real Neo4j server")


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


def _auth() -> tuple[str, str] | None:
    """Credentials for ``$NEO4J_URI`` from ``$NEO4J_USER``/``$NEO4J_PASSWORD``; else none."""
    password = os.environ.get("NEO4J_PASSWORD")
    if password is None:
        return None
    return os.environ.get("NEO4J_USER", "neo4j"), password


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
def neo4j_uri(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Bolt URI of a real Neo4j for the whole session (see the module docstring)."""
    configured = os.environ.get("NEO4J_URI")
    if configured:
        yield configured
    elif _docker_answers():
        yield from _container_uri()
    else:
        yield from _launcher_uri(tmp_path_factory)


@pytest.fixture(scope="session")
def neo4j_driver(neo4j_uri: str) -> Iterator[Driver]:
    """A driver on ``neo4j_uri``, closed at session end."""
    kwargs: dict[str, Any] = {"auth": _auth()}
    with GraphDatabase.driver(neo4j_uri, **kwargs) as driver:
        driver.verify_connectivity()
        yield driver
