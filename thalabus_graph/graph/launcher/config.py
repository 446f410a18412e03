"""The ``neo4j.conf`` the launcher writes: raw settings by name, never Java constants."""

from __future__ import annotations

from pathlib import Path

from thalabus_graph.errors import ConfigurationError
from thalabus_graph.graph.launcher.memory import MIB, format_size, parse_size

LUCENE_RAM_BUFFER_MB = 128
"""MiB of index updates a Lucene index writer buffers before it flushes a segment."""


TRANSACTION_MEMORY_FLOOR = 512 * MIB
"""The least memory all transactions together may use."""


def transaction_memory_for(heap: str) -> str:
    """The memory all transactions together may use: a quarter of the heap, at least 512 MiB.
    An ingest writes ``write_batch_size`` fragments in one transaction (about 250 MiB for
    20,000 fragments of 384 dimensions), and a vector index gains one Lucene segment per
    transaction, which every search visits."""
    try:
        heap_bytes = parse_size(heap, "heap")
    except ConfigurationError:  # the JVM refuses such a heap itself, and its log says why
        return format_size(TRANSACTION_MEMORY_FLOOR)
    return format_size(max(TRANSACTION_MEMORY_FLOOR, heap_bytes // 4))


def conf_text(*, page_cache: str, transaction_memory: str, plugins: Path | None = None) -> str:
    """Raw Neo4j settings, one ``name=value`` a line; ``plugins``: the folder Neo4j loads
    procedure jars from (``plugin.plugin_dir``), left at Neo4j's default when None."""
    settings = {
        "server.memory.pagecache.size": page_cache,
        "dbms.memory.transaction.total.max": transaction_memory,
        # Bolt otherwise waits 5 s twice on shutdown for idle worker threads.
        "internal.server.bolt.thread_pool_shutdown_wait_time": "1s",
        "internal.server.bolt.connection_shutdown_wait_time": "1s",
        # Lucene flushes a segment when this buffer fills: large enough that one ingest
        # transaction (write_batch_size fragments) lands in one segment.
        "internal.dbms.index.lucene.standard_ram_buffer_size": str(LUCENE_RAM_BUFFER_MB),
    }
    if plugins is not None:
        settings["server.directories.plugins"] = str(plugins)
    return "".join(f"{key}={value}\n" for key, value in settings.items())
