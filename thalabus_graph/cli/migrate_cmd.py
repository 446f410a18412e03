"""``thalabus-graph migrate`` and ``thalabus-graph migrations status|unlock``.

Applies the versioned migrations in ``migrations/`` (indexes take their dimension, similarity and
analyzer from ``THALABUS_*`` settings) and shows which versions are applied or pending.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from thalabus_graph import text_languages
from thalabus_graph.cli import common
from thalabus_graph.errors import ConfigurationError, ThalabusError
from thalabus_graph.graph.database import Database
from thalabus_graph.graph.launcher import LocalNeo4j, default_data_dir
from thalabus_graph.graph.migrations import (
    STATE_APPLIED,
    STATE_PENDING,
    STATE_WAITING,
    MigrationReport,
    MigrationRunner,
    StatusRow,
)
from thalabus_graph.settings import Settings

EXAMPLES = """\
examples:
  thalabus-graph migrate
  thalabus-graph migrate --uri bolt://127.0.0.1:7687 --json
  THALABUS_EMBEDDING_DIMENSIONS=768 thalabus-graph migrate
  thalabus-graph migrations status
  thalabus-graph migrations unlock
  thalabus-graph migrations repair-vectors --yes
  thalabus-graph migrations clean --schema --yes && thalabus-graph migrate

