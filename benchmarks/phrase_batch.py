"""A filtered phrase as the engine runs it against two older ways, on a graph already loaded
by ``benchmarks.scale --keep`` (its ``SKEW`` categories), with the engine's default
settings (the fused phrase: unrestricted statistics, a vector search per source, the
restricted full-text searches).

    python -m benchmarks.phrase_batch --uri bolt://127.0.0.1:PORT --json out.json

The ways: ``engine`` (the searches batched in one ``search_phrase_filtered`` call, a
selective restriction's text hits looked up among its fragments, and, the filter asked
before, the vocabulary read carried by that call), ``read_first`` (the engine with the
vocabulary read on its own first, as a query asking it for the first time makes it),
``one_by_one`` (a statement per search) and ``text_patterns`` (batched, but every text hit's
restriction patterns checked, ``choose_text_path`` always ``index``). Each real query runs as
``"q" AND SKEW=<value>`` for every selectivity, once each way, in rotating order, so the
ratios compare the same queries on the same server at the same moment. It prints and writes
the read transactions (round trips) of each way, p50 / p95 and the median of the per-query
ratios against ``engine``. It reads the graph only (it never writes), and says which server
and settings it ran against.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.scale_corpus import DIMENSIONS, ONTOLOGY, load_real_sets
from benchmarks.scale_queries import LookupEmbedder
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.plan import batches, cost
from thalabus_graph.search import executor

SHAPES = {"0.01%": "t00000", "0.1%": "v0_1", "1%": "v1", "10%": "v10"}
"""Selectivity -> the SKEW value of the scale corpus with that share of the documents."""


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _way(name: str) -> None:
    """Switch the engine to one way (``engine`` restores it)."""
    executor.batched = (  # type: ignore[assignment]
        (lambda plan: ()) if name == "one_by_one" else batches.batched)
    cost.choose_text_path = (  # type: ignore[assignment]
        (lambda *args: ("index", "patterns")) if name == "text_patterns" else CHOOSE_TEXT)


CHOOSE_TEXT = cost.choose_text_path
WAYS = ("engine", "read_first", "one_by_one", "text_patterns")


def measure(graph: ThalabusGraph, queries: list[str], limit: int | None,
            say: Callable[[str], None]) -> dict[str, Any]:
    """Per selectivity: round trips, p50 / p95 ms of each way and the per-query ratios."""
    reads: list[str] = []
    real_read = graph.db._read

    def counted(work: Any, *, what: str = "read") -> Any:
        reads.append(what)
        return real_read(work, what=what)

    graph.db._read = counted  # type: ignore[method-assign]
    out: dict[str, Any] = {}
    try:
        for label, value in SHAPES.items():
            ms: dict[str, list[float]] = {way: [] for way in WAYS}
            trips: dict[str, list[str]] = {}
            for i, q in enumerate(queries):
                text = f'"{q}" AND SKEW={value}'
                shift = i % len(WAYS)
                for way in WAYS[shift:] + WAYS[:shift]:
                    _way(way)
                    if way == "read_first":  # no row kept: the vocabulary is read first
                        graph.queries.vocabulary.seen.clear()
                    reads.clear()
                    start = time.perf_counter()
                    graph.query(text, ontology_id=ONTOLOGY, limit=limit)
                    ms[way].append((time.perf_counter() - start) * 1000)
                    trips[way] = list(reads)  # the last query's: each way's settled trips
            row: dict[str, Any] = {
                way: {"round_trips": len(trips[way]), "statements": trips[way],
                      "p50": statistics.median(ms[way]), "p95": _percentile(ms[way], 0.95),
                      "vs_engine": statistics.median(
                          [a / b for a, b in zip(ms[way], ms["engine"], strict=True)])}
                for way in WAYS}
            out[label] = row
            say(f"{label:>6}: " + "; ".join(
                f"{way} {r['round_trips']} round trips, p50 {r['p50']:.1f} ms, "
                f"p95 {r['p95']:.1f} ms, {r['vs_engine']:.2f}x" for way, r in row.items()))
    finally:
        _way("engine")
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
              f"after {args.warmup} warm-up queries per way and selectivity; ratios: "
              "median per query of the way's time over the engine's")
        measure(graph, queries[:args.warmup], args.limit, lambda _: None)
        result = measure(graph, queries[args.warmup:], args.limit, print)
    payload = {"server": agent, "uri": args.uri, "limit": args.limit,
               "queries": args.queries, "shapes": result}
    if args.json:
        args.json.write_text(json.dumps(payload, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
