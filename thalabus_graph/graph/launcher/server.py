"""``LocalNeo4j``: one Neo4j Community server on loopback, owned through its data directory."""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import subprocess
import time
from pathlib import Path
from types import TracebackType

from thalabus_graph.errors import ConfigurationError, LauncherError, PortTaken
from thalabus_graph.graph.launcher.config import conf_text, transaction_memory_for
from thalabus_graph.graph.launcher.files import open_own, own_file_lock, write_json_own, write_own
from thalabus_graph.graph.launcher.health import LogWatch, refuse_when_disk_is_short
from thalabus_graph.graph.launcher.install import Installation, default_cache_root, default_version
from thalabus_graph.graph.launcher.java import (
    JVM_FLAGS,
    JavaInstallation,
    _version_flags,
    calendar_line,
    find_java,
    java_major_range,
)
from thalabus_graph.graph.launcher.memory import (
    HEAP_ENV,
    PAGE_CACHE_ENV,
    MemoryPlan,
    fill_sizes,
    setting,
)
from thalabus_graph.graph.launcher.process import (
    LAUNCHER_CLASS,
    MIN_PASSWORD_LENGTH,
    START_LOCK_FILE,
    DataDir,
    auth_in_log,
    free_port,
    port_answers,
    wait_ready,
)
from thalabus_graph.graph.launcher.status import ServerStatus, server_status

_VERSION_RE = re.compile(r"^\d+\.\d+\.\d+(?:[-.][A-Za-z0-9.]+)?$")


