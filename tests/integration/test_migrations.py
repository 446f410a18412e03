"""Migrations against a real Neo4j: from empty, idempotence, refusals, locking, failures.

Community has a single user database, so the tests that start from an empty schema drop it
and migrate again; every test that touches the history restores it on the way out, leaving
the migrated schema in place for the other tests.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from thalabus_graph.cli import main
from thalabus_graph.cli.migrate_cmd import format_report
from thalabus_graph.errors import ChecksumMismatch, LockHeld, MigrationError
from thalabus_graph.graph.connection import Connection
from thalabus_graph.graph.database import Database
from thalabus_graph.graph.migrations import (
    STATE_APPLIED,
    STATE_SETTINGS_CHANGED,
    STATE_WAITING,
    MigrationReport,
    MigrationRunner,
    SettingsMismatch,
    discover,
)
from thalabus_graph.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.schema_changes]

REPO_MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"
VECTOR_INDEXES = {"typical_rag": "Chapter", "paragraphs": "Paragraph", "summaries": "Summary"}
FULLTEXT_INDEXES = {"chapters_fulltext": "Chapter", "keywords_fulltext": "Keyword"}


@pytest.fixture()
def runner(db: Database, db_settings: Settings) -> Iterator[MigrationRunner]:
    """A runner on the repository's migrations; history and schema restored afterwards."""
    yield MigrationRunner(db, db_settings, migrations_dir=REPO_MIGRATIONS)
    restore = MigrationRunner(db, db_settings, migrations_dir=REPO_MIGRATIONS)
    restore.unlock()
    if not restore.analyze().ok:
        restore.clean()  # history only: the IF NOT EXISTS statements re-record it
    restore.migrate()


def migrate_before(runner: MigrationRunner, db_settings: Settings, tmp_path: Path,
                   version: int) -> None:
    """Empty the database and migrate it with the repository's versions older than
    ``version`` only: the state of a graph made before that version shipped (the ``runner``
    fixture restores the full history afterwards)."""
    before = tmp_path / f"before_v{version}"
    shutil.copytree(REPO_MIGRATIONS, before)
    for m in discover(before):
        if m.version >= version:
            (before / m.name).unlink()
    runner.database.write("migrations_delete_data_nodes")
    runner.clean(schema=True)
    MigrationRunner(runner.database, db_settings, migrations_dir=before).migrate()


@pytest.fixture()
def copied_migrations(tmp_path: Path) -> Path:
    """A writable copy of the repository's migrations folder."""
    folder = tmp_path / "migrations"
    shutil.copytree(REPO_MIGRATIONS, folder)
    return folder


def local_versions() -> list[int]:
    return [m.version for m in discover(REPO_MIGRATIONS)]


def applicable_versions(runner: MigrationRunner) -> list[int]:
    """The versions this server's line runs (the others wait for a newer line)."""
    server = runner.dao.server()
    return [m.version for m in discover(REPO_MIGRATIONS) if not m.waits_for(server)]


def history_versions(runner: MigrationRunner) -> list[int]:
    return [a.version for a in runner.dao.history()]


def schema_names(runner: MigrationRunner) -> set[str]:
    return {row["name"] for row in runner.dao.indexes() if row["type"] != "LOOKUP"}


def test_migrate_from_empty(runner: MigrationRunner) -> None:
    runner.clean(schema=True)
    assert schema_names(runner) == set()
    assert runner.dao.history() == []

    report = runner.migrate()

    versions = applicable_versions(runner)
    assert [s.version for s in report.applied] == versions
    assert report.current_version == versions[-1]
    assert history_versions(runner) == versions
    assert runner.dao.chain() == list(itertools.pairwise(versions))
    assert set(VECTOR_INDEXES) | set(FULLTEXT_INDEXES) <= schema_names(runner)
    assert runner.dao.read_lock() is None


def test_second_run_changes_nothing(runner: MigrationRunner) -> None:
    runner.migrate()
    before = (runner.dao.history(), runner.dao.indexes())
    report = runner.migrate()
    assert report.applied == ()
    versions = applicable_versions(runner)
    assert report.already_applied == len(versions)
    assert (runner.dao.history(), runner.dao.indexes()) == before
    assert [r.state for r in runner.status()] == [
        STATE_APPLIED if v in versions else STATE_WAITING for v in local_versions()]


