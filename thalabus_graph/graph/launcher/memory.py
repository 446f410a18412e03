"""Heap and page cache for a local server, sized from the machine and the store.

The rule follows ``neo4j-admin server memory-recommendation``: for the machine's memory
(``/proc/meminfo``, or the cgroup limit when lower) Neo4j's table gives an OS reserve and a
heap, interpolated linearly between its rows, and the page cache gets what is left. Two
changes fit a retrieval server:

* The heap stops at ``HEAP_CAP`` (4 GiB): searches read indexes, and memory beyond that
  serves better as page cache and as the OS cache the Lucene vector and full-text index files
  are read through.
* The page cache is sized to the store when that fits: the native store and its native
  indexes (what the page cache holds; Lucene index files are not in it) plus a fifth for
  growth, and never less than ``PAGE_CACHE_FLOOR`` (2 GiB), so a bulk load into a new store
  has room; at most what the machine leaves. Memory Neo4j does not need stays with the OS.

``THALABUS_NEO4J_HEAP`` and ``THALABUS_NEO4J_PAGE_CACHE`` (or ``--heap`` / ``--page-cache``)
override either. Sizes are written as Neo4j and the JVM take them: ``512m``, ``2g``.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

from thalabus_graph.errors import ConfigurationError

MIB = 1 << 20
GIB = 1 << 30
HEAP_CAP = 4 * GIB
"""The largest heap the rule gives (Neo4j's own table goes up to 31 GiB)."""
PAGE_CACHE_FLOOR = 2 * GIB
"""The smallest page cache the rule gives, machine allowing: room for a bulk load."""
STORE_GROWTH = 1.2
"""The page cache holds the store plus a fifth, for what the next ingest adds."""
HEAP_ENV = "THALABUS_NEO4J_HEAP"
PAGE_CACHE_ENV = "THALABUS_NEO4J_PAGE_CACHE"

_BRACKETS = (
    # (machine memory, OS reserve, heap), GiB: the table of neo4j-admin memory-recommendation.
    (0.01, 0.007, 0.002),
    (1.0, 0.65, 0.3),
    (2.0, 1.0, 0.5),
    (4.0, 1.5, 2.0),
    (6.0, 2.0, 3.0),
    (8.0, 2.5, 3.5),
    (10.0, 3.0, 4.0),
    (12.0, 3.5, 4.5),
    (16.0, 4.0, 5.0),
    (24.0, 6.0, 8.0),
    (32.0, 8.0, 12.0),
    (64.0, 12.0, 24.0),
    (128.0, 16.0, 31.0),
    (256.0, 20.0, 31.0),
    (512.0, 24.0, 31.0),
    (1024.0, 30.0, 31.0),
)
_SIZE = re.compile(r"^\s*(\d+)\s*([kKmMgGtT]?)\s*$")
_UNITS = {"": 1, "k": 1 << 10, "m": MIB, "g": GIB, "t": 1 << 40}
_LUCENE_PROVIDERS = ("fulltext", "vector")
"""Index provider folders whose files Lucene reads through the OS cache, not the page cache."""


@dataclass(frozen=True)
class MemoryPlan:
    """What the rule gives for one machine and store, in bytes."""

    machine: int
    os_reserve: int
    heap: int
    page_cache: int
    store: int

    @property
    def heap_size(self) -> str:
        """The heap as the JVM takes it (``-Xmx``)."""
        return format_size(self.heap)

    @property
    def page_cache_size(self) -> str:
        """The page cache as Neo4j takes it (``server.memory.pagecache.size``)."""
        return format_size(self.page_cache)


def _interpolate(machine: int) -> tuple[int, int]:
    """Neo4j's OS reserve and heap for ``machine`` bytes (linear between the table's rows)."""
    gib = machine / GIB
    lower = upper = _BRACKETS[-1]
    for i in range(1, len(_BRACKETS)):
        if gib < _BRACKETS[i][0]:
            lower, upper = _BRACKETS[i - 1], _BRACKETS[i]
            break
    factor = 0.0 if lower is upper else (gib - lower[0]) / (upper[0] - lower[0])

    def at(column: int) -> int:
        value = lower[column] + (upper[column] - lower[column]) * factor
        return int(value * 1024) * MIB

    return at(1), at(2)


def recommend(machine: int, store: int = 0) -> MemoryPlan:
    """Heap and page cache for a machine with ``machine`` bytes and a store of ``store`` bytes.

    Example:
        >>> plan = recommend(16 * GIB, store=5 * GIB)
        >>> plan.heap_size, plan.page_cache_size
        ('4g', '6g')
    """
    if machine <= 0:
        raise ConfigurationError(f"machine memory must be positive, not {machine}")
    os_reserve, neo4j_heap = _interpolate(machine)
    heap = max(min(neo4j_heap, HEAP_CAP), 2 * MIB)
    left = max(machine - os_reserve - heap, 8 * MIB)
    wanted = max(math.ceil(max(store, 0) * STORE_GROWTH / MIB) * MIB, PAGE_CACHE_FLOOR)
    return MemoryPlan(machine, os_reserve, heap, min(left, wanted), max(store, 0))


def parse_size(text: str, what: str = "size") -> int:
    """``512m``, ``2g``, ``1048576`` -> bytes; anything else is a ``ConfigurationError``."""
    match = _SIZE.match(text)
    if not match or int(match.group(1)) <= 0:
        raise ConfigurationError(f"{what} must be a positive size such as 512m or 2g, "
                                 f"not {text!r}")
    return int(match.group(1)) * _UNITS[match.group(2).lower()]


def format_size(size: int) -> str:
    """Bytes as the largest whole unit: ``4g``, ``6144m``, ``300k``."""
    for unit, factor in (("t", 1 << 40), ("g", GIB), ("m", MIB), ("k", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor}{unit}"
    return str(size)


def machine_memory() -> int:
    """This machine's memory in bytes: ``MemTotal``, or the cgroup limit when lower."""
    total = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                total = int(line.split()[1]) * 1024
                break
    except (OSError, ValueError, IndexError):
        total = 0
    if total <= 0:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for limit_file in ("/sys/fs/cgroup/memory.max",
                       "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            limit = Path(limit_file).read_text().strip()
        except OSError:
            continue
        if limit.isdigit() and 0 < int(limit) < total:
            total = int(limit)
    return total


def store_size(data_dir: Path, database: str = "neo4j") -> int:
    """Bytes of the page cache's share of a store: its files without Lucene index folders."""
    root = data_dir / "data" / "databases" / database
    total = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(_LUCENE_PROVIDERS)]
        for name in files:
            try:
                info = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            total += info.st_size
    return total


def setting(explicit: str | None, env: str) -> str | None:
    """A size from the argument, else from the environment variable; validated, or None."""
    value = explicit if explicit is not None else (os.environ.get(env) or None)
    if value is None:
        return None
    parse_size(value, f"--{env.removeprefix('THALABUS_NEO4J_').lower().replace('_', '-')} "
                      f"/ ${env}")
    return value.strip()


def fill_sizes(data_dir: Path, heap: str | None, page_cache: str | None
               ) -> tuple[str, str, MemoryPlan]:
    """The heap and page cache given, the rule filling those that are None, and the plan."""
    plan = recommend(machine_memory(), store_size(data_dir))
    return heap or plan.heap_size, page_cache or plan.page_cache_size, plan


def outgrown_warning(store: int, page_cache: int) -> str | None:
    """A warning when the store no longer fits its page cache, else None."""
    if store <= page_cache:
        return None
    return (f"the store ({format_size(_round_mib(store))}) has outgrown the page cache "
            f"({format_size(page_cache)}): queries will read from disk; restart the server "
            "(thalabus-graph neo4j stop, then start) to size it anew, or set --page-cache / "
            f"${PAGE_CACHE_ENV}")


def _round_mib(size: int) -> int:
    return max(math.ceil(size / MIB), 1) * MIB
