"""A local Neo4j server without Docker: Maven fetches the jars, a small Java class runs them.

``LocalNeo4j`` installs (once per version, cached), starts a detached JVM with Bolt on loopback,
waits until the driver connects, and stops it with SIGTERM so the store shuts down cleanly.

Layout::

    <cache root>/<version>/          ~/.cache/thalabus-graph/neo4j, or $THALABUS_NEO4J_HOME
        pom.xml  lib/*.jar  launcher.jar  launcher.sha256  install.lock
        cds/java<N>-<key>.jsa        class-data-sharing archive: ~40% less CPU per start
    <data dir>/                      chosen by the caller; one server per data dir
        neo4j.pid.json  neo4j.log  neo4j.conf  neo4j.lock  data/  logs/

Which process serves a data dir is never taken from ``neo4j.pid.json``: the launcher JVM holds
an fcntl lock on ``<data dir>/neo4j.lock`` for its whole life, and ``fcntl(F_GETLK)`` names the
holder. The pid file only carries details (port, version) and is trusted for a pid only when
that process's own command line names this data dir (a server still starting).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
import zipfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from types import TracebackType
from typing import Any

from thalabus_graph.errors import ConfigurationError, LauncherError, PortTaken
from thalabus_graph.settings import Settings

DEFAULT_VERSION = "5.26.31"
"""Neo4j 5.26 LTS: runs on Java 17 and 21."""
PID_FILE = "neo4j.pid.json"
LOCK_FILE = "neo4j.lock"
"""Held (fcntl) by the launcher JVM while it runs: the data dir's proof of ownership."""
START_LOCK_FILE = "neo4j.start.lock"
"""flock held by a Python ``start`` so two starts on one data dir never overlap."""
MIN_PASSWORD_LENGTH = 8
"""Neo4j's default ``dbms.security.auth_minimum_password_length``."""
LOG_FILE = "neo4j.log"
CONF_FILE = "neo4j.conf"
READY_MARKER = "THALABUS-NEO4J-READY"
LAUNCHER_CLASS = "Launcher"
JVM_FLAGS = (
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
)
"""From Neo4j's own ``neo4j.conf``; without the java.nio open, vector indexes fail or stall."""
JVM_SEARCH_ROOT = Path("/usr/lib/jvm")
_STACK_FRAME = re.compile(r"^\s+(at |\.\.\. \d+ more)")
_VERSION_RE = re.compile(r"^\d+\.\d+\.\d+(?:[-.][A-Za-z0-9.]+)?$")


@dataclass(frozen=True)
class JavaInstallation:
    """A JDK: its home directory and Java feature (major) version."""

    home: Path
    major: int

    @property
    def java(self) -> Path:
        """The ``java`` executable."""
        return self.home / "bin" / "java"

    @property
    def javac(self) -> Path:
        """The ``javac`` executable (absent in a bare JRE)."""
        return self.home / "bin" / "javac"


@dataclass(frozen=True)
class ServerStatus:
    """Whether a data dir's server runs (its lock holder) and where it listens."""

    data_dir: Path
    running: bool
    pid: int | None = None
    port: int | None = None
    uri: str | None = None
    version: str | None = None
    log_file: Path | None = None
    started_at: float | None = None
    answering: bool = False
    """True when the Bolt port accepts a TCP connection right now."""
    auth: bool | None = None
    """True when the server was started with auth (user neo4j); None when unknown."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready view (paths as strings)."""
        out = asdict(self)
        out["data_dir"] = str(self.data_dir)
        out["log_file"] = str(self.log_file) if self.log_file else None
        return out


# --------------------------------------------------------------------------- java selection


def java_major_range(version: str) -> tuple[int, int]:
    """Smallest Java major a Neo4j version needs, and the newest it is known to run on.

    5.x runs on 17 and 21; calendar versions (2025.01+) need 21 and support 25 from 2025.10.
    """
    try:
        major = int(version.split(".", 1)[0])
    except ValueError as exc:
        raise ConfigurationError(f"not a Neo4j version: {version!r}") from exc
    if major < 5:
        raise ConfigurationError(f"Neo4j {version} is too old; use 5.26.x or a 2025+ release")
    if major < 2025:
        return 17, 21
    return 21, 25


def _read_release_major(home: Path) -> int | None:
    """The Java major version from a JDK's ``release`` file, without starting a JVM."""
    try:
        text = (home / "release").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    match = re.search(r'^JAVA_VERSION="([^"]+)"', text, re.MULTILINE)
    return _parse_major(match.group(1)) if match else None