exit codes: 0 ok; 1 failure (edited migration, lock held, failed statement, Neo4j
unreachable; `migrations status` also when a version is changed or unknown); 2 bad settings
"""


def register(subparsers: Any) -> None:
    """Add the ``migrate`` and ``migrations`` sub-commands."""
    _register_migrate(subparsers)
    _register_migrations(subparsers)


def _register_migrate(subparsers: Any) -> None:
    """``migrate``: apply the pending migrations under a lock."""
    migrate: argparse.ArgumentParser = subparsers.add_parser(
        "migrate",
        help="apply pending schema migrations (constraints, vector and fulltext indexes)",
        description="Apply every pending migration in migrations/ in version order under a "
        "lock, then wait until all indexes are ONLINE. A second run changes nothing.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_options(migrate)
    migrate.add_argument(
        "--lock-timeout", type=common.finite_float(), default=120.0, metavar="SECONDS",
        help="wait this long for another runner's lock before failing (default 120)",
    )
    migrate.set_defaults(handler=handle_migrate)


def _register_migrations(subparsers: Any) -> None:
    """``migrations status|repair-vectors|unlock|clean``: inspect and mend the history."""
    group: argparse.ArgumentParser = subparsers.add_parser(
        "migrations",
        help="show migration status; remove a stale lock; clean the history",
        description="Inspect the migration history of a database.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = group.add_subparsers(dest="migrations_command", metavar="ACTION", required=True)
    _add_status(actions)
    _add_repair_vectors(actions)
    _add_unlock(actions)
    _add_clean(actions)


def _add_status(actions: Any) -> None:
    """``migrations status``: one row per version with its state."""
    status = actions.add_parser(
        "status", help="list every version: applied, pending, changed, unknown",
        description="One row per migration version with its state and installation time.",
        epilog="example:\n  thalabus-graph migrations status --json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_options(status)
    status.set_defaults(handler=handle_status)


def _add_repair_vectors(actions: Any) -> None:
    """``migrations repair-vectors``: remove the stored embeddings no search can use."""
    repair = actions.add_parser(
        "repair-vectors", help="remove stored embeddings no search can use",
        description="Remove every stored embedding with the wrong dimension, a value that is "
        "not finite, or a norm of (almost) zero, which `migrations status` reports; searches "
        "then pass those fragments by until their documents are re-ingested. Needs --yes.",
        epilog="example:\n  thalabus-graph migrations repair-vectors --yes",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_options(repair)
    repair.add_argument("--yes", action="store_true", help="confirm")
    repair.set_defaults(handler=handle_repair_vectors)


def _add_unlock(actions: Any) -> None:
    """``migrations unlock``: remove a lock a dead runner left."""
    unlock = actions.add_parser(
        "unlock", help="remove a lock left by a migration runner that died",
        description="Delete the migration lock node. Only when no runner is active.",
        epilog="example:\n  thalabus-graph migrations unlock",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_options(unlock)
    unlock.set_defaults(handler=handle_unlock)


def _add_clean(actions: Any) -> None:
    """``migrations clean``: forget the history, with ``--schema`` drop the schema too."""
    clean = actions.add_parser(
        "clean", help="forget the migration history (with --schema: drop every index too)",
        description="Delete the migration history and lock; with --schema also drop every "
        "constraint and index, so the next `migrate` rebuilds them (e.g. after changing "
        "THALABUS_EMBEDDING_DIMENSIONS; data stays, embeddings of the old size must be "
        "re-ingested). Destructive: needs --yes.",
        epilog="example:\n  thalabus-graph migrations clean --schema --yes && "
               "thalabus-graph migrate",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_options(clean)
    clean.add_argument("--schema", action="store_true",
                       help="also drop every constraint and index")
    clean.add_argument("--yes", action="store_true", help="confirm")
    clean.set_defaults(handler=handle_clean)


def _add_options(parser: argparse.ArgumentParser) -> None:
    common.add_common_options(parser)
    parser.add_argument(
        "--migrations-dir", default=None, metavar="DIR",
        help="folder of V<n>__<what>.cypher files (default: $THALABUS_MIGRATIONS_DIR, "
        "else the migrations shipped with the package)",
    )


def _connect(args: argparse.Namespace) -> Database:
    target = common.connection(args)
    return Database.connect(target.uri, auth=target.auth, database=target.database)


def _runner(args: argparse.Namespace, db: Database) -> MigrationRunner:
    return MigrationRunner(db, Settings.from_env(), migrations_dir=args.migrations_dir,
                           lock_timeout=getattr(args, "lock_timeout", 120.0))


def handle_migrate(args: argparse.Namespace) -> int:
    """Apply pending migrations and print what was done."""
    db = _connect(args)
    try:
        report = _runner(args, db).migrate()
        report = replace(report, labelled_documents=text_languages.backfill(db))
    finally:
        db.close()
    warnings = local_server_warnings(common.connection(args).uri)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.json:
        common.emit_json({**report.to_dict(), "warnings": warnings})
    else:
        print(format_report(report))
    return common.EXIT_OK


def local_server_warnings(uri: str) -> list[str]:
    """The warnings of the local launcher server ``uri`` points at (default data dir).

    Such as a store that has outgrown its page cache; nothing when ``uri`` is another server.
    """
    parsed = urlsplit(uri)
    if parsed.hostname not in ("127.0.0.1", "localhost", "::1"):
        return []
    try:
        state = LocalNeo4j(data_dir=default_data_dir()).status()
        port = parsed.port
    except (ThalabusError, ValueError):
        return []
    return list(state.warnings) if state.running and state.port == port else []


def handle_status(args: argparse.Namespace) -> int:
    """Print one row per migration version; exit 1 when history and files disagree."""
    db = _connect(args)
    try:
        runner = _runner(args, db)
        rows = runner.status()
        vectors = runner.check_vectors()
    finally:
        db.close()
    if vectors.total:
        print(f"warning: {vectors.advice()}", file=sys.stderr)
    if args.json:
        common.emit_json([r.to_dict() for r in rows])
    else:
        print(format_table(rows))
    ok = all(r.state in (STATE_APPLIED, STATE_PENDING, STATE_WAITING) for r in rows)
    return common.EXIT_OK if ok else common.EXIT_FAILURE


def handle_repair_vectors(args: argparse.Namespace) -> int:
    """Remove the bad stored embeddings; needs ``--yes``."""
    if not args.yes:
        raise ConfigurationError("`migrations repair-vectors` removes embeddings: add --yes "
                                 "to confirm")
    db = _connect(args)
    try:
        removed, documentids = _runner(args, db).repair_vectors()
    finally:
        db.close()
    if args.json:
        common.emit_json({"removed": removed, "documentids": documentids})
    elif removed:
        print(f"removed {removed} bad embedding(s); re-ingest these documents to embed them "
              f"again: {', '.join(documentids)}")
    else:
        print("no bad embeddings stored")
    return common.EXIT_OK


def handle_unlock(args: argparse.Namespace) -> int:
    """Remove the migration lock whoever holds it."""
    db = _connect(args)
    try:
        removed = _runner(args, db).unlock()
    finally:
        db.close()
    if args.json:
        common.emit_json({"removed": removed})
    else:
        print("migration lock removed" if removed else "no migration lock was held")
    return common.EXIT_OK


def handle_clean(args: argparse.Namespace) -> int:
    """Forget the history (and with ``--schema`` drop the schema); needs ``--yes``."""
    if not args.yes:
        raise ConfigurationError("`migrations clean` is destructive: add --yes to confirm")
    db = _connect(args)
    try:
        _runner(args, db).clean(schema=args.schema)
    finally:
        db.close()
    what = "history and schema" if args.schema else "history"
    if args.json:
        common.emit_json({"cleaned": what})
    else:
        print(f"migration {what} removed; run `thalabus-graph migrate` to rebuild")
    return common.EXIT_OK


def format_report(report: MigrationReport) -> str:
    """Human-readable summary of one ``migrate()`` run."""
    lines = [] if report.cleared_lock is None else [
        f"removed the migration lock of runner {report.cleared_lock}: its process on this host "
        "no longer runs"]
    lines += [f"applied V{s.version:04d} {s.description} ({s.statements} statements, "
             f"{s.execution_time_ms} ms)" for s in report.applied]
    current = "none" if report.current_version is None else f"V{report.current_version:04d}"
    if not report.applied:
        lines.append(f"nothing to migrate: database is at {current}")
    else:
        lines.append(f"database is at {current}")
    lines += [f"waiting: {w}" for w in report.waiting]
    if report.labelled_documents:
        lines.append(f"labelled the text language of {report.labelled_documents} documents "
                     "ingested before the per-language full-text indexes")
    return "\n".join(lines)


def format_table(rows: Sequence[StatusRow]) -> str:
    """The status rows as an aligned text table (a header line, then one line per version)."""
    header = ("VERSION", "DESCRIPTION", "STATE", "INSTALLED ON", "DETAIL")
    body = [(f"V{r.version:04d}", r.description, r.state,
             r.installed_on.strftime("%Y-%m-%d %H:%M:%S") if r.installed_on else "-",
             r.detail) for r in rows]
    if not body:
        return "no migrations found"
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    out = []
    for row in [header, *body]:
        out.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
    return "\n".join(out)

