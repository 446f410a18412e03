"""The migration lock: one runner at a time holds the ``:__Neo4jMigrationsLock`` node.

A runner's name is ``<host>:<pid>:<token>``. When the holder names this host and a pid that
no longer runs (a ``migrate`` that was killed), waiting for it is pointless: the runner
removes that lock at once, only if that very owner still holds it (so two runners doing the
same cannot remove each other's fresh lock), says so in the log and in its report, and goes
on. A holder on another host, or a live pid, is waited for up to the timeout.
"""

from __future__ import annotations

import logging
import os
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from thalabus_graph.errors import LockHeld

if TYPE_CHECKING:
    from thalabus_graph.graph.migrations.history import HistoryDao

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class LockInfo:
    """Who holds the migration lock and since when."""

    owner: str
    acquired_at: datetime | None


def runner_name() -> str:
    """A new runner's name: ``<host>:<pid>:<random token>``."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def dead_local_pid(owner: str) -> int | None:
    """The pid of ``owner`` when it names this host and a process that no longer runs."""
    parts = owner.split(":")
    if len(parts) != 3 or parts[0] != socket.gethostname() or not parts[1].isdigit():
        return None
    pid = int(parts[1])
    if pid <= 0 or pid == os.getpid():
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return pid
    except PermissionError:
        return None
    try:  # killed but not yet reaped by its parent: a zombie holds nothing
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return pid if stat.rsplit(")", 1)[-1].split()[0] in ("Z", "X") else None


def acquire(dao: HistoryDao, owner: str, timeout: float,
            clock: Callable[[], float] = time.monotonic) -> LockInfo | None:
    """Take the lock for ``owner``, waiting up to ``timeout`` s for a live holder.

    Returns the lock of a dead runner on this host it removed on the way, else None.

    Raises:
        LockHeld: another runner kept the lock for ``timeout`` s.
    """
    deadline = clock() + timeout
    delay = 0.1
    cleared: LockInfo | None = None
    while True:
        holder = dao.try_lock(owner)
        if holder.owner == owner:
            return cleared
        pid = dead_local_pid(holder.owner)
        if pid is not None and dao.release_lock(holder.owner):
            logger.warning("removed the migration lock of runner %s: pid %d on this host no "
                           "longer runs", holder.owner, pid)
            cleared = holder
            continue
        if clock() >= deadline:
            since = holder.acquired_at.isoformat() if holder.acquired_at else "unknown"
            raise LockHeld(
                f"another migration runner ({holder.owner}, since {since}) holds the "
                f"migration lock; waited {timeout:g} s. If no runner is active, "
                "remove the lock with `thalabus-graph migrations unlock`")
        time.sleep(delay)
        delay = min(delay * 2, 1.0)
