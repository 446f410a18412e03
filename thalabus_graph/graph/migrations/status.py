"""How the files compare with the applied history: the pure ``analyze`` and its status rows.

No database access: the runner reads the history and passes it in, so every rule about
edited, unknown, out-of-order and waiting migrations is testable without a server.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Literal

from thalabus_graph.errors import (
    ChecksumMismatch,
    MigrationError,
    SettingsMismatch,
)
from thalabus_graph.graph.migrations.discovery import Migration, ServerLine, format_line

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
