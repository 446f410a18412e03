"""Versioned Cypher migrations: ``migrations/V0001__what.cypher`` applied once each, in order.

Split the way alembic splits script, runtime and command. The files: ``parsing`` (statements,
placeholders), ``checksums``, ``discovery`` (``discover``). Running them: ``history``
(``HistoryDao``, every history and lock statement, named files ``cypher/migrations_*.cypher``),
``lock`` (who holds the lock, and whether that owner is still alive), ``runner``
(``MigrationRunner``). ``status``: the pure ``analyze`` comparing files with the history.
``vectors``: stored embeddings no search can use, reported by ``migrations status`` and
removed by ``migrations repair-vectors``.

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


from thalabus_graph.errors import SettingsMismatch
from thalabus_graph.graph.migrations.checksums import checksum, normalise_statement
from thalabus_graph.graph.migrations.discovery import (
    FILE_PATTERN,
    REQUIRES_PATTERN,
    SERVER_PATTERN,
    Migration,
    ServerLine,
    discover,
    format_line,
    server_line,
)
from thalabus_graph.graph.migrations.history import LOCK_NAME, HistoryDao
from thalabus_graph.graph.migrations.lock import LockInfo
from thalabus_graph.graph.migrations.parsing import (
    PLACEHOLDER_PATTERN,
    VECTOR_SIMILARITIES,
    Statement,
    placeholder_values,
    split_statements,
    substitute,
)
from thalabus_graph.graph.migrations.runner import AppliedStep, MigrationReport, MigrationRunner
from thalabus_graph.graph.migrations.status import (
    STATE_APPLIED,
    STATE_CHANGED,
    STATE_OUT_OF_ORDER,
    STATE_PENDING,
    STATE_SETTINGS_CHANGED,
    STATE_UNKNOWN,
    STATE_WAITING,
    Analysis,
    AppliedMigration,
    MigrationState,
    StatusRow,
    analyze,
    status_rows,
)
from thalabus_graph.graph.migrations.vectors import BadVector, VectorCheck

__all__ = [
    "FILE_PATTERN",
    "LOCK_NAME",
    "PLACEHOLDER_PATTERN",
    "REQUIRES_PATTERN",
    "SERVER_PATTERN",
    "STATE_APPLIED",
    "STATE_CHANGED",
    "STATE_OUT_OF_ORDER",
    "STATE_PENDING",
    "STATE_SETTINGS_CHANGED",
    "STATE_UNKNOWN",
    "STATE_WAITING",
    "VECTOR_SIMILARITIES",
    "Analysis",
    "AppliedMigration",
    "AppliedStep",
    "BadVector",
    "HistoryDao",
    "LockInfo",
    "Migration",
    "MigrationReport",
    "MigrationRunner",
    "MigrationState",
    "ServerLine",
    "SettingsMismatch",
    "Statement",
    "StatusRow",
    "VectorCheck",
    "analyze",
    "checksum",
    "discover",
    "format_line",
    "normalise_statement",
    "placeholder_values",
    "server_line",
    "split_statements",
    "status_rows",
    "substitute",
]
