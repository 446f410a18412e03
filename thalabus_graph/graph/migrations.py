"""Versioned Cypher migrations: ``migrations/V0001__what.cypher`` applied once each, in order.

Four pieces with one job each: discovery of the files (``discover``), a pure ``analyze`` that
compares them with the recorded history, ``HistoryDao`` holding every history and lock
statement (named files ``cypher/migrations_*.cypher``), and ``MigrationRunner`` executing them.

File format and rules:

* Name ``V<version>__<description>.cypher``; versions are integers, sorted numerically, and a
  version may appear only once. Other ``.cypher`` names in the folder are an error.
* Statements end with ``;`` at the end of a line (outside strings, identifiers and comments);
  the last statement needs no ``;``. ``//`` and ``/* */`` comments are dropped.
* Placeholders ``{{EMBEDDING_DIMENSIONS}}``, ``{{VECTOR_SIMILARITY}}``,
  ``{{VECTOR_QUANTIZATION}}``, ``{{VECTOR_HNSW_M}}``, ``{{VECTOR_HNSW_EF_CONSTRUCTION}}`` and
  ``{{FULLTEXT_ANALYZER}}`` are filled from validated ``Settings`` values, never user text.
* The checksum is the CRC32 of the normalised statements *before* substitution (line endings
  unified, trailing spaces and blank lines dropped, comments removed), so it changes when the
  file's Cypher changes and not when only a comment does. The placeholder values a migration
  used are recorded beside it (``placeholders``, JSON text).
* Dimension-change rule: when an applied migration's recorded placeholder values differ from
  the current settings (say ``EMBEDDING_DIMENSIONS`` 384 then 768), ``migrate()`` refuses with
  ``SettingsMismatch`` (a ``MigrationError`` and a ``ConfigurationError``): an existing index
  cannot change its options in place. Restore the setting, or rebuild the schema with
  ``MigrationRunner.clean(schema=True)`` (CLI ``migrations clean --schema --yes``), migrate,
  and re-ingest the embeddings at the new size.
* A line ``// requires: Neo4j 2026.01`` makes a migration need that server line or newer
  (what only that line can build, such as vector indexes with in-index filter properties). On
  an older server it is *waiting*: not applied, not recorded, and no obstacle to later
  versions; ``migrate()`` applies it once the server is upgraded, even though newer versions
  were applied meanwhile. Such a migration may only add what the engine can do without (the
  engine checks for what it built), never something a later version relies on.
* An applied migration whose file changed raises ``ChecksumMismatch`` naming the file; an
  applied version with no file, or a new file older than the newest applied version, raises
  ``MigrationError``. A failed statement raises ``MigrationError`` naming the file and the
  statement; that version is not recorded, earlier ones stay recorded. Each statement runs in
  its own auto-commit transaction (schema and data writes cannot share one), so statements
  before the failing one keep their effect: write them idempotent (``IF NOT EXISTS``, MERGE)
  and a fixed file re-runs cleanly.

History is a chain of ``:__Neo4jMigration {version, description, checksum, placeholders,
installed_on, installed_by, execution_time_ms}`` nodes linked by ``MIGRATED_TO {at, in, by}``
(after neo4j-migrations); one runner at a time holds the ``:__Neo4jMigrationsLock`` node, whose
name is unique by constraint. A second runner waits for the lock (``lock_timeout`` seconds) and
then finds nothing left to do, or raises ``LockHeld``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import time
import uuid
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Final, Literal

from thalabus_graph.errors import (
    ChecksumMismatch,
    ConfigurationError,
    GraphError,
    LockHeld,
    MigrationError,
    SettingsMismatch,
)
from thalabus_graph.graph import cypher_library
from thalabus_graph.graph.database import Database
from thalabus_graph.settings import Settings

FILE_PATTERN = re.compile(r"^V(?P<version>\d+)__(?P<description>[A-Za-z0-9_\-]+)\.cypher$")
PLACEHOLDER_PATTERN = re.compile(r"\{\{\s*([A-Z][A-Z0-9_]*)\s*\}\}")
REQUIRES_PATTERN = re.compile(r"^//\s*requires:\s*Neo4j\s+(\d+)\.(\d+)\s*$", re.MULTILINE)
SERVER_PATTERN = re.compile(r"^(\d+)\.(\d+)")
ServerLine = tuple[int, int]
"""A Neo4j release line as (major, minor): ``(5, 26)``, ``(2026, 9)``."""
LOCK_NAME = "thalabus_graph"
VECTOR_SIMILARITIES = ("cosine", "euclidean")
_ANALYZER_PATTERN = re.compile(r"^[A-Za-z0-9_.\-]+$")

MigrationState = Literal[
    "applied", "pending", "changed", "settings-changed", "unknown", "out-of-order", "waiting"]
"""The state of one migration in ``migrations status``."""
STATE_APPLIED: Final = "applied"
STATE_PENDING: Final = "pending"
STATE_CHANGED: Final = "changed"
STATE_SETTINGS_CHANGED: Final = "settings-changed"
STATE_UNKNOWN: Final = "unknown"
STATE_OUT_OF_ORDER: Final = "out-of-order"
STATE_WAITING: Final = "waiting"


# --------------------------------------------------------------------------------------------
# Parsing: statements, checksum, placeholders (pure)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Statement:
    """One statement of a migration file: its text (comments removed) and first line number."""

    text: str
    line: int

    @property
    def first_line(self) -> str:
        """The first non-blank line of the statement, for error messages."""
        return next((ln.strip() for ln in self.text.splitlines() if ln.strip()), "")


def split_statements(text: str) -> list[Statement]:
    """Split Cypher text on ``;`` at the end of a line, outside strings and comments.

    A ``;`` counts as a separator when only whitespace or a comment follows it on its line.
    Comments are removed, and outside strings so are trailing spaces and blank lines; text
    inside strings and quoted identifiers is kept exactly. Empty statements are dropped; the
    last statement needs no ``;``.

    Example:
        >>> [s.text for s in split_statements("RETURN ';';\\nRETURN 2")]
        ["RETURN ';'", 'RETURN 2']
    """
    statements: list[Statement] = []
    current: list[str] = []
    first: int | None = None  # line of the statement's first character
    line = 1
    i, n = 0, len(text)
    quote: str | None = None  # ', " or ` while inside a string or quoted identifier

    def flush() -> None:
        nonlocal current, first
        body = "".join(current).strip()
        if body and first is not None:
            statements.append(Statement(body, first))
        current, first = [], None

    def end_of_line() -> None:
        while current and current[-1] in " \t\r":
            current.pop()
        if current and current[-1] != "\n":
            current.append("\n")

    while i < n:
        ch = text[i]
        if quote is not None:
            current.append(ch)
            if ch == "\\" and quote != "`" and i + 1 < n:
                current.append(text[i + 1])
                line += text[i + 1] == "\n"
                i += 2
                continue
            if ch == quote:
                if quote == "`" and i + 1 < n and text[i + 1] == "`":
                    current.append("`")
                    i += 2
                    continue
                quote = None
            line += ch == "\n"
            i += 1
            continue
        if text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            line += text.count("\n", i, end)
            current.append(" ")
            i = end
            continue
        if ch == ";" and _ends_line(text, i + 1):
            flush()
            i += 1
            continue
        if ch == "\n":
            end_of_line()
            line += 1
            i += 1
            continue
        if first is None and not ch.isspace():
            first = line
        if ch in "'\"`":
            quote = ch
        current.append(ch)
        i += 1
    if quote is not None:
        raise MigrationError(f"unterminated {quote} quote in the statement starting at line "
                             f"{first}")
    flush()
    return statements


def _ends_line(text: str, i: int) -> bool:
    """True when only whitespace or a comment follows position ``i`` on its line."""
    n = len(text)
    while i < n and text[i] in " \t\r":
        i += 1
    return i >= n or text[i] == "\n" or text.startswith("//", i) or text.startswith("/*", i)


def normalise_statement(text: str) -> str:
    """Unify line endings, strip trailing spaces, leading indentation and blank lines."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(ln.rstrip() for ln in lines if ln.strip()).lstrip()


