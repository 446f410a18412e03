"""The test suite refuses a database it did not create, and leaves it exactly as it was.

A pytest subprocess runs a test that deletes every data node (``clean_db``) with NEO4J_URI
pointing at this module's own launcher server: holding a foreign node or a foreign index, the
session must stop with one line and touch nothing; empty, it must mark the database and run;
marked, it must run again.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from neo4j import Driver, GraphDatabase

from thalabus_graph.graph.launcher import LocalNeo4j

pytestmark = [pytest.mark.integration, pytest.mark.line_neutral]

ROOT = Path(__file__).resolve().parents[2]
PROBE = "tests/integration/test_migrations.py::test_clean_db_keeps_schema_and_history"
REFUSED = 3  # tests/conftest.py REFUSAL_EXIT_CODE


@pytest.fixture(scope="module")
def foreign_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Driver]]:
    server = LocalNeo4j(data_dir=tmp_path_factory.mktemp("foreign"), exit_with_parent=True)
    uri = server.start()
    try:
        with GraphDatabase.driver(uri) as driver:
            yield uri, driver
    finally:
        server.stop()


def _run_suite(uri: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEO4J_")}
    env["NEO4J_URI"] = uri
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", PROBE],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)


def _count(driver: Driver, cypher: str) -> int:
    return int(driver.execute_query(cypher, database_="neo4j").records[0][0])


def test_refuses_foreign_data_then_accepts_and_marks_an_empty_database(
        foreign_server: tuple[str, Driver]) -> None:
    uri, driver = foreign_server
    driver.execute_query("CREATE (:Precious {name: 'keep me'})", database_="neo4j")

    done = _run_suite(uri)
    assert done.returncode == REFUSED, done.stdout + done.stderr
    assert "refusing to run the integration tests" in done.stdout + done.stderr
    assert "1 nodes" in done.stdout + done.stderr
    assert _count(driver, "MATCH (n:Precious) RETURN count(n)") == 1
    assert _count(driver, "MATCH (n) RETURN count(n)") == 1  # no marker, no migration history

    # No nodes but a foreign index: still not the suite's database.
    driver.execute_query("MATCH (n) DETACH DELETE n", database_="neo4j")
    driver.execute_query("CREATE INDEX someone_elses FOR (t:Thing) ON (t.x)", database_="neo4j")
    done = _run_suite(uri)
    assert done.returncode == REFUSED and "someone_elses" in done.stdout + done.stderr
    assert _count(driver, "SHOW INDEXES YIELD name WHERE name = 'someone_elses' "
                          "RETURN count(*)") == 1

    # Empty: the suite marks it and runs; marked: it runs again (the marker survives clean_db).
    driver.execute_query("DROP INDEX someone_elses", database_="neo4j")
    for _ in range(2):
        done = _run_suite(uri)
        assert done.returncode == 0, done.stdout + done.stderr
        assert _count(driver, "MATCH (m:__ThalabusTestMarker) RETURN count(m)") == 1