def test_indexes_are_online_with_configured_options(runner: MigrationRunner,
                                                    db_settings: Settings) -> None:
    runner.migrate()
    rows = {row["name"]: row for row in runner.dao.indexes()}
    for name, label in VECTOR_INDEXES.items():
        row = rows[name]
        assert (row["type"], row["state"], row["labelsOrTypes"], row["properties"]) == (
            "VECTOR", "ONLINE", [label], ["embedding"])
        config = row["options"]["indexConfig"]
        assert config["vector.dimensions"] == db_settings.embedding_dimensions
        assert config["vector.similarity_function"].lower() == db_settings.vector_similarity
    for name, label in FULLTEXT_INDEXES.items():
        row = rows[name]
        assert (row["type"], row["state"], row["labelsOrTypes"], row["properties"]) == (
            "FULLTEXT", "ONLINE", [label], ["text"])
        config = row["options"]["indexConfig"]
        assert config["fulltext.analyzer"] == db_settings.fulltext_analyzer
        assert config["fulltext.eventually_consistent"] is False
    assert all(row["state"] == "ONLINE" for row in rows.values())
    for constraint in ("document_documentid", "fragment_fragmentid", "chapter_fragmentid",
                       "paragraph_fragmentid", "summary_fragmentid", "keyword_fragmentid",
                       "ontology_ontologyid", "dataset_datasetid", "goal_goalid",
                       "category_ontologyid_name_value"):
        assert rows[constraint]["owningConstraint"] == constraint
    assert rows["category_ontologyid_name_value"]["properties"] == ["ontologyid", "name",
                                                                    "value"]
    assert rows["fragment_documentid"]["properties"] == ["documentid"]


def test_dataset_memberships_are_indexed_by_weight_and_hidden(runner: MigrationRunner) -> None:
    """The AGGREGATES relationships of datasets carry a range index on each property readers
    order and filter by."""
    runner.migrate()
    rows = {row["name"]: row for row in runner.dao.indexes()}
    for name, prop in (("aggregates_weight", "weight"), ("aggregates_hidden", "hidden")):
        row = rows[name]
        assert (row["type"], row["entityType"], row["state"], row["labelsOrTypes"],
                row["properties"]) == ("RANGE", "RELATIONSHIP", "ONLINE", ["AGGREGATES"],
                                       [prop])


def test_filtered_vector_indexes_exist_on_the_lines_that_build_them(
        runner: MigrationRunner, db_settings: Settings) -> None:
    """V0007 builds the ontology-filtered vector indexes on 2026.01+ (three ONLINE indexes on
    the embedding and ``ontologyid``, the plain ones' options); on 5.26 it waits, says why,
    and none of them exists."""
    runner.migrate()
    rows = {row["name"]: row for row in runner.dao.indexes()}
    filtered = {f"{name}_ontology": label for name, label in VECTOR_INDEXES.items()}
    status = {r.version: r for r in runner.status()}
    server = runner.dao.server()
    assert server is not None
    if server < (2026, 1):
        assert not set(filtered) & set(rows)
        assert status[7].state == STATE_WAITING and "needs Neo4j 2026.01" in status[7].detail
        return
    assert status[7].state == STATE_APPLIED
    for name, label in filtered.items():
        row = rows[name]
        assert (row["type"], row["state"], row["labelsOrTypes"], row["properties"]) == (
            "VECTOR", "ONLINE", [label], ["embedding", "ontologyid"])
        config = row["options"]["indexConfig"]
        plain = rows[name.removesuffix("_ontology")]["options"]["indexConfig"]
        assert config["vector.dimensions"] == db_settings.embedding_dimensions
        assert config["vector.hnsw.m"] == plain["vector.hnsw.m"] == db_settings.vector_hnsw_m


def test_two_runners_at_once_leave_one_history(runner: MigrationRunner, db: Database,
                                               db_settings: Settings) -> None:
    runner.clean(schema=True)
    start = threading.Barrier(2)
    reports: list[MigrationReport] = []
    errors: list[BaseException] = []

    def work() -> None:
        own = MigrationRunner(db, db_settings, migrations_dir=REPO_MIGRATIONS, lock_timeout=120)
        start.wait()
        try:
            reports.append(own.migrate())
        except BaseException as exc:  # collected and re-raised in the test thread
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors
    applied = sorted(len(r.applied) for r in reports)
    assert applied == [0, len(applicable_versions(runner))]
    assert history_versions(runner) == applicable_versions(runner)
    assert len(runner.dao.chain()) == len(applicable_versions(runner)) - 1
    assert runner.dao.read_lock() is None


