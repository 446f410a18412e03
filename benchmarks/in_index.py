"""Ontology-scoped semantic search on Neo4j 2026.x: the in-index filter against the plain index.

Run ``python -m benchmarks.in_index [--chapters N] [--queries Q] [--json OUT] [--keep]
[--uri URI] [--data-dirs DIRS]`` (default 200,000 chapters, 20 timed queries per shape). It
needs a 2026.01+ server: without ``--uri`` it starts its own Neo4j 2026.09.0 (JDK 21+).

Corpus: the scale benchmark's synthetic chapters (``benchmarks.scale_corpus``: real e5
vectors of SciFact + XQuAD-R perturbed and mixed), each document in the ontology named by its
``REGION`` code (``r20`` 20%, ``r5`` 5%, ``rest`` 75%) instead of one ontology, with its
``SKEW`` category. Shapes: a phrase scoped to each ontology, and a phrase AND ``SKEW=v10``
scoped to ``r20`` (2% of the graph). Each query runs, interleaved, through
- ``in-index``: ``ThalabusGraph.query(text, ontology_id=o)`` with the defaults (the ontology
  filtered inside the V0007 indexes where the planner takes an index path);
- ``plain``: the same with ``vector_in_index_filter`` off (the plain index over-fetched by the
  ontology's share, the ontology checked per candidate);
- ``graphrag``: neo4j-graphrag's ``VectorRetriever`` on the same ontology-filtered index
  (``typical_rag_ontology``) with ``filters`` on the chapters' ``ontologyid``, which it runs
  as an in-index ``SEARCH`` too, and on the copied ``cat_SKEW`` (range-indexed; not a filter
  property of the index, so graphrag falls back to its exact pre-filtered scan for that shape).
Recall@10 is against exact cosine within the filter (numpy, computed while the corpus
streams); times are p50 / p95 ms and ratios of p50 from the same run. Hybrid fusion is off,
so that the exact top 10 is the right answer. Only ever modifies a database it created (the
scale benchmark's marker rules).
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.quality import semantic_phrase
from benchmarks.report import write_json
from benchmarks.scale import (
    LookupEmbedder,
    claim,
    corpus_arguments,
    percentile,
    run_statement,
    say,
    server,
)
from benchmarks.scale_corpus import (
    BLOCK,
    DIMENSIONS,
    RECALL_AT,
    REGION_VALUES,
    SKEW_VALUES,
    Synthesizer,
    TopK,
    chapter_index,
    load_real_sets,
    region_value,
)
from thalabus_graph import Settings, ThalabusGraph

DEFAULT_OUT = Path(".thalabus/benchmarks/in_index.json")
NEO4J_VERSION = "2026.09.0"
MARKER_VERSION = 1
WARMUP = 2
SKEW_V10 = [name for name, _ in SKEW_VALUES].index("v10")
SHAPES: tuple[tuple[str, int, bool], ...] = (
    ("r5", 1, False), ("r20", 0, False), ("rest", len(REGION_VALUES), False), ("r20", 0, True))
"""(ontology, REGION code, AND SKEW=v10) of each shape."""
SYSTEMS = ("in-index", "plain", "graphrag")


def shape_name(ontology: str, with_skew: bool) -> str:
    return f'"p" AND SKEW=v10 @ {ontology}' if with_skew else f'"p" @ {ontology}'


def chapter_paths(tree: dict[str, Any]) -> set[str]:
    """The paths of every chapter search in a profiled plan tree."""
    out: set[str] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        out |= {st["path"] for st in node.get("steps", [])
                if st.get("kind") == "semantic" and st.get("source") == "chapters"}
        stack.extend(node.get("children", []))
    return out


def documents(synth: Synthesizer, truths: list[TopK], queries: np.ndarray[Any, Any],
              say: Callable[[str], None]) -> Iterator[dict[str, Any]]:
    """The corpus, one block at a time, folding each block into every shape's ground truth."""
    start = time.perf_counter()
    for block in synth.blocks():
        scores = (queries @ block.vectors.T).astype(np.float64)
        for truth, (_, code, with_skew) in zip(truths, SHAPES, strict=True):
            keep = block.region == code
            if with_skew:
                keep &= block.skew == SKEW_V10
            truth.merge(np.where(keep[None, :], scores, -np.inf), block.idx)
        for j in range(len(block.idx)):
            doc = synth.document(block, j)
            doc["ontology"] = region_value(int(block.region[j]))
            yield doc
        done = int(block.idx[-1]) + 1
        if done % (BLOCK * 20) == 0 or done == synth.n:
            say(f"  {done} / {synth.n} chapters ({done / (time.perf_counter() - start):.0f}/s)")


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict[str, Any]:
    """Generate, load (or reuse), measure; the JSON result."""
    from neo4j_graphrag.retrievers import VectorRetriever
    from neo4j_graphrag.types import RetrieverResultItem

    real = load_real_sets([Path(d) for d in args.data_dirs.split(",") if d.strip()])
    synth = Synthesizer(real, args.chapters, args.sigma, args.mix, args.seed)
    rng = np.random.default_rng(args.seed)
    picked = rng.choice(len(real.query_texts), size=args.queries + WARMUP, replace=False)
    texts = [real.query_texts[int(i)] for i in picked]
    queries = real.query_vectors[picked]
    truths = [TopK(len(texts)) for _ in SHAPES]
    lookup = dict(zip(texts, queries, strict=True))
    base = Settings(embedding_dimensions=DIMENSIONS, hybrid_all_queries=False,
                    short_query_max_words=0)
    wanted = {"version": MARKER_VERSION, "benchmark": "in_index", "chapters": args.chapters,
              "seed": args.seed, "sigma": args.sigma, "mix": args.mix,
              "sources": ",".join(real.sources)}
    with server(args, say) as uri, ThalabusGraph.connect(
            uri, settings=base, embedder=LookupEmbedder(lookup)) as graph:
        agent = graph.db.driver.get_server_info().agent
        reused = claim(graph.db, wanted, uri)
        graph.migrate()
        if not graph.queries.in_index_filter("any").available:
            raise SystemExit(f"{agent} has no ontology-filtered vector indexes: "
                             "this benchmark needs Neo4j 2026.01 or newer")
        stream = documents(synth, truths, queries, say)
        if reused:
            say("the database holds this corpus: reusing it (ground truth regenerated)")
            for _ in stream:
                pass
        else:
            started = time.perf_counter()
            graph.ingest(stream, progress=False, embed=False, strict=True)
            run_statement(graph.db, "scale_copy_categories")
            run_statement(graph.db, "in_index_graphrag_index")
            run_statement(graph.db, "scale_await_indexes", timeout=3600)
            run_statement(graph.db, "scale_marker_write", props={**wanted, "complete": True})
            say(f"loaded in {time.perf_counter() - started:.0f} s")
        plain = ThalabusGraph(graph.db, settings=base.replace(vector_in_index_filter=False),
                              embedder=graph.embedder)

        def fmt(record: Any) -> RetrieverResultItem:
            return RetrieverResultItem(content=record["node"]["fragmentid"])

        # graphrag logs each fallback to its exact scan (the SKEW shape) as a warning.
        logging.getLogger("neo4j_graphrag").setLevel(logging.ERROR)
        retriever = VectorRetriever(graph.db.driver, "typical_rag_ontology",
                                    return_properties=["fragmentid"], result_formatter=fmt,
                                    neo4j_database=graph.db.database)
        engines = {"in-index": graph, "plain": plain}
        rec: dict[tuple[int, str], dict[str, list[float]]] = {
            (s, name): {"recall": [], "ms": []} for s in range(len(SHAPES)) for name in SYSTEMS}
        paths: dict[tuple[int, str], set[str]] = {}
        for j in range(len(texts)):
            for s in rng.permutation(len(SHAPES)):
                ontology, _, with_skew = SHAPES[int(s)]
                text = semantic_phrase(texts[j]) + (" AND SKEW=v10" if with_skew else "")
                truth = truths[int(s)].truth(j)
                for name in rng.permutation(SYSTEMS):
                    start = time.perf_counter()
                    if name == "graphrag":
                        filters = {"ontologyid": ontology,
                                   **({"cat_SKEW": "v10"} if with_skew else {})}
                        items = retriever.search(query_vector=[float(x) for x in queries[j]],
                                                 top_k=RECALL_AT, filters=filters).items
                        found = [chapter_index(str(i.content)) for i in items]
                    else:
                        result = engines[name].query(text, ontology_id=ontology,
                                                     profile=j == 0)
                        found = [chapter_index(d.documentid)
                                 for d in (result.documents or [])[:RECALL_AT]]
                        if result.plan is not None:
                            paths[(int(s), name)] = chapter_paths(result.plan["tree"])
                    ms = (time.perf_counter() - start) * 1000
                    if j >= WARMUP:
                        rec[(int(s), name)]["recall"].append(
                            len(set(found) & truth) / len(truth) if truth else 1.0)
                        rec[(int(s), name)]["ms"].append(ms)
    rows = []
    for s, (ontology, _, with_skew) in enumerate(SHAPES):
        row: dict[str, Any] = {"shape": shape_name(ontology, with_skew)}
        for name in SYSTEMS:
            r = rec[(s, name)]
            row[name] = {"recall_mean": round(statistics.fmean(r["recall"]), 4),
                         "p50_ms": round(statistics.median(r["ms"]), 1),
                         "p95_ms": round(percentile(r["ms"], 0.95), 1),
                         **({"path": sorted(paths.get((s, name), set()))}
                            if name != "graphrag" else {})}
        for other in ("plain", "graphrag"):
            row[f"in_index_over_{other}_p50"] = round(
                row["in-index"]["p50_ms"] / max(row[other]["p50_ms"], 1e-9), 2)
        rows.append(row)
    return {"benchmark": "in_index", "neo4j": agent, "chapters": args.chapters,
            "queries_per_shape": args.queries, "warmup_rounds": WARMUP,
            "recall_at": RECALL_AT, "corpus": wanted, "shapes": rows}


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--chapters", type=int, default=200_000)
    parser.add_argument("--queries", type=int, default=20, help="timed queries per shape")
    parser.add_argument("--json", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--neo4j-version", default=NEO4J_VERSION,
                        help="Neo4j the own server runs (2026.01 or newer)")
    args = corpus_arguments(parser, argv)
    result = run(args, say)
    print(f"in-index benchmark: {result['chapters']} chapters, {result['neo4j']}, "
          f"{result['queries_per_shape']} queries a shape; recall@10 and p50 / p95 ms")
    print(f"{'shape':<26}" + "".join(f"{n:>24}" for n in SYSTEMS)
          + f"{'vs plain':>10}{'vs graphrag':>12}")
    for row in result["shapes"]:
        cells = "".join(f"{row[n]['recall_mean']:>8.3f} {row[n]['p50_ms']:>6.1f} / "
                        f"{row[n]['p95_ms']:>6.1f}" for n in SYSTEMS)
        print(f"{row['shape']:<26}{cells}{row['in_index_over_plain_p50']:>9.2f}x"
              f"{row['in_index_over_graphrag_p50']:>11.2f}x")
        print(f"{'':<26}paths: in-index {row['in-index']['path']}, plain "
              f"{row['plain']['path']}")
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
