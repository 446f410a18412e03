"""Finding the migration files: ``V<n>__<what>.cypher`` parsed into ``Migration`` values.

Reads files only (the shipped folder through ``importlib.resources`` by default); what the
database has applied is the business of ``status`` and ``history``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from pathlib import Path

from thalabus_graph.errors import (
    MigrationError,
)
from thalabus_graph.graph import cypher_library
from thalabus_graph.graph.migrations.checksums import checksum
from thalabus_graph.graph.migrations.parsing import (
    PLACEHOLDER_PATTERN,
    Statement,
    split_statements,
    substitute,
)

FILE_PATTERN = re.compile(r"^V(?P<version>\d+)__(?P<description>[A-Za-z0-9_\-]+)\.cypher$")
REQUIRES_PATTERN = re.compile(r"^//\s*requires:\s*Neo4j\s+(\d+)\.(\d+)\s*$", re.MULTILINE)
SERVER_PATTERN = re.compile(r"^(\d+)\.(\d+)")
ServerLine = tuple[int, int]
"""A Neo4j release line as (major, minor): ``(5, 26)``, ``(2026, 9)``."""



@dataclass(frozen=True)
class Migration:
    """One migration file, parsed: statements keep their placeholders."""

    version: int
    description: str
    path: Path
    statements: tuple[Statement, ...]
    checksum: str
    placeholders: tuple[str, ...]
    """Placeholder names the file uses, sorted."""
    requires: ServerLine | None = None
    """The oldest Neo4j line it runs on (``// requires: Neo4j 2026.01``); None: every line."""

    @property
    def name(self) -> str:
        """The file name, e.g. ``V0002__vector_indexes.cypher``."""
        return self.path.name

    def used_values(self, values: Mapping[str, str]) -> dict[str, str]:
        """The subset of ``values`` this migration's placeholders use."""
        return {k: values[k] for k in self.placeholders if k in values}

    def render(self, values: Mapping[str, str]) -> list[str]:
        """The statements with placeholders substituted."""
        return [substitute(s.text, values, where=self.name) for s in self.statements]

    @classmethod
    def from_text(cls, version: int, description: str, path: Path, text: str) -> Migration:
        """Parse a migration from its text (no file access)."""
        try:
            statements = tuple(split_statements(text))
        except MigrationError as exc:
            raise MigrationError(f"{path.name}: {exc}") from exc
        names = sorted({m.group(1) for s in statements
                        for m in PLACEHOLDER_PATTERN.finditer(s.text)})
        found = REQUIRES_PATTERN.findall(text)
        if len(found) > 1:
            raise MigrationError(f"{path.name}: more than one '// requires:' line")
        requires = (int(found[0][0]), int(found[0][1])) if found else None
        return cls(version, description, path, statements, checksum(statements), tuple(names),
                   requires)

    def waits_for(self, server: ServerLine | None) -> bool:
        """True when ``server`` (None: unknown, assumed able) is older than it requires."""
        return self.requires is not None and server is not None and server < self.requires


def server_line(version: str) -> ServerLine | None:
    """``"5.26.31"`` -> (5, 26), ``"2026.09.0"`` -> (2026, 9); None when not a release number."""
    match = SERVER_PATTERN.match(version.strip())
    return (int(match.group(1)), int(match.group(2))) if match else None


def format_line(line: ServerLine) -> str:
    """(2026, 1) -> ``2026.01``; (5, 26) -> ``5.26``."""
    return f"{line[0]}.{line[1]:02d}"


def discover(directory: Path | str | Traversable | None = None) -> list[Migration]:
    """Every ``V<n>__<what>.cypher`` in ``directory`` (default: the shipped migrations), by version.

    The default folder is package data (``thalabus_graph._migrations``), read through
    ``importlib.resources``; ``THALABUS_MIGRATIONS_DIR`` overrides it.
    """
    if directory is None:
        folder: Traversable = cypher_library.migrations_dir()
    elif isinstance(directory, str | Path):
        folder = Path(directory)
    else:
        folder = directory
    if not folder.is_dir():
        raise MigrationError(f"migrations folder {folder} does not exist")
    found: dict[int, Migration] = {}
    for entry in sorted((e for e in folder.iterdir() if e.name.endswith(".cypher")),
                        key=lambda e: e.name):
        path = Path(str(entry))
        match = FILE_PATTERN.match(entry.name)
        if not match:
            raise MigrationError(f"{entry.name}: not a migration file name; expected "
                                 "V<version>__<description>.cypher")
        version = int(match.group("version"))
        if version in found:
            raise MigrationError(f"duplicate migration version {version}: "
                                 f"{found[version].name} and {entry.name}")
        description = match.group("description").replace("_", " ")
        found[version] = Migration.from_text(version, description, path,
                                             entry.read_text(encoding="utf-8"))
    return [found[v] for v in sorted(found)]
