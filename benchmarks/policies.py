"""Selection policies compared on labelled multilingual data (XQuAD-R), the 4975 story included.

Run: ``python -m benchmarks.policies --data ../shared/data/xquad-r --json OUT
[--queries 24] [--candidates 30] [--threshold 0.85] [--scorer model|vectors]``.

A question of XQuAD-R is relevant to its paragraph in every pool language (en, de, es). For an
evenly spaced sample of questions (the same number per language), the ``--candidates`` best
paragraphs by dense retrieval (the dataset's precomputed multilingual-e5-small vectors) stand
in for a dataset; the in-process e5 pair scorer of the demo (``EmbeddingPairScorer`` through
`CrossEncoderReranker`, the model loaded here) stands in for a reranker and scores every
(question, paragraph) pair; then each policy selects from the scored candidates, exactly as a
dataset rerank round does. ``--scorer vectors`` takes the pair scores from the precomputed
vectors instead (the same model, so the same cosine; the JSON records the deviation between the
two on the model-scored sample when both ran) to cover every question quickly.

Per policy: recall of the relevant paragraphs (all three languages), recall of the
other-language versions, the same-language version kept, mean output size, and how many
questions keep the same-language version but lose every other-language one (the seed's
docid-4975 pattern: a German query losing the French document to a threshold). The e5 scale
is not a cross-encoder's: an absolute threshold is given on it (``--threshold``, cosine), set
between the typical same-language and other-language scores, which is what a threshold tuned on
same-language data does to a multilingual pool.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from thalabus_graph.rerank import (
    CrossEncoderReranker,
    Passage,
    Percentile,
    PerQueryNormalised,
    ScoredFragment,
    ScoreGap,
    SelectionPolicy,
    ThresholdWithTiers,
    TopK,
)


@dataclass(frozen=True)
class Question:
    """One sampled question with its candidates (paragraph ids, texts) and relevant ids."""

    qid: str
    text: str
    language: str
    relevant: frozenset[str]
    candidates: tuple[str, ...]


def load(data: Path) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]],
                              dict[str, set[str]], np.ndarray, list[str], np.ndarray, list[str]]:
    """Corpus by id, queries, qrels, corpus vectors + ids, query vectors + ids."""
    corpus = {d["_id"]: d for d in map(json.loads, (data / "corpus.jsonl").open())}
    queries = [json.loads(line) for line in (data / "queries.jsonl").open()]
    qrels: dict[str, set[str]] = {}
    for line in (data / "qrels" / "dev.tsv").open():
        parts = line.rstrip("\n").split("\t")
        if parts[0] == "query-id" or len(parts) < 3 or parts[2] == "0":
            continue
        qrels.setdefault(parts[0], set()).add(parts[1])
    emb = data / "embeddings"
    cvec = np.load(emb / "corpus.npy")
    cids = json.loads((emb / "corpus.ids.json").read_text())
    qvec = np.load(emb / "queries.npy")
    qids = json.loads((emb / "queries.ids.json").read_text())
    return corpus, queries, qrels, cvec, cids, qvec, qids


def sample(queries: list[dict[str, Any]], per_language: int) -> list[dict[str, Any]]:
    """``per_language`` questions of each language, evenly spaced through the file."""
    out: list[dict[str, Any]] = []
    for lang in sorted({q["language"] for q in queries}):
        mine = [q for q in queries if q["language"] == lang]
        step = max(1, len(mine) // per_language)
        out.extend(mine[::step][:per_language])
    return out


def doc_language(documentid: str) -> str:
    """``a03p2-de`` -> ``de``."""
    return documentid.rsplit("-", 1)[1]


def policies(threshold: float) -> dict[str, SelectionPolicy]:
    """The policies compared: the default (seed tiers) at the reranker-scale default and at
    the e5-scale threshold, the threshold alone (the seed's "old behaviour"), and the others."""
    return {
        "threshold+tiers (default settings, t=0.02)": ThresholdWithTiers(),
        f"threshold only (t={threshold})": ThresholdWithTiers(
            min_score=threshold, min_output_frag=0, min_output_doc=0),
        f"threshold+tiers (t={threshold}, 50/100/5)": ThresholdWithTiers(min_score=threshold),
        "topk (k=10)": TopK(10),
        "percentile (90)": Percentile(90.0),
        "gap (min_keep=1)": ScoreGap(),
        "normalised (0.5)": PerQueryNormalised(0.5),
    }


def model_scores(questions: Sequence[Question], corpus: dict[str, dict[str, Any]]
                 ) -> tuple[dict[str, dict[str, float]], float, int]:
    """Pair scores from the e5 pair scorer of the demo (model in process), and seconds."""
    from thalabus_graph.demo import EmbeddingPairScorer
    from thalabus_graph.embeddings import CachedQueryEmbedder
    from thalabus_graph.embeddings.local import E5LocalEmbedder

    # the demo's scorer embeds the query once per pair; the cache embeds it once per question
    scorer = EmbeddingPairScorer(CachedQueryEmbedder(E5LocalEmbedder()))
    reranker = CrossEncoderReranker(scorer, batch_size=16)
    out: dict[str, dict[str, float]] = {}
    start = time.perf_counter()
    pairs = 0
    for i, q in enumerate(questions, 1):
        passages = [Passage(c, corpus[c]["text"], None) for c in q.candidates]
        reply = asyncio.run(reranker.score(q.text, passages))
        out[q.qid] = dict(reply.scores)
        pairs += len(passages)
        elapsed = time.perf_counter() - start
        print(f"  scored {i}/{len(questions)} questions, {pairs} pairs, "
              f"{pairs / elapsed:.1f} pairs/s", file=sys.stderr, flush=True)
    return out, time.perf_counter() - start, pairs


def evaluate(questions: Sequence[Question], scores: dict[str, dict[str, float]],
             policy: SelectionPolicy) -> dict[str, float]:
    """Recall (all languages, other languages, same language), size, 4975-pattern count."""
    rec, other, same, size, lost = [], [], [], [], 0
    for q in questions:
        scored = [ScoredFragment(f"{c}-c1", "", scores[q.qid][c], documentid=c)
                  for c in q.candidates if c in scores[q.qid]]
        kept = {f.documentid for f in policy.select(scored)}
        rel_other = {d for d in q.relevant if doc_language(d) != q.language}
        rel_same = q.relevant - rel_other
        rec.append(len(kept & q.relevant) / len(q.relevant))
        other.append(len(kept & rel_other) / len(rel_other) if rel_other else 1.0)
        same.append(len(kept & rel_same) / len(rel_same) if rel_same else 1.0)
        size.append(len(kept))
        if kept & rel_same and not kept & rel_other:
            lost += 1
    return {"recall": float(np.mean(rec)), "other_language_recall": float(np.mean(other)),
            "same_language_kept": float(np.mean(same)), "mean_output": float(np.mean(size)),
            "lost_every_other_language": lost}


def story(questions: Sequence[Question], scores: dict[str, dict[str, float]],
          chosen: dict[str, SelectionPolicy], corpus: dict[str, dict[str, Any]]
          ) -> dict[str, Any] | None:
    """The 4975 case: a German question whose German paragraph passes the threshold alone;
    which versions each policy keeps."""
    only = next(p for name, p in chosen.items() if name.startswith("threshold only"))
    for q in questions:
        if q.language != "de":
            continue
        scored = [ScoredFragment(f"{c}-c1", "", scores[q.qid][c], documentid=c)
                  for c in q.candidates if c in scores[q.qid]]
        kept = {f.documentid for f in only.select(scored)}
        rel_other = {d for d in q.relevant if doc_language(d) != "de"}
        if kept & q.relevant and not kept & rel_other:
            return {
                "question": q.qid, "text": q.text,
                "relevant_scores": {d: round(scores[q.qid].get(d, float("nan")), 4)
                                    for d in sorted(q.relevant)},
                "rank_of_relevant": {d: (q.candidates.index(d) + 1 if d in q.candidates
                                         else None) for d in sorted(q.relevant)},
                "kept_by_policy": {
                    name: sorted(d for d in q.relevant if d in {
                        f.documentid for f in p.select(scored)})
                    for name, p in chosen.items()},
            }
    return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.policies")
    parser.add_argument("--data", type=Path, default=Path("../shared/data/xquad-r"))
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--queries", type=int, default=24, help="questions (evenly per language)")
    parser.add_argument("--candidates", type=int, default=30, help="dense candidates a question")
    parser.add_argument("--threshold", type=float, default=0.85, help="e5-scale threshold")
    parser.add_argument("--scorer", choices=("model", "vectors"), default="model")
    args = parser.parse_args(argv)
    corpus, queries, qrels, cvec, cids, qvec, qids = load(args.data)
    languages = sorted({q["language"] for q in queries})
    picked = sample(queries, max(1, args.queries // len(languages)))
    qrow = {q: i for i, q in enumerate(qids)}
    questions: list[Question] = []
    for q in picked:
        sims = cvec @ qvec[qrow[q["_id"]]]
        top = np.argsort(-sims, kind="stable")[: args.candidates]
        questions.append(Question(q["_id"], q["text"], q["language"],
                                  frozenset(qrels[q["_id"]]), tuple(cids[i] for i in top)))
    vector_scores = {
        q.qid: {c: float(cvec[cids.index(c)] @ qvec[qrow[q.qid]]) for c in q.candidates}
        for q in questions}
    run: dict[str, Any] = {"benchmark": "policies", "data": str(args.data),
                           "questions": len(questions), "candidates": args.candidates,
                           "threshold": args.threshold, "scorer": args.scorer,
                           "python": platform.python_version(), "cpus": os.cpu_count()}
    if args.scorer == "model":
        scores, seconds, pairs = model_scores(questions, corpus)
        deviation = max(abs(scores[q][c] - vector_scores[q][c]) for q in scores
                        for c in scores[q])
        run.update({"pairs_scored": pairs, "scoring_seconds": round(seconds, 1),
                    "pairs_per_second": round(pairs / seconds, 2),
                    "max_abs_deviation_from_vector_cosine": deviation})
    else:
        scores = vector_scores
    relevant_in_pool = np.mean([len(set(q.candidates) & q.relevant) / len(q.relevant)
                                for q in questions])
    run["relevant_in_candidates"] = float(relevant_in_pool)
    chosen = policies(args.threshold)
    results = {name: evaluate(questions, scores, p) for name, p in chosen.items()}
    run["policies"] = results
    run["story_4975"] = story(questions, scores, chosen, corpus)
    print(f"{len(questions)} questions ({', '.join(languages)}), {args.candidates} dense "
          f"candidates each (relevant in candidates: {relevant_in_pool:.3f}), scorer "
          f"{args.scorer}")
    if args.scorer == "model":
        print(f"pair scorer: {run['pairs_scored']} pairs in {run['scoring_seconds']} s "
              f"({run['pairs_per_second']} pairs/s); max |model - vector cosine| = "
              f"{run['max_abs_deviation_from_vector_cosine']:.2e}")
    header = ("policy", "recall", "other-lang recall", "same-lang kept", "mean kept",
              "lost all other-lang")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name, r in results.items():
        print(f"| {name} | {r['recall']:.3f} | {r['other_language_recall']:.3f} | "
              f"{r['same_language_kept']:.3f} | {r['mean_output']:.1f} | "
              f"{r['lost_every_other_language']} |")
    if run["story_4975"] is not None:
        print("4975 story:", json.dumps(run["story_4975"], ensure_ascii=False, indent=1))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(run, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
