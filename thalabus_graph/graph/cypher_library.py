"""Loads the named Cypher statements in ``cypher/*.cypher``: Python passes parameters, never text.

A statement file holds one statement; ``load("search_vector")`` returns its text. The files ship
inside the package as ``thalabus_graph._cypher`` (the repository's top-level ``cypher/``, mapped
at build time), read with ``importlib.resources`` so a wheel works anywhere;
``THALABUS_CYPHER_DIR`` overrides the folder. Migrations are found the same way.
"""

from __future__ import annotations

import os
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from thalabus_graph.errors import ConfigurationError

CYPHER_PACKAGE = "thalabus_graph._cypher"
MIGRATIONS_PACKAGE = "thalabus_graph._migrations"


def _package_folder(package: str) -> Traversable:
    try:
        return resources.files(package)
    except ModuleNotFoundError as exc:
        raise ConfigurationError(
            f"the package data {package} is missing: reinstall thalabus-graph "
            "(`pip install -e .` in a checkout)") from exc


def cypher_dir() -> Traversable:
    """The folder the named statements are read from (``THALABUS_CYPHER_DIR`` overrides it)."""
    override = os.environ.get("THALABUS_CYPHER_DIR")
    return Path(override) if override else _package_folder(CYPHER_PACKAGE)


def migrations_dir() -> Traversable:
    """The folder of versioned migrations (``THALABUS_MIGRATIONS_DIR`` overrides it)."""
    override = os.environ.get("THALABUS_MIGRATIONS_DIR")
    return Path(override) if override else _package_folder(MIGRATIONS_PACKAGE)


@cache
def load(name: str) -> str:
    """The text of ``cypher/<name>.cypher`` without comment lines; cached after first read."""
    path = cypher_dir() / f"{name}.cypher"
    try:
        raw = path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise ConfigurationError(f"no Cypher statement named {name!r} (looked for {path})") from exc
    lines = [line for line in raw.splitlines() if not line.lstrip().startswith("//")]
    text = "\n".join(lines).strip().rstrip(";").strip()
    if not text:
        raise ConfigurationError(f"Cypher statement {name!r} is empty ({path})")
    return text


def available() -> list[str]:
    """Names of every statement in the library, sorted."""
    folder = cypher_dir()
    if not folder.is_dir():
        return []
    return sorted(p.name.removesuffix(".cypher") for p in folder.iterdir()
                  if p.name.endswith(".cypher") and p.is_file())
