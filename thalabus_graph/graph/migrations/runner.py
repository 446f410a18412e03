"""Running migrations: apply the pending ones in order under the lock, then await indexes."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from thalabus_graph.errors import (
    GraphError,
    MigrationError,
)
from thalabus_graph.graph.database import NOT_MIGRATED, Database
from thalabus_graph.graph.migrations.discovery import Migration, discover
from thalabus_graph.graph.migrations.history import LOCK_NAME, HistoryDao
from thalabus_graph.graph.migrations.lock import acquire, runner_name
from thalabus_graph.graph.migrations.parsing import placeholder_values
from thalabus_graph.graph.migrations.status import (
    STATE_WAITING,
    Analysis,
    StatusRow,
    analyze,
    status_rows,
)
from thalabus_graph.graph.migrations.vectors import VectorCheck, check_vectors, remove_bad_vectors
from thalabus_graph.progress import NoProgress, Progress
from thalabus_graph.settings import Settings


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
    cleared_lock: str | None = None
    """The runner whose lock this run removed: it named this host and a pid no longer running."""
    labelled_documents: int = 0
    """Documents ingested before the per-language text indexes whose fragments the entry
    point then labelled with their text language (``text_languages.backfill``)."""

    @property
    def changed(self) -> bool:
        """True when this run applied anything."""
        return bool(self.applied)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"applied": [s.to_dict() for s in self.applied],
                "already_applied": self.already_applied,
                "current_version": self.current_version, "waiting": list(self.waiting),
                "cleared_lock": self.cleared_lock,
                "labelled_documents": self.labelled_documents}


def require_migrated(database: Database, what: str) -> None:
    """Raise ``MigrationError`` saying which command to run when no migration was ever
    applied to the database: without the schema, writes "succeed" and every search then
    fails on a missing index. One read of the history; nothing is written.

    Example:
        >>> require_migrated(db, "ingest")  # doctest: +SKIP
    """
    if not HistoryDao(database).history():
        raise MigrationError(f"{what}: {NOT_MIGRATED}")


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
        self.owner = runner_name()
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

    def migrate(self, *, progress: bool = True) -> MigrationReport:
        """Apply every pending migration in order, then wait for indexes to be ONLINE.

        ``progress``: while migrations are applied (building indexes takes seconds each),
        say which one runs and show the count, rate and ETA (``thalabus_graph.progress``: a
        bar on a terminal, else log lines, which reach stderr even when the application
        configured no logging); False: nothing. A run with nothing to apply shows nothing.

        Raises:
            ChecksumMismatch: an applied file was edited.
            SettingsMismatch: placeholder values differ from those recorded.
            LockHeld: another runner kept the lock longer than ``lock_timeout`` (a lock
                whose owner is a dead process on this host is removed at once, see ``lock``).
            MigrationError: a statement failed (named), or history and files disagree.
        """
        values = placeholder_values(self.settings)
        local = self.local()
        for m in local:  # unknown placeholders fail before anything runs
            m.render(values)
        self.dao.ensure_bootstrap_schema()
        cleared = acquire(self.dao, self.owner, self.lock_timeout, self._clock)
        failed = True
        try:
            analysis = analyze(local, self.dao.history(), values, self.dao.server())
            analysis.raise_for_problems()
            steps = self._apply_all(analysis.pending, values, progress)
            self._await_indexes()
            versions = [m.version for m, _ in analysis.applied] + [s.version for s in steps]
            failed = False
            waiting = tuple(f"V{r.version:04d} {r.description}: {r.detail}"
                            for r in status_rows(analysis) if r.state == STATE_WAITING)
            return MigrationReport(tuple(steps), len(analysis.applied),
                                   max(versions, default=None), waiting,
                                   cleared.owner if cleared else None)
        finally:
            self._release_lock(quiet=failed)

    def check_vectors(self) -> VectorCheck:
        """The stored embeddings no search can use (wrong dimension, not finite, zero norm)."""
        return check_vectors(self.database, self.settings.embedding_dimensions)

    def repair_vectors(self) -> tuple[int, list[str]]:
        """Remove the bad stored embeddings; returns how many and the documents to re-ingest."""
        return remove_bad_vectors(self.database, self.settings.embedding_dimensions)

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

    def _release_lock(self, *, quiet: bool) -> None:
        """Release our lock; when another error is on its way out, do not mask it."""
        try:
            self.dao.release_lock(self.owner)
        except GraphError as exc:
            if not quiet:
                raise MigrationError(f"could not release the migration lock: {exc}; remove it "
                                     "with `thalabus-graph migrations unlock`") from exc

    def _apply_all(self, pending: Sequence[Migration], values: Mapping[str, str],
                   progress: bool) -> list[AppliedStep]:
        """Apply ``pending`` in order, each named as it starts (``progress``)."""
        if not pending:
            return []
        bar = (Progress(len(pending), label="migrate", unit="migrations",
                        rate_unit="migration", terminal=sys.stderr.isatty())
               if progress else NoProgress())
        steps: list[AppliedStep] = []
        try:
            for number, migration in enumerate(pending, start=1):
                bar.say(f"migrate: applying {migration.name} ({number}/{len(pending)})")
                steps.append(self._apply(migration, values))
                bar.advance(1)
        finally:
            bar.close()
        return steps

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
