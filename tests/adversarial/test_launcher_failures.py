"""A start whose server fails in a way it only logs ends at once and says why.

Neo4j keeps running when a database cannot start (a full disk, a broken store): the DBMS waits
and retries for minutes while its debug log holds the cause. A start must stop waiting at the
first such line, stop the JVM, and say what failed; on a disk too full for a new store it must
refuse before any JVM runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from thalabus_graph.errors import LauncherError
from thalabus_graph.graph.launcher import LocalNeo4j, health
from thalabus_graph.graph.launcher.health import LogWatch, start_needs
from thalabus_graph.graph.launcher.process import AUTH_FILE

DISK_FULL_JSON = json.dumps({
    "time": "2026-12-06 03:14:08.876+0000", "level": "ERROR",
    "category": "o.n.w.f.T.TransactionLogOutOfDiskHandler",
    "message": "[system/00000000] Warning! System is running out of disk space. Failed to "
    "preallocate file since disk does not have enough space left. Switching database to read "
    "only mode.",
    "databaseName": "system"})
FAILED_TEXT = (
    "2026-12-06 03:13:06.941+0000 ERROR [o.n.d.d.DatabaseLifecycles] Failed to start "
    "DatabaseId{eb18556a[neo4j]}\n"
    "java.lang.RuntimeException: java.io.IOException: Unable to write directory path\n"
    "\tat org.neo4j.dbms.database.DatabaseLifecycles.startDatabase(DatabaseLifecycles.java:132)\n"
    "Caused by: java.io.IOException: Unable to write directory path\n"
    "Caused by: java.nio.file.FileAlreadyExistsException: /d/data/databases/neo4j\n"
    "2026-12-06 03:13:07.001+0000 INFO  [o.n.x.Y] next entry\n")


def _debug_log(data: Path, text: str) -> Path:
    log = data / "logs" / "debug.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a", encoding="utf-8") as handle:
        handle.write(text)
    return log


def test_the_log_watch_names_a_full_disk_and_a_database_that_failed(tmp_path: Path) -> None:
    _debug_log(tmp_path, DISK_FULL_JSON + "\n")  # written by an earlier start: not this one's
    watch = LogWatch(tmp_path)
    assert watch.fatal() is None
    _debug_log(tmp_path, FAILED_TEXT)
    failure = watch.fatal()
    assert failure is not None and "database 'neo4j'" in failure
    assert "FileAlreadyExistsException: /d/data/databases/neo4j" in failure
    assert watch.fatal() is None  # read once
    _debug_log(tmp_path, '{"level":"INFO","message":"half a li')
    assert watch.fatal() is None
    _debug_log(tmp_path, 'ne"}\n' + DISK_FULL_JSON + "\n")
    failure = watch.fatal()
    assert failure is not None and failure.startswith("out of disk space")
    assert "MiB free" in failure


def test_a_disk_too_full_for_a_new_store_is_refused_before_any_jvm(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "data"
    needed = start_needs(data)
    assert needed > 2 * health.TX_LOG_PREALLOCATION  # system and neo4j: both new
    monkeypatch.setattr(health, "free_bytes", lambda path: needed - 1)
    server = LocalNeo4j(data_dir=data, exit_with_parent=True)
    with pytest.raises(LauncherError, match=r"out of disk space: .* MiB free, and a start needs"):
        server.start(timeout=600)
    assert not data.exists()  # refused before anything was written
    assert server.status().running is False


@pytest.mark.integration
def test_a_database_that_cannot_start_ends_the_start_with_its_cause(tmp_path: Path) -> None:
    """The system database's folder is a file: Neo4j 2026.x retries for minutes, 5.26 gives up
    with a bare stack trace; either way the start must name the database and the cause."""
    data = tmp_path / "data"
    (data / "data" / "databases").mkdir(parents=True)
    (data / "data" / "databases" / "system").write_text("not a folder\n")
    (data / AUTH_FILE).write_text('{"auth": false}')
    server = LocalNeo4j(data_dir=data, exit_with_parent=True)
    with pytest.raises(LauncherError) as failed:
        server.start(timeout=600)
    message = str(failed.value)
    assert "could not start its database 'system'" in message, message
    assert "FileAlreadyExistsException" in message and str(data / "logs" / "debug.log") in message
    assert server.status().running is False and not server.pid_file.exists()
