"""Recall@10 of a vector index against exact cosine on the scale benchmark's graph, by k.

Run ``python -m benchmarks.vector_k_scale --uri URI [--index typical_rag[,OTHER...]]
[--ks 10,100,200,800,2000,4000] [--queries 80] [--json OUT]`` against a graph that
``benchmarks.scale --keep`` left running. Read-only: it refuses a database without the
scale benchmark's marker and writes nothing. The corpus is regenerated from the marker
(``Synthesizer``: the same seed, sigma, mix and size), so the exact top 10 comes from numpy over
every chapter vector, never from the engine. The queries are the scale benchmark's own phrase
rounds first, then other real query vectors of the sets (fixed seed). Several indexes (same
vectors, other HNSW options, e.g. built on an extra label) are measured interleaved per query,
so their latencies are comparable within the run.

It answers where recall@10 is lost: when recall keeps rising with k, the over-fetch is too
small; when it stays flat, the HNSW graph cannot reach those neighbours (build parameters);
``min_gap_10_11`` shows whether the exact 10th and 11th are ties (a counting artefact), and
``max_score_error`` whether index and exact scores differ.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.report import write_json
from benchmarks.scale import DEFAULT_DATA, WARMUP_ROUNDS, plan_rounds, run_statement, shapes
from benchmarks.scale_corpus import (
    DEFAULT_GENERATOR,
    RECALL_AT,
    Synthesizer,
    chapter_index,
    load_real_sets,
)
from thalabus_graph.graph.database import Database

DEFAULT_OUT = Path(".thalabus/benchmarks/vector_k_scale.json")
DEFAULT_KS = "10,100,200,800,2000,4000"


def queries(real: Any, synth: Synthesizer, seed: int, count: int) -> list[np.ndarray]:
    """The scale benchmark's phrase queries, then other real queries up to ``count``."""
    plans, lookup = plan_rounds(shapes(), real, synth, 20 + WARMUP_ROUNDS, seed)
    chosen = list(dict.fromkeys(r.phrases[0] for r in plans["phrase"]))
    rng = np.random.default_rng(7)
    others = [t for t in lookup if t not in chosen]
    extra = [others[i] for i in rng.permutation(len(others))]
    texts = (chosen + extra)[:max(count, len(chosen))]
    return [lookup[t].astype(np.float32) for t in texts]


def measure(db: Database, indexes: list[str], vectors: np.ndarray, qs: list[np.ndarray],
            ks: list[int]) -> dict[str, Any]:
    """Per index and k: mean / min recall@10 and p50 ms of the index call; ties and score
    agreement. Every query runs every (index, k) before the next query (interleaved)."""
    cells = [(ix, k) for ix in indexes for k in ks]
    recalls: dict[tuple[str, int], list[float]] = {c: [] for c in cells}
    millis: dict[tuple[str, int], list[float]] = {c: [] for c in cells}
    gaps, errors = [], []
    for n, q in enumerate(qs):
        scores = vectors @ q
        order = np.argsort(-scores)[:RECALL_AT + 1]
        truth = {int(i) for i in order[:RECALL_AT]}
        gaps.append(float(scores[order[RECALL_AT - 1]] - scores[order[RECALL_AT]]))
        for index, k in cells if n % 2 == 0 else cells[::-1]:
            start = time.perf_counter()
            rows = run_statement(db, "vector_k_index_top", index=index, k=k, n=RECALL_AT,
                                 vector=q.tolist())
            millis[index, k].append((time.perf_counter() - start) * 1000)
            found = [chapter_index(str(r["fragmentid"])) for r in rows]
            recalls[index, k].append(len(truth & set(found)) / RECALL_AT)
            errors += [abs(float(r["score"]) - (1 + float(scores[i])) / 2)
                       for r, i in zip(rows, found, strict=True)]
    return {"queries": len(qs),
            "min_gap_10_11": round(min(gaps), 7), "median_gap_10_11": round(
                statistics.median(gaps), 6), "max_score_error": float(max(errors)),
            "by_k": [{"index": ix, "k": k,
                      "recall_mean": round(statistics.fmean(recalls[ix, k]), 4),
                      "recall_min": min(recalls[ix, k]),
                      "p50_ms": round(statistics.median(millis[ix, k]), 1)} for ix, k in cells]}


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, regenerate the corpus, measure, print, write the JSON."""
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    options.add_argument("--uri", required=True, help="a graph the scale benchmark left")
    options.add_argument("--index", default="typical_rag")
    options.add_argument("--ks", default=DEFAULT_KS)
    options.add_argument("--queries", type=int, default=80)
    options.add_argument("--data-dirs", default=DEFAULT_DATA)
    options.add_argument("--json", type=Path, default=DEFAULT_OUT)
    args = options.parse_args(argv)
    db = Database.connect(args.uri)
    markers = run_statement(db, "scale_marker_read")
    if not markers or not markers[0]["marker"].get("complete"):
        raise SystemExit(f"{args.uri} holds no complete scale-benchmark graph (no marker)")
    marker = markers[0]["marker"]
    real = load_real_sets([Path(d) for d in args.data_dirs.split(",") if d.strip()])
    synth = Synthesizer(real, int(marker["chapters"]), float(marker["sigma"]),
                        float(marker["mix"]), int(marker["seed"]),
                        str(marker.get("generator", DEFAULT_GENERATOR)))
    vectors = np.concatenate([b.vectors for b in synth.blocks()])
    qs = queries(real, synth, int(marker["seed"]), args.queries)
    result = measure(db, args.index.split(","), vectors, qs, [int(k) for k in args.ks.split(",")])
    result.update(benchmark="vector_k_scale", chapters=len(vectors), marker=marker)
    for row in result["by_k"]:
        print(f"{row['index']} k {row['k']:>5} recall@10 {row['recall_mean']:.3f} "
              f"(min {row['recall_min']:.1f}) p50 {row['p50_ms']:.1f} ms")
    print(f"exact 10th-11th gap: min {result['min_gap_10_11']:.2e}, median "
          f"{result['median_gap_10_11']:.2e}; max |index - exact| {result['max_score_error']:.1e}")
    write_json(args.json, result)
    db.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
