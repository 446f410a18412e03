"""Failures a starting server only logs: out of disk space, a database that cannot start.

Neo4j writes such failures to ``<data dir>/logs/debug.log`` and keeps running (a database that
failed stays offline; a system database that failed takes minutes to give up), so a start that
only waited for the ready line would wait out its whole timeout and then show a log that does
not say why. ``LogWatch`` reads what the debug log gains while the start waits and names the
first fatal line; ``refuse_when_disk_is_short`` refuses a start the disk cannot hold before any
JVM runs.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from thalabus_graph.errors import LauncherError

MIB = 1 << 20
DEBUG_LOG = Path("logs") / "debug.log"
"""Neo4j's own log, under the data dir (text lines on 5.26, JSON lines on 2026.x)."""
DATABASES = ("system", "neo4j")
"""The databases every start opens: a new one makes its first transaction log file."""
TX_LOG_PREALLOCATION = 257 * MIB
"""Disk a database's first transaction log takes at once: Neo4j preallocates a whole log file
(``db.tx_log.rotation.size``, 256 MiB by default) and a 1 MiB checkpoint file."""
START_FREE_MARGIN = 64 * MIB
"""Disk a start needs besides new transaction logs: store files, indexes, its own logs."""
READ_LIMIT = 4 * MIB
"""The most one look at the debug log reads (a start writes a few hundred KiB)."""
_DISK_FULL = ("No space left on device", "running out of disk space")
_DATABASE_FAILED = "Failed to start DatabaseId{"


def free_bytes(path: Path) -> int:
    """Bytes free for this user on the filesystem of ``path`` (its nearest existing parent)."""
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return shutil.disk_usage(probe).free


def start_needs(data_dir: Path) -> int:
    """The free disk a start of ``data_dir``'s store needs: the margin, and a preallocated
    transaction log for each database that has none yet."""
    new = [db for db in DATABASES if not (data_dir / "data" / "transactions" / db).is_dir()]
    return START_FREE_MARGIN + len(new) * TX_LOG_PREALLOCATION


def refuse_when_disk_is_short(data_dir: Path) -> None:
    """Raise ``LauncherError`` when the data dir's filesystem cannot hold what a start writes.

    Neo4j on a full disk neither fails nor answers for minutes; refusing before it runs says
    why at once.
    """
    free, needed = free_bytes(data_dir), start_needs(data_dir)
    if free < needed:
        raise LauncherError(
            f"out of disk space: the filesystem of {data_dir} has {_mib(free)} free, and a "
            f"start needs at least {_mib(needed)} (Neo4j preallocates "
            f"{_mib(TX_LOG_PREALLOCATION)} of transaction log for each new database); free "
            "some space or use a --data dir on another filesystem")


def disk_full_message(data_dir: Path) -> str:
    """What to say when Neo4j logged that the disk is full."""
    return (f"out of disk space: Neo4j could not write to {data_dir} (its filesystem has "
            f"{_mib(free_bytes(data_dir))} free); free some space or use a --data dir on "
            "another filesystem")


def _mib(size: int) -> str:
    return f"{size / MIB:.0f} MiB"


class LogWatch:
    """What Neo4j's debug log gained since the watch began, searched for fatal lines."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.path = data_dir / DEBUG_LOG
        try:
            self.offset = self.path.stat().st_size  # the log outlives starts: only new lines
        except OSError:
            self.offset = 0
        self._pending = b""

    def fatal(self) -> str | None:
        """The first fatal failure logged since the last call (and the lines just after it,
        which carry its cause); None when there is none."""
        lines = self._new_lines()
        for number, line in enumerate(lines):
            if any(marker in line for marker in _DISK_FULL):
                return disk_full_message(self.data_dir)
            if _DATABASE_FAILED in line:
                more = lines[number + 1:] + self._new_lines()
                if any(marker in text for text in more for marker in _DISK_FULL):
                    return disk_full_message(self.data_dir)
                name = line.split(_DATABASE_FAILED, 1)[1].split("}", 1)[0]
                name = name.split("[", 1)[-1].rstrip("]")
                cause = _root_cause(line, more)
                return (f"Neo4j could not start its database {name!r}"
                        + (f": {cause}" if cause else "")
                        + f" (details in {self.path})")
        return None

    def _new_lines(self) -> list[str]:
        """Whole lines written since the last read (at most ``READ_LIMIT`` bytes a look)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return []
        try:
            size = os.fstat(fd).st_size
            if size < self.offset:  # the log was rotated or replaced
                self.offset, self._pending = 0, b""
            os.lseek(fd, self.offset, os.SEEK_SET)
            chunk = os.read(fd, READ_LIMIT)
        finally:
            os.close(fd)
        self.offset += len(chunk)
        data = self._pending + chunk
        whole, _, self._pending = data.rpartition(b"\n")
        if len(self._pending) > READ_LIMIT:  # one endless line: judge what came so far
            whole, self._pending = data, b""
        return whole.decode("utf-8", errors="replace").splitlines() if whole else []


def _root_cause(line: str, after: list[str]) -> str:
    """The innermost ``Caused by:`` of a failure: inside a JSON line's stack trace, or in the
    text lines that follow it."""
    trace: list[str] = []
    if line.lstrip().startswith("{"):
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if isinstance(record, dict):
            trace = str(record.get("stacktrace", "")).splitlines()
    else:
        for text in after:
            if text[:1].isdigit() or text.startswith("{"):  # the next log entry
                break
            trace.append(text)
    causes = [t.strip()[len("Caused by: "):] for t in trace if t.strip().startswith("Caused by: ")]
    if causes:
        return causes[-1]
    return trace[0].strip() if trace else ""