def checksum(statements: Sequence[Statement]) -> str:
    """CRC32 (unsigned, decimal text) over the normalised statements joined by ``;\\n``."""
    joined = ";\n".join(normalise_statement(s.text) for s in statements)
    return str(zlib.crc32(joined.encode("utf-8")) & 0xFFFFFFFF)


def placeholder_values(settings: Settings) -> dict[str, str]:
    """The placeholder values from settings, validated so they can be pasted into Cypher."""
    dims = settings.embedding_dimensions
    if isinstance(dims, bool) or not isinstance(dims, int) or dims <= 0:
        raise ConfigurationError(f"embedding_dimensions must be a positive integer, not {dims!r}")
    if settings.vector_similarity not in VECTOR_SIMILARITIES:
        raise ConfigurationError(f"vector_similarity must be one of {VECTOR_SIMILARITIES}, "
                                 f"not {settings.vector_similarity!r}")
    if not _ANALYZER_PATTERN.match(settings.fulltext_analyzer):
        raise ConfigurationError(f"fulltext_analyzer {settings.fulltext_analyzer!r} is not an "
                                 "analyzer name (letters, digits, '-', '_', '.')")
    return {
        "EMBEDDING_DIMENSIONS": str(dims),
        "VECTOR_SIMILARITY": settings.vector_similarity,
        "FULLTEXT_ANALYZER": settings.fulltext_analyzer,
        "VECTOR_QUANTIZATION": "true" if settings.vector_quantization else "false",
        "VECTOR_HNSW_M": _bounded_int("vector_hnsw_m", settings.vector_hnsw_m, 512),
        "VECTOR_HNSW_EF_CONSTRUCTION": _bounded_int(
            "vector_hnsw_ef_construction", settings.vector_hnsw_ef_construction, 3200),
    }


