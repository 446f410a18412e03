"""A database the migrations never ran on: ingest refuses before writing anything, a search
that meets a missing index says which command creates it, and ``g.migrate()`` then says what
it applies, also in a program that configured no logging.

Community has a single user database, so the module drops the session database's schema and
history (the suite created that database) and migrates it again on the way out.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
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


def test_a_query_on_an_empty_unmigrated_database_says_so_and_writes_no_dataset(
        unmigrated: Database, neo4j_uri: str, capsys: pytest.CaptureFixture[str]) -> None:
    """With no fragment at all no search meets a missing index: the empty answer itself
    names the migration, and a dataset is not written into a database without a schema."""
    for kwargs in ({}, {"create_dataset": True}):
        with pytest.raises(MigrationError) as caught:
            _graph(unmigrated).query('"kitchen floor"', **kwargs)
        assert all(command in str(caught.value) for command in COMMANDS), caught.value
    assert main(["query", '"kitchen floor"', "--uri", neo4j_uri]) == 1
    assert "the database is not migrated" in capsys.readouterr().err
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


MIGRATE_AND_INGEST = """
import sys
from thalabus_graph import ThalabusGraph
with ThalabusGraph.connect(sys.argv[1]) as g:
    g.migrate()
    g.ingest(sys.argv[2], embed=False)
"""


def test_migrate_and_ingest_say_what_they_do_without_logging_configured(
        unmigrated: Database, db_settings: Settings, neo4j_uri: str, tmp_path: Path) -> None:
    unmigrated.write("migrations_delete_data_nodes")
    vector = [1.0] + [0.0] * (db_settings.embedding_dimensions - 1)
    corpus = tmp_path / "supplied.jsonl"
    corpus.write_text("".join(json.dumps({
        "documentid": f"s-{n}", "chapters": ["one paragraph"],
        "embeddings": {"chapters": [vector], "paragraphs": [vector]}}) + "\n"
        for n in range(2)), encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", MIGRATE_AND_INGEST, neo4j_uri, str(corpus)],
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr
    lines = [line.removeprefix("INFO thalabus_graph.progress: ")
             for line in done.stderr.splitlines()]
    applying = [line for line in lines if line.startswith("migrate: applying ")]
    total = len(applying)
    assert total > 0, done.stderr
    assert lines[0] == f"migrate: 0/{total} migrations, ? migration/s, ETA ?"
    assert applying[0] == f"migrate: applying V0001__constraints.cypher (1/{total})"
    migrated = re.compile(rf"migrate: {total}/{total} migrations, [\d.,]+ migration/s, "
                          r"done in \d+ (s|min \d\d s)")
    assert any(migrated.fullmatch(line) for line in lines), lines
    assert "ingest: 0/2 documents, ? doc/s, ETA ?" in lines
    ingested = re.compile(r"ingest: 2/2 documents, [\d.,]+ doc/s, done in \d+ s")
    assert any(ingested.fullmatch(line) for line in lines), lines
