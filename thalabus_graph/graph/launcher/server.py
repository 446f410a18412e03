"""``LocalNeo4j``: one Neo4j Community server on loopback, owned through its data directory."""

from __future__ import annotations

import contextlib
import os
import secrets
import subprocess
import time
from pathlib import Path
from types import TracebackType

from thalabus_graph.errors import LauncherError, PortTaken
from thalabus_graph.graph.launcher.auth import (
    auth_mode,
    auth_said_by_log,
    check_password,
    record_before_start,
)
from thalabus_graph.graph.launcher.config import conf_text, transaction_memory_for
from thalabus_graph.graph.launcher.files import own_file_lock, write_json_own, write_own
from thalabus_graph.graph.launcher.health import LogWatch, refuse_when_disk_is_short
from thalabus_graph.graph.launcher.install import (
    Installation,
    checked_version,
    class_data_sharing_default,
    default_cache_root,
    default_version,
    refuse_an_older_line,
)
from thalabus_graph.graph.launcher.java import JavaInstallation, find_java
from thalabus_graph.graph.launcher.launch import jvm_argv, pid_record, spawn
from thalabus_graph.graph.launcher.memory import (
    HEAP_ENV,
    PAGE_CACHE_ENV,
    MemoryPlan,
    fill_sizes,
    setting,
)
from thalabus_graph.graph.launcher.plugin import plugin_dir_for_start
from thalabus_graph.graph.launcher.process import (
    START_LOCK_FILE,
    DataDir,
    checked_port,
    free_port,
    port_answers,
    wait_ready,
)
from thalabus_graph.graph.launcher.status import ServerStatus, server_status


class LocalNeo4j:
    """One Neo4j Community server on loopback, owned through its data directory.

    The constructor does no I/O. ``start`` installs when needed, so a first start downloads
    the jars (~125 MB for 5.26, ~155 MB for 2026.x) into the cache; later starts reuse them.

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
        procedures: install the procedure plugin (``plugin``; a failed build only warns); on
            by default, as the engine's ``procedures`` setting decides whether it is used.

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
        procedures: bool | None = None,
    ) -> None:
        """Describe a server; the arguments are documented on the class."""
        self.data_dir = Path(data_dir if data_dir is not None else default_data_dir()).absolute()
        self.files = DataDir(self.data_dir)
        self.version = checked_version(version or default_version(self.files))
        self.port = checked_port(port)
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
        self.class_data_sharing = (class_data_sharing_default() if class_data_sharing is None
                                   else class_data_sharing)
        check_password(password)
        self._password = password
        self.auth_off = auth_off
        self.procedures = True if procedures is None else procedures
        self.plugin_dir: Path | None = None  # the last start's plugin folder, if it had one
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
        self.files.refuse_if_running()
        refuse_an_older_line(self.files, self.version)
        self.files.check_files()  # before anything is read or written: no link, no foreign file
        mode = auth_mode(self.files, password_given=self._password is not None,
                         auth_off=self.auth_off)
        refuse_when_disk_is_short(self.data_dir)
        self.install()
        java = find_java(self.version, self.java_home)
        conf = self.files.conf_file
        self.files.make()
        self.files.check_files()  # before anything is written: no file here may be a link
        self.auth_kept = False
        record_before_start(self.files, mode)
        self.files.record_version(self.version)
        self.plugin_dir = plugin_dir_for_start(self.installation, java) if self.procedures else None
        heap, conf_body = self._size_memory()
        write_own(conf, conf_body.encode("utf-8"))
        cds_flags = (self.installation.cds_flags(java, heap, conf_body)
                     if self.class_data_sharing else [])
        deadline = time.monotonic() + timeout
        attempts = 1 if self.port is not None else 3
        with own_file_lock(self.data_dir / START_LOCK_FILE):
            self.files.refuse_if_running()  # again, now that no other start can interleave
            for attempt in range(1, attempts + 1):
                port = self.port if self.port is not None else free_port()
                if port_answers(port):
                    raise LauncherError(f"port {port} on 127.0.0.1 is already in use")
                try:
                    return self._launch(java, heap, port, conf, deadline, cds_flags, mode)
                except PortTaken:
                    if attempt == attempts:
                        raise
        raise AssertionError("unreachable")

    def _launch(self, java: JavaInstallation, heap: str, port: int, conf: Path, deadline: float,
                cds_flags: list[str], auth_mode: str) -> str:
        """Start one JVM on ``port`` and wait for it; on failure kill it and drop the pid file."""
        argv = jvm_argv(java, heap, cds_flags, exit_with_parent=self.exit_with_parent,
                        auth_mode=auth_mode, classpath=self.installation.classpath(),
                        data_dir=self.data_dir, port=port, conf=conf)
        uri = f"bolt://127.0.0.1:{port}"
        watch = LogWatch(self.data_dir)
        proc = self._proc = spawn(argv, self.data_dir, self.log_file, self._password)
        record = pid_record(proc, java, port=port, uri=uri, version=self.version,
                            data_dir=self.data_dir, log_file=self.log_file, auth_mode=auth_mode,
                            heap=self.heap, page_cache=self.page_cache, cds_flags=cds_flags)
        write_json_own(self.pid_file, record)
        try:
            wait_ready(proc, uri=uri, port=port, deadline=deadline, log_file=self.log_file,
                       version=self.version, auth=self.auth, port_chosen=self.port is None,
                       auth_without_password=self._password is None, watch=watch)
            auth = auth_said_by_log(self.log_file)
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

    def _size_memory(self) -> tuple[str, str]:
        """Fill the sizes not set from the machine and the store (``memory.recommend``): the
        heap and the ``neo4j.conf`` text this start runs with."""
        filled = self.heap is None or self.page_cache is None
        self.heap, self.page_cache, plan = fill_sizes(self.data_dir, self.heap, self.page_cache)
        if filled:
            self.memory_plan = plan
        memory = self.transaction_memory or transaction_memory_for(self.heap)
        return self.heap, conf_text(page_cache=self.page_cache, transaction_memory=memory,
                                    plugins=self.plugin_dir)

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

