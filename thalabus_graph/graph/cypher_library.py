"""Loads the named Cypher statements in ``cypher/*.cypher``: Python passes parameters, never text.

A statement file holds one statement; ``load("search_chapters_vector")`` returns its text.
The folder is the repository's top-level ``cypher/`` (``THALABUS_CYPHER_DIR`` overrides it).
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from thalabus_graph.errors import ConfigurationError

REPO_ROOT = Path(__file__).resolve().parents[2]


def cypher_dir() -> Path:
    """The folder the named statements are read from."""
    override = os.environ.get("THALABUS_CYPHER_DIR")
    return Path(override) if override else REPO_ROOT / "cypher"


def migrations_dir() -> Path:
    """The folder of versioned migrations (``THALABUS_MIGRATIONS_DIR`` overrides it)."""
    override = os.environ.get("THALABUS_MIGRATIONS_DIR")
    return Path(override) if override else REPO_ROOT / "migrations"


@cache
def load(name: str) -> str:
    """The text of ``cypher/<name>.cypher`` without comment lines; cached after first read."""
    path = cypher_dir() / f"{name}.cypher"
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigurationError(f"no Cypher statement named {name!r} (looked for {path})") from exc
    lines = [line for line in raw.splitlines() if not line.lstrip().startswith("//")]
    text = "\n".join(lines).strip().rstrip(";").strip()
    if not text:
        raise ConfigurationError(f"Cypher statement {name!r} is empty ({path})")
    return text


def available() -> list[str]:
    """Names of every statement in the library, sorted."""
    return sorted(p.stem for p in cypher_dir().glob("*.cypher"))
