"""Ingestion: JSON Lines documents into the graph (``ThalabusGraph.ingest`` is the entry point).

The package's modules, each with one job, bottom to top:

- ``source``: the input documents and fragments (``SourceDocument``, ``LineError``) and the
  format of a line;
- ``fields`` and ``parsing``: one JSON line validated field by field into a document;
- ``lines``: the input read a bounded line at a time, and counted for the progress;
- ``report``: what a run did (``IngestReport``);
- ``fragment_vectors``: a batch's vectors, supplied, reused or computed;
- ``writer``: one batch written in one transaction;
- ``ingestor``: the run (``Ingestor``): batches, checks, fallbacks, the wait for the indexes.
"""

from __future__ import annotations

from thalabus_graph.ingest.fragment_vectors import EMBED_STEP_LOCAL, LOAD_PASSAGE, PRECOMPUTED
from thalabus_graph.ingest.ingestor import INDEX_WAIT_SECONDS, Ingestor
from thalabus_graph.ingest.lines import COUNT_CHUNK_BYTES
from thalabus_graph.ingest.report import Duplicate, IngestReport
from thalabus_graph.ingest.writer import KINDS

__all__ = [
    "COUNT_CHUNK_BYTES",
    "EMBED_STEP_LOCAL",
    "INDEX_WAIT_SECONDS",
    "KINDS",
    "LOAD_PASSAGE",
    "PRECOMPUTED",
    "Duplicate",
    "IngestReport",
    "Ingestor",
]
