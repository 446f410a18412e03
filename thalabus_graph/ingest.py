"""Documents into the graph: streamed, batched ``UNWIND`` writes, embeddings computed or reused.

A batch of documents is written in one write transaction, so a document is written whole or
not at all; re-ingesting a document replaces it (its old fragments are deleted first, so no
orphans remain). A fragment whose text and embedding model are unchanged keeps its stored
vector (matched by a hash of model + text) instead of calling the embedder again.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from neo4j import ManagedTransaction

from thalabus_graph.documents import (
    LineError,
    SourceDocument,
    SourceFragment,
    document_from_dict,
    iter_documents,
)
from thalabus_graph.embeddings import Embedder, text_hash
from thalabus_graph.errors import IngestError
from thalabus_graph.graph.database import Database, run
from thalabus_graph.settings import Settings

PRECOMPUTED = "precomputed"


@dataclass
class IngestReport:
    """What an ingestion run did."""

    documents: int = 0
    fragments: int = 0
    embeddings_computed: int = 0
    embeddings_reused: int = 0
    embeddings_supplied: int = 0
    seconds: float = 0.0
    errors: list[LineError] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON form, with rates."""
        secs = max(self.seconds, 1e-9)
        return {
            "documents": self.documents,
            "fragments": self.fragments,
            "embeddings_computed": self.embeddings_computed,
            "embeddings_reused": self.embeddings_reused,
            "embeddings_supplied": self.embeddings_supplied,
            "seconds": round(self.seconds, 3),
            "documents_per_second": round(self.documents / secs, 1),
            "fragments_per_second": round(self.fragments / secs, 1),
            "errors": [{"line": e.line_number, "message": e.message} for e in self.errors],
        }


