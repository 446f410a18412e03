"""Documents into the graph: streamed, batched ``UNWIND`` writes, embeddings computed or reused.

One job: the ingest run (``Ingestor``): parsed documents checked against the settings, batched,
written whole with their fallbacks, then the wait for the index work the writes caused; a
batch's vectors are ``ingest.fragment_vectors``, its transaction ``ingest.writer``.

A batch of documents is written in one write transaction, so a document is written whole or
not at all. Re-ingesting a document updates it in place: a fragment that still exists (same
fragment id) keeps its node, so dataset members pointing at it survive, with text, ordinal,
embedding and hash replaced; fragments no longer in the document are deleted (the dataset
members they held are counted per dataset, in the same transaction, and reported); new ones
are created; category and ontology links are rebuilt. A fragment whose text and embedding
model are unchanged keeps its stored vector (matched by a hash of model + text). The
application's graph around ours stays: its relationships and labels on the Document and on
every kept fragment, and the Document properties the input never gave (``ingest.source``,
``INGEST_PROPERTIES``); a deleted fragment takes its relationships along.

Concurrent writers of the same document serialise: each transaction first takes the write
locks of its Document nodes in sorted order, and transient failures (deadlocks on shared
category nodes) are retried by the driver's managed transactions.

Nothing is lost to one bad document: a line the parser rejects is reported with its number
and skipped (or stops the run with ``strict``); if Neo4j or the driver still refuses a batch
for something in a document, the batch is rewritten one document at a time and only the
refused documents are reported. A documentid repeated in one run: the last line wins, whole,
and ``IngestReport.duplicates`` names both lines (one id per document is remembered per run).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any

from thalabus_graph.embeddings import Embedder
from thalabus_graph.errors import GraphError, IngestError, UnembeddedDocuments
from thalabus_graph.graph import category_definitions, cypher_library
from thalabus_graph.graph.database import Database
from thalabus_graph.graph.migrations.runner import require_migrated
from thalabus_graph.ingest.fields import field_notices
from thalabus_graph.ingest.fragment_vectors import FragmentVectors
from thalabus_graph.ingest.lines import count_documents, iter_documents, line_limit
from thalabus_graph.ingest.parsing import document_from_dict
from thalabus_graph.ingest.report import Duplicate, IngestReport
from thalabus_graph.ingest.source import ENGINE_PROPERTIES, LineError, SourceDocument
from thalabus_graph.ingest.writer import (
    document_fault,
    out_of_transaction_memory,
    record,
    write_documents,
)
from thalabus_graph.progress import NoProgress, Progress
from thalabus_graph.settings import Settings
from thalabus_graph.vectors import vector_problem

logger = logging.getLogger(__name__)

INDEX_WAIT_SECONDS = 600
"""How long the end of an ingest waits for the index work it caused (``db.awaitIndexes``)."""


class Ingestor:
    """Writes documents in batches; see ``ThalabusGraph.ingest`` for the public entry point.

    Example:
        >>> Ingestor(db, settings, embedder).ingest("corpus.jsonl")  # doctest: +SKIP
    """

    def __init__(self, db: Database, settings: Settings, embedder: Embedder | None) -> None:
        self.db = db
        self.settings = settings
        self.embedder = embedder
        self._vectors = FragmentVectors(db, settings, embedder, NoProgress())
        self.index_warning = ""
        self._defined: frozenset[str] = frozenset()

    def ingest(self, source: str | os.PathLike[str] | Iterable[SourceDocument | dict[str, Any]],
               *, strict: bool = False, progress: bool | None = None) -> IngestReport:
        """Ingest a JSONL path, or an iterable of ``SourceDocument`` / plain dicts.

        Args:
            strict: a bad line stops the run (IngestError) instead of being skipped and
                reported; documents of earlier batches stay written, whole.
            progress: show the total, rate and ETA (`thalabus_graph.progress`): a bar when
                stderr is a terminal, else log lines on ``thalabus_graph.progress``; False:
                nothing. The input is counted first (the lines of a file, ``len`` of a list).

        Raises:
            MigrationError: the database was never migrated (nothing is written).
        """
        require_migrated(self.db, "ingest")
        self._defined = category_definitions.defined_names(self.db)
        report = IngestReport()
        start = time.perf_counter()
        show = progress is not False
        bar = (Progress(count_documents(source), terminal=sys.stderr.isatty()) if show
               else NoProgress())
        self._vectors = FragmentVectors(self.db, self.settings, self.embedder, bar)
        try:
            for batch in self._batches(self._documents(source, strict, report)):
                self._write_batch(batch, report, strict)
                bar.advance(len(batch))
            if report.documents:
                self.index_warning = ""
                report.index_wait_seconds = self._await_indexes()
                report.index_warning = self.index_warning
        finally:
            bar.close()
            self._vectors = FragmentVectors(self.db, self.settings, self.embedder, NoProgress())
            report.seconds = time.perf_counter() - start
            report.errors.sort(key=lambda e: e.line_number)
        return report

    def _await_indexes(self) -> float:
        """Wait until every index is ONLINE, so the ingest returns a queryable graph.

        ``db.awaitIndexes`` covers the indexes populating after this ingest's writes; the
        time it took is logged and reported (``index_wait_seconds``).
        """
        began = time.perf_counter()
        try:
            self.db.run_schema(cypher_library.load("migrations_await_indexes"),
                               {"timeout": INDEX_WAIT_SECONDS})
        except GraphError as exc:  # the documents are written; say why queries may suffer
            self.index_warning = f"an index is not online after the ingest: {exc}"
            logger.warning("ingest: %s", self.index_warning)
        waited = time.perf_counter() - began
        logger.info("ingest: waited %.2f s for the indexes to be online", waited)
        return waited

    # --- input ---------------------------------------------------------------------------
    def _documents(self, source: Any, strict: bool, report: IngestReport
                   ) -> Iterator[SourceDocument]:
        seen: dict[str, int] = {}
        for item in self._parsed(source):
            if isinstance(item, SourceDocument):
                item = self._check(item)
            if isinstance(item, LineError):
                if strict:
                    raise item.to_exception()
                report.errors.append(item)
                continue
            line = item.line_number or 0
            report.field_notices.extend(LineError(line, notice) for notice in field_notices(item))
            earlier = seen.get(item.documentid)
            if earlier is not None:
                report.duplicates.append(Duplicate(item.documentid, earlier, line))
            seen[item.documentid] = line
            yield item

    def _check(self, doc: SourceDocument) -> SourceDocument | LineError:
        """The document, or a line error when an extra property takes a name of
        ``ENGINE_PROPERTIES`` (a ``SourceDocument`` built in Python skips the parser's check),
        a category takes a graph-defined name (queries would read the definition, never the
        stored values), a fragment's text is longer than ``max_passage_chars`` or a supplied
        vector fails ``vector_problem`` (dimension, finite float32 values, norm bounds)."""
        reserved = sorted(ENGINE_PROPERTIES.intersection(doc.properties))
        if reserved:
            return LineError(doc.line_number or 0, f"property name {reserved[0]!r} is reserved: "
                             "the engine stores its own on documents and fragments")
        defined = sorted(self._defined.intersection(doc.categories))
        if defined:
            return LineError(doc.line_number or 0, f"category name {defined[0]!r} is defined "
                             "by a graph pattern (define_category): queries read the "
                             "definition, so a document cannot store it")
        dims = self.settings.embedding_dimensions
        longest = max((len(f.text) for f in doc.fragments()), default=0)
        if longest > self.settings.max_passage_chars:
            return LineError(doc.line_number or 0, f"a fragment of {longest:,} characters; "
                             f"the limit is {self.settings.max_passage_chars:,} "
                             "(max_passage_chars)")
        for frag in doc.embeddable():
            if frag.embedding is None:
                continue
            problem = vector_problem(frag.embedding, dims)
            if problem is not None:
                return LineError(doc.line_number or 0, f"{frag.fragmentid}: embedding {problem}")
        return doc

    def _parsed(self, source: Any) -> Iterator[SourceDocument | LineError]:
        if isinstance(source, str | os.PathLike):
            yield from iter_documents(
                source, max_line_bytes=line_limit(self.settings.max_passage_chars))
            return
        for number, item in enumerate(source, start=1):
            if isinstance(item, SourceDocument):
                yield item if item.line_number is not None else replace(item, line_number=number)
                continue
            try:
                yield document_from_dict(item, number)
            except IngestError as exc:
                yield LineError(number, str(exc))

    def _batches(self, documents: Iterator[SourceDocument]) -> Iterator[list[SourceDocument]]:
        """Batches of about ``write_batch_size`` documents + fragments; a documentid repeated
        within a batch keeps only its last line (whole: text and supplied vectors)."""
        batch: dict[str, SourceDocument] = {}
        size = 0
        limit = self.settings.write_batch_size
        for doc in documents:
            earlier = batch.pop(doc.documentid, None)
            if earlier is not None:
                size -= _size(earlier)
            batch[doc.documentid] = doc
            size += _size(doc)
            if size >= limit:
                yield list(batch.values())
                batch, size = {}, 0
        if batch:
            yield list(batch.values())

    # --- writing -------------------------------------------------------------------------
    def _write_batch(self, batch: list[SourceDocument], report: IngestReport,
                     strict: bool) -> None:
        """Write a batch in one transaction; if something in a document is refused, rewrite
        the batch one document at a time and report (or, strict, raise) only the refused."""
        try:
            vectors = self._vectors.for_batch(batch, report)
        except UnembeddedDocuments as exc:
            errors = [LineError(d.line_number or 0, "fragments without an embedding and no "
                                "embedder is configured (supply \"embeddings\" or an embedder)")
                      for d in batch if d.documentid in exc.documentids]
            if strict:
                raise errors[0].to_exception() from None
            report.errors.extend(errors)
            batch = [d for d in batch if d.documentid not in exc.documentids]
            if not batch:
                return
            vectors = self._vectors.for_batch(batch, report)
        batch = self._drop_bad_vectors(batch, vectors, report, strict)
        if batch:
            self._write_checked(batch, vectors, report, strict)

    def _write_checked(self, batch: list[SourceDocument],
                       vectors: dict[str, tuple[list[float], str]], report: IngestReport,
                       strict: bool) -> None:
        """Write the batch in one transaction; halves of it when the server's transaction
        memory cannot hold it all; one document at a time when a document is refused."""
        try:
            record(report, batch, write_documents(self.db, batch, vectors))
            return
        except (GraphError, ValueError, TypeError, OverflowError) as exc:
            if out_of_transaction_memory(exc) and len(batch) > 1:
                half = len(batch) // 2
                logger.info("ingest: the server's transaction memory cannot hold %d documents "
                            "at once; writing them in two transactions", len(batch))
                for part in (batch[:half], batch[half:]):
                    self._write_checked(part, vectors, report, strict)
                return
            if not document_fault(exc):
                raise
            if strict:
                lines = sorted(d.line_number or 0 for d in batch)
                raise IngestError(f"Neo4j refused a document of lines {lines[0]}-{lines[-1]}, "
                                  f"nothing of them was written: {exc}", lines[0]) from exc
        for doc in batch:
            try:
                record(report, [doc], write_documents(self.db, [doc], vectors))
            except (GraphError, ValueError, TypeError, OverflowError) as exc:
                if not document_fault(exc):
                    raise
                report.errors.append(LineError(doc.line_number or 0,
                                               f"Neo4j refused the document: {exc}"))

    def _drop_bad_vectors(self, batch: list[SourceDocument],
                          vectors: dict[str, tuple[list[float], str]], report: IngestReport,
                          strict: bool) -> list[SourceDocument]:
        """The batch without documents holding a vector that fails ``vector_problem`` (an
        embedder returning a zero or non-finite vector); each is a line error."""
        dims = self.settings.embedding_dimensions
        kept: list[SourceDocument] = []
        for doc in batch:
            error = next((LineError(doc.line_number or 0, f"{frag.fragmentid}: the computed "
                                    f"embedding {problem}")
                          for frag in doc.embeddable() if frag.fragmentid in vectors
                          for problem in [vector_problem(vectors[frag.fragmentid][0], dims)]
                          if problem is not None), None)
            if error is None:
                kept.append(doc)
            elif strict:
                raise error.to_exception()
            else:
                report.errors.append(error)
        return kept


def _size(doc: SourceDocument) -> int:
    return 1 + sum(1 for _ in doc.fragments())
