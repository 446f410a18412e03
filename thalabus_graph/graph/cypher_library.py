"""Loads the named Cypher statements in ``cypher/*.cypher``: Python passes parameters, never text.

A statement file holds one statement; ``load("search_vector")`` returns its text. A line
``{{> name}}`` in a statement is replaced by the part ``_name.cypher`` (a piece several statements
share, such as the restriction every search checks; parts include nothing themselves and are
not statements of their own). Lines between ``{{#name}}`` and ``{{/name}}`` are a section, kept
only when the statement runs with parameter ``$name`` given (not null): a statement mentions a
label only when the call needs it, so Neo4j never plans (nor replans, as that label's counts
change) a search without parent datasets around the ``Dataset`` nodes. The files ship
inside the package as ``thalabus_graph._cypher`` (the repository's top-level ``cypher/``, mapped
at build time), read with ``importlib.resources`` so a wheel works anywhere;
``THALABUS_CYPHER_DIR`` overrides the folder. Migrations are found the same way.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from thalabus_graph.errors import ConfigurationError

CYPHER_PACKAGE = "thalabus_graph._cypher"
MIGRATIONS_PACKAGE = "thalabus_graph._migrations"
PART_PREFIX = "_"
INCLUDE = re.compile(r"^\s*\{\{>\s*([a-z][a-z0-9_]*)\s*\}\}\s*$")
"""A line including a part: ``{{> search_restriction}}`` reads ``_search_restriction.cypher``."""
SLOT = re.compile(r"^\s*\{\{=\s*([a-z][a-z0-9_]*)\s*\}\}\s*$", re.MULTILINE)
"""A line a composed statement fills with another statement's text (``fill``)."""
VERSION = re.compile(r"^(CYPHER\s[^\n]*)\n")
"""A statement's leading ``CYPHER`` version line, which must lead the statement it goes in."""
SECTION = re.compile(r"^\s*\{\{([#/])\s*([a-z][a-z0-9_]*)\s*\}\}\s*$")
"""A line opening (``{{#datasetids}}``) or closing (``{{/datasetids}}``) a section."""
PARAMETER = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
"""A parameter reference in a statement (``$name``; group 1 the name)."""


def inert_dollars(literal: str) -> str:
    """A quoted string literal of user text (quotes included) with every ``$`` written as
    the escape ``\\u0024``: the same string to Cypher, and nothing ``PARAMETER`` (the
    statements' parameter rewriting, ``database.prepared``) would take for a parameter."""
    out, i = [], 0
    while i < len(literal):
        pair = literal[i:i + 2]
        if pair == "\\$":  # an unknown escape: Neo4j keeps both characters
            out.append("\\\\\\u0024")
            i += 2
        elif literal[i] == "\\":
            out.append(pair)
            i += 2
        else:
            out.append("\\u0024" if literal[i] == "$" else literal[i])
            i += 1
    return "".join(out)


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


def load(name: str, params: Mapping[str, Any] | None = None) -> str:
    """The text of ``cypher/<name>.cypher`` without comment lines, its ``{{> part}}`` lines
    replaced by the parts and, for a call with ``params``, the sections of the parameters
    that are missing or null left out (without ``params`` every section is kept: the
    statement as a whole, to read or explain); cached after first read."""
    if params is None:
        return _text(name, frozenset())
    return _text(name, frozenset(s for s in sections(name) if params.get(s) is None))


