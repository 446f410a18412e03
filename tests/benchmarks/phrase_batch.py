"""A filtered phrase's searches in one call against one statement each, on a graph already
loaded by ``tests.benchmarks.scale --keep`` (its ``SKEW`` categories), with the engine's
default settings (the fused phrase: unrestricted statistics, a vector search per source, the
restricted full-text searches).

    python -m tests.benchmarks.phrase_batch --uri bolt://127.0.0.1:PORT --json out.json

Each real query runs as ``"q" AND SKEW=<value>`` for every selectivity, once with the
searches batched (``search_phrase_filtered``) and once one statement each, in alternating
order (ABBA), so the ratios compare the same queries on the same server at the same moment.
It prints and writes the read transactions (round trips) of each way, p50 / p95 and the
median of the per-query ratios. It reads the graph only (it never writes), and says which
server and settings it ran against.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.benchmarks.scale_corpus import DIMENSIONS, ONTOLOGY, load_real_sets
from tests.benchmarks.scale_queries import LookupEmbedder
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.plan.steps import PhrasePlan
from thalabus_graph.search import batch, executor

SHAPES = {"0.01%": "t00000", "0.1%": "v0_1", "1%": "v1", "10%": "v10"}
"""Selectivity -> the SKEW value of the scale corpus with that share of the documents."""


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _ways() -> dict[str, Callable[[PhrasePlan], tuple[int, ...]]]:
    def alone(plan: PhrasePlan) -> tuple[int, ...]:
        return ()
    return {"batched": batch.batched, "one_by_one": alone}


def measure(graph: ThalabusGraph, queries: list[str], limit: int | None,
            say: Callable[[str], None]) -> dict[str, Any]:
    """Per selectivity: round trips, p50 / p95 ms of each way and the per-query ratios."""
    ways = _ways()
    reads: list[str] = []
    real_read = graph.db._read

    def counted(work: Any, *, what: str = "read") -> Any:
        reads.append(what)
        return real_read(work, what=what)

    graph.db._read = counted  # type: ignore[method-assign]
    out: dict[str, Any] = {}
    try:
        for label, value in SHAPES.items():
            ms: dict[str, list[float]] = {way: [] for way in ways}
            trips: dict[str, list[str]] = {}
            for i, q in enumerate(queries):
                text = f'"{q}" AND SKEW={value}'
                order = list(ways) if i % 2 == 0 else list(reversed(ways))
                for way in order:
                    executor.batched = ways[way]  # type: ignore[assignment]
                    reads.clear()
                    start = time.perf_counter()
                    graph.query(text, ontology_id=ONTOLOGY, limit=limit)
                    ms[way].append((time.perf_counter() - start) * 1000)
                    trips.setdefault(way, list(reads))
            ratios = [a / b for a, b in zip(ms["batched"], ms["one_by_one"], strict=True)]
            row = {"round_trips": {w: len(t) for w, t in trips.items()},
                   "statements": trips,
                   **{w: {"p50": statistics.median(v), "p95": _percentile(v, 0.95)}
                      for w, v in ms.items()},
                   "median_ratio": statistics.median(ratios)}
            out[label] = row
            say(f"{label:>6}: round trips {row['round_trips']['batched']} / "
                f"{row['round_trips']['one_by_one']}, p50 {row['batched']['p50']:.1f} / "
                f"{row['one_by_one']['p50']:.1f} ms, p95 {row['batched']['p95']:.1f} / "
                f"{row['one_by_one']['p95']:.1f} ms, batched / one by one "
                f"{row['median_ratio']:.2f}x (median per query)")
    finally:
        executor.batched = batch.batched
        graph.db._read = real_read  # type: ignore[method-assign]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--uri", required=True, help="a server holding the scale corpus")
    parser.add_argument("--data-dirs", default="../shared/data/scifact",
                        help="comma-separated sets whose real queries (and vectors) are asked")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    real = load_real_sets([Path(d) for d in args.data_dirs.split(",") if d.strip()])
    count = args.warmup + args.queries
    queries = [q.replace('"', "'") for q in real.query_texts[:count]]
    lookup = {q: real.query_vectors[i] for i, q in enumerate(queries)}
    settings = Settings(embedding_dimensions=DIMENSIONS)
    with ThalabusGraph.connect(args.uri, settings=settings,
                               embedder=LookupEmbedder(lookup)) as graph:
        agent = graph.db.driver.get_server_info().agent
        print(f"server {agent} at {args.uri} (reused, not sized here); default settings "
              f"(fusion {settings.fusion}), limit {args.limit}, {args.queries} queries "
              f"after {args.warmup} warm-up queries per way and selectivity")
        measure(graph, queries[:args.warmup], args.limit, lambda _: None)
        result = measure(graph, queries[args.warmup:], args.limit, print)
    payload = {"server": agent, "uri": args.uri, "limit": args.limit,
               "queries": args.queries, "shapes": result}
    if args.json:
        args.json.write_text(json.dumps(payload, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