class LocalNeo4j:
    """One Neo4j Community server on loopback, owned through its data directory.

    The constructor does no I/O. ``start`` installs when needed, so a first start downloads
    the jars (~125 MB for 5.26, ~155 MB for 2026.x) into the cache; later starts reuse them.

    Example:
        >>> server = LocalNeo4j(data_dir=Path("/tmp/n4j"))          # doctest: +SKIP
        >>> uri = server.start()                                    # doctest: +SKIP
        >>> server.stop()                                           # doctest: +SKIP
    """

    def __init__(
        self,
        version: str | None = None,
        data_dir: Path | str | None = None,
        port: int | None = None,
        java_home: Path | str | None = None,
        cache_dir: Path | str | None = None,
        *,
        heap: str | None = None,
        page_cache: str | None = None,
        transaction_memory: str | None = None,
        exit_with_parent: bool = False,
        class_data_sharing: bool | None = None,
        password: str | None = None,
        auth_off: bool = False,
    ) -> None:
        """Describe a server.

        Args:
            version: Neo4j version on Maven Central (default: ``install.default_version``,
                the version named by ``$THALABUS_NEO4J_VERSION``, else the one that last ran
                the data dir's store, else 2026.x with a JDK 21+ and 5.26 LTS without).
            data_dir: where the store, logs and pid file live (default
                ``$THALABUS_NEO4J_DATA`` or ``./.thalabus/neo4j-data``).
            port: Bolt port on 127.0.0.1; None picks a free one at start.
            java_home: a JDK to use instead of the automatic choice.
            cache_dir: cache root for jars and the compiled launcher; the version is a
                sub-directory (default ``$THALABUS_NEO4J_HOME`` or ~/.cache/thalabus-graph/neo4j).
            heap: JVM ``-Xmx``, page_cache: Neo4j's page cache (``512m``, ``2g``); None:
                ``$THALABUS_NEO4J_HEAP`` / ``$THALABUS_NEO4J_PAGE_CACHE``, else sized at
                start from the machine and the store (``memory.recommend``).
            transaction_memory: the memory all transactions together may use; None: a
                quarter of the heap, at least 512m (``config.transaction_memory_for``).
            exit_with_parent: the server shuts itself down when this Python process ends
                (for tests: a crashed run leaves no JVM behind). The CLI leaves it off.
            class_data_sharing: map a JVM class archive for faster starts (trained by one
                extra start and stop the first time); default on unless
                ``$THALABUS_NEO4J_CDS`` is 0.
            password: start with auth enabled and this password for the user ``neo4j``
                (at least 8 characters; see ``generate_password``); None: auth as the data
                dir's record (``neo4j.auth.json``) says, off for a new store.
            auth_off: state that the store runs without auth, for a store whose auth record is
                missing or damaged (such a start is refused otherwise). A store with a password
                user keeps auth on all the same (``auth_kept``).
        """
        self.data_dir = Path(data_dir if data_dir is not None else default_data_dir()).absolute()
        self.files = DataDir(self.data_dir)
        self.version = version or default_version(self.files)
        if not _VERSION_RE.match(self.version):
            raise ConfigurationError(f"not a Neo4j version: {self.version!r}")
        java_major_range(self.version)
        if port is not None and not 0 < port < 65536:
            raise ConfigurationError(f"port must be in 1..65535, not {port}")
        self.port = port
        self.java_home = Path(java_home) if java_home is not None else None
        root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_root()
        self.cache_dir = root.absolute() / self.version
        self.installation = Installation(self.version, self.cache_dir, self.java_home)
        self.heap = heap if heap is not None else setting(None, HEAP_ENV)
        self.page_cache = (page_cache if page_cache is not None
                           else setting(None, PAGE_CACHE_ENV))
        self.memory_plan: MemoryPlan | None = None
        """What the sizing rule gave at the last start (None: both sizes were set)."""
        self.transaction_memory = transaction_memory
        self.exit_with_parent = exit_with_parent
        if class_data_sharing is None:
            class_data_sharing = os.environ.get("THALABUS_NEO4J_CDS", "1").strip().lower() not in (
                "0", "false", "no", "off")
        self.class_data_sharing = class_data_sharing
        if password is not None and (len(password) < MIN_PASSWORD_LENGTH
                                     or "\n" in password or "\r" in password):
            raise ConfigurationError(
                f"the Neo4j password must have at least {MIN_PASSWORD_LENGTH} characters "
                "and no line break")
        self._password = password
        self.auth_off = auth_off
        self.auth_kept = False
        """True after a start without a password on a store whose auth stays on."""
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def auth(self) -> tuple[str, str] | None:
        """Driver credentials for this server (user ``neo4j``), or None when auth is off."""
        return None if self._password is None else ("neo4j", self._password)

    # -- paths -----------------------------------------------------------------------------

    @property
    def pid_file(self) -> Path:
        """JSON file naming the running server's pid, port, URI and version."""
        return self.files.pid_file

    @property
    def log_file(self) -> Path:
        """The JVM's stdout and stderr."""
        return self.files.log_file

    @property
    def lock_file(self) -> Path:
        """The file the running launcher holds an fcntl lock on."""
        return self.files.lock_file

    @property
    def lib_dir(self) -> Path:
        """The resolved Neo4j jars."""
        return self.installation.lib_dir

    @property
    def launcher_jar(self) -> Path:
        """The compiled Launcher class, in a jar (class-data sharing refuses directories)."""
        return self.installation.launcher_jar

    # -- install ---------------------------------------------------------------------------

    def installed(self) -> bool:
        """True when jars and an up-to-date compiled launcher are in the cache."""
        return self.installation.installed()

    def install(self) -> Path:
        """Resolve the Neo4j jars with Maven and compile the launcher; a no-op when cached.

        Returns the version's cache directory. Safe to call from several processes at once.
        """
        return self.installation.install()

    def server_pid(self) -> int | None:
        """The pid of the server of this data dir (the holder of its lock); see ``DataDir``."""
        return self.files.server_pid()

    # -- lifecycle -------------------------------------------------------------------------

    def status(self) -> ServerStatus:
        """Whether a server runs on this data dir (its lock holder), and where it listens."""
        return server_status(self.files)

    def start(self, timeout: float = 180.0) -> str:
        """Start the server and return its Bolt URI once the driver can connect.

        Installs first when needed (30-75 s the first time), and the first start per JDK
        trains the class archive with one extra start and stop. Refuses a
        data dir whose server already runs. On failure the JVM is stopped and the error
        carries the end of its log.

        Args:
            timeout: seconds to wait for the server to answer, install and training aside.
        """
        self._refuse_if_running()
        self._refuse_an_older_line()
        self.files.check_files()  # before anything is read or written: no link, no foreign file
        auth_mode = self._auth_mode()
        refuse_when_disk_is_short(self.data_dir)
        self.install()
        java = find_java(self.version, self.java_home)
        conf = self.files.conf_file
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LauncherError(f"cannot use the data dir {self.data_dir}: {exc}") from exc
        self.files.check_files()  # before anything is written: no file here may be a link
        self.auth_kept = False
        if auth_mode == "stdin":  # the password is set before the ready line: record it first
            self.files.record_auth(True)
        elif auth_mode == "off" and not self.files.holds_store():
            self.files.record_auth(False)  # a new store has no user with a password
        self.files.record_version(self.version)
        self._size_memory()
        write_own(conf, self._conf_text().encode("utf-8"))
        cds_flags = (self.installation.cds_flags(java, self._heap(), self._conf_text())
                     if self.class_data_sharing else [])
        deadline = time.monotonic() + timeout
        attempts = 1 if self.port is not None else 3
        with own_file_lock(self.data_dir / START_LOCK_FILE):
            self._refuse_if_running()  # again, now that no other start can interleave
            for attempt in range(1, attempts + 1):
                port = self.port if self.port is not None else free_port()
                if port_answers(port):
                    raise LauncherError(f"port {port} on 127.0.0.1 is already in use")
                try:
                    return self._launch(java, port, conf, deadline, cds_flags, auth_mode)
                except PortTaken:
                    if attempt == attempts:
                        raise
        raise AssertionError("unreachable")

    def _auth_mode(self) -> str:
        """How the launcher JVM starts auth (its ``thalabus.auth``): ``stdin`` (the password
        given), ``on`` (the record says auth), ``off`` (the record says none, or a new store),
        ``probe`` (auth stated off where the record cannot tell: the store's users decide).

        A store whose record is missing or damaged is refused unless auth is stated: reading
        such a store as "auth off" would open an auth store to anyone on this machine.
        """
        if self._password is not None:
            return "stdin"
        try:
            recorded = self.files.recorded_auth()
        except LauncherError as exc:
            if self.auth_off:
                return "probe"
            raise LauncherError(f"{exc}; {self._state_auth()}") from exc
        if recorded is not None:
            return "on" if recorded else "off"
        if not self.files.holds_store():
            return "off"
        if self.auth_off:
            return "probe"
        raise LauncherError(
            f"the store in {self.data_dir} has no auth record ({self.files.auth_file}), so "
            f"whether it needs a password is unknown; {self._state_auth()}")

    def _state_auth(self) -> str:
        """What to do when the auth record cannot say whether the store has auth."""
        return ("start it with --auth-password-stdin and the store's password for user neo4j "
                "(Python: password=...), or with --no-auth if it never had one (Python: "
                "auth_off=True; a store with a password user keeps auth on all the same)")

    def _refuse_an_older_line(self) -> None:
        """Raise when the store was last run by the calendar line and this start is 5.x: Neo4j
        5 cannot open such a store, and would fail with a store-format error."""
        recorded = self.files.recorded_version()
        if recorded is not None and calendar_line(recorded) and not calendar_line(self.version):
            raise LauncherError(
                f"the store in {self.data_dir} was last run by Neo4j {recorded}, which "
                f"{self.version} cannot open; start it with --neo4j-version {recorded} (or "
                "leave the version unset), or use another --data dir")

    def _refuse_if_running(self) -> None:
        """Raise when a server already runs on this data dir (its log is left untouched)."""
        pid = self.server_pid()
        if pid is not None:
            raise LauncherError(
                f"Neo4j is already running on {self.data_dir} "
                f"(pid {pid}, uri {self.files.details(pid)['uri']}); "
                f"stop it first: thalabus-graph neo4j stop --data {self.data_dir}"
            )

    def _launch(self, java: JavaInstallation, port: int, conf: Path, deadline: float,
                cds_flags: list[str], auth_mode: str) -> str:
        """Start one JVM on ``port`` and wait for it; on failure kill it and drop the pid file."""
        argv = [str(java.java), f"-Xmx{self._heap()}", *JVM_FLAGS, *_version_flags(java),
                *cds_flags]
        if self.exit_with_parent:
            argv.append(f"-Dthalabus.parentPid={os.getpid()}")
        argv.append(f"-Dthalabus.auth={auth_mode}")
        argv += [
            "-cp", self.installation.classpath(), LAUNCHER_CLASS, str(self.data_dir), str(port),
            str(conf),
        ]
        uri = f"bolt://127.0.0.1:{port}"
        watch = LogWatch(self.data_dir)
        with os.fdopen(open_own(self.log_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                       "wb") as log:
            proc = subprocess.Popen(
                argv, cwd=self.data_dir, stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL if self._password is None else subprocess.PIPE,
                start_new_session=True, close_fds=True,
            )
        if proc.stdin is not None:  # the password travels on stdin, never in argv
            with contextlib.suppress(BrokenPipeError):
                proc.stdin.write(f"{self._password}\n".encode())
            with contextlib.suppress(BrokenPipeError):
                proc.stdin.close()
        self._proc = proc
        record = {
            "pid": proc.pid, "port": port, "uri": uri, "version": self.version,
            "java_home": str(java.home), "data_dir": str(self.data_dir),
            "log_file": str(self.log_file), "started_at": time.time(),
            "auth": auth_mode != "off",  # until the server says (a probe starts with auth on)
            "heap": self.heap, "page_cache": self.page_cache,
            "class_data_archive": next(
                (f.split("=", 1)[1] for f in cds_flags if f.startswith("-XX:SharedArchiveFile=")),
                None,
            ),
        }
        write_json_own(self.pid_file, record)
        try:
            wait_ready(proc, uri=uri, port=port, deadline=deadline, log_file=self.log_file,
                       version=self.version, auth=self.auth, port_chosen=self.port is None,
                       auth_without_password=self._password is None, watch=watch)
            auth = auth_in_log(self.log_file)
            if auth is None:
                raise LauncherError(f"Neo4j started but its log {self.log_file} does not say "
                                    "whether auth is on; stop it and start again")
            self.auth_kept = self._password is None and auth
            self.files.record_auth(auth)
            if auth != record["auth"]:
                write_json_own(self.pid_file, {**record, "auth": auth})
        except BaseException:
            self._kill(proc.pid, grace=10.0)
            with contextlib.suppress(FileNotFoundError):
                self.pid_file.unlink()
            raise
        return uri

    def _conf_text(self) -> str:
        """The ``neo4j.conf`` this server starts with."""
        if self.page_cache is None:
            self._size_memory()
        return conf_text(page_cache=str(self.page_cache),
                         transaction_memory=(self.transaction_memory
                                             or transaction_memory_for(self._heap())))

    def _heap(self) -> str:
        return self.heap or self._size_memory().heap_size

    def _size_memory(self) -> MemoryPlan:
        """Fill the sizes not set from the machine and the store (``memory.recommend``)."""
        filled = self.heap is None or self.page_cache is None
        self.heap, self.page_cache, plan = fill_sizes(self.data_dir, self.heap, self.page_cache)
        if filled:
            self.memory_plan = plan
        return plan

    def stop(self, timeout: float = 60.0) -> bool:
        """Stop the server with SIGTERM (SIGKILL after ``timeout`` s); False if none ran."""
        pid = self.server_pid()
        if pid is None:
            self.files.drop_stale_pid_file()
            return False
        self._kill(pid, grace=timeout)
        self.files.drop_stale_pid_file()
        return True

    def _kill(self, pid: int, grace: float) -> None:
        """SIGTERM, wait up to ``grace`` s, then SIGKILL the process group; reap our child."""
        self.files.terminate(pid, grace)
        if self._proc is not None and self._proc.pid == pid:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=1.0)
            self._proc = None

    def __enter__(self) -> LocalNeo4j:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def generate_password() -> str:
    """A random password for ``start --auth`` (24 URL-safe characters)."""
    return secrets.token_urlsafe(18)


def default_data_dir() -> Path:
    """``$THALABUS_NEO4J_DATA``, else ``./.thalabus/neo4j-data`` under the current directory."""
    configured = os.environ.get("THALABUS_NEO4J_DATA")
    if configured:
        return Path(configured).expanduser()
    return Path.cwd() / ".thalabus" / "neo4j-data"

