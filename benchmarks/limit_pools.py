"""The fit of the pools a ``limit`` sizes (``plan.cost.sized``): nDCG@10 at ``limit`` against
the full pool, on the training data only.

Run ``python -m benchmarks.limit_pools --uri URI [--data DIR:SPLIT ...] [--limit 10]
[--factors 1.5,2,3,5,10] [--min-ks 100,200,400] [--json OUT] [--limit-queries N]``. The default
data are SciFact train and xquad-r dev (``/work/shared/data``); each is loaded in turn with
its precomputed vectors (``benchmarks.quality``: one chapter per document, the database
wiped first). For each corpus every query runs once with the configured pools (no limit: the
full pool) and once per grid point (``limit_pool_factor``, ``limit_min_k``) with ``limit``;
grid points that give the same pools (the same ``top_n`` and the same least index ``k``) run
once. Each run's documents are scored with nDCG@10 (ir-measures), and p50 latency is shown
for orientation only (a shared machine).

The chosen point is the cheapest one whose nDCG@10 stays within ``--tolerance`` (0.005) of
the full pool's on every corpus: the smallest ``k`` asked of the vector index, then the
smallest pool. The table and the JSON name it; the shipped defaults are set from it by hand.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.quality import (
    DOC_PREFIX,
    Corpus,
    connect,
    evaluate,
    load,
    load_corpus,
    semantic_phrase,
)
from benchmarks.report import write_json
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.plan import cost

DEFAULT_DATA = ("/work/shared/data/scifact:train", "/work/shared/data/xquad-r:dev")
DEFAULT_OUT = Path(".thalabus/benchmarks/limit_pools.json")
Point = tuple[float, int]
"""A grid point: (``limit_pool_factor``, ``limit_min_k``)."""


def pools_of(settings: Settings, limit: int, point: Point) -> tuple[int, int]:
    """The (pool, least index k) a grid point gives at ``limit``: what the search costs."""
    sized = cost.sized(settings.replace(limit_pool_factor=point[0], limit_min_k=point[1]),
                       limit)
    pool = sized.top_n_chapters
    return pool, cost.unfiltered_k(sized, pool)


def run_queries(graph: ThalabusGraph, corpus: Corpus, limit: int | None
                ) -> tuple[dict[str, list[tuple[str, float]]], list[float]]:
    """Every query's documents (at most ``limit``; all without one) and its milliseconds."""
    rankings: dict[str, list[tuple[str, float]]] = {}
    times: list[float] = []
    for qid, text in corpus.queries.items():
        start = time.perf_counter()
        result = graph.query(semantic_phrase(text), limit=limit)
        times.append((time.perf_counter() - start) * 1000)
        docs = [d.documentid.removeprefix(DOC_PREFIX) for d in result.documents or []][:10]
        rankings[qid] = [(d, float(len(docs) - i)) for i, d in enumerate(docs)]
    return rankings, times


def measure(uri: str, corpus: Corpus, limit: int, grid: Sequence[Point],
            say: Callable[[str], None]) -> dict[str, Any]:
    """Load ``corpus``, run the full pool and every distinct grid point; nDCG@10 and p50."""
    dims = len(next(iter((corpus.doc_vectors or {}).values())))
    settings = Settings.from_env(embedding_dimensions=dims)
    rows: list[dict[str, Any]] = []
    with connect(uri, settings, corpus) as graph:
        loaded = load(graph, corpus)
        say(f"loaded {len(corpus.docs)} documents in {loaded['seconds']:.1f} s")
        run_queries(graph, corpus, None)  # warm-up: caches, query plans
        full, times = run_queries(graph, corpus, None)
        full_ndcg = evaluate(corpus.qrels, full)["ndcg@10"]
        say(f"full pool: nDCG@10 {full_ndcg:.4f}")
        rows.append({"factor": None, "min_k": None, "pool": settings.top_n_chapters,
                     "k": cost.unfiltered_k(settings, settings.top_n_chapters),
                     "ndcg@10": round(full_ndcg, 4), "delta": 0.0,
                     "p50_ms": round(statistics.median(times), 2)})
        seen: dict[tuple[int, int], dict[str, Any]] = {}
        for point in grid:
            pool, k = pools_of(settings, limit, point)
            if (pool, k) not in seen:
                sized = settings.replace(limit_pool_factor=point[0], limit_min_k=point[1])
                other = ThalabusGraph(graph.db, settings=sized, embedder=graph.embedder)
                ranked, times = run_queries(other, corpus, limit)
                ndcg = evaluate(corpus.qrels, ranked)["ndcg@10"]
                seen[pool, k] = {"ndcg@10": round(ndcg, 4),
                                 "delta": round(ndcg - full_ndcg, 4),
                                 "p50_ms": round(statistics.median(times), 2)}
                say(f"factor {point[0]} min_k {point[1]}: pool {pool}, k {k}, "
                    f"nDCG@10 {ndcg:.4f} ({ndcg - full_ndcg:+.4f})")
            rows.append({"factor": point[0], "min_k": point[1], "pool": pool, "k": k,
                         **seen[pool, k]})
    return {"documents": len(corpus.docs), "queries": len(corpus.queries),
            "full_ndcg@10": round(full_ndcg, 4), "rows": rows}