def test_lock_held_by_another_runner(runner: MigrationRunner, db: Database,
                                     db_settings: Settings) -> None:
    other = "someone-else:1:test"
    assert runner.dao.try_lock(other).owner == other
    try:
        impatient = MigrationRunner(db, db_settings, migrations_dir=REPO_MIGRATIONS,
                                    lock_timeout=0.5)
        with pytest.raises(LockHeld, match="someone-else:1:test"):
            impatient.migrate()
        assert runner.dao.read_lock() is not None  # the other runner's lock is untouched
    finally:
        runner.dao.release_lock(other)

    # A patient runner waits for the lock to be released, then finds nothing to do.
    assert runner.dao.try_lock(other).owner == other
    released = threading.Event()

    def release_the_lock() -> None:
        released.set()  # before the release: a runner that got the lock waited for this
        runner.dao.release_lock(other)

    release = threading.Timer(1.0, release_the_lock)
    release.start()
    report = MigrationRunner(db, db_settings, migrations_dir=REPO_MIGRATIONS,
                             lock_timeout=30).migrate()
    assert released.is_set()
    release.join()
    assert report.applied == ()
    assert runner.dao.read_lock() is None


_HOLD_THE_LOCK = """
import os, sys, time
from thalabus_graph.graph.connection import Connection
from thalabus_graph.graph.connection import Connection
from thalabus_graph.graph.database import Database
from thalabus_graph.graph.migrations import MigrationRunner
target = Connection.resolve()
db = Database.connect(target.uri, auth=target.auth, database=target.database)
runner = MigrationRunner(db, migrations_dir=sys.argv[1])
assert runner.dao.try_lock(runner.owner).owner == runner.owner
print(runner.owner, flush=True)
time.sleep(600)
"""