def _parse_major(version: str) -> int | None:
    """``17.0.15`` -> 17, ``1.8.0_392`` -> 8, ``25`` -> 25."""
    match = re.match(r"(\d+)(?:\.(\d+))?", version)
    if not match:
        return None
    first = int(match.group(1))
    if first == 1 and match.group(2):
        return int(match.group(2))
    return first


def java_installation(home: Path) -> JavaInstallation | None:
    """Describe the JDK at ``home``, or None when it has no ``bin/java``."""
    home = home.resolve()
    if not (home / "bin" / "java").is_file():
        return None
    major = _read_release_major(home)
    if major is None:
        try:
            proc = subprocess.run(
                [str(home / "bin" / "java"), "-version"],
                capture_output=True, text=True, timeout=30, check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        match = re.search(r'version "([^"]+)"', proc.stderr)
        major = _parse_major(match.group(1)) if match else None
    return JavaInstallation(home, major) if major is not None else None


def find_java(version: str, java_home: Path | str | None = None) -> JavaInstallation:
    """Pick a JDK (java and javac) that can run Neo4j ``version``.

    Order: the ``java_home`` argument (must fit), ``$JAVA_HOME`` if new enough, a JDK under
    /usr/lib/jvm (the oldest that is new enough and not newer than known to work), ``java``
    on PATH. Raises LauncherError saying what to install when none fits.
    """
    low, high = java_major_range(version)
    hint = (
        f"Neo4j {version} needs a JDK {low}+ (java and javac): install one, e.g. "
        f"`apt-get install openjdk-{low}-jdk-headless`, or set JAVA_HOME"
    )
    if java_home is not None:
        found = java_installation(Path(java_home))
        if found is None or not found.javac.is_file():
            raise LauncherError(f"{java_home} is not a JDK (no bin/java or bin/javac). {hint}")
        if found.major < low:
            raise LauncherError(f"{java_home} is Java {found.major}. {hint}")
        return found
    env_home = os.environ.get("JAVA_HOME")
    if env_home:
        found = java_installation(Path(env_home))
        if found is not None and found.major >= low and found.javac.is_file():
            return found
    candidates: dict[Path, JavaInstallation] = {}
    if JVM_SEARCH_ROOT.is_dir():
        for entry in sorted(JVM_SEARCH_ROOT.iterdir()):
            found = java_installation(entry)
            if found is not None and found.javac.is_file() and low <= found.major:
                candidates[found.home] = found
    fitting = sorted(candidates.values(), key=lambda j: (j.major > high, j.major, str(j.home)))
    if fitting:
        return fitting[0]
    on_path = shutil.which("java")
    if on_path:
        found = java_installation(Path(on_path).resolve().parent.parent)
        if found is not None and found.major >= low and found.javac.is_file():
            return found
    raise LauncherError(f"no suitable JDK found. {hint}")


# --------------------------------------------------------------------------- helpers


def default_cache_root() -> Path:
    """``$THALABUS_NEO4J_HOME``, else ``~/.cache/thalabus-graph/neo4j``."""
    configured = os.environ.get("THALABUS_NEO4J_HOME")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "thalabus-graph" / "neo4j"


def default_version() -> str:
    """``$THALABUS_NEO4J_VERSION``, else the pinned 5.26 LTS patch."""
    return os.environ.get("THALABUS_NEO4J_VERSION") or Settings().neo4j_version or DEFAULT_VERSION


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


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
        fd = os.open(path, os.O_RDONLY)
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


def _version_flags(java: JavaInstallation) -> list[str]:
    """Flags only some JDKs know: JDK 23+ warns about sun.misc.Unsafe unless told to allow it."""
    return ["--sun-misc-unsafe-memory-access=allow"] if java.major >= 23 else []


def _quiet_cds_flags(java: JavaInstallation) -> list[str]:
    """Silence class-data-sharing chatter; a mismatched archive is then skipped quietly."""
    flags = ["-Xlog:cds*=off"]
    if java.major >= 24:
        flags.append("-Xlog:aot*=off")
    return flags


def _tail(path: Path, lines: int = 25) -> str:
    """The last lines of a log without Java stack frames, or a note that it is missing."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return f"(no log at {path})"
    kept = [line for line in text.splitlines() if not _STACK_FRAME.match(line)]
    return "\n".join(kept[-lines:])


def _write_json_atomic(path: Path, value: dict[str, Any]) -> None:
    """Write JSON via a temp file and rename, so readers never see half a file."""
    fd, tmp = tempfile.mkstemp(prefix=path.name, dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(value, handle, indent=2)
    os.replace(tmp, path)


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


def _run_tool(argv: list[str], *, cwd: Path, env: dict[str, str], what: str,
              timeout: float) -> None:
    """Run a build tool; on failure raise LauncherError with the end of its output."""
    try:
        proc = subprocess.run(
            argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise LauncherError(f"{what} did not finish within {timeout:.0f} s") from exc
    except OSError as exc:
        raise LauncherError(f"{what} could not run: {exc}") from exc
    if proc.returncode != 0:
        raise LauncherError(
            f"{what} failed (exit {proc.returncode}):\n{_useful_lines(proc.stdout + proc.stderr)}"
        )


_MAVEN_BOILERPLATE = ("-e switch", "-X switch", "Re-run Maven", "For more information",
                      "[ERROR] [Help ")


def _useful_lines(output: str, limit: int = 20) -> str:
    """Maven's own error lines without its generic advice, else the end of the output."""
    plain = re.sub(r"\x1b\[[0-9;]*m", "", output)
    lines = [line.rstrip() for line in plain.strip().splitlines()]
    errors = [
        line for line in lines
        if line.startswith("[ERROR]") and line[7:].strip()
        and not any(noise in line for noise in _MAVEN_BOILERPLATE)
    ]
    return "\n".join((errors or lines)[-limit:])


def _resource_text(name: str) -> str:
    """A file shipped in ``thalabus_graph/resources/launcher``."""
    return (resources.files("thalabus_graph") / "resources" / "launcher" / name).read_text(
        encoding="utf-8"
    )


# --------------------------------------------------------------------------- the server


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
        heap: str = "1g",
        page_cache: str = "256m",
        transaction_memory: str = "512m",
        exit_with_parent: bool = False,
        class_data_sharing: bool | None = None,
        password: str | None = None,
    ) -> None:
        """Describe a server.

        Args:
            version: Neo4j version on Maven Central (default ``$THALABUS_NEO4J_VERSION`` or
                5.26.31).
            data_dir: where the store, logs and pid file live (default
                ``$THALABUS_NEO4J_DATA`` or ``./.thalabus/neo4j-data``).
            port: Bolt port on 127.0.0.1; None picks a free one at start.
            java_home: a JDK to use instead of the automatic choice.
            cache_dir: cache root for jars and the compiled launcher; the version is a
                sub-directory (default ``$THALABUS_NEO4J_HOME`` or ~/.cache/thalabus-graph/neo4j).
            heap: JVM ``-Xmx``; page_cache and transaction_memory: Neo4j memory limits.
            exit_with_parent: the server shuts itself down when this Python process ends
                (for tests: a crashed run leaves no JVM behind). The CLI leaves it off.
            class_data_sharing: map a JVM class archive for faster starts (trained by one
                extra start and stop the first time); default on unless
                ``$THALABUS_NEO4J_CDS`` is 0.
            password: start with auth enabled and this password for the user ``neo4j``
                (at least 8 characters; see ``generate_password``); None: auth off.
        """
        self.version = version or default_version()
        if not _VERSION_RE.match(self.version):
            raise ConfigurationError(f"not a Neo4j version: {self.version!r}")
        java_major_range(self.version)
        if port is not None and not 0 < port < 65536:
            raise ConfigurationError(f"port must be in 1..65535, not {port}")
        self.data_dir = Path(data_dir if data_dir is not None else default_data_dir()).absolute()
        self.port = port
        self.java_home = Path(java_home) if java_home is not None else None
        root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_root()
        self.cache_dir = root.absolute() / self.version
        self.heap = heap
        self.page_cache = page_cache
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
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def auth(self) -> tuple[str, str] | None:
        """Driver credentials for this server (user ``neo4j``), or None when auth is off."""
        return None if self._password is None else ("neo4j", self._password)

    # -- paths -----------------------------------------------------------------------------

    @property
    def pid_file(self) -> Path:
        """JSON file naming the running server's pid, port, URI and version."""
        return self.data_dir / PID_FILE

    @property
    def log_file(self) -> Path:
        """The JVM's stdout and stderr."""
        return self.data_dir / LOG_FILE

    @property
    def lib_dir(self) -> Path:
        """The resolved Neo4j jars."""
        return self.cache_dir / "lib"

    @property
    def launcher_jar(self) -> Path:
        """The compiled Launcher class, in a jar (class-data sharing refuses directories)."""
        return self.cache_dir / "launcher.jar"

    # -- install ---------------------------------------------------------------------------

    def installed(self) -> bool:
        """True when jars and an up-to-date compiled launcher are in the cache."""
        return (self.lib_dir / ".complete").is_file() and self._launcher_current()

    def install(self) -> Path:
        """Resolve the Neo4j jars with Maven and compile the launcher; a no-op when cached.

        Returns the version's cache directory. Safe to call from several processes at once.
        """
        if self.installed():
            return self.cache_dir
        java = find_java(self.version, self.java_home)
        try:
            with _file_lock(self.cache_dir / "install.lock"):
                if not (self.lib_dir / ".complete").is_file():
                    self._resolve_jars(java)
                if not self._launcher_current():
                    self._compile_launcher(java)
        except OSError as exc:
            raise LauncherError(
                f"cannot write the Neo4j cache {self.cache_dir}: {exc}; "
                "point THALABUS_NEO4J_HOME at a writable directory"
            ) from exc
        return self.cache_dir

    def _resolve_jars(self, java: JavaInstallation) -> None:
        mvn = shutil.which("mvn")
        if mvn is None:
            raise LauncherError(
                "Maven (mvn) is not on PATH; it resolves the Neo4j jars: "
                "install it, e.g. `apt-get install maven`"
            )
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        pom = _resource_text("pom.xml").replace("@NEO4J_VERSION@", self.version)
        (self.cache_dir / "pom.xml").write_text(pom, encoding="utf-8")
        staging = self.cache_dir / "lib.partial"
        shutil.rmtree(staging, ignore_errors=True)
        env = dict(os.environ, JAVA_HOME=str(java.home))
        try:
            _run_tool(
                [mvn, "-q", "-B", "-Dstyle.color=never", "dependency:copy-dependencies",
                 "-DincludeScope=runtime", f"-DoutputDirectory={staging}"],
                cwd=self.cache_dir, env=env, timeout=1800,
                what=f"Maven resolving org.neo4j:neo4j:{self.version}",
            )
        except LauncherError:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        if not any(staging.glob("neo4j-bolt-*.jar")):
            shutil.rmtree(staging, ignore_errors=True)
            raise LauncherError(f"Maven finished but no Neo4j jars landed in {staging}")
        (staging / ".complete").write_text(self.version + "\n", encoding="utf-8")
        shutil.rmtree(self.lib_dir, ignore_errors=True)
        staging.rename(self.lib_dir)

    def _launcher_hash(self) -> str:
        source = _resource_text("Launcher.java")
        low, _ = java_major_range(self.version)
        return hashlib.sha256(f"{low}\n{source}".encode()).hexdigest()

    def _launcher_current(self) -> bool:
        stamp = self.cache_dir / "launcher.sha256"
        try:
            recorded = stamp.read_text(encoding="utf-8").strip()
        except OSError:
            return False
        return self.launcher_jar.is_file() and recorded == self._launcher_hash()

    def _compile_launcher(self, java: JavaInstallation) -> None:
        if not java.javac.is_file():
            raise LauncherError(
                f"{java.home} has no javac: install a full JDK, e.g. "
                "`apt-get install openjdk-17-jdk-headless`"
            )
        low, _ = java_major_range(self.version)
        with tempfile.TemporaryDirectory(prefix="launcher-", dir=self.cache_dir) as tmp:
            work = Path(tmp)
            src = work / f"{LAUNCHER_CLASS}.java"
            src.write_text(_resource_text("Launcher.java"), encoding="utf-8")
            out = work / "classes"
            _run_tool(
                [str(java.javac), "--release", str(low), "-nowarn", "-d", str(out),
                 "-cp", self._classpath(with_launcher=False), str(src)],
                cwd=work, env=dict(os.environ), timeout=600, what="javac Launcher.java",
            )
            jar = work / "launcher.jar"
            with zipfile.ZipFile(jar, "w", zipfile.ZIP_DEFLATED) as archive:
                archive.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n\r\n")
                for path in sorted(out.rglob("*.class")):
                    archive.write(path, path.relative_to(out).as_posix())
            os.replace(jar, self.launcher_jar)
        (self.cache_dir / "launcher.sha256").write_text(self._launcher_hash() + "\n")

    def _classpath(self, *, with_launcher: bool = True) -> str:
        jars = sorted(str(p) for p in self.lib_dir.glob("*.jar"))
        if with_launcher:
            jars.insert(0, str(self.launcher_jar))
        return os.pathsep.join(jars)

    # -- class-data sharing ----------------------------------------------------------------

    def _cds_archive(self, java: JavaInstallation) -> Path:
        """Where the archive for this JDK, class path and flag set lives."""
        release = ""
        with contextlib.suppress(OSError):
            release = (java.home / "release").read_text(encoding="utf-8", errors="replace")
        key = "\n".join([str(java.home), release, self._classpath(), self._launcher_hash(),
                         *JVM_FLAGS, *_version_flags(java)])
        digest = hashlib.sha256(key.encode()).hexdigest()[:16]
        return self.cache_dir / "cds" / f"java{java.major}-{digest}.jsa"

    def _cds_flags(self, java: JavaInstallation) -> list[str]:
        """JVM flags that map the class archive, training it once first when missing.

        The archive holds the classes a start loads, pre-parsed: later starts spend about
        40% less CPU. A failed training leaves ``<archive>.failed`` and starts go on without.
        """
        if not self.class_data_sharing:
            return []
        archive = self._cds_archive(java)
        failed = archive.with_suffix(".failed")
        if not archive.is_file() and not failed.exists():
            with _file_lock(archive.with_suffix(".lock")):
                if not archive.is_file() and not failed.exists():
                    self._train_cds(java, archive, failed)
        if archive.is_file():
            return [f"-XX:SharedArchiveFile={archive}", *_quiet_cds_flags(java)]
        return []

    def _train_cds(self, java: JavaInstallation, archive: Path, failed: Path) -> None:
        """Start and stop a throw-away server with ``-XX:ArchiveClassesAtExit``."""
        partial = archive.with_name(f"{archive.name}.{os.getpid()}.partial")
        with tempfile.TemporaryDirectory(prefix="cds-train-", dir=archive.parent) as tmp:
            home = Path(tmp)
            conf = home / CONF_FILE
            conf.write_text(self._conf_text(), encoding="utf-8")
            log_path = home / LOG_FILE
            argv = [
                str(java.java), f"-Xmx{self.heap}", *JVM_FLAGS, *_version_flags(java),
                *_quiet_cds_flags(java), f"-XX:ArchiveClassesAtExit={partial}",
                f"-Dthalabus.parentPid={os.getpid()}", "-cp", self._classpath(),
                LAUNCHER_CLASS, str(home), str(free_port()), str(conf),
            ]
            with log_path.open("wb") as log:
                proc = subprocess.Popen(
                    argv, cwd=home, stdin=subprocess.DEVNULL, stdout=log,
                    stderr=subprocess.STDOUT, start_new_session=True,
                )
            try:
                ready = self._await_marker(proc, log_path, time.monotonic() + 600)
                if ready:
                    proc.send_signal(signal.SIGTERM)
                    proc.wait(timeout=300)
                ok = ready and proc.returncode is not None and proc.returncode >= 0
                if ok and partial.is_file() and partial.stat().st_size > 1 << 20:
                    os.replace(partial, archive)
                    # Archives of an older launcher or jar set are dead weight (~80 MB each).
                    for stale in archive.parent.glob(f"java{java.major}-*"):
                        if stale.stem != archive.stem and ".partial" not in stale.name:
                            stale.unlink(missing_ok=True)
                else:
                    failed.write_text(f"training exited with {proc.returncode}\n"
                                      f"{_tail(log_path)}\n", encoding="utf-8")
            except subprocess.TimeoutExpired:
                failed.write_text("training did not stop in time\n", encoding="utf-8")
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
                with contextlib.suppress(FileNotFoundError):
                    partial.unlink()

    @staticmethod
    def _await_marker(proc: subprocess.Popen[bytes], log_path: Path, deadline: float) -> bool:
        """Wait for the launcher's ready line; False if the JVM exits or time runs out."""
        while proc.poll() is None and time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                if READY_MARKER.encode() in log_path.read_bytes():
                    return True
            time.sleep(0.2)
        return False

    # -- pid file --------------------------------------------------------------------------

    def _read_pid_file(self) -> dict[str, Any] | None:
        try:
            value = json.loads(self.pid_file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return {}
        return value if isinstance(value, dict) else {}

    @property
    def lock_file(self) -> Path:
        """The file the running launcher holds an fcntl lock on."""
        return self.data_dir / LOCK_FILE

    def _serves_this_dir(self, pid: int) -> bool:
        """True when ``pid`` is a live launcher whose own arguments name this data dir."""
        args = _launcher_args(pid) if process_alive(pid) else None
        return bool(args) and args is not None and args[0] == str(self.data_dir)

    def server_pid(self) -> int | None:
        """The pid of the server of this data dir, found without trusting the pid file.

        The holder of ``neo4j.lock`` is the server. Before the JVM takes that lock (its
        first second), a pid named by the pid file counts only if that process's command
        line names this very data dir: a copied or garbage pid file names nothing here.
        """
        holder = lock_holder(self.lock_file)
        if holder is not None and holder > 0:
            return holder
        record = self._read_pid_file() or {}
        pid = record.get("pid")
        if isinstance(pid, int) and pid > 0 and self._serves_this_dir(pid):
            return pid
        if holder == -1:
            raise LauncherError(f"{self.lock_file} is locked by a process that cannot be "
                                "identified; stop it by hand")
        return None

    def _details(self, pid: int) -> dict[str, Any]:
        """Port, URI and version of ``pid``: from its command line, the pid file adding the rest."""
        record = self._read_pid_file() or {}
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
        }

    def _drop_stale_pid_file(self) -> None:
        """Remove the pid file; only called once no server of this data dir is running."""
        with contextlib.suppress(FileNotFoundError):
            self.pid_file.unlink()

    # -- lifecycle -------------------------------------------------------------------------

    def status(self) -> ServerStatus:
        """Whether a server runs on this data dir (its lock holder), and where it listens."""
        pid = self.server_pid()
        if pid is None:
            self._drop_stale_pid_file()
            return ServerStatus(data_dir=self.data_dir, running=False, log_file=self.log_file)
        details = self._details(pid)
        port = details["port"]
        return ServerStatus(
            data_dir=self.data_dir,
            running=True,
            pid=pid,
            port=port,
            uri=details["uri"],
            version=details["version"],
            log_file=self.log_file,
            started_at=details["started_at"],
            answering=isinstance(port, int) and port_answers(port),
            auth=details["auth"],
        )

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
        self.install()
        java = find_java(self.version, self.java_home)
        conf = self.data_dir / CONF_FILE
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            conf.write_text(self._conf_text(), encoding="utf-8")
        except OSError as exc:
            raise LauncherError(f"cannot use the data dir {self.data_dir}: {exc}") from exc
        cds_flags = self._cds_flags(java)
        deadline = time.monotonic() + timeout
        attempts = 1 if self.port is not None else 3
        with _file_lock(self.data_dir / START_LOCK_FILE):
            self._refuse_if_running()  # again, now that no other start can interleave
            for attempt in range(1, attempts + 1):
                port = self.port if self.port is not None else free_port()
                if port_answers(port):
                    raise LauncherError(f"port {port} on 127.0.0.1 is already in use")
                try:
                    return self._launch(java, port, conf, deadline, cds_flags)
                except PortTaken:
                    if attempt == attempts:
                        raise
        raise AssertionError("unreachable")

    def _refuse_if_running(self) -> None:
        """Raise when a server already runs on this data dir (its log is left untouched)."""
        pid = self.server_pid()
        if pid is not None:
            raise LauncherError(
                f"Neo4j is already running on {self.data_dir} "
                f"(pid {pid}, uri {self._details(pid)['uri']}); "
                f"stop it first: thalabus-graph neo4j stop --data {self.data_dir}"
            )

    def _launch(self, java: JavaInstallation, port: int, conf: Path, deadline: float,
                cds_flags: list[str]) -> str:
        """Start one JVM on ``port`` and wait for it; on failure kill it and drop the pid file."""
        argv = [str(java.java), f"-Xmx{self.heap}", *JVM_FLAGS, *_version_flags(java),
                *cds_flags]
        if self.exit_with_parent:
            argv.append(f"-Dthalabus.parentPid={os.getpid()}")
        if self._password is not None:
            argv.append("-Dthalabus.auth=stdin")
        argv += [
            "-cp", self._classpath(), LAUNCHER_CLASS, str(self.data_dir), str(port), str(conf),
        ]
        uri = f"bolt://127.0.0.1:{port}"
        with self.log_file.open("wb") as log:
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
        _write_json_atomic(self.pid_file, {
            "pid": proc.pid, "port": port, "uri": uri, "version": self.version,
            "java_home": str(java.home), "data_dir": str(self.data_dir),
            "log_file": str(self.log_file), "started_at": time.time(),
            "auth": self._password is not None,
            "class_data_archive": next(
                (f.split("=", 1)[1] for f in cds_flags if f.startswith("-XX:SharedArchiveFile=")),
                None,
            ),
        })
        try:
            self._wait_ready(proc, uri, port, deadline)
        except BaseException:
            self._kill(proc.pid, grace=10.0)
            with contextlib.suppress(FileNotFoundError):
                self.pid_file.unlink()
            raise
        return uri

    def _conf_text(self) -> str:
        """Raw settings, by name, so moved Java constants never matter."""
        settings = {
            "server.memory.pagecache.size": self.page_cache,
            "dbms.memory.transaction.total.max": self.transaction_memory,
            # Bolt otherwise waits 5 s twice on shutdown for idle worker threads.
            "internal.server.bolt.thread_pool_shutdown_wait_time": "1s",
            "internal.server.bolt.connection_shutdown_wait_time": "1s",
        }
        return "".join(f"{key}={value}\n" for key, value in settings.items())

    def _wait_ready(self, proc: subprocess.Popen[bytes], uri: str, port: int,
                    deadline: float) -> None:
        """Wait for the ready line and a driver connection; raise with the log if that fails."""
        from neo4j import GraphDatabase
        from neo4j.exceptions import DriverError, Neo4jError

        while True:
            code = proc.poll()
            if code is not None:
                tail = _tail(self.log_file)
                if self.port is None and "Address already in use" in tail:
                    raise PortTaken(f"port {port} was taken before Neo4j could bind it")
                raise LauncherError(
                    f"Neo4j {self.version} exited with code {code} while starting; "
                    f"end of {self.log_file}:\n{tail}"
                )
            if self._log_says_ready() and port_answers(port, timeout=0.25):
                try:
                    with GraphDatabase.driver(uri, auth=self.auth,
                                              connection_timeout=5.0) as driver:
                        driver.verify_connectivity()
                    return
                except (DriverError, Neo4jError, OSError):
                    pass
            if time.monotonic() > deadline:
                raise LauncherError(
                    f"Neo4j {self.version} did not answer on {uri} in time; "
                    f"end of {self.log_file}:\n{_tail(self.log_file)}"
                )
            time.sleep(0.2)

    def _log_says_ready(self) -> bool:
        """True once the launcher printed its ready line (the default database is up)."""
        try:
            return READY_MARKER.encode() in self.log_file.read_bytes()
        except OSError:
            return False

    def stop(self, timeout: float = 60.0) -> bool:
        """Stop the server with SIGTERM (SIGKILL after ``timeout`` s); False if none ran."""
        pid = self.server_pid()
        if pid is None:
            self._drop_stale_pid_file()
            return False
        self._kill(pid, grace=timeout)
        self._drop_stale_pid_file()
        return True

    def _kill(self, pid: int, grace: float) -> None:
        """SIGTERM, wait up to ``grace`` s, then SIGKILL the process group; reap our child."""
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        except PermissionError as exc:
            raise LauncherError(f"not allowed to stop pid {pid} (another user's server?)") from exc
        deadline = time.monotonic() + grace
        while self._still_running(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if self._still_running(pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            end = time.monotonic() + 10.0
            while self._still_running(pid) and time.monotonic() < end:
                time.sleep(0.1)
        if self._proc is not None and self._proc.pid == pid:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=1.0)
            self._proc = None

    def _still_running(self, pid: int) -> bool:
        """True while ``pid`` lives or still holds the data dir's lock.

        A JVM's main thread turns zombie before its other threads end and close their
        files, so the lock, not the process state, says when the data dir is free.
        """
        return process_alive(pid) or lock_holder(self.lock_file) == pid

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


__all__ = [
    "DEFAULT_VERSION",
    "JVM_FLAGS",
    "JavaInstallation",
    "LocalNeo4j",
    "ServerStatus",
    "default_cache_root",
    "default_data_dir",
    "default_version",
    "find_java",
    "free_port",
    "generate_password",
    "java_major_range",
    "lock_holder",
    "port_answers",
    "process_alive",
]