def choose(results: dict[str, dict[str, Any]], tolerance: float) -> dict[str, Any] | None:
    """The cheapest grid point within ``tolerance`` of the full pool on every corpus."""
    ok: list[dict[str, Any]] = []
    first = next(iter(results.values()))["rows"]
    for i, row in enumerate(first):
        if row["factor"] is None:
            continue
        if all(r["rows"][i]["delta"] >= -tolerance for r in results.values()):
            ok.append(row)
    if not ok:
        return None
    best = min(ok, key=lambda r: (r["k"], r["pool"], r["factor"], r["min_k"]))
    return {"limit_pool_factor": best["factor"], "limit_min_k": best["min_k"],
            "pool": best["pool"], "k": best["k"]}


def table(result: dict[str, Any]) -> str:
    """Per corpus, each grid point's pool, k, nDCG@10, its difference to the full pool, p50."""
    lines: list[str] = []
    for name, corpus in result["corpora"].items():
        lines.append(f"{name}: {corpus['documents']} documents, {corpus['queries']} queries, "
                     f"full pool nDCG@10 {corpus['full_ndcg@10']:.4f}")
        lines.append(f"  {'factor':>6} {'min_k':>6} {'pool':>5} {'k':>5} {'nDCG@10':>8} "
                     f"{'delta':>8} {'p50 ms':>7}")
        for row in corpus["rows"]:
            factor = "full" if row["factor"] is None else f"{row['factor']:g}"
            min_k = "-" if row["min_k"] is None else str(row["min_k"])
            lines.append(f"  {factor:>6} {min_k:>6} {row['pool']:>5} {row['k']:>5} "
                         f"{row['ndcg@10']:>8.4f} {row['delta']:>+8.4f} {row['p50_ms']:>7.1f}")
    chosen = result["chosen"]
    lines.append(f"limit {result['limit']}, tolerance {result['tolerance']}: chosen "
                 + ("none" if chosen is None else
                    f"limit_pool_factor={chosen['limit_pool_factor']:g} "
                    f"limit_min_k={chosen['limit_min_k']} (pool {chosen['pool']}, "
                    f"k {chosen['k']})"))
    return "\n".join(lines)


def _numbers(text: str, kind: Callable[[str], Any]) -> list[Any]:
    return [kind(part) for part in text.split(",") if part.strip()]


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, measure every corpus, choose, print the table, write the JSON."""
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    options.add_argument("--uri", required=True, help="Neo4j to use; its database is wiped")
    options.add_argument("--data", nargs="*", default=list(DEFAULT_DATA), metavar="DIR:SPLIT")
    options.add_argument("--limit", type=int, default=10)
    options.add_argument("--factors", default="1.5,2,3,5,10")
    options.add_argument("--min-ks", default="100,200,400,1000")
    options.add_argument("--tolerance", type=float, default=0.005)
    options.add_argument("--limit-queries", type=int, default=None)
    options.add_argument("--json", type=Path, default=DEFAULT_OUT)
    args = options.parse_args(argv)
    grid = [(f, m) for f in _numbers(args.factors, float) for m in _numbers(args.min_ks, int)]
    started = time.perf_counter()
    corpora: dict[str, dict[str, Any]] = {}
    for spec in args.data:
        directory, _, split = spec.rpartition(":")
        corpus = load_corpus(Path(directory), split, limit_queries=args.limit_queries)
        name = f"{Path(directory).name}:{split}"
        corpora[name] = measure(args.uri, corpus, args.limit, grid,
                                lambda msg: print(msg, file=sys.stderr, flush=True))
    result = {"benchmark": "limit_pools", "limit": args.limit, "tolerance": args.tolerance,
              "grid": [list(p) for p in grid], "corpora": corpora,
              "chosen": choose(corpora, args.tolerance),
              "wall_seconds": round(time.perf_counter() - started, 1)}
    print(table(result))
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
