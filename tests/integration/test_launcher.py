"""The local Neo4j launcher against real servers: lifecycle, refusal, status, Cypher, vectors.

These start their own servers (not the session fixture) so they test the launcher itself, on
the default 5.26 line and on the 2026.x line (JDK 21+, skipped when none is installed).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from neo4j import Driver, GraphDatabase

from thalabus_graph.cli import main as cli_main
from thalabus_graph.errors import LauncherError
from thalabus_graph.graph.launcher import (
    LTS_VERSION,
    LocalNeo4j,
    find_java,
    process_alive,
)
from thalabus_graph.graph.launcher.memory import machine_memory, recommend

pytestmark = pytest.mark.integration

CALENDAR_VERSION = "2026.09.0"


def _process_gone(pid: int, wait: float = 5.0) -> bool:
    end = time.monotonic() + wait
    while process_alive(pid):
        if time.monotonic() > end:
            return False
        time.sleep(0.1)
    return True


def _check_vector_index(driver: Driver) -> None:
    """Create, populate and query a vector index; needs the java.nio add-opens to work."""
    driver.execute_query(
        "CREATE VECTOR INDEX launcher_probe IF NOT EXISTS FOR (p:LauncherProbe) ON p.embedding "
        "OPTIONS {indexConfig: {`vector.dimensions`: 3, `vector.similarity_function`: 'cosine'}}",
        database_="neo4j",
    )
    driver.execute_query(
        "UNWIND $rows AS r CREATE (:LauncherProbe {name: r.name, embedding: r.embedding})",
        {"rows": [
            {"name": "x", "embedding": [1.0, 0.0, 0.0]},
            {"name": "y", "embedding": [0.0, 1.0, 0.0]},
            {"name": "xy", "embedding": [0.7, 0.7, 0.0]},
        ]},
        database_="neo4j",
    )
    driver.execute_query("CALL db.awaitIndexes(60)", database_="neo4j")
    records, _, _ = driver.execute_query(
        "CALL db.index.vector.queryNodes('launcher_probe', 2, $vec) YIELD node, score "
        "RETURN node.name AS name, score",
        {"vec": [0.9, 0.1, 0.0]},
        database_="neo4j",
    )
    assert [r["name"] for r in records] == ["x", "xy"]
    assert 0.5 < records[1]["score"] < records[0]["score"] <= 1.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalNeo4j]:
    """A 5.26 server for the read-only checks of this module."""
    local = LocalNeo4j(
        version=LTS_VERSION, data_dir=tmp_path_factory.mktemp("launcher"),
        exit_with_parent=True,
    )
    local.start()
    try:
        yield local
    finally:
        local.stop()


@pytest.mark.fixed_version
def test_status_reports_running_server(server: LocalNeo4j) -> None:
    state = server.status()
    assert state.running and state.answering
    assert state.version == LTS_VERSION
    assert state.uri == f"bolt://127.0.0.1:{state.port}"
    record = json.loads(server.pid_file.read_text())
    assert record["pid"] == state.pid and record["uri"] == state.uri
    rule = recommend(machine_memory(), store=0)  # sized by the rule: the store was new
    assert (state.heap, state.page_cache) == (rule.heap_size, rule.page_cache_size)
    assert state.warnings == ()
    if server.class_data_sharing:  # the first start trained the class archive; it is used
        archive = record["class_data_archive"]
        if archive is None:  # training failed on this JDK and said why
            assert list((server.cache_dir / "cds").glob("*.failed"))
        else:
            assert Path(archive).is_file()


@pytest.mark.line_neutral
def test_heap_and_page_cache_come_from_flags_and_the_environment(tmp_path: Path) -> None:
    data = tmp_path / "data"
    cli = str(Path(sys.executable).with_name("thalabus-graph"))
    env = dict(os.environ, THALABUS_NEO4J_PAGE_CACHE="512k")
    started = subprocess.run([cli, "neo4j", "start", "--data", str(data), "--heap", "600m",
                              "--json"], env=env, capture_output=True, text=True, timeout=600,
                             check=False)
    try:
        assert started.returncode == 0, started.stderr
        state = json.loads(started.stdout)
        assert (state["heap"], state["page_cache"]) == ("600m", "512k")
        argv = Path(f"/proc/{state['pid']}/cmdline").read_bytes().split(b"\0")
        assert b"-Xmx600m" in argv
        conf = (data / "neo4j.conf").read_text()
        assert "server.memory.pagecache.size=512k" in conf
        # Even a new store is larger than 512 KiB: start and status say it outgrew the cache.
        assert "outgrown the page cache (512k)" in started.stderr
        assert "thalabus-graph warm-up" not in started.stderr  # a new store: nothing to warm
        status = subprocess.run([cli, "neo4j", "status", "--data", str(data), "--json"],
                                capture_output=True, text=True, timeout=120, check=False)
        assert any("outgrown the page cache" in w for w in json.loads(status.stdout)["warnings"])
        migrate_env = {k: v for k, v in os.environ.items() if not k.startswith("NEO4J_")}
        migrate_env.update(NEO4J_URI=state["uri"], THALABUS_NEO4J_DATA=str(data))
        migrated = subprocess.run([cli, "migrate", "--json"], env=migrate_env,
                                  capture_output=True, text=True, timeout=600, check=False)
        assert migrated.returncode == 0, migrated.stderr
        assert "outgrown the page cache (512k)" in migrated.stderr
        assert json.loads(migrated.stdout)["warnings"]
        # started again on the used store (its sizes set, so measured apart from the sizing
        # rule), the start names the warm-up
        subprocess.run([cli, "neo4j", "stop", "--data", str(data)], capture_output=True,
                       timeout=300, check=True)
        again = subprocess.run([cli, "neo4j", "start", "--data", str(data), "--heap", "600m"],
                               env=env, capture_output=True, text=True, timeout=600,
                               check=False)
        assert again.returncode == 0, again.stderr
        assert "`thalabus-graph warm-up`" in again.stderr
        bad = subprocess.run([cli, "neo4j", "start", "--data", str(tmp_path / "other"),
                              "--page-cache", "lots"], capture_output=True, text=True,
                             timeout=120, check=False)
        assert bad.returncode == 2 and "--page-cache" in bad.stderr
    finally:
        subprocess.run([cli, "neo4j", "stop", "--data", str(data)], capture_output=True,
                       timeout=300, check=False)


@pytest.mark.fixed_version
def test_second_start_on_same_data_dir_is_refused(server: LocalNeo4j) -> None:
    twin = LocalNeo4j(version=LTS_VERSION, data_dir=server.data_dir)
    with pytest.raises(LauncherError, match=r"already running .*\(pid \d+, uri bolt://.*"
                       r"neo4j stop --data "):
        twin.start()
    assert server.status().answering


@pytest.mark.fixed_version
def test_cypher_and_vector_index(server: LocalNeo4j) -> None:
    uri = server.status().uri
    assert uri is not None
    with GraphDatabase.driver(uri) as driver:
        records, _, _ = driver.execute_query("RETURN 1 AS one", database_="neo4j")
        assert records[0]["one"] == 1
        _check_vector_index(driver)


@pytest.mark.fixed_version
def test_start_stop_leaves_nothing_behind(tmp_path: Path) -> None:
    local = LocalNeo4j(version=LTS_VERSION, data_dir=tmp_path / "data", exit_with_parent=True)
    local.start()
    pid = local.status().pid
    assert pid is not None and process_alive(pid)
    assert local.stop() is True
    assert _process_gone(pid)
    assert not local.pid_file.exists()
    assert local.status().running is False
    assert local.stop() is False
    # The store lock went with the process: the same data dir starts again, now via the CLI.
    data = str(local.data_dir)
    assert cli_main(["neo4j", "start", "--data", data]) == 0
    again = local.status()
    assert again.running and again.pid != pid
    # A start naming no version keeps the store's own line, whatever the machine's newest; a
    # named one (make test-lts, make test-2026) runs and is recorded.
    assert again.version == (os.environ.get("THALABUS_NEO4J_VERSION") or LTS_VERSION)
    assert local.files.recorded_version() == again.version
    assert cli_main(["neo4j", "stop", "--data", data]) == 0
    assert again.pid is not None and _process_gone(again.pid)
    assert not local.pid_file.exists()
    assert cli_main(["neo4j", "status", "--data", data]) == 1


def test_stale_pid_file_is_cleaned(tmp_path: Path) -> None:
    local = LocalNeo4j(data_dir=tmp_path)
    local.pid_file.write_text(json.dumps({"pid": 2**22 + 12345, "uri": "bolt://x:1"}))
    assert local.status().running is False
    assert not local.pid_file.exists()


@pytest.mark.fixed_version
def test_jvm_dying_during_start_reports_its_log(tmp_path: Path) -> None:
    local = LocalNeo4j(version=LTS_VERSION, data_dir=tmp_path, heap="not-a-size")
    with pytest.raises(LauncherError, match=r"exited with code \d+ while starting(.|\n)*heap"):
        local.start(timeout=60)
    assert not local.pid_file.exists()


@pytest.mark.fixed_version
def test_server_ends_with_its_parent_when_asked(tmp_path: Path) -> None:
    """A test run killed mid-start must not leave a JVM behind on a shared machine."""
    script = (
        "from thalabus_graph.graph.launcher import LocalNeo4j\n"
        f"LocalNeo4j(version={LTS_VERSION!r}, data_dir={str(tmp_path)!r},"
        " exit_with_parent=True).start()\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script])
    local = LocalNeo4j(data_dir=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while not local.pid_file.exists():
            assert parent.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        time.sleep(0.5)
        pid = json.loads(local.pid_file.read_text())["pid"]
    finally:
        parent.kill()
        parent.wait()
    assert _process_gone(pid, wait=60.0)
    deadline = time.monotonic() + 30  # the lock goes with the last thread
    while local.status().running and time.monotonic() < deadline:
        time.sleep(0.2)
    assert local.status().running is False


@pytest.mark.fixed_version
def test_calendar_release_on_java_21_plus(tmp_path: Path) -> None:
    version = os.environ.get("THALABUS_NEO4J_CALENDAR_VERSION", CALENDAR_VERSION)
    try:
        find_java(version)
    except LauncherError as exc:
        pytest.skip(str(exc))
    local = LocalNeo4j(version=version, data_dir=tmp_path / "data", exit_with_parent=True)
    uri = local.start()
    try:
        assert local.status().version == version
        with GraphDatabase.driver(uri) as driver:
            assert driver.execute_query("RETURN 1 AS one", database_="neo4j").records[0]["one"]
            _check_vector_index(driver)
        # Lucene says at its first vector index which similarity code it runs: SIMD through
        # the Vector API the launcher adds on a JDK 21+, not the scalar fallback.
        log = local.log_file.read_text(encoding="utf-8", errors="replace")
        assert "vector incubator API enabled" in log, log[-2000:]
    finally:
        pid = local.status().pid
        assert local.stop()
    assert pid is not None and _process_gone(pid)
    assert not local.pid_file.exists()


@pytest.mark.fixed_version
def test_garbage_pid_file_neither_hides_the_server_nor_lets_a_start_clobber_its_log(
        server: LocalNeo4j) -> None:
    """The server is found by its data dir's lock, whatever the pid file says."""
    original = server.pid_file.read_bytes()
    truth = json.loads(original)
    log_before = server.log_file.read_bytes()
    try:
        for garbage in (b"{not json", b'{"pid": 1, "port": 9}', b'{"pid": "x"}'):
            server.pid_file.write_bytes(garbage)
            state = server.status()
            assert state.running and state.pid == truth["pid"], garbage
            assert state.uri == truth["uri"] and state.answering
            assert server.pid_file.read_bytes() == garbage  # not deleted, not rewritten
            twin = LocalNeo4j(version=LTS_VERSION, data_dir=server.data_dir)
            with pytest.raises(LauncherError, match=rf"already running .*pid {truth['pid']}"):
                twin.start()
            assert server.log_file.read_bytes().startswith(log_before)
        assert cli_main(["neo4j", "status", "--data", str(server.data_dir)]) == 0
    finally:
        server.pid_file.write_bytes(original)
    assert server.status().answering


@pytest.mark.fixed_version
def test_a_copied_or_garbage_pid_file_never_stops_the_wrong_server(tmp_path: Path) -> None:
    first = LocalNeo4j(version=LTS_VERSION, data_dir=tmp_path / "first",
                       exit_with_parent=True)
    first.start()
    pid = first.status().pid
    assert pid is not None
    try:
        other = tmp_path / "other"
        other.mkdir()
        (other / "neo4j.pid.json").write_bytes(first.pid_file.read_bytes())
        assert LocalNeo4j(data_dir=other).status().running is False
        assert cli_main(["neo4j", "stop", "--data", str(other)]) == 0
        assert process_alive(pid) and first.status().answering
        # Garbage in the first server's own pid file: stop still finds and stops it.
        first.pid_file.write_text("garbage", encoding="utf-8")
        assert cli_main(["neo4j", "stop", "--data", str(first.data_dir)]) == 0
        assert _process_gone(pid)
        assert not first.pid_file.exists() and first.status().running is False
    finally:
        if process_alive(pid):
            first.stop()
