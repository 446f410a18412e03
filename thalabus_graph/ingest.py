"""Documents into the graph: streamed, batched ``UNWIND`` writes, embeddings computed or reused.

A batch of documents is written in one write transaction, so a document is written whole or
not at all. Re-ingesting a document updates it in place: a fragment that still exists (same
fragment id) keeps its node, so dataset members pointing at it survive, with text, ordinal,
embedding and hash replaced; fragments no longer in the document are deleted (the dataset
members they held are counted per dataset, in the same transaction, and reported); new ones
are created; category and ontology links are rebuilt. A fragment whose text and embedding
model are unchanged keeps its stored vector (matched by a hash of model + text).

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
import stat
import sys
import time
from collections.abc import Iterable, Iterator, Sized
from dataclasses import dataclass, field, replace
from typing import IO, Any

from neo4j import ManagedTransaction
from neo4j.exceptions import ClientError, DatabaseError, Neo4jError

from thalabus_graph import languages, text_languages
from thalabus_graph.documents import (
    ENGINE_PROPERTIES,
    LineError,
    SourceDocument,
    SourceFragment,
    document_from_dict,
    iter_documents,
    line_limit,
)
from thalabus_graph.embeddings import Embedder, WindowedEmbedder, text_hash
from thalabus_graph.errors import (
    GraphError,
    IngestError,
    OutOfTransactionMemory,
    UnembeddedDocuments,
)
from thalabus_graph.graph import cypher_library
from thalabus_graph.graph.database import Database, run
from thalabus_graph.graph.migrations.runner import require_migrated
from thalabus_graph.progress import NoProgress, Progress
from thalabus_graph.settings import Settings
from thalabus_graph.vectors import vector_problem

logger = logging.getLogger(__name__)

COUNT_CHUNK_BYTES = 1 << 20
"""How much of an input file is read at a time while counting its lines for the progress."""
INDEX_WAIT_SECONDS = 600
"""How long the end of an ingest waits for the index work it caused (``db.awaitIndexes``)."""
PRECOMPUTED = "precomputed"
LOAD_PASSAGE = "load the embedding model"
"""The passage embedded once to load the in-process model before its first timed batch."""


EMBED_STEP_LOCAL = 16
"""Texts embedded per call by the in-process model during ingest: about half a second each on
two cores, so the progress shows movement (and an ETA) within a second; a remote embedder gets
``embedder_batch_size x embedder_max_concurrency`` texts per call, its full parallelism."""

KINDS: tuple[str, ...] = ("chapters", "paragraphs", "summaries", "questions", "keywords")
"""Fragment kinds in write order: paragraphs link to chapters, so chapters come first."""


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
        }

    def warnings(self) -> list[str]:
        """Human-readable lines for what the caller should know besides the errors."""
        out = [f"line {d.line_number}: documentid {d.documentid!r} given again on line "
               f"{d.replaced_by}; the later line replaces it whole" for d in self.duplicates]
        out.extend(f"dataset {ds}: {n} members dropped (their fragments left re-ingested "
                   "documents)" for ds, n in sorted(self.members_dropped.items()))
        if self.index_warning:
            out.append(self.index_warning)
        if self.warm_up_problem:
            out.append(f"the search warm-up stopped early (the first queries may be slower): "
                       f"{self.warm_up_problem}")
        return out


@dataclass
class _Written:
    """What one committed batch transaction did (the work function may run more than once)."""

    fragments: int = 0
    deleted: int = 0
    dropped: dict[str, int] = field(default_factory=dict)


class Ingestor:
    """Writes documents in batches; see ``ThalabusGraph.ingest`` for the public entry point.

    Example:
        >>> Ingestor(db, settings, embedder).ingest("corpus.jsonl")  # doctest: +SKIP
    """

    def __init__(self, db: Database, settings: Settings, embedder: Embedder | None) -> None:
        self.db = db
        self.settings = settings
        self.embedder = embedder
        self._bar: Progress | NoProgress = NoProgress()
        self._embedder_loaded = False
        self.index_warning = ""

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
        report = IngestReport()
        start = time.perf_counter()
        show = progress is not False
        bar = (Progress(_total(source), terminal=sys.stderr.isatty()) if show
               else NoProgress())
        self._bar = bar
        self._embedder_loaded = False
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
            self._bar = NoProgress()
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
            earlier = seen.get(item.documentid)
            if earlier is not None:
                report.duplicates.append(Duplicate(item.documentid, earlier, line))
            seen[item.documentid] = line
            yield item

    def _check(self, doc: SourceDocument) -> SourceDocument | LineError:
        """The document, or a line error when an extra property takes a name of
        ``ENGINE_PROPERTIES`` (a ``SourceDocument`` built in Python skips the parser's check),
        a fragment's text is longer than ``max_passage_chars`` or a supplied vector fails
        ``vector_problem`` (dimension, finite float32 values, norm bounds)."""
        reserved = sorted(ENGINE_PROPERTIES.intersection(doc.properties))
        if reserved:
            return LineError(doc.line_number or 0, f"property name {reserved[0]!r} is reserved: "
                             "the engine stores its own on documents and fragments")
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

    # --- embeddings ----------------------------------------------------------------------
    def _embeddings(self, batch: list[SourceDocument], report: IngestReport
                    ) -> dict[str, tuple[list[float], str]]:
        """fragment id -> (vector, hash) for every embeddable fragment of the batch: supplied,
        reused (same fragment id, same model + text hash) or computed. Without an embedder,
        raises ``UnembeddedDocuments`` naming the documents that still lack vectors (counts
        untouched)."""
        out: dict[str, tuple[list[float], str]] = {}
        wanted: dict[str, SourceFragment] = {}
        model = self.embedder.model_id if self.embedder is not None else PRECOMPUTED
        for doc in batch:
            for frag in doc.embeddable():
                if frag.embedding is not None:
                    out[frag.fragmentid] = ([float(x) for x in frag.embedding],
                                            text_hash(PRECOMPUTED, frag.text))
                else:
                    wanted[frag.fragmentid] = frag
        supplied = len(out)
        hashes = {fragmentid: text_hash(model, f.text) for fragmentid, f in wanted.items()}
        rows = self.db.read("ingest_existing_embeddings", fragments=[
            {"fragmentid": fragmentid, "hash": h}
            for fragmentid, h in hashes.items()]) if wanted else []
        dims = self.settings.embedding_dimensions
        rows = [r for r in rows if vector_problem(r["embedding"], dims) is None]  # recompute
        for row in rows:
            out[row["fragmentid"]] = (row["embedding"], hashes[row["fragmentid"]])
        missing = [fragmentid for fragmentid in wanted if fragmentid not in out]
        if missing and self.embedder is None:
            raise UnembeddedDocuments({wanted[fragmentid].documentid for fragmentid in missing})
        if missing and self.embedder is not None:
            self._load_embedder(self.embedder)
            windowed = WindowedEmbedder(self.embedder, self.settings.embedding_window_chars,
                                        self.settings.embedding_max_windows)
            step = (EMBED_STEP_LOCAL if not self.settings.embedder_url else
                    self.settings.embedder_batch_size * self.settings.embedder_max_concurrency)
            for first, last in _steps(len(missing), step):
                part = missing[first:last]
                vectors = windowed.embed_passages([wanted[f].text for f in part])
                for fragmentid, vec in zip(part, vectors, strict=True):
                    out[fragmentid] = ([float(x) for x in vec], hashes[fragmentid])
                self._bar.partial(len(batch) * last / len(missing))
        report.embeddings_supplied += supplied
        report.embeddings_reused += len(rows)
        report.embeddings_computed += len(missing)
        if missing and self.embedder is not None:  # whose vectors the graph stores
            self.db.write("ingest_record_model", model_id=self.embedder.model_id)
        return out

    def _load_embedder(self, embedder: Embedder) -> None:
        """Load the in-process model when the first fragment needs a vector, with the
        progress paused, so its loading time is not taken for embedding speed (the first
        ETA). An ingest whose vectors are all supplied or reused never calls the embedder,
        which may be one that cannot embed passages (a query-only or unreachable service)."""
        if self._embedder_loaded:
            return
        self._embedder_loaded = True
        if self.settings.embedder_url or isinstance(self._bar, NoProgress):
            return  # a service has no model to load; without progress there is no ETA
        with self._bar.paused():
            embedder.embed_passages([LOAD_PASSAGE])

    # --- writing -------------------------------------------------------------------------
    def _write_batch(self, batch: list[SourceDocument], report: IngestReport,
                     strict: bool) -> None:
        """Write a batch in one transaction; if something in a document is refused, rewrite
        the batch one document at a time and report (or, strict, raise) only the refused."""
        try:
            vectors = self._embeddings(batch, report)
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
            vectors = self._embeddings(batch, report)
        batch = self._drop_bad_vectors(batch, vectors, report, strict)
        if batch:
            self._write_checked(batch, vectors, report, strict)

    def _write_checked(self, batch: list[SourceDocument],
                       vectors: dict[str, tuple[list[float], str]], report: IngestReport,
                       strict: bool) -> None:
        """Write the batch in one transaction; halves of it when the server's transaction
        memory cannot hold it all; one document at a time when a document is refused."""
        try:
            self._record(report, batch, self._write(batch, vectors))
            return
        except (GraphError, ValueError, TypeError, OverflowError) as exc:
            if _out_of_transaction_memory(exc) and len(batch) > 1:
                half = len(batch) // 2
                logger.info("ingest: the server's transaction memory cannot hold %d documents "
                            "at once; writing them in two transactions", len(batch))
                for part in (batch[:half], batch[half:]):
                    self._write_checked(part, vectors, report, strict)
                return
            if not _document_fault(exc):
                raise
            if strict:
                lines = sorted(d.line_number or 0 for d in batch)
                raise IngestError(f"Neo4j refused a document of lines {lines[0]}-{lines[-1]}, "
                                  f"nothing of them was written: {exc}", lines[0]) from exc
        for doc in batch:
            try:
                self._record(report, [doc], self._write([doc], vectors))
            except (GraphError, ValueError, TypeError, OverflowError) as exc:
                if not _document_fault(exc):
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

    def _write(self, batch: list[SourceDocument], vectors: dict[str, tuple[list[float], str]]
               ) -> _Written:
        docs, rows, keep = _rows(batch, vectors)
        _label_rows(batch, rows)
        documentids = sorted(d["documentid"] for d in docs)

        def work(tx: ManagedTransaction) -> _Written:
            try:
                return write(tx)
            except Neo4jError as exc:
                if _memory_refusal(exc):  # transient to the driver, but retrying cannot help
                    raise OutOfTransactionMemory(
                        f"writing {len(batch)} documents: {exc.code}: {exc.message}") from exc
                raise

        def write(tx: ManagedTransaction) -> _Written:
            run(tx, "ingest_lock_documents", documentids=documentids)
            existing = {r["fragmentid"] for r in run(tx, "ingest_existing_fragments",
                                                     documentids=documentids)}
            stale = sorted(existing - keep)
            dropped: dict[str, int] = {}
            if stale:
                dropped = {r["datasetid"]: int(r["members"])
                           for r in run(tx, "ingest_stale_members", fragmentids=stale)}
                run(tx, "ingest_delete_fragments", fragmentids=stale)
            run(tx, "ingest_upsert_documents", docs=docs)
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
            return _Written(sum(len(r) for r in rows.values()), len(stale), dropped)

        return self.db.write_tx(work, what=f"writing {len(batch)} documents")

    @staticmethod
    def _record(report: IngestReport, batch: list[SourceDocument], written: _Written) -> None:
        report.documents += len(batch)
        report.fragments += written.fragments
        report.fragments_deleted += written.deleted
        for datasetid, n in written.dropped.items():
            report.members_dropped[datasetid] = report.members_dropped.get(datasetid, 0) + n


def _size(doc: SourceDocument) -> int:
    return 1 + sum(1 for _ in doc.fragments())


def _memory_refusal(exc: Neo4jError) -> bool:
    """Whether Neo4j refused a statement for a transaction memory limit
    (``dbms.memory.transaction.total.max`` or ``db.memory.transaction.max``)."""
    return "MemoryPoolOutOfMemoryError" in str(exc.code)


def _out_of_transaction_memory(exc: BaseException) -> bool:
    """True when the server refused a write for its transaction memory limit: the same
    documents fit in smaller transactions (raised in the transaction function, or at its
    commit, which the driver retried first)."""
    if isinstance(exc, OutOfTransactionMemory):
        return True
    cause = exc.__cause__
    return isinstance(cause, Neo4jError) and _memory_refusal(cause)


def _document_fault(exc: BaseException) -> bool:
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
    """Document rows, fragment rows per kind, and the fragment ids the documents keep."""
    docs: list[dict[str, Any]] = []
    rows: dict[str, list[dict[str, Any]]] = {kind: [] for kind in KINDS}
    keep: set[str] = set()
    for doc in batch:
        properties: dict[str, Any] = dict(doc.properties)
        properties["documentid"] = doc.documentid
        for key in ("title", "language", "ontology"):
            value = getattr(doc, key)
            if value is not None:
                properties[key] = value
        docs.append({
            "documentid": doc.documentid,
            "ontology": doc.ontology,
            "properties": properties,
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


def _steps(count: int, step: int) -> Iterator[tuple[int, int]]:
    """``[first, last)`` ranges covering ``count`` items: one item first, so the first
    progress, and with it an ETA, comes at once; then ``step`` at a time."""
    first, size = 0, 1
    while first < count:
        last = min(count, first + size)
        yield first, last
        first, size = last, step


def _total(source: object) -> int | None:
    """How many documents ``source`` holds, counted before the run: the non-blank lines of a
    regular file (one pass over its bytes, ``COUNT_CHUNK_BYTES`` at a time, however long a
    line), ``len`` of a sized iterable, else None (no ETA; a pipe or device is not read
    twice)."""
    if isinstance(source, str | os.PathLike):
        try:
            if not stat.S_ISREG(os.stat(source).st_mode):
                return None
            with open(source, "rb") as handle:
                return _count_lines(handle)
        except OSError:
            return None  # the run itself reports the unreadable file
    return len(source) if isinstance(source, Sized) else None


def _count_lines(handle: IO[bytes]) -> int:
    """The lines of ``handle`` holding anything but whitespace, read in chunks."""
    count, pending = 0, False   # pending: the unfinished last line has content
    while chunk := handle.read(COUNT_CHUNK_BYTES):
        pieces = chunk.split(b"\n")
        for piece in pieces[:-1]:
            count += pending or bool(piece.strip())
            pending = False
        pending = pending or bool(pieces[-1].strip())
    return count + pending
