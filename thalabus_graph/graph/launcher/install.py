"""Installing a Neo4j version into the cache: Maven fetches the jars, javac builds the launcher.

Also the class-data-sharing archive, trained once per JDK by one throw-away start and stop.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import zipfile
from importlib import resources
from pathlib import Path

from thalabus_graph.errors import ConfigurationError, LauncherError
from thalabus_graph.graph.launcher.java import (
    JVM_FLAGS,
    JavaInstallation,
    _quiet_cds_flags,
    _version_flags,
    calendar_line,
    find_java,
    java_major_range,
)
from thalabus_graph.graph.launcher.process import (
    CONF_FILE,
    LAUNCHER_CLASS,
    LOG_FILE,
    READY_MARKER,
    DataDir,
    _file_lock,
    _tail,
    free_port,
)
from thalabus_graph.settings import Settings

LTS_VERSION = "5.26.31"
"""Neo4j 5.26 LTS: runs on Java 17 and 21; the line a machine without a JDK 21+ gets."""
CURRENT_VERSION = "2026.09.0"
"""The newest Neo4j line the launcher is tested on (Java 21+): Lucene 10 with the Vector API,
the ontology-filtered vector indexes. At 200,000 chapters on this line every query shape's
p95 is at most 137 ms right after ingest, against up to 292 ms on 5.26 with Java 17
(docs/benchmarks.md, "200,000 chapters on the CLI's default server")."""


def default_cache_root() -> Path:
    """``$THALABUS_NEO4J_HOME``, else ``~/.cache/thalabus-graph/neo4j``."""
    configured = os.environ.get("THALABUS_NEO4J_HOME")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "thalabus-graph" / "neo4j"


def default_version(data_dir: DataDir | None = None) -> str:
    """The Neo4j version a start runs when none is named.

    ``$THALABUS_NEO4J_VERSION`` or the ``neo4j_version`` setting when given; else the version
    that last ran the data dir's store (a store made by 2026.x cannot be opened by 5.26 again,
    so a start never changes a store's line behind the user's back), 5.26 LTS for a store
    from before that record; else, for a new store, ``CURRENT_VERSION`` when a JDK that runs
    it is found, and ``LTS_VERSION`` when not.
    """
    named = os.environ.get("THALABUS_NEO4J_VERSION") or Settings().neo4j_version
    if named:
        return named
    if data_dir is not None:
        recorded = data_dir.recorded_version()
        if recorded is not None:
            return recorded
        if data_dir.holds_store():
            return LTS_VERSION
    try:
        find_java(CURRENT_VERSION)
    except LauncherError:
        return LTS_VERSION
    return CURRENT_VERSION


_VERSION_RE = re.compile(r"^\d+\.\d+\.\d+(?:[-.][A-Za-z0-9.]+)?$")


def checked_version(version: str) -> str:
    """``version`` when it reads as a Neo4j version of a line the launcher knows the Java
    range of, else a ``ConfigurationError``."""
    if not _VERSION_RE.match(version):
        raise ConfigurationError(f"not a Neo4j version: {version!r}")
    java_major_range(version)
    return version


def refuse_an_older_line(files: DataDir, version: str) -> None:
    """Raise when the store was last run by the calendar line and ``version`` is 5.x: Neo4j 5
    cannot open such a store, and would fail with a store-format error."""
    recorded = files.recorded_version()
    if recorded is not None and calendar_line(recorded) and not calendar_line(version):
        raise LauncherError(
            f"the store in {files.path} was last run by Neo4j {recorded}, which "
            f"{version} cannot open; start it with --neo4j-version {recorded} (or "
            "leave the version unset), or use another --data dir")


def class_data_sharing_default() -> bool:
    """Whether a start maps a class archive when the caller does not say: yes unless
    ``$THALABUS_NEO4J_CDS`` is 0, false, no or off."""
    return os.environ.get("THALABUS_NEO4J_CDS", "1").strip().lower() not in (
        "0", "false", "no", "off")



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



class Installation:
    """One Neo4j version in the cache: its jars, the compiled launcher, the class archives.

    The constructor does no I/O; ``install`` is safe to call from several processes at once.
    """

    def __init__(self, version: str, cache_dir: Path, java_home: Path | None) -> None:
        self.version = version
        self.cache_dir = cache_dir
        self.java_home = java_home

    @property
    def lib_dir(self) -> Path:
        """The resolved Neo4j jars."""
        return self.cache_dir / "lib"

    @property
    def launcher_jar(self) -> Path:
        """The compiled Launcher class, in a jar (class-data sharing refuses directories).

        Named by the hash of its source, so installs of different thalabus-graph versions
        sharing one cache never replace each other's launcher under a running start.
        """
        return self.cache_dir / f"launcher-{self.launcher_hash()[:16]}.jar"

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

    def launcher_hash(self) -> str:
        source = _resource_text("Launcher.java")
        low, _ = java_major_range(self.version)
        return hashlib.sha256(f"{low}\n{source}".encode()).hexdigest()

    def _launcher_current(self) -> bool:
        return self.launcher_jar.is_file()

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
                 "-cp", self.classpath(with_launcher=False), str(src)],
                cwd=work, env=dict(os.environ), timeout=600, what="javac Launcher.java",
            )
            jar = work / "launcher.jar"
            with zipfile.ZipFile(jar, "w", zipfile.ZIP_DEFLATED) as archive:
                archive.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n\r\n")
                for path in sorted(out.rglob("*.class")):
                    archive.write(path, path.relative_to(out).as_posix())
            os.replace(jar, self.launcher_jar)

    def classpath(self, *, with_launcher: bool = True) -> str:
        jars = sorted(str(p) for p in self.lib_dir.glob("*.jar"))
        if with_launcher:
            jars.insert(0, str(self.launcher_jar))
        return os.pathsep.join(jars)

    # -- class-data sharing --

    def _cds_archive(self, java: JavaInstallation) -> Path:
        """Where the archive for this JDK, class path and flag set lives."""
        release = ""
        with contextlib.suppress(OSError):
            release = (java.home / "release").read_text(encoding="utf-8", errors="replace")
        key = "\n".join([str(java.home), release, self.classpath(), self.launcher_hash(),
                         *JVM_FLAGS, *_version_flags(java)])
        digest = hashlib.sha256(key.encode()).hexdigest()[:16]
        return self.cache_dir / "cds" / f"java{java.major}-{digest}.jsa"

    def cds_flags(self, java: JavaInstallation, heap: str, conf_text: str) -> list[str]:
        """JVM flags that map the class archive, training it once first when missing.

        The archive holds the classes a start loads, pre-parsed: later starts spend about
        40% less CPU. A failed training leaves ``<archive>.failed`` and starts go on without.
        """
        archive = self._cds_archive(java)
        failed = archive.with_suffix(".failed")
        if not archive.is_file() and not failed.exists():
            with _file_lock(archive.with_suffix(".lock")):
                if not archive.is_file() and not failed.exists():
                    self._train_cds(java, archive, failed, heap, conf_text)
        if archive.is_file():
            return [f"-XX:SharedArchiveFile={archive}", *_quiet_cds_flags(java)]
        return []

    def _train_cds(self, java: JavaInstallation, archive: Path, failed: Path,
                   heap: str, conf_text: str) -> None:
        """Start and stop a throw-away server with ``-XX:ArchiveClassesAtExit``."""
        partial = archive.with_name(f"{archive.name}.{os.getpid()}.partial")
        with tempfile.TemporaryDirectory(prefix="cds-train-", dir=archive.parent) as tmp:
            home = Path(tmp)
            conf = home / CONF_FILE
            conf.write_text(conf_text, encoding="utf-8")
            log_path = home / LOG_FILE
            argv = [
                str(java.java), f"-Xmx{heap}", *JVM_FLAGS, *_version_flags(java),
                *_quiet_cds_flags(java), f"-XX:ArchiveClassesAtExit={partial}",
                f"-Dthalabus.parentPid={os.getpid()}", "-cp", self.classpath(),
                LAUNCHER_CLASS, str(home), str(free_port()), str(conf),
            ]
            with log_path.open("wb") as log:
                proc = subprocess.Popen(
                    argv, cwd=home, stdin=subprocess.DEVNULL, stdout=log,
                    stderr=subprocess.STDOUT, start_new_session=True,
                )
            try:
                ready = self.await_marker(proc, log_path, time.monotonic() + 600)
                if ready:
                    proc.send_signal(signal.SIGTERM)
                    proc.wait(timeout=300)
                ok = ready and proc.returncode is not None and proc.returncode >= 0
                if ok and partial.is_file() and partial.stat().st_size > 1 << 20:
                    os.replace(partial, archive)
                    self._drop_stale_archives(archive, java)
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
    def _drop_stale_archives(archive: Path, java: JavaInstallation) -> None:
        """Remove archives of other launchers or jar sets unused for a month (~80 MB each).

        Another thalabus-graph install may share this cache and use its own archive right
        now, so only a month-old one counts as dead weight.
        """
        month_ago = time.time() - 30 * 86400
        for stale in archive.parent.glob(f"java{java.major}-*"):
            if stale.stem == archive.stem or ".partial" in stale.name:
                continue
            with contextlib.suppress(OSError):
                if stale.stat().st_mtime < month_ago:
                    stale.unlink()

    @staticmethod
    def await_marker(proc: subprocess.Popen[bytes], log_path: Path, deadline: float) -> bool:
        """Wait for the launcher's ready line; False if the JVM exits or time runs out."""
        while proc.poll() is None and time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                if READY_MARKER.encode() in log_path.read_bytes():
                    return True
            time.sleep(0.2)
        return False

