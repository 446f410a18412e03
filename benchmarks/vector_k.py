"""How many candidates to ask of a vector index, measured on real embeddings.

Run ``python -m benchmarks.vector_k [--data DIR ...] [--queries Q] [--json OUT] [--uri URI]``.

Loads the precomputed multilingual-e5 vectors of every ``--data`` BEIR directory (default
``../shared/data/scifact`` and ``../shared/data/xquad-r``; each needs ``embeddings/``) into one
database through the public ingestion API (one chapter per document; the database is wiped
first: do not point it at data you keep), then for ``Q`` queries per directory (spread evenly
over its judged queries) compares the chapters the ``typical_rag`` index returns through the
engine's own ``search_vector`` statement with exact cosine in numpy:

- unfiltered: recall@top_n for ``top_n`` 10 and ``TOP_N_CHAPTERS`` at ``k = top_n x m``
  (m = 1, 2, 4 ... 64; capped at the number of chapters, stopping once every query has
  recall 1) and the p50 time of the call;
- filtered: random document sets at selectivity 1%, 10% and 50%, ``k = ceil(top_n x f /
  selectivity)`` for over-fetch factors ``f`` = 1, 1.5, 2, 4 (what the planner's index path would
  ask), recall@top_n against exact cosine over the filtered chapters.

The settings ``vector_min_k``, ``vector_k_factor`` and ``vector_overfetch_factor`` are chosen
from this table: the smallest values whose mean recall@top_n is >= 0.99 on every corpus. The
corpora share one index on purpose: a small corpus (xquad-r's 360 paragraphs) inside a larger
one is where HNSW struggles most (its queries' neighbours form an island of the graph). The
old floor of 4,000 candidates was tuned on uniform random vectors, which no real corpus is.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from benchmarks.quality import Corpus, base_settings, connect, load, load_corpus, spread
from benchmarks.report import write_json
from thalabus_graph.graph.database import Database

DEFAULT_DATA = (Path("../shared/data/scifact"), Path("../shared/data/xquad-r"))
DEFAULT_OUT = Path(".thalabus/benchmarks/vector_k.json")
MULTIPLIERS = (1, 2, 4, 8, 16, 32, 64)
OVERFETCH = (1.0, 1.5, 2.0, 4.0)
SELECTIVITIES = (0.01, 0.1, 0.5)
PREFIX = "sf-"
"""The document-id prefix the quality benchmark's ingestion uses."""


def _split(data: Path) -> str:
    """The one qrels split of a directory (``train`` for SciFact, ``dev`` for xquad-r)."""
    names = sorted(p.stem for p in (data / "qrels").glob("*.tsv"))
    if not names:
        raise FileNotFoundError(f"{data}/qrels holds no split")
    return names[0]


def merged(corpora: Sequence[Corpus]) -> Corpus:
    """One corpus holding every document (and its vector) of ``corpora``."""
    docs: dict[str, tuple[str, str]] = {}
    vectors: dict[str, npt.NDArray[np.float32]] = {}
    for c in corpora:
        if c.doc_vectors is None:
            raise ValueError("every directory needs precomputed embeddings/")
        overlap = docs.keys() & c.docs.keys()
        if overlap:
            raise ValueError(f"document ids collide across directories: {sorted(overlap)[:3]}")
        docs.update(c.docs)
        vectors.update(c.doc_vectors)
    return Corpus(docs, {}, {}, vectors, {})


class Exact:
    """Exact cosine ranking over the loaded chapters (the ground truth)."""

    def __init__(self, vectors: dict[str, npt.NDArray[np.float32]]) -> None:
        self.ids = [f"{PREFIX}{d}-c1" for d in vectors]
        self.docs = [f"{PREFIX}{d}" for d in vectors]
        self.matrix = np.vstack(list(vectors.values())).astype(np.float32)

    def top(self, vector: npt.NDArray[np.float32], n: int,
            rows: npt.NDArray[np.intp] | None = None) -> set[str]:
        """The ids of the ``n`` nearest chapters (among ``rows`` when given)."""
        candidates = np.arange(len(self.ids)) if rows is None else rows
        scores = self.matrix[candidates] @ vector
        best = candidates[np.argsort(-scores, kind="stable")[:n]]
        return {self.ids[i] for i in best}


def _index_top(db: Database, vector: list[float], k: int, n: int,
               documentids: list[str] | None) -> tuple[set[str], float]:
    start = time.perf_counter()
    rows = db.read("search_vector", index="typical_rag", k=k, top_n=n, vector=vector,
                   documentids=documentids, ontologyid=None, name=None, values=None, negated=False,
                   filter=None, datasetids=None, details=False)
    return {r["fragmentid"] for r in rows}, (time.perf_counter() - start) * 1000