def _bounded_int(name: str, value: object, upper: int) -> str:
    """An integer setting in [1, upper] as Cypher text (Neo4j's own bounds for HNSW options)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= upper:
        raise ConfigurationError(f"{name} must be an integer in [1, {upper}], not {value!r}")
    return str(value)


def substitute(text: str, values: Mapping[str, str], *, where: str = "") -> str:
    """Replace every ``{{NAME}}``; an unknown name is a ``MigrationError``."""

    def repl(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise MigrationError(f"{where}: unknown placeholder {{{{{name}}}}} "
                                 f"(known: {', '.join(sorted(values))})")
        return values[name]

    return PLACEHOLDER_PATTERN.sub(repl, text)


# --------------------------------------------------------------------------------------------
# Discovery (files only)
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# Analysis (pure)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AppliedMigration:
    """One entry of the recorded history."""

    version: int
    description: str
    checksum: str
    placeholders: Mapping[str, str] = field(default_factory=dict)
    installed_on: datetime | None = None
    installed_by: str = ""
    execution_time_ms: int = 0


@dataclass(frozen=True)
class Analysis:
    """How local migration files compare with the applied history.

    Attributes:
        applied: versions applied with matching checksum and settings.
        pending: files not applied yet, in version order.
        changed: (file, history entry) pairs whose checksum differs: the file was edited.
        settings_changed: (file, entry, {name: (recorded, current)}) for placeholder values
            that differ from the ones recorded.
        unknown: applied versions with no file.
        out_of_order: pending files older than the newest applied version.
        waiting: files that need a newer Neo4j line than the server's (not pending).
        server: the server's line (None when not read).
    """

    applied: tuple[tuple[Migration, AppliedMigration], ...]
    pending: tuple[Migration, ...]
    changed: tuple[tuple[Migration, AppliedMigration], ...]
    settings_changed: tuple[tuple[Migration, AppliedMigration, dict[str, tuple[str, str]]], ...]
    unknown: tuple[AppliedMigration, ...]
    out_of_order: tuple[Migration, ...]
    waiting: tuple[Migration, ...] = ()
    server: ServerLine | None = None

    @property
    def ok(self) -> bool:
        """True when migrating can proceed (only pending work, if any)."""
        return not (self.changed or self.settings_changed or self.unknown or self.out_of_order)

    def raise_for_problems(self) -> None:
        """Raise the error for the first kind of disagreement found, naming the files."""
        if self.changed:
            names = ", ".join(m.name for m, _ in self.changed)
            raise ChecksumMismatch(
                f"applied migration(s) edited after they were applied: {names}; released "
                "migrations must not change: restore the file(s) and add a new version instead")
        if self.settings_changed:
            parts = []
            for m, _, diffs in self.settings_changed:
                what = ", ".join(f"{k} was {old} and is now {new}"
                                 for k, (old, new) in sorted(diffs.items()))
                parts.append(f"{m.name} ({what})")
            raise SettingsMismatch(
                "settings differ from those the database was migrated with: "
                + "; ".join(parts) + ". Existing indexes cannot change in place: restore the "
                "settings, or rebuild the schema (`thalabus-graph migrations clean --schema "
                "--yes`, i.e. MigrationRunner.clean(schema=True), then migrate) and re-ingest "
                "embeddings of the new size")
        if self.unknown:
            versions = ", ".join(f"V{a.version:04d} ({a.description})" for a in self.unknown)
            raise MigrationError(
                f"the database has applied migration(s) with no file here: {versions}; it was "
                "migrated by a newer thalabus-graph, or the migrations folder is wrong")
        if self.out_of_order:
            names = ", ".join(m.name for m in self.out_of_order)
            raise MigrationError(
                f"pending migration(s) older than the newest applied one: {names}; give new "
                "migrations a higher version than every applied one")


def analyze(local: Sequence[Migration], applied: Sequence[AppliedMigration],
            values: Mapping[str, str] | None = None, server: ServerLine | None = None
            ) -> Analysis:
    """Compare migration files with the applied history; no database needed.

    ``values`` are the current placeholder values; when given, a migration whose recorded
    values differ for a placeholder it uses lands in ``settings_changed``. ``server`` is the
    server's line: a migration requiring a newer one is ``waiting``; one that requires a line
    is never out of order (it may have waited for the server's upgrade).
    """
    by_version = {a.version: a for a in applied}
    local_versions = {m.version for m in local}
    newest_applied = max(by_version, default=None)
    ok: list[tuple[Migration, AppliedMigration]] = []
    pending: list[Migration] = []
    changed: list[tuple[Migration, AppliedMigration]] = []
    settings_changed: list[tuple[Migration, AppliedMigration, dict[str, tuple[str, str]]]] = []
    out_of_order: list[Migration] = []
    waiting: list[Migration] = []
    for m in sorted(local, key=lambda m: m.version):
        entry = by_version.get(m.version)
        if entry is None:
            if m.waits_for(server):
                waiting.append(m)
                continue
            pending.append(m)
            if (newest_applied is not None and m.version < newest_applied
                    and m.requires is None):
                out_of_order.append(m)
            continue
        if entry.checksum != m.checksum:
            changed.append((m, entry))
            continue
        diffs: dict[str, tuple[str, str]] = {}
        if values is not None:
            for name in m.placeholders:
                old = entry.placeholders.get(name)
                new = values.get(name)
                if old is not None and new is not None and old != new:
                    diffs[name] = (old, new)
        if diffs:
            settings_changed.append((m, entry, diffs))
        else:
            ok.append((m, entry))
    unknown = tuple(a for a in sorted(applied, key=lambda a: a.version)
                    if a.version not in local_versions)
    return Analysis(tuple(ok), tuple(pending), tuple(changed), tuple(settings_changed),
                    unknown, tuple(out_of_order), tuple(waiting), server)


@dataclass(frozen=True)
class StatusRow:
    """One line of ``migrations status``."""

    version: int
    description: str
    state: MigrationState
    """applied | pending | changed | settings-changed | unknown | out-of-order"""
    installed_on: datetime | None = None
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "version": self.version,
            "description": self.description,
            "state": self.state,
            "installed_on": self.installed_on.isoformat() if self.installed_on else None,
            "detail": self.detail,
        }


def status_rows(analysis: Analysis) -> list[StatusRow]:
    """One row per version known to files or history, in version order."""
    rows: list[StatusRow] = []
    for m, a in analysis.applied:
        rows.append(StatusRow(m.version, m.description, STATE_APPLIED, a.installed_on))
    for m, a in analysis.changed:
        rows.append(StatusRow(m.version, m.description, STATE_CHANGED, a.installed_on,
                              f"file edited after it was applied (checksum {a.checksum} -> "
                              f"{m.checksum})"))
    for m, a, diffs in analysis.settings_changed:
        what = ", ".join(f"{k} {old} -> {new}" for k, (old, new) in sorted(diffs.items()))
        rows.append(StatusRow(m.version, m.description, STATE_SETTINGS_CHANGED, a.installed_on,
                              f"applied with other settings: {what}"))
    late = {m.version for m in analysis.out_of_order}
    for m in analysis.pending:
        if m.version in late:
            rows.append(StatusRow(m.version, m.description, STATE_OUT_OF_ORDER, None,
                                  "older than the newest applied version"))
        else:
            rows.append(StatusRow(m.version, m.description, STATE_PENDING))
    for m in analysis.waiting:
        assert m.requires is not None and analysis.server is not None
        rows.append(StatusRow(m.version, m.description, STATE_WAITING, None,
                              f"needs Neo4j {format_line(m.requires)} or newer (this server: "
                              f"{format_line(analysis.server)}); migrate applies it once the "
                              "server is upgraded"))
    for a in analysis.unknown:
        rows.append(StatusRow(a.version, a.description, STATE_UNKNOWN, a.installed_on,
                              "applied, but no migration file has this version"))
    return sorted(rows, key=lambda r: r.version)


# --------------------------------------------------------------------------------------------
# DAO: every history and lock statement
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LockInfo:
    """Who holds the migration lock and since when."""

    owner: str
    acquired_at: datetime | None


class HistoryDao:
    """Reads and writes the migration history and lock through named statements."""

    def __init__(self, database: Database, lock_name: str = LOCK_NAME) -> None:
        self.database = database
        self.lock_name = lock_name

    def ensure_bootstrap_schema(self) -> None:
        """Create the lock and history constraints if missing (idempotent, race-tolerant)."""
        for name in ("migrations_create_lock_constraint", "migrations_create_history_constraint"):
            self._schema(name, retries=3)

    def _schema(self, statement: str, params: Mapping[str, Any] | None = None, *,
                retries: int = 1) -> None:
        """Run a named schema statement in auto-commit, retrying a lost creation race."""
        for attempt in range(retries):
            try:
                self.database.run_schema(cypher_library.load(statement), params)
                return
            except GraphError:
                # Two runners creating the same constraint at once: the loser may fail
                # although the IF NOT EXISTS statement then holds; try again.
                if attempt == retries - 1:
                    raise
                time.sleep(0.2)

    def try_lock(self, owner: str) -> LockInfo:
        """Take the lock if free; returns the holder (``owner`` itself when we got it)."""
        rows = self.database.write("migrations_acquire_lock", lock=self.lock_name, owner=owner)
        return LockInfo(str(rows[0]["owner"]), _native(rows[0]["acquired_at"]))

    def release_lock(self, owner: str) -> bool:
        """Release the lock if ``owner`` holds it; True when released."""
        rows = self.database.write("migrations_release_lock", lock=self.lock_name, owner=owner)
        return bool(rows and rows[0]["released"])

    def force_release_lock(self) -> bool:
        """Remove the lock whoever holds it; True when there was one."""
        rows = self.database.write("migrations_force_release_lock", lock=self.lock_name)
        return bool(rows and rows[0]["released"])

    def read_lock(self) -> LockInfo | None:
        """The current lock holder, or None."""
        rows = self.database.read("migrations_read_lock", lock=self.lock_name)
        if not rows:
            return None
        return LockInfo(str(rows[0]["owner"]), _native(rows[0]["acquired_at"]))

    def history(self) -> list[AppliedMigration]:
        """Every applied migration, oldest first."""
        out: list[AppliedMigration] = []
        for row in self.database.read("migrations_history"):
            r = row["migration"]
            raw = r.get("placeholders") or "{}"
            try:
                recorded = {str(k): str(v) for k, v in json.loads(raw).items()}
            except (ValueError, AttributeError):
                recorded = {}
            out.append(AppliedMigration(
                version=int(r["version"]),
                description=str(r.get("description") or ""),
                checksum=str(r.get("checksum") or ""),
                placeholders=recorded,
                installed_on=_native(r.get("installed_on")),
                installed_by=str(r.get("installed_by") or ""),
                execution_time_ms=int(r.get("execution_time_ms") or 0),
            ))
        return out

    def chain(self) -> list[tuple[int, int]]:
        """The ``MIGRATED_TO`` links of the history as (from version, to version) pairs."""
        rows = self.database.read("migrations_history_chain")
        return [(int(r["from_version"]), int(r["to_version"])) for r in rows]

    def record(self, migration: Migration, used: Mapping[str, str], installed_by: str,
               execution_time_ms: int) -> None:
        """Append one applied migration to the history chain."""
        self.database.write(
            "migrations_record",
            version=migration.version,
            description=migration.description,
            checksum=migration.checksum,
            placeholders=json.dumps(dict(sorted(used.items()))),
            installed_by=installed_by,
            execution_time_ms=execution_time_ms,
        )

    def await_indexes(self, timeout_seconds: int) -> None:
        """Block until every index is ONLINE."""
        self.database.run_schema(cypher_library.load("migrations_await_indexes"),
                                 {"timeout": timeout_seconds})

    def delete_history(self) -> int:
        """Forget the history and the lock; returns the number of nodes deleted."""
        rows = self.database.write("migrations_delete_history")
        return int(rows[0]["deleted"]) if rows else 0

    def server(self) -> ServerLine | None:
        """The server's release line (``dbms.components()``), None when not a number."""
        rows = self.database.read("migrations_server_version")
        return server_line(str(rows[0]["version"])) if rows else None

    def indexes(self) -> list[dict[str, Any]]:
        """``SHOW INDEXES`` rows (name, type, entityType, labelsOrTypes, properties, state,
        owningConstraint, options)."""
        return self.database.read("migrations_list_indexes")

    def drop_all_schema(self) -> None:
        """Drop every constraint, then every index that is not a token lookup index."""
        for row in self.database.read("migrations_list_constraints"):
            self._schema("migrations_drop_constraint", {"name": row["name"]})
        for row in self.indexes():
            if row["type"] != "LOOKUP" and row["owningConstraint"] is None:
                self._schema("migrations_drop_index", {"name": row["name"]})


def _native(value: Any) -> datetime | None:
    """A neo4j DateTime (or None) as a Python datetime."""
    if value is None:
        return None
    to_native = getattr(value, "to_native", None)
    if callable(to_native):
        result = to_native()
        return result if isinstance(result, datetime) else None
    return value if isinstance(value, datetime) else None


# --------------------------------------------------------------------------------------------
# Runner
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AppliedStep:
    """One migration applied by a run."""

    version: int
    description: str
    statements: int
    execution_time_ms: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"version": self.version, "description": self.description,
                "statements": self.statements, "execution_time_ms": self.execution_time_ms}


