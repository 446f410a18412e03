"""The vectors of a batch's fragments during ingest: supplied, reused or computed.

One job: give every embeddable fragment of a batch a vector and the hash it is stored with,
reusing a stored vector whose model and text are unchanged and embedding only the rest (in
steps that keep the progress moving), so the writer never calls an embedder itself.
"""

from __future__ import annotations

from collections.abc import Iterator

from thalabus_graph.embeddings import Embedder, WindowedEmbedder, text_hash
from thalabus_graph.errors import UnembeddedDocuments
from thalabus_graph.graph.database import Database
from thalabus_graph.ingest.report import IngestReport
from thalabus_graph.ingest.source import SourceDocument, SourceFragment
from thalabus_graph.progress import NoProgress, Progress
from thalabus_graph.settings import Settings
from thalabus_graph.vectors import vector_problem

PRECOMPUTED = "precomputed"
LOAD_PASSAGE = "load the embedding model"
"""The passage embedded once to load the in-process model before its first timed batch."""
EMBED_STEP_LOCAL = 16
"""Texts embedded per call by the in-process model during ingest: about half a second each on
two cores, so the progress shows movement (and an ETA) within a second; a remote embedder gets
``embedder_batch_size x embedder_max_concurrency`` texts per call, its full parallelism."""


class FragmentVectors:
    """Vectors for the batches of one ingest run, shown on its progress.

    Example:
        >>> FragmentVectors(db, settings, embedder, NoProgress()).for_batch(batch, report)
        ... # doctest: +SKIP
    """

    def __init__(self, db: Database, settings: Settings, embedder: Embedder | None,
                 bar: Progress | NoProgress) -> None:
        self.db = db
        self.settings = settings
        self.embedder = embedder
        self._bar = bar
        self._embedder_loaded = False

    def for_batch(self, batch: list[SourceDocument], report: IngestReport
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


def _steps(count: int, step: int) -> Iterator[tuple[int, int]]:
    """``[first, last)`` ranges covering ``count`` items: one item first, so the first
    progress, and with it an ETA, comes at once; then ``step`` at a time."""
    first, size = 0, 1
    while first < count:
        last = min(count, first + size)
        yield first, last
        first, size = last, step


__all__ = ["EMBED_STEP_LOCAL", "LOAD_PASSAGE", "PRECOMPUTED", "FragmentVectors"]
