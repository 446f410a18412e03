"""A database the migrations never ran on: ingest refuses before writing anything, and a
search that meets a missing index says which command creates it.

Community has a single user database, so the module drops the session database's schema and
history (the suite created that database) and migrates it again on the way out.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.adversarial.conftest import HashEmbedder
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.cli import main
from thalabus_graph.errors import GraphError, MigrationError
from thalabus_graph.graph.database import Database
from thalabus_graph.graph.migrations import MigrationRunner

pytestmark = [pytest.mark.integration, pytest.mark.schema_changes]

COMMANDS = ("`thalabus-graph migrate`", "`g.migrate()`")


@pytest.fixture(scope="module")
def unmigrated(db: Database, db_settings: Settings) -> Iterator[Database]:
    """The session database without data, schema or migration history; migrated afterwards."""
    runner = MigrationRunner(db, db_settings)
    db.write("migrations_delete_data_nodes")
    runner.clean(schema=True)
    yield db
    db.write("migrations_delete_data_nodes")  # a test's own nodes could break a constraint
    runner.unlock()
    runner.migrate()


def _graph(db: Database) -> ThalabusGraph:
    settings = Settings.from_env()
    return ThalabusGraph(db, settings=settings,
                         embedder=HashEmbedder(settings.embedding_dimensions))


def _footprint(db: Database) -> tuple[int, list[str]]:
    """Nodes other than the suite's marker, and every index or constraint but the lookups."""
    nodes = db.driver.execute_query(
        "MATCH (n) WHERE NOT n:__ThalabusTestMarker RETURN count(n) AS n",
        database_=db.database).records[0]["n"]
    schema = [r["name"] for r in db.read("migrations_list_indexes") if r["type"] != "LOOKUP"]
    schema += [r["name"] for r in db.read("migrations_list_constraints")]
    return nodes, sorted(schema)


def test_ingest_refuses_an_unmigrated_database_and_writes_nothing(
        unmigrated: Database, tmp_path: Path, neo4j_uri: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    doc = {"documentid": "d-1", "chapters": ["the kitchen floor"]}
    corpus = tmp_path / "one.jsonl"
    corpus.write_text(json.dumps(doc) + "\n", encoding="utf-8")
    with pytest.raises(MigrationError) as caught:
        _graph(unmigrated).ingest([doc], progress=False)
    assert all(command in str(caught.value) for command in COMMANDS), caught.value

    assert main(["ingest", str(corpus), "--uri", neo4j_uri]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ingest: the database is not migrated"), err
    assert all(command in err for command in COMMANDS), err
    assert _footprint(unmigrated) == (0, [])


def test_a_search_on_an_unmigrated_database_names_the_migration(
        unmigrated: Database, db_settings: Settings) -> None:
    vector = [1.0] + [0.0] * (db_settings.embedding_dimensions - 1)
    unmigrated.driver.execute_query(
        "CREATE (d:Document {documentid: 'd-1'}) "
        "CREATE (:Fragment:Chapter {fragmentid: 'd-1-c1', documentid: 'd-1', ordinal: 1, "
        "text: 'the kitchen floor', embedding: $vector})-[:IN_DOCUMENT]->(d)",
        {"vector": vector}, database_=unmigrated.database)
    for text in ('"kitchen floor"', "'kitchen floor'"):
        with pytest.raises(GraphError) as caught:
            _graph(unmigrated).query(text)
        message = str(caught.value)
        assert "the database is not migrated" in message, message
        assert all(command in message for command in COMMANDS), message
