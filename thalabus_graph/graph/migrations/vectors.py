"""Stored embeddings no cosine search can use: found by ``migrations status``, removed on request.

A vector is bad when its dimension is not the graph's, a value is not a finite 32-bit float,
or its norm is too close to zero or too large to square (``[0.0] * 384``, ``[1e-200] * 384``,
``[1e300] * 384``): Neo4j's cosine refuses such a vector, so an exact search over a scope that
holds one fails. Removing the embedding makes searches pass the fragment by until its
document is re-ingested (which embeds it again, or takes the corrected vectors it supplies).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from thalabus_graph.graph.database import Database

MIN_NORM = 1e-6
"""Norms at or below this count as zero (cosine divides by the norm)."""
MAX_ABS = 3.4028234663852886e38
"""The largest finite 32-bit float: vector indexes store 32-bit values."""
LISTED = 10
"""How many bad vectors a report names (all are counted)."""


@dataclass(frozen=True)
class BadVector:
    """One stored embedding a search cannot use, and why."""

    fragmentid: str
    documentid: str
    dimensions: int
    problem: str
    """``dimension``, ``not finite`` or ``norm``."""


@dataclass(frozen=True)
class VectorCheck:
    """How many stored embeddings are bad, the first of them, and what to do."""

    total: int
    listed: tuple[BadVector, ...]

    def advice(self) -> str:
        """One line for a person: what is wrong and how to repair it; empty when all is well."""
        if not self.total:
            return ""
        names = ", ".join(f"{b.fragmentid} ({b.problem})" for b in self.listed)
        more = f" and {self.total - len(self.listed)} more" if self.total > len(self.listed) else ""
        return (f"{self.total} stored embedding(s) no search can use: {names}{more}; remove them "
                "with `thalabus-graph migrations repair-vectors --yes`, then re-ingest their "
                "documents")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"total": self.total, "listed": [vars(b) for b in self.listed],
                "advice": self.advice()}


def _limits(dimensions: int) -> dict[str, Any]:
    return {"dimensions": dimensions, "max_abs": MAX_ABS,
            "min_square_norm": MIN_NORM * MIN_NORM, "max_square_norm": MAX_ABS}


def check_vectors(database: Database, dimensions: int, limit: int = LISTED) -> VectorCheck:
    """Count the bad stored embeddings and list the first ``limit`` (by fragmentid)."""
    rows = database.read("migrations_bad_vectors", limit=limit, **_limits(dimensions))
    if not rows:
        return VectorCheck(0, ())
    listed = tuple(BadVector(str(b["fragmentid"]), str(b["documentid"]), int(b["dimensions"]),
                             str(b["problem"])) for b in rows[0]["listed"])
    return VectorCheck(int(rows[0]["total"]), listed)


def remove_bad_vectors(database: Database, dimensions: int) -> tuple[int, list[str]]:
    """Remove every bad stored embedding; returns how many and their documents' ids."""
    rows = database.write("migrations_remove_bad_vectors", **_limits(dimensions))
    if not rows:
        return 0, []
    return int(rows[0]["removed"]), sorted(str(d) for d in rows[0]["documentids"])
