"""Finding a JDK that can run a Neo4j version, and the JVM flags Neo4j needs."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from thalabus_graph.errors import ConfigurationError, LauncherError

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



CALENDAR_FIRST_MAJOR = 2025
"""The first year of Neo4j's calendar-versioned line (after 5.26)."""


def calendar_line(version: str) -> bool:
    """Whether ``version`` is of the calendar-versioned line (2025.01 and later), whose stores
    the 5.x line cannot open."""
    head = version.split(".", 1)[0]
    return head.isdigit() and int(head) >= CALENDAR_FIRST_MAJOR


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
    if major < CALENDAR_FIRST_MAJOR:
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



VECTOR_API_MIN_JAVA = 21
"""Oldest JDK whose incubating Vector API Lucene (9.11 in Neo4j 5.26, 10.x in 2026.x) uses."""


def _version_flags(java: JavaInstallation) -> list[str]:
    """Flags only some JDKs know.

    On JDK 21+, ``jdk.incubator.vector`` is added so that Lucene computes vector similarities
    with SIMD instructions (Neo4j's ``neo4j.conf`` ships this line commented out and its
    vector-index manual recommends it); without the module Lucene falls back to scalar loops,
    and a vector index search or an HNSW build costs more CPU (docs/architecture.md, the
    launcher). JDK 23+ also warns about sun.misc.Unsafe unless told to allow it.
    """
    flags: list[str] = []
    if java.major >= VECTOR_API_MIN_JAVA:
        flags.append("--add-modules=jdk.incubator.vector")
    if java.major >= 23:
        flags.append("--sun-misc-unsafe-memory-access=allow")
    return flags


def _quiet_cds_flags(java: JavaInstallation) -> list[str]:
    """Silence class-data-sharing chatter; a mismatched archive is then skipped quietly."""
    flags = ["-Xlog:cds*=off"]
    if java.major >= 24:
        flags.append("-Xlog:aot*=off")
    return flags