def fill(name: str, params: Mapping[str, Any] | None = None, /, **slots: str) -> str:
    """The text of statement ``name`` (its sections kept as ``load`` keeps them for
    ``params``; every one without) with each ``{{= slot}}`` line replaced by the text given
    for it: a statement composed of others, such as a search carrying the query's vocabulary
    read. A ``CYPHER`` version line of a slot's text leads the whole statement.

    Raises:
        ConfigurationError: a slot of the statement is not given, or one given is not in it.
    """
    text = load(name, params)
    named = set(SLOT.findall(text))
    if named != set(slots):
        raise ConfigurationError(f"Cypher statement {name!r} has slots {sorted(named)}, "
                                 f"given {sorted(slots)}")
    versions: set[str] = set()

    def body(match: re.Match[str]) -> str:
        inner = slots[match.group(1)]
        version = VERSION.match(inner)
        if version is None:
            return inner
        versions.add(version.group(1))
        return inner[version.end():]

    filled = SLOT.sub(body, text)
    return "\n".join([*sorted(versions), filled])


@cache
def sections(name: str) -> frozenset[str]:
    """The parameters statement ``name`` has sections for."""
    return frozenset(m.group(2) for m in map(SECTION.match, _expanded(name))
                     if m is not None)


@cache
def _text(name: str, dropped: frozenset[str]) -> str:
    """The statement with the sections of ``dropped`` left out, the others' markers removed."""
    lines: list[str] = []
    inside: str | None = None
    for line in _expanded(name):
        match = SECTION.match(line)
        if match is None:
            if inside is None or inside not in dropped:
                lines.append(line)
            continue
        opens, section = match.group(1) == "#", match.group(2)
        if opens == (inside is not None) or (not opens and section != inside):
            raise ConfigurationError(
                f"Cypher statement {name!r}: section {section!r} "
                f"{'opened inside ' + repr(inside) if opens else 'closed without opening'}; "
                "sections do not nest")
        inside = section if opens else None
    if inside is not None:
        raise ConfigurationError(f"Cypher statement {name!r}: section {inside!r} is not closed")
    text = "\n".join(lines).strip().rstrip(";").strip()
    if not text:
        raise ConfigurationError(f"Cypher statement {name!r} is empty")
    return text


@cache
def _expanded(name: str) -> tuple[str, ...]:
    """The statement's lines without comments, its ``{{> part}}`` lines replaced by the
    parts."""
    lines: list[str] = []
    for line in _lines(name):
        match = INCLUDE.match(line)
        if match is None:
            lines.append(line)
            continue
        part = _lines(PART_PREFIX + match.group(1))
        if any(INCLUDE.match(x) for x in part):
            raise ConfigurationError(f"Cypher part {match.group(1)!r} includes another part; "
                                     "parts are included one level deep")
        lines += part
    return tuple(lines)


def cache_clear() -> None:
    """Forget every statement read, for a folder that changed (``THALABUS_CYPHER_DIR``)."""
    for cached in (sections, _text, _expanded):
        cached.cache_clear()


def _lines(name: str) -> list[str]:
    """The lines of ``cypher/<name>.cypher`` that are not comments."""
    path = cypher_dir() / f"{name}.cypher"
    try:
        raw = path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError) as exc:
        what = "part" if name.startswith(PART_PREFIX) else "statement"
        raise ConfigurationError(
            f"no Cypher {what} named {name.removeprefix(PART_PREFIX)!r} (looked for {path})"
        ) from exc
    return [line for line in raw.splitlines() if not line.lstrip().startswith("//")]


def parts() -> list[str]:
    """Names of every part (``_<name>.cypher``), sorted."""
    return sorted(name.removeprefix(PART_PREFIX) for name in _names()
                  if name.startswith(PART_PREFIX))


def includes(name: str) -> list[str]:
    """The parts statement ``name`` includes, in order."""
    return [m.group(1) for m in map(INCLUDE.match, _lines(name)) if m is not None]


def _names() -> list[str]:
    folder = cypher_dir()
    if not folder.is_dir():
        return []
    return sorted(p.name.removesuffix(".cypher") for p in folder.iterdir()
                  if p.name.endswith(".cypher") and p.is_file())


def available() -> list[str]:
    """Names of every statement in the library (parts excluded), sorted."""
    return [name for name in _names() if not name.startswith(PART_PREFIX)]