@dataclass(frozen=True)
class MigrationReport:
    """What ``migrate()`` did: the versions it applied and where the database stands."""

    applied: tuple[AppliedStep, ...]
    already_applied: int
    current_version: int | None
    waiting: tuple[str, ...] = ()
    """Migrations left for a newer server line, each as ``status`` describes it."""

    @property
    def changed(self) -> bool:
        """True when this run applied anything."""
        return bool(self.applied)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"applied": [s.to_dict() for s in self.applied],
                "already_applied": self.already_applied,
                "current_version": self.current_version, "waiting": list(self.waiting)}


class MigrationRunner:
    """Applies pending migrations under the lock; reports status.

    The constructor does no I/O.

    Example:
        >>> db = Database.connect("bolt://127.0.0.1:7687")  # doctest: +SKIP
        >>> report = MigrationRunner(db, Settings.from_env()).migrate()  # doctest: +SKIP
        >>> [r.state for r in MigrationRunner(db).status()]  # doctest: +SKIP
        ['applied', 'applied', 'applied']
    """

    def __init__(self, database: Database, settings: Settings | None = None, *,
                 migrations_dir: Path | str | None = None, lock_timeout: float = 120.0,
                 index_timeout: int = 300, lock_name: str = LOCK_NAME,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.database = database
        self.settings = settings if settings is not None else Settings.from_env()
        self.migrations_dir = Path(migrations_dir) if migrations_dir is not None else None
        self.lock_timeout = lock_timeout
        self.index_timeout = index_timeout
        self.dao = HistoryDao(database, lock_name)
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
        self._clock = clock

    def local(self) -> list[Migration]:
        """The migration files, parsed."""
        return discover(self.migrations_dir)

    def analyze(self) -> Analysis:
        """Compare files, history and settings (reads the history; takes no lock)."""
        values = placeholder_values(self.settings)
        local = self.local()
        # The constraints only spare "unknown label" notifications on a fresh database; a
        # read-only user cannot create them and can still read the history.
        with contextlib.suppress(GraphError):
            self.dao.ensure_bootstrap_schema()
        return analyze(local, self.dao.history(), values, self.dao.server())

    def status(self) -> list[StatusRow]:
        """One row per version: applied / pending / waiting / changed / settings-changed /
        unknown / out-of-order."""
        return status_rows(self.analyze())

    def migrate(self) -> MigrationReport:
        """Apply every pending migration in order, then wait for indexes to be ONLINE.

        Raises:
            ChecksumMismatch: an applied file was edited.
            SettingsMismatch: placeholder values differ from those recorded.
            LockHeld: another runner kept the lock longer than ``lock_timeout``.
            MigrationError: a statement failed (named), or history and files disagree.
        """
        values = placeholder_values(self.settings)
        local = self.local()
        for m in local:  # unknown placeholders fail before anything runs
            m.render(values)
        self.dao.ensure_bootstrap_schema()
        self._acquire_lock()
        failed = True
        try:
            analysis = analyze(local, self.dao.history(), values, self.dao.server())
            analysis.raise_for_problems()
            steps = [self._apply(m, values) for m in analysis.pending]
            self._await_indexes()
            versions = [m.version for m, _ in analysis.applied] + [s.version for s in steps]
            failed = False
            waiting = tuple(f"V{r.version:04d} {r.description}: {r.detail}"
                            for r in status_rows(analysis) if r.state == STATE_WAITING)
            return MigrationReport(tuple(steps), len(analysis.applied),
                                   max(versions, default=None), waiting)
        finally:
            self._release_lock(quiet=failed)

    def unlock(self) -> bool:
        """Remove a lock left by a runner that died; True when there was one."""
        return self.dao.force_release_lock()

    def clean(self, *, schema: bool = False) -> None:
        """Forget the history and the lock; with ``schema``, drop every constraint and index.

        Destructive: meant for tests and for rebuilding indexes after a settings change.
        """
        if schema:
            self.dao.drop_all_schema()
        self.dao.delete_history()

    # -- steps ---------------------------------------------------------------------------

    def _acquire_lock(self) -> None:
        deadline = self._clock() + self.lock_timeout
        delay = 0.1
        while True:
            holder = self.dao.try_lock(self.owner)
            if holder.owner == self.owner:
                return
            if self._clock() >= deadline:
                since = holder.acquired_at.isoformat() if holder.acquired_at else "unknown"
                raise LockHeld(
                    f"another migration runner ({holder.owner}, since {since}) holds the "
                    f"migration lock; waited {self.lock_timeout:g} s. If no runner is active, "
                    "remove the lock with `thalabus-graph migrations unlock`")
            time.sleep(delay)
            delay = min(delay * 2, 1.0)

    def _release_lock(self, *, quiet: bool) -> None:
        """Release our lock; when another error is on its way out, do not mask it."""
        try:
            self.dao.release_lock(self.owner)
        except GraphError as exc:
            if not quiet:
                raise MigrationError(f"could not release the migration lock: {exc}; remove it "
                                     "with `thalabus-graph migrations unlock`") from exc

    def _apply(self, migration: Migration, values: Mapping[str, str]) -> AppliedStep:
        rendered = migration.render(values)
        started = time.perf_counter()
        for index, (statement, text) in enumerate(
                zip(migration.statements, rendered, strict=True), start=1):
            try:
                self.database.run_schema(text)
            except GraphError as exc:
                raise MigrationError(
                    f"{migration.name}: statement {index} of {len(rendered)} (line "
                    f"{statement.line}: {statement.first_line!r}) failed: {exc}; this version "
                    "was not recorded") from exc
        try:
            self._await_indexes()
        except MigrationError as exc:
            raise MigrationError(f"{migration.name}: {exc}; this version was not recorded"
                                 ) from exc
        elapsed = int((time.perf_counter() - started) * 1000)
        self.dao.record(migration, migration.used_values(values), self.owner, elapsed)
        return AppliedStep(migration.version, migration.description, len(rendered), elapsed)

    def _await_indexes(self) -> None:
        try:
            self.dao.await_indexes(self.index_timeout)
        except GraphError as exc:
            raise MigrationError(f"indexes did not come ONLINE: {exc}") from exc


__all__ = [
    "Analysis",
    "AppliedMigration",
    "AppliedStep",
    "HistoryDao",
    "LockInfo",
    "Migration",
    "MigrationReport",
    "MigrationRunner",
    "SettingsMismatch",
    "Statement",
    "StatusRow",
    "analyze",
    "checksum",
    "discover",
    "placeholder_values",
    "server_line",
    "split_statements",
    "status_rows",
    "substitute",
]
