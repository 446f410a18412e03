"""Integration fixtures on top of ``tests/conftest.py``'s ``neo4j_uri`` / ``neo4j_driver``.

``db``: a session-wide ``Database`` on the real server, migrated once (settings from
``THALABUS_*``). ``clean_db``: the same database with every data node deleted before the test;
the schema, the migration history and lock, and the suite's marker stay. Both only ever run on
a database the session created or ``tests/conftest.py``'s guard accepted.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from neo4j import Driver

from tests.support.loopback import LoopbackServer, score_handler
from thalabus_graph.graph.connection import Connection
from thalabus_graph.graph.database import Database
from thalabus_graph.graph.migrations import MigrationRunner
from thalabus_graph.search.procedure import ProcedureState
from thalabus_graph.settings import Settings


@pytest.fixture(scope="session")
def db_settings() -> Settings:
    """The settings the session's database is migrated with."""
    return Settings.from_env()


@pytest.fixture(scope="session")
def db(neo4j_driver: Driver, neo4j_connection: Connection, db_settings: Settings) -> Database:
    """A migrated ``Database`` on the session's Neo4j (migrations run once per session)."""
    database = Database(neo4j_driver, neo4j_connection.database)
    MigrationRunner(database, db_settings).migrate()
    # whether the server runs the procedure plugin is read once per connection: here, so no
    # test counting its round trips meets that read
    ProcedureState(database, db_settings.replace(procedures="auto")).available()
    return database


@pytest.fixture()
def clean_db(db: Database) -> Database:
    """``db`` with all data nodes deleted first; schema and migration history are kept."""
    db.write("migrations_delete_data_nodes")
    return db


@pytest.fixture(scope="module")
def score_server() -> Iterator[LoopbackServer]:
    """A loopback vLLM ``/score`` server (scores from the passages' text) for one module."""
    with LoopbackServer(score_handler("vllm-score")) as server:
        yield server
