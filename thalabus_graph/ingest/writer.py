"""One batch of documents written to the graph in one transaction, and why a write failed.

One job: the batch's rows (documents, fragments per kind with their vectors, language labels
and ontology) and the transaction that writes them, updating kept fragments in place so
dataset members survive a re-ingest; plus the tests that tell a refusal of the data (a
document to report) and of the transaction memory (a batch to halve) from other failures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from neo4j import ManagedTransaction
from neo4j.exceptions import ClientError, DatabaseError, Neo4jError

from thalabus_graph import languages, text_languages
from thalabus_graph.errors import OutOfTransactionMemory
from thalabus_graph.graph.database import Database, run
from thalabus_graph.ingest.report import IngestReport
from thalabus_graph.ingest.source import DOCUMENT_FIELDS, SourceDocument, SourceFragment

KINDS: tuple[str, ...] = ("chapters", "paragraphs", "summaries", "questions", "keywords")
"""Fragment kinds in write order: paragraphs link to chapters, so chapters come first."""


@dataclass
class Written:
    """What one committed batch transaction did (the work function may run more than once)."""

    fragments: int = 0
    deleted: int = 0
    dropped: dict[str, int] = field(default_factory=dict)


def write_documents(db: Database, batch: list[SourceDocument],
                    vectors: dict[str, tuple[list[float], str]]) -> Written:
    """Write the batch in one write transaction: lock its documents (sorted), delete the
    fragments they no longer hold (counting the dataset members those held), upsert the
    documents, update kept fragments in place and create new ones."""
    docs, rows, keep = _rows(batch, vectors)
    _label_rows(batch, rows)
    documentids = sorted(d["documentid"] for d in docs)

    def work(tx: ManagedTransaction) -> Written:
        try:
            return write(tx)
        except Neo4jError as exc:
            if _memory_refusal(exc):  # transient to the driver, but retrying cannot help
                raise OutOfTransactionMemory(
                    f"writing {len(batch)} documents: {exc.code}: {exc.message}") from exc
            raise

    def write(tx: ManagedTransaction) -> Written:
        run(tx, "ingest_lock_documents", documentids=documentids)
        existing = {r["fragmentid"] for r in run(tx, "ingest_existing_fragments",
                                                 documentids=documentids)}
        stale = sorted(existing - keep)
        dropped: dict[str, int] = {}
        if stale:
            dropped = {r["datasetid"]: int(r["members"])
                       for r in run(tx, "ingest_stale_members", fragmentids=stale)}
            run(tx, "ingest_delete_fragments", fragmentids=stale)
        run(tx, "ingest_upsert_documents", docs=docs, fields=list(DOCUMENT_FIELDS))
        # Existing fragments are updated in place (dataset members keep pointing at
        # them); new ones take the plain CREATE fast path.
        for kind in ("chapters", "paragraphs", "summaries", "questions", "keywords"):
            old = [r for r in rows[kind] if r["fragmentid"] in existing]
            new = [r for r in rows[kind] if r["fragmentid"] not in existing]
            if old:
                run(tx, f"ingest_update_{kind}", rows=old,
                    **text_languages.update_parameters(kind))
            if new:
                run(tx, f"ingest_create_{kind}", rows=new)
        return Written(sum(len(r) for r in rows.values()), len(stale), dropped)

    return db.write_tx(work, what=f"writing {len(batch)} documents")


def record(report: IngestReport, batch: list[SourceDocument], written: Written) -> None:
    """Add what a committed batch transaction did to the run's report."""
    report.documents += len(batch)
    report.fragments += written.fragments
    report.fragments_deleted += written.deleted
    for datasetid, n in written.dropped.items():
        report.members_dropped[datasetid] = report.members_dropped.get(datasetid, 0) + n


def _memory_refusal(exc: Neo4jError) -> bool:
    """Whether Neo4j refused a statement for a transaction memory limit
    (``dbms.memory.transaction.total.max`` or ``db.memory.transaction.max``)."""
    return "MemoryPoolOutOfMemoryError" in str(exc.code)


def out_of_transaction_memory(exc: BaseException) -> bool:
    """True when the server refused a write for its transaction memory limit: the same
    documents fit in smaller transactions (raised in the transaction function, or at its
    commit, which the driver retried first)."""
    if isinstance(exc, OutOfTransactionMemory):
        return True
    cause = exc.__cause__
    return isinstance(cause, Neo4jError) and _memory_refusal(cause)


def document_fault(exc: BaseException) -> bool:
    """True when a failed write was refused for something in the data, not for the server:
    the driver could not pack a value, or Neo4j rejected the statement's data (client error,
    or an index refusing a key). Transient errors were already retried by the driver."""
    if isinstance(exc, ValueError | TypeError | OverflowError):
        return True
    cause = exc.__cause__
    if isinstance(cause, ClientError):
        return True
    return isinstance(cause, DatabaseError) and "too large to index" in str(cause.message)


def _rows(batch: list[SourceDocument], vectors: dict[str, tuple[list[float], str]]
          ) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]], set[str]]:
    """Document rows, fragment rows per kind, and the fragment ids the documents keep; a
    document row's ``given`` names the properties its line gives (the input's from now on)."""
    docs: list[dict[str, Any]] = []
    rows: dict[str, list[dict[str, Any]]] = {kind: [] for kind in KINDS}
    keep: set[str] = set()
    for doc in batch:
        properties: dict[str, Any] = dict(doc.properties)
        properties["documentid"] = doc.documentid
        for key in DOCUMENT_FIELDS:
            value = getattr(doc, key)
            if value is not None:
                properties[key] = value
        docs.append({
            "documentid": doc.documentid,
            "ontology": doc.ontology,
            "properties": properties,
            "given": sorted(properties),
            "categories": [{"name": name, "value": value}
                           for name, values in doc.categories.items() for value in values],
        })
        keep.update(f.fragmentid for f in doc.fragments())
        for kind, frags in (("chapters", doc.chapters), ("paragraphs", doc.paragraphs),
                            ("summaries", doc.summaries), ("questions", doc.questions),
                            ("keywords", doc.keywords)):
            rows[kind].extend(_fragment_row(frag, vectors, doc.ontology) for frag in frags)
    return docs, rows, keep


def _label_rows(batch: list[SourceDocument], rows: dict[str, list[dict[str, Any]]]) -> None:
    """Give each chapter and keyword row its language labels (``text_languages``): the
    per-language full-text indexes of migration V0009 index the fragments carrying them."""
    codes = text_languages.languages_of(batch)
    for kind, label in (("chapters", "Chapter"), ("keywords", "Keyword")):
        for row in rows[kind]:
            row["labels"] = languages.labels_of(codes[row["documentid"]], label)


def _fragment_row(frag: SourceFragment, vectors: dict[str, tuple[list[float], str]],
                  ontologyid: str | None) -> dict[str, Any]:
    """One fragment's row; embedded fragments carry their document's ontology (``ontologyid``,
    null for none), which the 2026.x vector indexes filter on (migration V0007)."""
    vec, digest = vectors.get(frag.fragmentid, (None, None))
    return {"fragmentid": frag.fragmentid, "documentid": frag.documentid,
            "ordinal": frag.ordinal, "text": frag.text, "chapter": frag.chapter_fragmentid,
            "embedding": vec, "hash": digest, "ontologyid": ontologyid}


__all__ = [
    "KINDS",
    "Written",
    "document_fault",
    "out_of_transaction_memory",
    "record",
    "write_documents",
]
