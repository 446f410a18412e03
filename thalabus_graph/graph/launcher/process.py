"""The server process and its data dir: which pid serves it, found from the lock it holds.

Which process serves a data dir is never taken from ``neo4j.pid.json``: the launcher JVM holds
an fcntl lock on ``<data dir>/neo4j.lock`` for its whole life, and ``fcntl(F_GETLK)`` names the
holder. The pid file only carries details (port, version) and is trusted for a pid only when
that process's own command line names this data dir (a server still starting).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import signal
import socket
import struct
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from thalabus_graph.errors import ConfigurationError, LauncherError, PortTaken
from thalabus_graph.graph.launcher.files import check_own_file, read_own, write_json_own
from thalabus_graph.graph.launcher.health import LogWatch

PID_FILE = "neo4j.pid.json"
LOCK_FILE = "neo4j.lock"
"""Held (fcntl) by the launcher JVM while it runs: the data dir's proof of ownership."""
START_LOCK_FILE = "neo4j.start.lock"
"""flock held by a Python ``start`` so two starts on one data dir never overlap."""
MIN_PASSWORD_LENGTH = 8
"""Neo4j's default ``dbms.security.auth_minimum_password_length``."""
LOG_FILE = "neo4j.log"
CONF_FILE = "neo4j.conf"
AUTH_FILE = "neo4j.auth.json"
"""The auth choice of the store: once a start enabled auth, every later start keeps it on."""
STORE_FILE = "neo4j.store.json"
"""The Neo4j version that last started the store (the default of the next start)."""
OWN_FILES = (CONF_FILE, LOCK_FILE, PID_FILE, LOG_FILE, START_LOCK_FILE, AUTH_FILE,
             STORE_FILE)
"""Every file the launcher writes or trusts in a data dir: each must be its own (``files``)."""
READY_MARKER = "THALABUS-NEO4J-READY"
AUTH_MARKER = "THALABUS-NEO4J-AUTH "
"""Starts the launcher's line saying whether the server came up with auth ("on" or "off")."""
LAUNCHER_CLASS = "Launcher"
_STACK_FRAME = re.compile(r"^\s+(at |\.\.\. \d+ more)")


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def checked_port(port: int | None) -> int | None:
    """``port`` when it is a TCP port number or None (pick a free one), else a
    ``ConfigurationError``."""
    if port is not None and not 0 < port < 65536:
        raise ConfigurationError(f"port must be in 1..65535, not {port}")
    return port