def _summary(recalls: list[float], times: list[float] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"recall_mean": round(statistics.fmean(recalls), 5),
                           "recall_min": round(min(recalls), 5)}
    if times:
        out["p50_ms"] = round(statistics.median(times), 3)
    return out


def unfiltered(db: Database, exact: Exact, queries: list[npt.NDArray[np.float32]],
               top_ns: Sequence[int]) -> list[dict[str, Any]]:
    """Recall@top_n and p50 of the unfiltered index search for each k multiplier."""
    total = len(exact.ids)
    rows: list[dict[str, Any]] = []
    for n in top_ns:
        truth = [exact.top(q, n) for q in queries]
        for m in MULTIPLIERS:
            k = min(n * m, total)
            recalls, times = [], []
            for q, want in zip(queries, truth, strict=True):
                got, ms = _index_top(db, q.tolist(), k, n, None)
                recalls.append(len(got & want) / len(want))
                times.append(ms)
            rows.append({"top_n": n, "multiplier": m, "k": k, **_summary(recalls, times)})
            if k == total or min(recalls) == 1.0:
                break
    return rows


def filtered(db: Database, exact: Exact, queries: list[npt.NDArray[np.float32]],
             top_n: int, seed: int = 13) -> list[dict[str, Any]]:
    """Recall@top_n of the index path with over-fetch on random document sets."""
    rng = np.random.default_rng(seed)
    total = len(exact.ids)
    rows: list[dict[str, Any]] = []
    for selectivity in SELECTIVITIES:
        size = max(int(total * selectivity), 1)
        chosen = np.sort(rng.choice(total, size=size, replace=False))
        documentids = [exact.docs[i] for i in chosen]
        n = min(top_n, size)
        truth = [exact.top(q, n, chosen) for q in queries]
        for factor in OVERFETCH:
            k = min(math.ceil(n * factor / selectivity), total)
            recalls = [len(_index_top(db, q.tolist(), k, n, documentids)[0] & want) / len(want)
                       for q, want in zip(queries, truth, strict=True)]
            rows.append({"selectivity": selectivity, "documents": size, "top_n": n,
                         "overfetch_factor": factor, "k": k, **_summary(recalls)})
    return rows


def benchmark(uri: str, dirs: Sequence[Path], queries_per_dir: int,
              say: Any = print) -> dict[str, Any]:
    """Load every directory's vectors into one database and measure (see the module doc)."""
    started = time.perf_counter()
    corpora = {d.name: load_corpus(d, _split(d)) for d in dirs}
    everything = merged(list(corpora.values()))
    settings = base_settings(dimensions=384)
    with connect(uri, settings, everything) as graph:
        loading = load(graph, everything)
        say(f"loaded {len(everything.docs)} chapters in {loading['seconds']:.1f} s")
        exact = Exact(everything.doc_vectors or {})
        per_corpus: dict[str, Any] = {}
        for name, corpus in corpora.items():
            vectors = spread(list((corpus.query_vectors or {}).values()), queries_per_dir)
            result = {"queries": len(vectors),
                      "unfiltered": unfiltered(graph.db, exact, vectors,
                                               (10, settings.top_n_chapters)),
                      "filtered": filtered(graph.db, exact, vectors, settings.top_n_chapters)}
            for row in result["unfiltered"]:
                say(f"{name:<10} unfiltered top_n {row['top_n']:>4} k {row['k']:>5} "
                    f"recall {row['recall_mean']:.4f} (min {row['recall_min']:.3f}) "
                    f"p50 {row['p50_ms']:.1f} ms")
            for row in result["filtered"]:
                say(f"{name:<10} filtered sel {row['selectivity']:<5} f {row['overfetch_factor']}"
                    f" k {row['k']:>5} recall {row['recall_mean']:.4f} "
                    f"(min {row['recall_min']:.3f})")
            per_corpus[name] = result
    return {"benchmark": "vector_k", "python": platform.python_version(),
            "machine": platform.machine(), "chapters": len(everything.docs),
            "corpora": per_corpus, "wall_seconds": round(time.perf_counter() - started, 1)}


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run, print, write the JSON."""
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    options.add_argument("--data", type=Path, nargs="+", default=list(DEFAULT_DATA))
    options.add_argument("--queries", type=int, default=200, help="queries per directory")
    options.add_argument("--json", type=Path, default=DEFAULT_OUT)
    options.add_argument("--uri", default=os.environ.get("NEO4J_URI", "bolt://127.0.0.1:7687"),
                         help="Neo4j to use; its database is wiped (default: $NEO4J_URI)")
    args = options.parse_args(argv)
    result = benchmark(args.uri, args.data, args.queries)
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
