"""Neo4j's own ``cypher-shell``, resolved from Maven Central once into the launcher's cache,
for the tests that call the procedures as a Cypher user does (docs/procedures.md).

Maven Central publishes ``org.neo4j:cypher-shell`` for the 5.26 line only; a 5.26 shell speaks
Bolt to both lines' servers. Maven is already the launcher's tool for the Neo4j jars.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from thalabus_graph.graph.launcher import default_version
from thalabus_graph.graph.launcher.install import default_cache_root
from thalabus_graph.graph.launcher.java import find_java

VERSION = "5.26.30"
"""The newest ``org.neo4j:cypher-shell`` on Maven Central."""
MAIN = "org.neo4j.shell.Main"
POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>thalabus.tests</groupId><artifactId>cypher-shell</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.neo4j</groupId><artifactId>cypher-shell</artifactId>
      <version>@VERSION@</version></dependency>
  </dependencies>
</project>
"""


def shell_lib() -> Path:
    """The folder of cypher-shell's jars, resolved by Maven when missing; a failed
    resolution is a RuntimeError with Maven's output."""
    home = default_cache_root() / "cypher-shell" / VERSION
    lib = home / "lib"
    if (lib / ".complete").is_file():
        return lib
    mvn = shutil.which("mvn")
    if mvn is None:
        raise RuntimeError("Maven (mvn) is not on PATH; the launcher needs it too")
    home.mkdir(parents=True, exist_ok=True)
    staging = home / f"lib.{os.getpid()}"
    (home / "pom.xml").write_text(POM.replace("@VERSION@", VERSION), encoding="utf-8")
    done = subprocess.run([mvn, "-q", "-B", "dependency:copy-dependencies",
                           "-DincludeScope=runtime", f"-DoutputDirectory={staging}"],
                          cwd=home, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0 or not any(staging.glob("cypher-shell-*.jar")):
        shutil.rmtree(staging, ignore_errors=True)
        raise RuntimeError(f"Maven could not resolve cypher-shell {VERSION}:\n"
                           f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
    (staging / ".complete").write_text(VERSION + "\n", encoding="utf-8")
    try:
        staging.rename(lib)
    except OSError:  # another process renamed its copy first
        shutil.rmtree(staging, ignore_errors=True)
    return lib


def cypher_shell(uri: str, statement: str, *, params: str | None = None,
                 database: str = "neo4j") -> list[str]:
    """Run one statement with cypher-shell (``--format plain``, auth off as the launcher's
    test servers run) and return its output lines after the header; ``params``: a
    ``--param`` map such as ``{v: [0.1, 0.2]}``. A failing statement is a RuntimeError
    carrying the shell's error."""
    java = find_java(default_version())
    argv = [str(java.java), "-cp", f"{shell_lib()}/*", MAIN, "-a", uri, "-d", database,
            "--format", "plain", "--non-interactive"]
    if params is not None:
        argv += ["--param", params]
    done = subprocess.run([*argv, statement], capture_output=True, text=True, timeout=300,
                          check=False)
    if done.returncode != 0:
        raise RuntimeError(f"cypher-shell exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout.splitlines()[1:]


def cypher_literal(value: object) -> str:
    """``value`` (maps, lists, strings, numbers, booleans, None) written as a Cypher literal,
    for ``--param``: map keys as identifiers, strings double-quoted with JSON's escapes, which
    Cypher reads alike."""
    if isinstance(value, dict):
        pairs = (f"{key}: {cypher_literal(item)}" for key, item in value.items())
        return "{" + ", ".join(pairs) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(cypher_literal(item) for item in value) + "]"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(str(value))
