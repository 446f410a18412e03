"""Fragments aggregated to documents (``DocumentHit``): the best score of each document, its
details attached (those the searches read along with their hits, the rest in one read), best
first; and the one log line per fragment source of a query's result."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from thalabus_graph.fragments import Fragment, aggregate_documents
from thalabus_graph.graph.database import Database
from thalabus_graph.graph.properties import INGEST_PROPERTIES

logger = logging.getLogger("thalabus_graph.engine")


@dataclass(frozen=True)
class DocumentHit:
    """A document-level result: its best fragment score and its details; ``properties`` are
    the Document node's (the input's and the application's alike)."""

    documentid: str
    score: float
    title: str | None
    ontology: str | None
    properties: dict[str, Any]
    categories: dict[str, list[str]]
    fragments: list[Fragment]
    context: list[dict[str, Any]] | None = None
    """The rows a query's graph context returned for the document (None: none asked)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``context`` only when a graph context was asked)."""
        out = {"documentid": self.documentid, "score": self.score, "title": self.title,
               "ontology": self.ontology, "properties": self.properties,
               "categories": self.categories,
               "fragments": [f.to_dict() for f in self.fragments]}
        if self.context is not None:
            out["context"] = self.context
        return out


def documents_of(db: Database, fragments: Sequence[Fragment], *,
                 known: Mapping[str, Sequence[Any]] | None = None,
                 limit: int | None = None) -> list[DocumentHit]:
    """Aggregate fragments to documents: best score each, details attached, best first.

    ``known``: details the searches already read (documentid -> [documentid, properties,
    ontologyid, categories], as ``document_details`` returns them; ``ThalabusGraph.query``
    passes its executor's); only the documents missing there are read, in one statement.
    ``limit``: only the best ``limit`` documents are made (and their details read): a query
    asking for ten results reads ten documents' details, not its whole candidate pool's.
    """
    ranked = aggregate_documents(fragments)
    if limit is not None:
        ranked = ranked[:limit]
    if not ranked:
        return []
    details: dict[str, Sequence[Any]] = dict(known or {})
    missing = [d for d, _ in ranked if d not in details]
    if missing:
        rows = db.read_plain("document_details", documentids=missing)
        details.update((d[0], d) for d in (rows[0]["documents"] if rows else []))
    by_doc: dict[str, list[Fragment]] = {d: [] for d, _ in ranked}
    for f in fragments:
        if (held := by_doc.get(f.documentid)) is not None:
            held.append(f)
    out: list[DocumentHit] = []
    for documentid, score in ranked:
        _, props, ontology, categories = (details.get(documentid)
                                          or (documentid, None, None, None))
        cats: dict[str, list[str]] = {}
        for c in categories or ():
            if c.get("name") is not None:
                cats.setdefault(c["name"], []).append(c["value"])
        props = dict(props or {})
        props.pop(INGEST_PROPERTIES, None)  # the engine's bookkeeping, not the document's
        out.append(DocumentHit(documentid, score, props.get("title"), ontology, props,
                               {k: sorted(set(v)) for k, v in cats.items()},
                               by_doc.get(documentid, [])))
    return out


def log_sources(fragments: Sequence[Fragment]) -> None:
    """One INFO line per fragment source kind of a query's result (how many, best score)."""
    if not logger.isEnabledFor(logging.INFO):
        return
    counts = Counter(f.source for f in fragments)
    for source in sorted(counts):
        best = max(f.score for f in fragments if f.source == source)
        logger.info("query: %d %s fragments (best score %.4f)", counts[source], source, best)