class Ingestor:
    """Writes documents in batches; see ``ThalabusGraph.ingest`` for the public entry point.

    Example:
        >>> Ingestor(db, settings, embedder).ingest("corpus.jsonl")  # doctest: +SKIP
    """

    def __init__(self, db: Database, settings: Settings, embedder: Embedder | None) -> None:
        self.db = db
        self.settings = settings
        self.embedder = embedder

    def ingest(self, source: str | os.PathLike[str] | Iterable[SourceDocument | dict[str, Any]],
               *, strict: bool = False, progress: bool | None = None) -> IngestReport:
        """Ingest a JSONL path, or an iterable of ``SourceDocument`` / plain dicts.

        Args:
            strict: a bad line stops the run (IngestError) instead of being skipped and
                reported; documents of earlier batches stay written, whole.
            progress: show a progress bar (default: only when stderr is a terminal).
        """
        report = IngestReport()
        start = time.perf_counter()
        show = sys.stderr.isatty() if progress is None else progress
        bar = _progress(show)
        try:
            for batch in self._batches(self._documents(source, strict, report)):
                self._write_batch(batch, report)
                bar.update(len(batch))
                bar.set_postfix_str(_rates(report, time.perf_counter() - start))
        finally:
            bar.close()
            report.seconds = time.perf_counter() - start
        return report

    # --- input ---------------------------------------------------------------------------
    def _documents(self, source: Any, strict: bool, report: IngestReport
                   ) -> Iterator[SourceDocument]:
        for item in self._parsed(source):
            if isinstance(item, SourceDocument):
                item = self._check_dimensions(item)
            if isinstance(item, LineError):
                if strict:
                    raise item.to_exception()
                report.errors.append(item)
                continue
            yield item

    def _check_dimensions(self, doc: SourceDocument) -> SourceDocument | LineError:
        dims = self.settings.embedding_dimensions
        for frag in doc.embeddable():
            if frag.embedding is not None and len(frag.embedding) != dims:
                return LineError(doc.line_number or 0,
                                 f"{frag.fragmentid}: embedding has {len(frag.embedding)} "
                                 f"dimensions, the graph uses {dims}")
        return doc

    def _parsed(self, source: Any) -> Iterator[SourceDocument | LineError]:
        if isinstance(source, str | os.PathLike):
            yield from iter_documents(source)
            return
        for number, item in enumerate(source, start=1):
            if isinstance(item, SourceDocument):
                yield item
                continue
            try:
                yield document_from_dict(item, number)
            except IngestError as exc:
                yield LineError(number, str(exc))

    def _batches(self, documents: Iterator[SourceDocument]) -> Iterator[list[SourceDocument]]:
        batch: list[SourceDocument] = []
        size = 0
        limit = self.settings.write_batch_size
        for doc in documents:
            batch.append(doc)
            size += 1 + sum(1 for _ in doc.fragments())
            if size >= limit:
                yield batch
                batch, size = [], 0
        if batch:
            yield batch

    # --- embeddings ----------------------------------------------------------------------
    def _embeddings(self, batch: list[SourceDocument], report: IngestReport
                    ) -> dict[str, tuple[list[float], str]]:
        """fragment id -> (vector, hash) for every embeddable fragment of the batch."""
        out: dict[str, tuple[list[float], str]] = {}
        wanted: dict[str, SourceFragment] = {}
        model = self.embedder.model_id if self.embedder is not None else PRECOMPUTED
        for doc in batch:
            for frag in doc.embeddable():
                if frag.embedding is not None:
                    out[frag.fragmentid] = ([float(x) for x in frag.embedding],
                                            text_hash(PRECOMPUTED, frag.text))
                    report.embeddings_supplied += 1
                else:
                    wanted[frag.fragmentid] = frag
        if not wanted:
            return out
        hashes = {fid: text_hash(model, f.text) for fid, f in wanted.items()}
        rows = self.db.read("ingest_existing_embeddings", fragments=[
            {"fragmentid": fid, "hash": h} for fid, h in hashes.items()])
        for row in rows:
            fid = row["fragmentid"]
            out[fid] = (row["embedding"], hashes[fid])
            report.embeddings_reused += 1
        missing = [fid for fid in wanted if fid not in out]
        if missing:
            if self.embedder is None:
                raise IngestError(f"{len(missing)} fragments have no embedding and no embedder "
                                  "is configured")
            vectors = self.embedder.embed_passages([wanted[fid].text for fid in missing])
            for fid, vec in zip(missing, vectors, strict=True):
                out[fid] = ([float(x) for x in vec], hashes[fid])
            report.embeddings_computed += len(missing)
        return out

    # --- writing -------------------------------------------------------------------------
    def _write_batch(self, batch: list[SourceDocument], report: IngestReport) -> None:
        vectors = self._embeddings(batch, report)
        docs, rows = _rows(batch, vectors)

        def work(tx: ManagedTransaction) -> None:
            run(tx, "ingest_delete_fragments", documentids=[d["documentid"] for d in docs])
            run(tx, "ingest_upsert_documents", docs=docs)
            for kind in ("chapters", "paragraphs", "summaries", "keywords"):
                if rows[kind]:
                    run(tx, f"ingest_create_{kind}", rows=rows[kind])

        self.db.write_tx(work, what=f"writing {len(batch)} documents")
        report.documents += len(batch)
        report.fragments += sum(len(r) for r in rows.values())


def _rows(batch: list[SourceDocument], vectors: dict[str, tuple[list[float], str]]
          ) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    docs: list[dict[str, Any]] = []
    rows: dict[str, list[dict[str, Any]]] = {
        "chapters": [], "paragraphs": [], "summaries": [], "keywords": []}
    latest = {doc.documentid: doc for doc in batch}  # a repeated id: the later line wins
    for doc in latest.values():
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
        for kind, frags in (("chapters", doc.chapters), ("paragraphs", doc.paragraphs),
                            ("summaries", doc.summaries), ("keywords", doc.keywords)):
            for frag in frags:
                vec, digest = vectors.get(frag.fragmentid, (None, None))
                rows[kind].append({
                    "fragmentid": frag.fragmentid, "documentid": doc.documentid,
                    "ordinal": frag.ordinal, "text": frag.text, "chapter":
                    frag.chapter_fragmentid, "embedding": vec, "hash": digest,
                })
    return docs, rows


class _NoBar:
    def update(self, n: int) -> None: ...
    def set_postfix_str(self, s: str) -> None: ...
    def close(self) -> None: ...


def _progress(show: bool) -> Any:
    if not show:
        return _NoBar()
    from tqdm import tqdm

    return tqdm(unit="doc", desc="ingest", file=sys.stderr)


def _rates(report: IngestReport, seconds: float) -> str:
    secs = max(seconds, 1e-9)
    return f"{report.fragments / secs:.0f} frag/s, {report.embeddings_computed} embedded"
