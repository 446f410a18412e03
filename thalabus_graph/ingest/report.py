"""What an ingestion run did: the counts, the rejected lines and what the caller should know.

One job: the run's record (``IngestReport``, with the documentids given twice as
``Duplicate``), its JSON form and its warnings, kept apart from the writing so the CLI, the
Python API and the MCP server read one value whatever path wrote the documents.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from thalabus_graph.ingest.source import LineError


@dataclass(frozen=True)
class Duplicate:
    """A documentid given again later in the same run: ``line_number`` lost to ``replaced_by``."""

    documentid: str
    line_number: int
    replaced_by: int


@dataclass
class IngestReport:
    """What an ingestion run did.

    ``members_dropped`` maps a dataset id to how many of its members were dropped because
    their fragment is no longer in a re-ingested document; members whose fragment still
    exists are kept. ``duplicates`` lists documentids given more than once (the last wins).
    """

    documents: int = 0
    fragments: int = 0
    fragments_deleted: int = 0
    embeddings_computed: int = 0
    embeddings_reused: int = 0
    embeddings_supplied: int = 0
    seconds: float = 0.0
    errors: list[LineError] = field(default_factory=list)
    duplicates: list[Duplicate] = field(default_factory=list)
    members_dropped: dict[str, int] = field(default_factory=dict)
    bookmarks: tuple[str, ...] = ()
    """The writing graph object's bookmarks after the run (``ThalabusGraph.ingest`` sets
    them): another process that waits for them sees every document written."""
    index_wait_seconds: float = 0.0
    """Time spent at the end waiting for the indexes to be ONLINE and queryable (in ``seconds``)."""
    index_warning: str = ""
    """Why an index is not online after the ingest (empty when all are)."""
    warm_up_seconds: float = 0.0
    """Time spent after a bulk ingest running each search path once, so the first queries
    do not wait for Neo4j to plan them (``thalabus_graph.warm_up``; in ``seconds`` only when
    ``ThalabusGraph.ingest`` ran it)."""
    warm_up_problem: str = ""
    """Why the warm-up stopped early (empty when it ran through or did not run)."""
    field_notices: list[LineError] = field(default_factory=list)
    """Written lines with a key stored as an extra property that looks like a misspelt field
    (``chapter`` for ``chapters``): the document was written, the key is only a property."""

    def to_dict(self) -> dict[str, Any]:
        """JSON form, with rates."""
        secs = max(self.seconds, 1e-9)
        return {
            "documents": self.documents,
            "fragments": self.fragments,
            "fragments_deleted": self.fragments_deleted,
            "embeddings_computed": self.embeddings_computed,
            "embeddings_reused": self.embeddings_reused,
            "embeddings_supplied": self.embeddings_supplied,
            "seconds": round(self.seconds, 3),
            "documents_per_second": round(self.documents / secs, 1),
            "fragments_per_second": round(self.fragments / secs, 1),
            "errors": [{"line": e.line_number, "message": e.message} for e in self.errors],
            "duplicates": [{"documentid": d.documentid, "line": d.line_number,
                            "replaced_by": d.replaced_by} for d in self.duplicates],
            "dataset_members_dropped": dict(sorted(self.members_dropped.items())),
            "bookmarks": list(self.bookmarks),
            "index_wait_seconds": round(self.index_wait_seconds, 3),
            "warm_up_seconds": round(self.warm_up_seconds, 3),
            "warnings": self.warnings(),
        }

    def warnings(self) -> list[str]:
        """Human-readable lines for what the caller should know besides the errors."""
        out = [f"line {d.line_number}: documentid {d.documentid!r} given again on line "
               f"{d.replaced_by}; the later line replaces it whole" for d in self.duplicates]
        out.extend(f"line {n.line_number}: {n.message}" for n in self.field_notices)
        out.extend(f"dataset {ds}: {n} members dropped (their fragments left re-ingested "
                   "documents)" for ds, n in sorted(self.members_dropped.items()))
        if self.index_warning:
            out.append(self.index_warning)
        if self.warm_up_problem:
            out.append(f"the search warm-up stopped early (the first queries may be slower): "
                       f"{self.warm_up_problem}")
        return out


__all__ = ["Duplicate", "IngestReport"]