def test_a_lock_left_by_a_killed_runner_on_this_host_is_removed_at_once(
        runner: MigrationRunner, db: Database, db_settings: Settings,
        neo4j_connection: Connection) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEO4J_")}
    env.update(NEO4J_URI=neo4j_connection.uri, NEO4J_DATABASE=neo4j_connection.database)
    if neo4j_connection.auth is not None:
        env.update(NEO4J_USERNAME=neo4j_connection.auth[0],
                   NEO4J_PASSWORD=neo4j_connection.auth[1])
    holder = subprocess.Popen([sys.executable, "-c", _HOLD_THE_LOCK, str(REPO_MIGRATIONS)],
                              env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        owner = holder.stdout.readline().strip()
        assert f":{holder.pid}:" in owner  # host:pid:token
        assert runner.dao.read_lock() is not None
    finally:
        holder.kill()  # SIGKILL: the lock node stays behind
        holder.wait()
    left = runner.dao.read_lock()
    assert left is not None and left.owner == owner
    # no wait allowed: a lock not removed at once ends in LockHeld
    report = MigrationRunner(db, db_settings, migrations_dir=REPO_MIGRATIONS,
                             lock_timeout=0).migrate()
    assert report.cleared_lock == owner
    assert "removed the migration lock of runner " + owner in format_report(report)
    assert runner.dao.read_lock() is None


def test_edited_applied_migration_is_refused(runner: MigrationRunner, db: Database,
                                             db_settings: Settings, copied_migrations: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    runner.migrate()
    history = runner.dao.history()
    first = sorted(copied_migrations.glob("V*.cypher"))[0]
    first.write_text(first.read_text(encoding="utf-8")
                     + "\nCREATE INDEX mig_test_edited IF NOT EXISTS FOR (n:MigTest) ON (n.x);\n",
                     encoding="utf-8")
    monkeypatch.setenv("THALABUS_MIGRATIONS_DIR", str(copied_migrations))
    edited = MigrationRunner(db, db_settings)  # folder from THALABUS_MIGRATIONS_DIR

    with pytest.raises(ChecksumMismatch, match=first.name):
        edited.migrate()

    assert "mig_test_edited" not in schema_names(runner)
    assert runner.dao.history() == history
    assert runner.dao.read_lock() is None
    assert edited.status()[0].state == "changed"


def test_changed_dimension_is_refused(runner: MigrationRunner, db: Database,
                                      db_settings: Settings) -> None:
    runner.migrate()
    history = runner.dao.history()
    other = db_settings.replace(embedding_dimensions=db_settings.embedding_dimensions + 1)
    changed = MigrationRunner(db, other, migrations_dir=REPO_MIGRATIONS)

    with pytest.raises(SettingsMismatch, match="EMBEDDING_DIMENSIONS was"):
        changed.migrate()

    assert runner.dao.history() == history
    states = {r.description: r.state for r in changed.status()}
    assert states["vector indexes"] == STATE_SETTINGS_CHANGED
    rows = {row["name"]: row for row in runner.dao.indexes()}
    assert (rows["typical_rag"]["options"]["indexConfig"]["vector.dimensions"]
            == db_settings.embedding_dimensions)


def test_failed_statement_keeps_history_consistent(runner: MigrationRunner, db: Database,
                                                   db_settings: Settings,
                                                   copied_migrations: Path) -> None:
    runner.migrate()
    last = local_versions()[-1]
    good = copied_migrations / f"V{last + 1:04d}__harmless.cypher"
    good.write_text("// recorded before the broken one fails\nRETURN 1 AS one;\n",
                    encoding="utf-8")
    broken = copied_migrations / f"V{last + 2:04d}__broken.cypher"
    broken.write_text("RETURN 1 AS fine;\n\nCREATE INDEX FOR oops\nON nothing;\n",
                      encoding="utf-8")
    extended = MigrationRunner(db, db_settings, migrations_dir=copied_migrations)

    with pytest.raises(MigrationError) as caught:
        extended.migrate()

    message = str(caught.value)
    assert broken.name in message
    assert "statement 2 of 2" in message
    assert "line 3" in message and "CREATE INDEX FOR oops" in message
    assert history_versions(runner) == [*applicable_versions(runner), last + 1]
    assert runner.dao.chain()[-1] == (applicable_versions(runner)[-1], last + 1)
    assert runner.dao.read_lock() is None
    states = {r.version: r.state for r in extended.status()}
    assert states[last + 1] == STATE_APPLIED and states[last + 2] == "pending"


def test_cli_migrate_and_status(runner: MigrationRunner, neo4j_uri: str,
                                capsys: pytest.CaptureFixture[str]) -> None:
    runner.migrate()
    assert main(["migrate", "--uri", neo4j_uri, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    versions = applicable_versions(runner)
    assert report["applied"] == [] and report["current_version"] == versions[-1]

    assert main(["migrations", "status", "--uri", neo4j_uri]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:3] == ["VERSION", "DESCRIPTION", "STATE"]
    assert len(table) == 1 + len(local_versions())
    assert sum(" applied " in line for line in table[1:]) == len(versions)
    assert all(" applied " in line or " waiting " in line for line in table[1:])

    assert main(["migrations", "status", "--uri", neo4j_uri, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["version"] for r in rows] == local_versions()


def test_clean_db_keeps_schema_and_history(clean_db: Database, runner: MigrationRunner) -> None:
    assert history_versions(runner) == applicable_versions(runner)
    assert set(VECTOR_INDEXES) <= schema_names(runner)


def test_stored_bad_vectors_are_reported_by_status_and_removed_on_request(
        clean_db: Database, runner: MigrationRunner, neo4j_uri: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    dims = runner.settings.embedding_dimensions
    vectors = {
        "bad-zero": [0.0] * dims,
        "bad-tiny": [1e-200] * dims,
        "bad-huge": [1e300] * dims,
        "bad-short": [0.5] * (dims - 1),
        "good": [0.1] * dims,
    }
    for fragmentid, vector in vectors.items():
        clean_db.driver.execute_query(
            "CREATE (:Fragment:Chapter {fragmentid: $f, documentid: 'doc-' + $f, "
            "embedding: $v})", {"f": fragmentid, "v": vector}, database_=clean_db.database)
    clean_db.driver.execute_query(
        "CREATE (:Fragment:Chapter {fragmentid: 'bad-nan', documentid: 'doc-bad-nan', "
        "embedding: [0.0 / 0.0] + [x IN range(2, $d) | 0.1]})", {"d": dims},
        database_=clean_db.database)

    check = runner.check_vectors()
    assert check.total == 5
    assert {b.fragmentid: b.problem for b in check.listed} == {
        "bad-huge": "not finite", "bad-nan": "not finite", "bad-short": "dimension",
        "bad-tiny": "norm", "bad-zero": "norm"}
    assert main(["migrations", "status", "--uri", neo4j_uri]) == 0
    err = capsys.readouterr().err
    assert "5 stored embedding(s) no search can use" in err
    assert "migrations repair-vectors --yes" in err

    assert main(["migrations", "repair-vectors", "--uri", neo4j_uri]) == 2
    assert runner.check_vectors().total == 5  # nothing removed without --yes
    assert main(["migrations", "repair-vectors", "--uri", neo4j_uri, "--yes", "--json"]) == 0
    done = json.loads(capsys.readouterr().out)
    assert done == {"removed": 5, "documentids": sorted(
        f"doc-{f}" for f in ("bad-huge", "bad-nan", "bad-short", "bad-tiny", "bad-zero"))}
    assert runner.check_vectors().total == 0
    kept = clean_db.driver.execute_query(
        "MATCH (f:Fragment) WHERE f.embedding IS NOT NULL RETURN collect(f.fragmentid) AS ids",
        database_=clean_db.database).records[0]["ids"]
    assert kept == ["good"]
