"""Where the engine's query time goes against neo4j-graphrag's: its one search statement, and
the same index calls with nothing else, beside graphrag asked for the same pools.

Run ``python -m benchmarks.latency_floor --data DIR --split S --uri URI
[--limit-queries N] [--limit K] [--reuse] [--json OUT]``.

The corpus is loaded as ``benchmarks.vs_graphrag`` loads it (the database at ``URI`` is
wiped unless ``--reuse`` finds exactly this corpus). Each query is first run once through the
engine at its default pools and at ``limit=K`` (untimed) to record the parameters of its
``search_phrase`` statement: the index calls exactly as the engine makes them (index names,
``k``, pools, the escaped text query of the phrase's language). Then, interleaved per query:

- ``engine-default`` / ``engine-limit``: ``ThalabusGraph.query`` as in ``vs_graphrag``; beside
  the total, the milliseconds of its ``search_phrase`` call (the server's searches and the
  driver decoding the rows: the statement's share of the query);
- ``graphrag-hybrid-pool`` / ``graphrag-hybrid``: ``HybridRetriever`` with ``top_k`` = the
  seed's pool (200) / ``K``;
- ``floor-pool`` / ``floor-limit``: the recorded index calls alone in one statement (a vector
  ``queryNodes`` at the engine's ``k`` cut to its pool, a full-text ``queryNodes`` at its
  limit), returning each hit's fragment id, document id and score and nothing else: no node
  counts, no texts, no languages, no documents' details, no fusion or calibration after it
  (``cypher/floor_index_calls.cypher``);
- ``floor-pool-texts``: ``floor-pool`` also returning each hit's text (what the fusion and the
  lexical share read).

A floor is what the engine's default candidate pools cost on the server before any of the
engine's work; a floor above graphrag's whole call means no work after the index calls can
bring the engine to graphrag's time at those pools.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from neo4j_graphrag.retrievers import HybridRetriever

from benchmarks.quality import Corpus, connect, load, load_corpus, semantic_phrase
from benchmarks.report import finish
from benchmarks.scale import cypher
from benchmarks.vs_graphrag import (
    LookupEmbedder,
    _corpus_id,
    _loaded,
    _p95,
    _record_formatter,
    corpus_options,
    graphrag_search,
)
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.search import runner as runner_module

DEFAULT_OUT = Path(".thalabus/benchmarks/latency_floor.json")
BASELINES = {"engine-default": "graphrag-hybrid-pool", "engine-limit": "graphrag-hybrid",
             "floor-pool": "graphrag-hybrid-pool", "floor-pool-texts": "graphrag-hybrid-pool",
             "floor-limit": "graphrag-hybrid"}
WARMUP = 20


class StatementClock:
    """Records the parameters and milliseconds of each ``search_phrase`` call the engine makes
    (``Runner.read`` wrapped while ``recording`` is open)."""

    def __init__(self) -> None:
        self.params: list[dict[str, Any]] = []
        self.ms: list[float] = []

    @contextmanager
    def recording(self) -> Iterator[None]:
        """Wrap ``Runner.read`` for the block."""
        original = runner_module.Runner.read
        clock = self

        def read(self: runner_module.Runner, step: Any, name: str, /, **kwargs: Any) -> Any:
            start = time.perf_counter()
            rows = original(self, step, name, **kwargs)
            if name == "search_phrase":
                clock.ms.append((time.perf_counter() - start) * 1000)
                clock.params.append({k: v for k, v in kwargs.items()
                                     if k not in ("plain", "ahead")})
            return rows

        runner_module.Runner.read = read  # type: ignore[method-assign]
        try:
            yield
        finally:
            runner_module.Runner.read = original  # type: ignore[method-assign]


def floor_search(graph: ThalabusGraph, recorded: Mapping[str, dict[str, Any]], *,
                 texts: bool) -> Callable[[str], list[str]]:
    """The recorded index calls of a query's phrase alone: documents best first by their
    vector hits, then text hits (an order for nDCG only; nothing is fused)."""
    statement = cypher("floor_index_calls")
    driver, database = graph.db.driver, graph.db.database

    def search(text: str) -> list[str]:
        params = recorded[text]
        records, _, _ = driver.execute_query(
            statement, {"vector": params["vector"],
                        "vector_searches": params["vector_searches"],
                        "text_searches": params["text_searches"], "texts": texts},
            database_=database, routing_="r")
        out: list[str] = []
        for record in records:
            for hit in record["hits"]:
                if _corpus_id(hit[1]) not in out:
                    out.append(_corpus_id(hit[1]))
        return out

    return search


def record_params(graph: ThalabusGraph, queries: Mapping[str, str], limit: int | None,
                  held: Mapping[str, int]) -> dict[str, dict[str, Any]]:
    """Each query's ``search_phrase`` parameters, from one engine run (untimed), without the
    searches of sources that hold no fragments (``held``: node counts; the engine's statement
    skips those too)."""
    clock = StatementClock()
    out: dict[str, dict[str, Any]] = {}
    with clock.recording():
        for text in queries.values():
            before = len(clock.params)
            graph.query(semantic_phrase(text), limit=limit)
            if len(clock.params) != before + 1:
                raise RuntimeError(f"expected one search_phrase call for {text!r}, got "
                                   f"{len(clock.params) - before}")
            params = dict(clock.params[-1])
            params["vector_searches"] = [v for v in params["vector_searches"]
                                         if held.get(v["source"], 0) > 0]
            params["text_searches"] = [t for t in params["text_searches"]
                                       if held.get(t["source"], 0) > 0]
            out[text] = params
    return out


def benchmark(uri: str, corpus: Corpus, *, limit: int = 10, reuse: bool = False,
              say: Callable[[str], None] = print) -> dict[str, Any]:
    """Load (or reuse), record the statements, run every system interleaved, summarise."""
    if corpus.query_vectors is None or corpus.doc_vectors is None:
        raise SystemExit("latency_floor needs precomputed embeddings/ in the data directory")
    started = time.perf_counter()
    dims = len(next(iter(corpus.doc_vectors.values())))
    settings = Settings.from_env(embedding_dimensions=dims)
    with connect(uri, settings, corpus) as graph:
        if not (reuse and _loaded(graph, corpus)):
            loaded = load(graph, corpus)
            say(f"loaded {len(corpus.docs)} documents in {loaded['seconds']:.1f} s")
        queries = corpus.queries
        held = graph.db.read("search_counts")[0]
        pool_params = record_params(graph, queries, None, held)
        limit_params = record_params(graph, queries, limit, held)
        embedder = LookupEmbedder(corpus.query_vectors)
        hybrid = HybridRetriever(graph.db.driver, "typical_rag", "chapters_fulltext", embedder,
                                 return_properties=["fragmentid", "documentid"],
                                 result_formatter=_record_formatter,
                                 neo4j_database=graph.db.database)
        clock = StatementClock()
        statement_ms: dict[str, list[float]] = {"engine-default": [], "engine-limit": []}

        def engine(name: str, limit_: int | None) -> Callable[[str], list[str]]:
            def search(text: str) -> list[str]:
                before = len(clock.ms)
                result = graph.query(semantic_phrase(text), limit=limit_)
                statement_ms[name].append(sum(clock.ms[before:]))
                return [_corpus_id(d.documentid) for d in result.documents or []]
            return search

        systems: dict[str, Callable[[str], list[str]]] = {
            "engine-default": engine("engine-default", None),
            "engine-limit": engine("engine-limit", limit),
            "graphrag-hybrid-pool": graphrag_search(hybrid, embedder, settings.top_n_chapters),
            "graphrag-hybrid": graphrag_search(hybrid, embedder, limit),
            "floor-pool": floor_search(graph, pool_params, texts=False),
            "floor-pool-texts": floor_search(graph, pool_params, texts=True),
            "floor-limit": floor_search(graph, limit_params, texts=False),
        }
        names = list(systems)
        times: dict[str, list[float]] = {n: [] for n in names}
        with clock.recording():
            texts = list(queries.values())
            for position, text in enumerate(texts[:WARMUP] + texts):
                for name in names[position % len(names):] + names[:position % len(names)]:
                    start = time.perf_counter()
                    systems[name](text)
                    ms = (time.perf_counter() - start) * 1000
                    if position >= WARMUP:
                        times[name].append(ms)
                    elif name in statement_ms:
                        statement_ms[name].pop()
                if (position + 1 - WARMUP) % 100 == 0 and position >= WARMUP:
                    say(f"{position + 1 - WARMUP} queries")
        agent = graph.db.driver.get_server_info().agent
    rows = []
    for name in names:
        p50 = statistics.median(times[name])
        row: dict[str, Any] = {"system": name, "p50_ms": round(p50, 2),
                               "p95_ms": round(_p95(times[name]), 2)}
        if name in statement_ms:
            row["search_phrase_p50_ms"] = round(statistics.median(statement_ms[name]), 2)
            row["search_phrase_share"] = round(
                sum(statement_ms[name]) / max(sum(times[name]), 1e-9), 3)
        if name in BASELINES:
            base = statistics.median(times[BASELINES[name]])
            row["baseline"] = BASELINES[name]
            row["p50_vs_baseline"] = round(p50 / base, 3)
            if "search_phrase_p50_ms" in row:
                row["search_phrase_p50_vs_baseline"] = round(
                    row["search_phrase_p50_ms"] / base, 3)
        rows.append(row)
    some = next(iter(pool_params.values()))
    return {"benchmark": "latency_floor", "documents": len(corpus.docs),
            "queries": len(corpus.queries), "limit": limit,
            "neo4j": agent,
            "vector_searches_default": some["vector_searches"],
            "text_searches_default": [{k: v for k, v in t.items() if k != "query"}
                                      for t in some["text_searches"]],
            "results": rows, "wall_seconds": round(time.perf_counter() - started, 1)}


def table(result: Mapping[str, Any]) -> str:
    """The results as a fixed-width text table."""
    lines = [f"{'system':<20} {'p50 ms':>8} {'p95 ms':>8} {'statement p50':>13} "
             f"{'x baseline':>10} {'statement x':>11}  baseline"]
    for r in result["results"]:
        statement = r.get("search_phrase_p50_ms")
        ratio = f"{r['p50_vs_baseline']:.2f}" if "baseline" in r else "-"
        statement_ratio = (f"{r['search_phrase_p50_vs_baseline']:.2f}"
                           if statement is not None else "-")
        shown = f"{statement:.1f}" if statement is not None else "-"
        lines.append(f"{r['system']:<20} {r['p50_ms']:>8.1f} {r['p95_ms']:>8.1f} {shown:>13} "
                     f"{ratio:>10} {statement_ratio:>11}  {r.get('baseline', '')}")
    lines.append(f"{result['documents']} documents, {result['queries']} queries interleaved, "
                 f"limit {result['limit']}, {result['neo4j']}; engine vector searches "
                 f"{result['vector_searches_default']}; wall time {result['wall_seconds']} s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run, print the table, write the JSON."""
    options = corpus_options(__doc__, DEFAULT_OUT)
    options.add_argument("--limit", type=int, default=10, help="the engine's limit, graphrag's "
                         "top_k for the like-for-like pair")
    args = options.parse_args(argv)
    corpus = load_corpus(args.data, args.split, limit_queries=args.limit_queries)
    result = benchmark(args.uri, corpus, limit=args.limit, reuse=args.reuse,
                       say=lambda msg: print(msg, file=sys.stderr, flush=True))
    return finish(result, table, data=args.data, split=args.split, json_path=args.json)


if __name__ == "__main__":
    sys.exit(main())
