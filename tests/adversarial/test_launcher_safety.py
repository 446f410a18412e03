"""A hostile data dir: links where the launcher's files go, a foreign lock holder, an auth store.

The default data dir sits inside whatever repository the user cloned, so every file the
launcher writes or trusts there may be a link planted to a file elsewhere. The launcher must
refuse before writing anything, never signal a process just because it holds the lock file,
and keep an auth-enabled store's password and auth on across restarts: a lost or damaged auth
record, or one that says "off" for a store with a password user, never starts it open.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from neo4j import GraphDatabase
from neo4j.exceptions import AuthError

from thalabus_graph.errors import LauncherError
from thalabus_graph.graph.launcher import (
    CONF_FILE,
    LOCK_FILE,
    LocalNeo4j,
    generate_password,
    process_alive,
)
from thalabus_graph.graph.launcher.process import AUTH_FILE, OWN_FILES

pytestmark = pytest.mark.integration

CLI = str(Path(sys.executable).with_name("thalabus-graph"))
VICTIM_TEXT = b"precious content that is not the launcher's\n"


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port something listens on, so a start that got past its checks fails fast."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        yield int(sock.getsockname()[1])


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "victim.txt"
    victim.write_bytes(VICTIM_TEXT)
    return victim


@pytest.mark.parametrize("name", OWN_FILES)
def test_start_refuses_a_symlinked_file_before_writing_anything(
        tmp_path: Path, busy_port: int, name: str) -> None:
    victim = _victim(tmp_path)
    data = tmp_path / "data"
    data.mkdir()
    (data / name).symlink_to(victim)
    with pytest.raises(LauncherError, match="symbolic link"):
        LocalNeo4j(data_dir=data, port=busy_port).start(timeout=30)
    assert victim.read_bytes() == VICTIM_TEXT
    assert sorted(p.name for p in data.iterdir()) == [name]  # nothing else was written


def test_start_refuses_a_hard_linked_config(tmp_path: Path, busy_port: int) -> None:
    victim = _victim(tmp_path)
    data = tmp_path / "data"
    data.mkdir()
    os.link(victim, data / CONF_FILE)
    with pytest.raises(LauncherError, match="hard links"):
        LocalNeo4j(data_dir=data, port=busy_port).start(timeout=30)
    assert victim.read_bytes() == VICTIM_TEXT


def _foreign_locker(path: Path) -> subprocess.Popen[str]:
    """Another program holding an fcntl lock on ``path`` (created if missing)."""
    code = ("import fcntl, sys, time\n"
            "f = open(sys.argv[1], 'a')\n"
            "fcntl.lockf(f, fcntl.LOCK_EX)\n"
            "print('locked', flush=True)\n"
            "time.sleep(120)\n")
    proc = subprocess.Popen([sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


@pytest.mark.parametrize("how", ["symlink", "same file"])
def test_stop_never_signals_a_process_that_is_not_this_data_dirs_server(
        tmp_path: Path, how: str) -> None:
    data = tmp_path / "data"
    data.mkdir()
    if how == "symlink":
        target = tmp_path / "other.lock"
        locker = _foreign_locker(target)
        (data / LOCK_FILE).symlink_to(target)
        expected = "symbolic link"
    else:
        locker = _foreign_locker(data / LOCK_FILE)
        expected = f"locked by pid {locker.pid}, which is not a Neo4j"
    try:
        with pytest.raises(LauncherError, match=expected):
            LocalNeo4j(data_dir=data).stop(timeout=5)
        done = subprocess.run([CLI, "neo4j", "stop", "--data", str(data), "--timeout", "5"],
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode != 0 and expected.split(",")[0] in done.stderr
        time.sleep(0.5)
        assert process_alive(locker.pid) and locker.poll() is None
    finally:
        locker.kill()
        locker.wait()


def _cli_start(data: Path, *flags: str, stdin: str | None = None
               ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, "neo4j", "start", "--data", str(data), *flags], input=stdin,
                          capture_output=True, text=True, timeout=600, check=False)


def _cli_stop(data: Path) -> None:
    subprocess.run([CLI, "neo4j", "stop", "--data", str(data)], capture_output=True,
                   timeout=300, check=False)


def _login(uri: str, auth: tuple[str, str] | None) -> None:
    with GraphDatabase.driver(uri, auth=auth) as driver:
        driver.verify_connectivity()


def test_an_auth_store_restarts_with_its_password_and_keeps_auth_on_without_one(
        tmp_path: Path) -> None:
    data = tmp_path / "data"
    password = generate_password()
    try:
        first = _cli_start(data, "--auth-password-stdin", stdin=password + "\n")
        assert first.returncode == 0, first.stderr
        _cli_stop(data)

        again = _cli_start(data, "--auth-password-stdin", stdin=password + "\n")
        assert again.returncode == 0, again.stderr
        uri = again.stdout.strip().splitlines()[-1]
        _login(uri, ("neo4j", password))
        _cli_stop(data)

        plain = _cli_start(data)
        assert plain.returncode == 0, plain.stderr
        assert "auth stays on" in plain.stderr
        uri = plain.stdout.strip().splitlines()[-1]
        with pytest.raises(AuthError):
            _login(uri, None)
        _login(uri, ("neo4j", password))
        assert LocalNeo4j(data_dir=data).status().auth is True
        _cli_stop(data)

        wrong = _cli_start(data, "--auth-password-stdin", stdin="another-password\n")
        assert wrong.returncode != 0
        assert "refused the password" in wrong.stderr
        assert len(wrong.stderr.strip().splitlines()) == 1
        assert LocalNeo4j(data_dir=data).status().running is False
    finally:
        _cli_stop(data)


def _last_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = done.stdout.strip().splitlines()
    return lines[-1] if lines else ""


def _set_password(uri: str, password: str) -> None:
    """Give user neo4j a password on a server running without auth, as any local client may."""
    with GraphDatabase.driver(uri, auth=None) as driver:
        driver.execute_query("ALTER USER neo4j SET PASSWORD $pw CHANGE NOT REQUIRED",
                             {"pw": password}, database_="system")


@pytest.fixture(scope="module")
def plain_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """A server started without auth on a new data dir: (data dir, uri)."""
    data = tmp_path_factory.mktemp("plain") / "data"
    try:
        first = _cli_start(data)
        assert first.returncode == 0, first.stderr
        yield data, _last_line(first)
    finally:
        _cli_stop(data)


def test_a_start_of_a_running_server_prints_its_uri_last(plain_store: tuple[Path, str]) -> None:
    data, uri = plain_store
    pid = LocalNeo4j(data_dir=data).status().pid
    again = _cli_start(data)
    assert again.returncode == 0, again.stderr
    assert _last_line(again) == uri and "already running" in again.stderr
    shell = subprocess.run(
        ["bash", "-c", f'export NEO4J_URI=$("{CLI}" neo4j start --data "{data}" | tail -n 1); '
         'printf %s "$NEO4J_URI"'], capture_output=True, text=True, timeout=300, check=False)
    assert shell.stdout == uri, shell.stderr
    state = json.loads(_cli_start(data, "--json").stdout)
    assert state["already_running"] is True and state["uri"] == uri and state["pid"] == pid
    other_port = _cli_start(data, "--port", "1")
    assert other_port.returncode == 1 and "not 1; stop it first" in other_port.stderr
    assert LocalNeo4j(data_dir=data).status().pid == pid  # the same server, never restarted


def test_auth_never_turns_off_when_the_record_is_lost_and_the_store_decides(
        plain_store: tuple[Path, str]) -> None:
    data, uri = plain_store
    record = data / AUTH_FILE
    assert json.loads(record.read_text()) == {"auth": False, "user": "neo4j"}  # a new store
    password = generate_password()
    _cli_stop(data)
    record.unlink()
    for damage in (None, '{"auth": tru', '{"auth": "false"}', "[]"):
        if damage is not None:
            record.write_text(damage)
        refused = _cli_start(data)
        assert refused.returncode == 1 and _last_line(refused) == ""
        assert "--auth-password-stdin" in refused.stderr and "--no-auth" in refused.stderr
        assert ("no auth record" if damage is None else "damaged") in refused.stderr
        assert LocalNeo4j(data_dir=data).status().running is False
    # Auth stated off on a store without a password user: the store agrees, auth is off.
    stated = _cli_start(data, "--no-auth")
    assert stated.returncode == 0, stated.stderr
    uri = _last_line(stated)
    _login(uri, None)
    assert json.loads(record.read_text())["auth"] is False
    _set_password(uri, password)  # now the store has a password user: an auth store
    _cli_stop(data)
    # The record says off, the store says on: auth stays on.
    kept = _cli_start(data)
    assert kept.returncode == 0 and "auth stays on" in kept.stderr, kept.stderr
    uri = _last_line(kept)
    with pytest.raises(AuthError):
        _login(uri, None)
    _login(uri, ("neo4j", password))
    assert LocalNeo4j(data_dir=data).status().auth is True
    assert json.loads(record.read_text())["auth"] is True
    _cli_stop(data)
    # Record lost, auth stated off: the store's password user keeps auth on.
    record.unlink()
    stated = _cli_start(data, "--no-auth")
    assert stated.returncode == 0 and "auth stays on" in stated.stderr, stated.stderr
    with pytest.raises(AuthError):
        _login(_last_line(stated), None)
    assert json.loads(record.read_text())["auth"] is True