def port_answers(port: int, host: str = "127.0.0.1", timeout: float = 0.5) -> bool:
    """True when something accepts TCP connections on ``host:port``."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def process_alive(pid: int) -> bool:
    """True when ``pid`` is a live process (zombies count as dead and are reaped if ours)."""
    if pid <= 0:
        return False
    with contextlib.suppress(ChildProcessError, OSError):
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    state = stat.rsplit(")", 1)[-1].split()[0] if ")" in stat else ""
    if state not in ("Z", "X"):
        return True
    # A JVM's main thread turns zombie first; its other threads (shutting Neo4j down, still
    # holding the store) are the process too until the last one ends.
    try:
        return len(os.listdir(f"/proc/{pid}/task")) > 1
    except OSError:
        return False


_FLOCK_FORMAT = "hhqqi4x"
"""``struct flock`` on 64-bit Linux: type, whence, start, len, pid (and padding)."""


def lock_holder(path: Path) -> int | None:
    """The pid holding a POSIX (fcntl) lock on ``path``; None when nobody does.

    ``F_GETLK`` asks the kernel, so the answer is the truth about the process that holds the
    file now, whatever a pid file says. A lock without a known owner (an open file
    description lock reports pid -1) counts as held, with pid -1.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        query = struct.pack(_FLOCK_FORMAT, fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
        reply = fcntl.fcntl(fd, fcntl.F_GETLK, query)
    except OSError:
        return None
    finally:
        os.close(fd)
    lock_type, _, _, _, pid = struct.unpack(_FLOCK_FORMAT, reply)
    return None if lock_type == fcntl.F_UNLCK else int(pid)


def _launcher_args(pid: int) -> list[str] | None:
    """The arguments after the Launcher class in ``pid``'s command line; None if not one."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    words = [os.fsdecode(a) for a in argv]
    if LAUNCHER_CLASS not in words:
        return None
    return words[words.index(LAUNCHER_CLASS) + 1:]


def _version_of(pid: int) -> str | None:
    """The Neo4j version a launcher runs: the cache folder of its launcher jar."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    words = [os.fsdecode(a) for a in argv]
    if "-cp" not in words or words.index("-cp") + 1 >= len(words):
        return None
    first = words[words.index("-cp") + 1].split(os.pathsep)[0]
    return Path(first).parent.name or None



def _tail(path: Path, lines: int = 25) -> str:
    """The last lines of a log without Java stack frames, or a note that it is missing."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return f"(no log at {path})"
    kept = [line for line in text.splitlines() if not _STACK_FRAME.match(line)]
    return "\n".join(kept[-lines:])


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An exclusive flock, so concurrent installs of one version do not interleave."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)



class DataDir:
    """The files of one data dir and the pid that serves it (the holder of its lock)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def pid_file(self) -> Path:
        """JSON file naming the running server's pid, port, URI and version."""
        return self.path / PID_FILE

    @property
    def log_file(self) -> Path:
        """The JVM's stdout and stderr."""
        return self.path / LOG_FILE

    @property
    def lock_file(self) -> Path:
        """The file the running launcher holds an fcntl lock on."""
        return self.path / LOCK_FILE

    @property
    def conf_file(self) -> Path:
        """The raw Neo4j settings the launcher loads."""
        return self.path / CONF_FILE

    @property
    def auth_file(self) -> Path:
        """The record of the store's auth choice."""
        return self.path / AUTH_FILE

    def check_files(self) -> None:
        """Refuse a data dir whose launcher files are links or not ours (see ``files``)."""
        for name in OWN_FILES:
            check_own_file(self.path / name)

    def read_pid_file(self) -> dict[str, Any] | None:
        """The pid file's record; None when there is none, {} when it is unreadable."""
        return _read_json(self.pid_file)

    def recorded_auth(self) -> bool | None:
        """Whether the last start ran the store with auth; None when nothing was recorded.

        Raises ``LauncherError`` when the record exists but does not say ``{"auth": true}``
        or ``{"auth": false}``: a damaged record must not read as "auth off".
        """
        try:
            data = read_own(self.auth_file)
        except LauncherError as exc:
            raise LauncherError(f"the auth record is unreadable: {exc}") from exc
        if data is None:
            return None
        try:
            value = json.loads(data.decode("utf-8"))
        except ValueError:
            value = None
        auth = value.get("auth") if isinstance(value, dict) else None
        if not isinstance(auth, bool):
            raise LauncherError(f"the auth record {self.auth_file} is damaged (it must read "
                                '{"auth": true} or {"auth": false})')
        return auth

    def record_auth(self, auth: bool = True) -> None:
        """Remember whether the store runs with auth: written before a start that sets a
        password, and after every start with the way the server came up."""
        write_json_own(self.auth_file, {"auth": auth, "user": "neo4j"})

    def recorded_version(self) -> str | None:
        """The Neo4j version that last started this store; None when none was recorded."""
        version = (_read_json(self.path / STORE_FILE) or {}).get("version")
        return version if isinstance(version, str) and version else None

    def record_version(self, version: str) -> None:
        """Remember the version that starts the store; written before the server starts, as
        a newer line upgrades the store for good on its way up (a start that then fails leaves
        the record naming the line that may have upgraded it, never an older one)."""
        write_json_own(self.path / STORE_FILE, {"version": version})

    def holds_store(self) -> bool:
        """True when a server has made its databases here."""
        return (self.path / "data" / "databases").is_dir()

    def serves_this_dir(self, pid: int) -> bool:
        """True when ``pid`` is a live launcher whose own arguments name this data dir."""
        args = _launcher_args(pid) if process_alive(pid) else None
        return bool(args) and args is not None and _same_dir(args[0], self.path)

    def _holder_is_ours(self, pid: int) -> bool:
        """True when the lock's holder is this data dir's launcher (or one on its way out).

        A JVM whose main thread already ended shows an empty command line while its other
        threads shut the store down: that process is leaving, and it held our lock.
        """
        if self.serves_this_dir(pid):
            return True
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
        except (OSError, IndexError):
            return False
        return cmdline == b"" and state in ("Z", "X")

    def server_pid(self) -> int | None:
        """The pid of the server of this data dir, found without trusting the pid file.

        The holder of ``neo4j.lock`` is the server, once its command line shows it is the
        launcher of this very data dir (the check a pid file's pid gets too); another holder
        is refused, never signalled. Before the JVM takes that lock (its first second), a pid
        named by the pid file counts only if that process's command line names this very
        data dir: a copied or garbage pid file names nothing here. A lock or pid file that is
        a link is refused (``files``).
        """
        check_own_file(self.lock_file)
        check_own_file(self.pid_file)
        holder = lock_holder(self.lock_file)
        if holder is not None and holder > 0:
            if self._holder_is_ours(holder):
                return holder
            raise LauncherError(
                f"{self.lock_file} is locked by pid {holder}, which is not a Neo4j serving "
                f"{self.path}; refusing to treat it as the server (nothing was signalled)")
        record = self.read_pid_file() or {}
        pid = record.get("pid")
        if isinstance(pid, int) and pid > 0 and self.serves_this_dir(pid):
            return pid
        if holder == -1:
            raise LauncherError(f"{self.lock_file} is locked by a process that cannot be "
                                "identified; stop it by hand")
        return None

    def details(self, pid: int) -> dict[str, Any]:
        """Port, URI and version of ``pid``: from its command line, the pid file adding the rest."""
        record = self.read_pid_file() or {}
        if record.get("pid") != pid:
            record = {}
        args = _launcher_args(pid) or []
        port: int | None = None
        if len(args) >= 2 and args[1].isdigit():
            port = int(args[1])
        elif isinstance(record.get("port"), int):
            port = record["port"]
        return {
            "port": port,
            "uri": f"bolt://127.0.0.1:{port}" if port is not None else None,
            "version": record.get("version") or _version_of(pid),
            "started_at": record.get("started_at"),
            "auth": record.get("auth"),
            "heap": record.get("heap") if isinstance(record.get("heap"), str) else None,
            "page_cache": (record.get("page_cache")
                           if isinstance(record.get("page_cache"), str) else None),
        }

    def make(self) -> None:
        """Create the data dir and its parents, or raise a ``LauncherError`` naming it."""
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LauncherError(f"cannot use the data dir {self.path}: {exc}") from exc

    def refuse_if_running(self) -> None:
        """Raise when a server already runs on this data dir (its log is left untouched)."""
        pid = self.server_pid()
        if pid is not None:
            raise LauncherError(
                f"Neo4j is already running on {self.path} "
                f"(pid {pid}, uri {self.details(pid)['uri']}); "
                f"stop it first: thalabus-graph neo4j stop --data {self.path}"
            )

    def drop_stale_pid_file(self) -> None:
        """Remove the pid file; only called once no server of this data dir is running."""
        with contextlib.suppress(FileNotFoundError):
            self.pid_file.unlink()

    def still_running(self, pid: int) -> bool:
        """True while ``pid`` lives or still holds the data dir's lock.

        A JVM's main thread turns zombie before its other threads end and close their
        files, so the lock, not the process state, says when the data dir is free.
        """
        return process_alive(pid) or lock_holder(self.lock_file) == pid

    def terminate(self, pid: int, grace: float) -> None:
        """SIGTERM, wait up to ``grace`` s, then SIGKILL the process group."""
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        except PermissionError as exc:
            raise LauncherError(f"not allowed to stop pid {pid} (another user's server?)") from exc
        deadline = time.monotonic() + grace
        while self.still_running(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if self.still_running(pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            end = time.monotonic() + 10.0
            while self.still_running(pid) and time.monotonic() < end:
                time.sleep(0.1)


def wait_ready(proc: subprocess.Popen[bytes], *, uri: str, port: int, deadline: float,
               log_file: Path, version: str, auth: tuple[str, str] | None,
               port_chosen: bool, auth_without_password: bool = False,
               watch: LogWatch | None = None) -> None:
    """Wait for the ready line and a driver connection; raise with the log if that fails.

    ``port_chosen``: the port was picked here (not by the caller), so losing it to another
    process raises ``PortTaken`` and the start tries another one. A refused password fails at
    once: the store keeps the password its first auth start set. With
    ``auth_without_password`` (auth kept on, no password given), a refusal is the answer
    expected from a server that is up. ``watch``: Neo4j's debug log, read while waiting, so
    a failure it logs (out of disk space, a database that cannot start) ends the wait at once
    with its cause rather than at the deadline.
    """
    from neo4j import GraphDatabase
    from neo4j.exceptions import AuthError, DriverError, Neo4jError

    while True:
        code = proc.poll()
        failure = watch.fatal() if watch is not None else None
        if failure is not None:
            raise LauncherError(f"Neo4j {version} failed while starting: {failure}")
        if code is not None:
            tail = _tail(log_file)
            if port_chosen and "Address already in use" in tail:
                raise PortTaken(f"port {port} was taken before Neo4j could bind it")
            raise LauncherError(
                f"Neo4j {version} exited with code {code} while starting; "
                f"end of {log_file}:\n{tail}"
            )
        if _log_says_ready(log_file) and port_answers(port, timeout=0.25):
            try:
                with GraphDatabase.driver(uri, auth=auth, connection_timeout=5.0) as driver:
                    driver.verify_connectivity()
                return
            except AuthError as exc:
                if auth_without_password:
                    return
                raise LauncherError(
                    "Neo4j refused the password for user neo4j: this store keeps the password "
                    "set at its first start with auth; give that one (to change it, run "
                    "ALTER CURRENT USER SET PASSWORD FROM 'old' TO 'new' on the system "
                    f"database): {exc.message or exc}") from exc
            except (DriverError, Neo4jError, OSError):
                pass
        if time.monotonic() > deadline:
            raise LauncherError(
                f"Neo4j {version} did not answer on {uri} in time; "
                f"end of {log_file}:\n{_tail(log_file)}"
            )
        time.sleep(0.2)


def auth_in_log(log_file: Path) -> bool | None:
    """How the launcher said the server runs (its ``THALABUS-NEO4J-AUTH on|off`` line)."""
    try:
        text = log_file.read_bytes()
    except OSError:
        return None
    for line in reversed(text.splitlines()):
        if line.startswith(AUTH_MARKER.encode()):
            return line.split()[-1] == b"on"
    return None


def _log_says_ready(log_file: Path) -> bool:
    """True once the launcher printed its ready line (the default database is up)."""
    try:
        return READY_MARKER.encode() in log_file.read_bytes()
    except OSError:
        return False


def _read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object from a data-dir file of ours; None when absent, {} when unreadable."""
    data = read_own(path)
    if data is None:
        return None
    try:
        value = json.loads(data.decode("utf-8"))
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _same_dir(named: str, path: Path) -> bool:
    """True when the directory a launcher was given is ``path`` (however either is spelt)."""
    try:
        return os.path.samefile(named, path)
    except OSError:
        return named == str(path)
