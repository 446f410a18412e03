"""Running the procedure plugin's Java rules on cases the Python rules answer too.

The plugin's sources (``thalabus_graph/resources/procedures``) are compiled with the javac of
the session's Neo4j line against that line's jars (the launcher's cache), once per session;
``run(main_class, cases)`` feeds JSON lines to a ``main`` that answers one JSON line per case.
Each rule has one implementation per language: these checks keep the two the same.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterable, Mapping
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from thalabus_graph.graph.launcher.install import Installation, default_cache_root
from thalabus_graph.graph.launcher.java import find_java


def sources() -> Path:
    """The plugin's Java source root."""
    root = resources.files("thalabus_graph") / "resources" / "procedures" / "src" / "main" / "java"
    return Path(str(root))


@lru_cache(maxsize=4)
def compiled(version: str, out: Path) -> tuple[Path, str]:
    """The plugin's classes compiled into ``out`` against Neo4j ``version``'s jars: (java
    executable, class path)."""
    installation = Installation(version, default_cache_root() / version, None)
    installation.install()
    java = find_java(version)
    files = sorted(str(p) for p in sources().rglob("*.java"))
    jars = os.pathsep.join(sorted(str(p) for p in installation.lib_dir.glob("*.jar")))
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run([str(java.javac), "-nowarn", "-encoding", "UTF-8", "-d", str(out),
                    "-cp", jars, *files], check=True, capture_output=True, text=True)
    return java.java, os.pathsep.join([str(out), jars])


def run(java: Path, classpath: str, main_class: str,
        cases: Iterable[Mapping[str, Any]]) -> list[Any]:
    """Each case's answer from ``main_class`` (JSON lines in, JSON lines out, in order)."""
    lines = "".join(json.dumps(case) + "\n" for case in cases)
    done = subprocess.run([str(java), "-cp", classpath, main_class], input=lines,
                          check=True, capture_output=True, text=True)
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
