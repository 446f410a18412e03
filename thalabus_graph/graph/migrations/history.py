"""The migration history and lock in the graph: every statement about them, by name.

``HistoryDao`` runs the named ``cypher/migrations_*.cypher`` statements; it decides nothing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from thalabus_graph.errors import (
    GraphError,
)
from thalabus_graph.graph import cypher_library
from thalabus_graph.graph.database import Database
from thalabus_graph.graph.migrations.discovery import Migration, ServerLine, server_line
from thalabus_graph.graph.migrations.lock import LockInfo
from thalabus_graph.graph.migrations.status import AppliedMigration

LOCK_NAME = "thalabus_graph"



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
