"""The engine against neo4j-graphrag's retrievers: same server, same indexes, same vectors.

Run ``python -m benchmarks.vs_graphrag --data DIR --split S [--json OUT] [--uri URI]
[--limit-queries N] [--top-k 10] [--reuse] [--set FIELD=VALUE ...]`` (``--set`` changes the
engine's settings, e.g. ``top_n_chapters=100``, to measure what a setting costs).

``DIR`` is a BEIR directory with precomputed ``embeddings/`` (see ``benchmarks.quality``,
whose loader is used: one chapter per document, the database wiped first unless ``--reuse``
finds exactly this corpus already loaded). Eight systems answer every query, in an order that
rotates from query to query (interleaved, so load on the machine hits all alike):

- ``engine-default``: ``ThalabusGraph.query('"<query>"')`` with the shipped settings (documents
  with their details, as an application receives them): the seed's pools (``top_n_*`` = 200),
  compared with ``graphrag-hybrid-pool``;
- ``engine-limit``: the same query with ``limit=top_k`` (its pools sized to the ``top_k``
  results wanted, ``plan.cost.sized``), compared with ``graphrag-hybrid``;
- ``engine-fragments``: the same query with ``return_documents=False`` (fragments only,
  aggregated to documents by ``aggregate_documents`` here: no document details are read);
- ``engine-semantic``: the default query with text fusion off (``hybrid_all_queries=False``,
  ``short_query_max_words=0``);
- ``graphrag-hybrid``: neo4j-graphrag's ``HybridRetriever`` (naive ranker) on the engine's own
  ``typical_rag`` vector and ``chapters_fulltext`` full-text indexes, ``top_k`` results;
- ``graphrag-vector``: its ``VectorRetriever`` on ``typical_rag``;
- ``graphrag-hybrid-pool``, ``graphrag-vector-pool``: the same retrievers with ``top_k`` =
  the engine's ``top_n_chapters`` (200): graphrag asked for the candidate pool the engine's
  fusion works on, which shows what fetching that many candidates costs on this server (the
  floor under the engine's default query, which the seeds fix at 200 per source).

All of them get their query vector from the same lookup of the precomputed vectors (no model
runs), so the times compare the retrieval paths only; graphrag's full-text side gets the query
escaped as the engine escapes it (graphrag passes text to Lucene as query syntax). Each
system's ranking of documents is scored with nDCG@10 and MRR@10 (ir-measures) and its
latencies summarised as p50 / p95; the ratios are against ``graphrag-hybrid`` measured in the
same run, and each engine row that has one against its counterpart (``COUNTERPARTS``). A
warm-up pass over the first queries (not timed) precedes the measured pass.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

import neo4j
import numpy as np
import numpy.typing as npt
from neo4j_graphrag.embeddings.base import Embedder as GraphragEmbedder
from neo4j_graphrag.retrievers import HybridRetriever, VectorRetriever

from benchmarks.quality import (
    DOC_PREFIX,
    Corpus,
    connect,
    evaluate,
    load,
    load_corpus,
    semantic_phrase,
)
from benchmarks.report import finish
from thalabus_graph import Settings, ThalabusGraph, lucene
from thalabus_graph.fragments import aggregate_documents
from thalabus_graph.settings import ENV_PREFIX

DEFAULT_OUT = Path(".thalabus/benchmarks/vs_graphrag.json")
BASELINE = "graphrag-hybrid"
SYSTEMS = ("engine-default", "engine-limit", "engine-fragments", "engine-semantic",
           "graphrag-hybrid", "graphrag-vector", "graphrag-hybrid-pool", "graphrag-vector-pool")
COUNTERPARTS = {"engine-default": "graphrag-hybrid-pool", "engine-limit": "graphrag-hybrid"}
"""The like-for-like pairs: the seed's pool against graphrag asked for that pool, and a
caller's ``limit`` against graphrag asked for as many results."""
WARMUP = 20
Search = Callable[[str], list[str]]
"""One system: query text -> document ids (corpus ``_id``s), best first."""


class LookupEmbedder(GraphragEmbedder):
    """neo4j-graphrag's embedder interface answered from the precomputed query vectors."""

    def __init__(self, vectors: Mapping[str, npt.NDArray[np.float32]]) -> None:
        super().__init__()
        self._vectors = {text: [float(x) for x in vector] for text, vector in vectors.items()}

    def embed_query(self, text: str) -> list[float]:
        """The stored vector of ``text`` (a ``KeyError`` when there is none)."""
        return self._vectors[text]


def _corpus_id(documentid: str) -> str:
    return documentid.removeprefix(DOC_PREFIX)


def engine_search(graph: ThalabusGraph, *, with_details: bool = True,
                  limit: int | None = None) -> Search:
    """The engine through its public ``query``: documents best first (with their details
    from the graph, as ``query`` returns them by default; or, ``with_details=False``, the
    fragments only, aggregated to documents here); ``limit``: the results asked for."""
    def search(text: str) -> list[str]:
        if with_details:
            result = graph.query(semantic_phrase(text), limit=limit)
            ranked = [d.documentid for d in result.documents or []]
        else:
            fragments = graph.query(semantic_phrase(text), return_documents=False).fragments
            ranked = [d for d, _ in aggregate_documents(fragments)]
        return [_corpus_id(d) for d in ranked]

    return search


def graphrag_search(retriever: HybridRetriever | VectorRetriever, embedder: LookupEmbedder,
                    top_k: int) -> Search:
    """A graphrag retriever's ``search``: its nodes' documents, best first.

    graphrag hands ``query_text`` to Lucene as query syntax (a ``(`` in a query is a parse
    error), so the full-text side gets the text escaped exactly as the engine escapes it
    (``lucene.terms_query``) and the vector side the looked-up vector of the raw text.
    """
    def search(text: str) -> list[str]:
        vector = embedder.embed_query(text)
        if isinstance(retriever, HybridRetriever):
            result = retriever.search(query_text=lucene.terms_query(text), query_vector=vector,
                                      top_k=top_k)
        else:
            result = retriever.search(query_vector=vector, top_k=top_k)
        out: list[str] = []
        for item in result.items:
            documentid = (item.metadata or {}).get("documentid")
            if documentid is None:
                raise RuntimeError(f"graphrag returned an item without documentid: {item}")
            if _corpus_id(documentid) not in out:
                out.append(_corpus_id(documentid))
        return out

    return search


def _record_formatter(record: neo4j.Record) -> Any:
    from neo4j_graphrag.types import RetrieverResultItem

    node = record.get("node") or {}
    return RetrieverResultItem(content=node.get("fragmentid"),
                               metadata={"documentid": node.get("documentid"),
                                         "score": record.get("score")})


def _loaded(graph: ThalabusGraph, corpus: Corpus) -> bool:
    """True when the graph holds exactly this corpus's chapters (for ``--reuse``)."""
    counts = graph.db.read("search_counts")[0]
    return bool(counts["documents"] == len(corpus.docs) == counts["chapters"])


def _p95(values: Sequence[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[18]


def run(systems: Mapping[str, Search], queries: Mapping[str, str],
        say: Callable[[str], None]) -> tuple[dict[str, dict[str, list[tuple[str, float]]]],
                                             dict[str, list[float]]]:
    """Every query through every system, the order rotating per query; rankings and ms."""
    names = list(systems)
    rankings: dict[str, dict[str, list[tuple[str, float]]]] = {n: {} for n in names}
    times: dict[str, list[float]] = {n: [] for n in names}
    for position, text in enumerate(list(queries.values())[:WARMUP]):
        for name in names[position % len(names):] + names[:position % len(names)]:
            systems[name](text)
    for position, (qid, text) in enumerate(queries.items()):
        for name in names[position % len(names):] + names[:position % len(names)]:
            start = time.perf_counter()
            docs = systems[name](text)
            times[name].append((time.perf_counter() - start) * 1000)
            rankings[name][qid] = [(d, float(len(docs) - i)) for i, d in enumerate(docs)]
        if (position + 1) % 100 == 0:
            say(f"{position + 1} queries")
    return rankings, times


def benchmark(uri: str, corpus: Corpus, *, top_k: int = 10, reuse: bool = False,
              overrides: Mapping[str, Any] | None = None,
              say: Callable[[str], None] = print) -> dict[str, Any]:
    """Load (or reuse) the corpus, run the systems interleaved, summarise. ``overrides``
    change the engine's settings (all engine rows) from the configured ones."""
    if not corpus.precomputed or corpus.query_vectors is None or corpus.doc_vectors is None:
        raise SystemExit("vs_graphrag needs precomputed embeddings/ in the data directory")
    started = time.perf_counter()
    dims = len(next(iter(corpus.doc_vectors.values())))
    settings = Settings.from_env(embedding_dimensions=dims, **dict(overrides or {}))
    semantic_only = settings.replace(hybrid_all_queries=False, short_query_max_words=0)
    loading: dict[str, Any] = {"reused": True}
    with connect(uri, settings, corpus) as default, \
            connect(uri, semantic_only, corpus) as semantic:
        if not (reuse and _loaded(default, corpus)):
            loading = load(default, corpus)
            say(f"loaded {len(corpus.docs)} documents in {loading['seconds']:.1f} s")
        driver = default.db.driver
        embedder = LookupEmbedder(corpus.query_vectors)
        fields = ["fragmentid", "documentid"]
        hybrid = HybridRetriever(driver, "typical_rag", "chapters_fulltext", embedder,
                                 return_properties=fields, result_formatter=_record_formatter,
                                 neo4j_database=default.db.database)
        vector = VectorRetriever(driver, "typical_rag", embedder, return_properties=fields,
                                 result_formatter=_record_formatter,
                                 neo4j_database=default.db.database)
        systems: dict[str, Search] = {
            "engine-default": engine_search(default),
            "engine-limit": engine_search(default, limit=top_k),
            "engine-fragments": engine_search(default, with_details=False),
            "engine-semantic": engine_search(semantic),
            "graphrag-hybrid": graphrag_search(hybrid, embedder, top_k),
            "graphrag-vector": graphrag_search(vector, embedder, top_k),
            "graphrag-hybrid-pool": graphrag_search(hybrid, embedder, settings.top_n_chapters),
            "graphrag-vector-pool": graphrag_search(vector, embedder, settings.top_n_chapters),
        }
        rankings, times = run(systems, corpus.queries, say)
    base_p50 = statistics.median(times[BASELINE])
    base_p95 = _p95(times[BASELINE])
    rows = []
    for name in SYSTEMS:
        metrics = evaluate(corpus.qrels, rankings[name])
        p50, p95 = statistics.median(times[name]), _p95(times[name])
        rows.append({"system": name, "ndcg@10": round(metrics["ndcg@10"], 4),
                     "mrr@10": round(metrics["mrr@10"], 4), "p50_ms": round(p50, 2),
                     "p95_ms": round(p95, 2), "p50_vs_graphrag_hybrid": round(p50 / base_p50, 3),
                     "p95_vs_graphrag_hybrid": round(p95 / base_p95, 3)})
        if name in COUNTERPARTS:
            other = COUNTERPARTS[name]
            rows[-1].update(counterpart=other, p50_vs_counterpart=round(
                p50 / statistics.median(times[other]), 3), ndcg_vs_counterpart=round(
                metrics["ndcg@10"] - evaluate(corpus.qrels, rankings[other])["ndcg@10"], 4))
    return {"benchmark": "vs_graphrag", "python": platform.python_version(),
            "machine": platform.machine(), "cpus": os.cpu_count(),
            "neo4j_graphrag": _version("neo4j-graphrag"), "neo4j_driver": neo4j.__version__,
            "documents": len(corpus.docs), "queries": len(corpus.queries), "top_k": top_k,
            "engine_overrides": dict(overrides or {}),
            "warmup_queries": min(WARMUP, len(corpus.queries)), "load": loading,
            "results": rows, "wall_seconds": round(time.perf_counter() - started, 1)}


def _version(package: str) -> str:
    from importlib.metadata import version

    return version(package)


def table(result: Mapping[str, Any]) -> str:
    """The results as a fixed-width text table."""
    lines = [f"{'system':<20} {'nDCG@10':>8} {'MRR@10':>7} {'p50 ms':>8} {'p95 ms':>8} "
             f"{'p50 x hybrid':>12} {'p95 x hybrid':>12}  like-for-like"]
    for r in result["results"]:
        pair = ("" if "counterpart" not in r else
                f"  p50 {r['p50_vs_counterpart']:.2f}x, nDCG@10 "
                f"{r['ndcg_vs_counterpart']:+.4f} vs {r['counterpart']}")
        lines.append(f"{r['system']:<20} {r['ndcg@10']:>8.4f} {r['mrr@10']:>7.4f} "
                     f"{r['p50_ms']:>8.1f} {r['p95_ms']:>8.1f} "
                     f"{r['p50_vs_graphrag_hybrid']:>12.2f} {r['p95_vs_graphrag_hybrid']:>12.2f}"
                     f"{pair}")
    lines.append(f"{result['documents']} documents, {result['queries']} queries interleaved, "
                 f"graphrag top_k {result['top_k']}; wall time {result['wall_seconds']} s")
    return "\n".join(lines)


def settings_overrides(pairs: Sequence[str]) -> dict[str, Any]:
    """``FIELD=VALUE`` pairs as settings overrides, each coerced as its
    ``THALABUS_FIELD`` variable would be (an unknown field or bad value is an error)."""
    environ: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or name not in {f.name for f in fields(Settings)}:
            raise SystemExit(f"--set {pair!r}: expected FIELD=VALUE with a Settings field")
        environ[ENV_PREFIX + name.upper()] = value
    parsed = Settings.from_env(environ)
    return {pair.partition("=")[0]: getattr(parsed, pair.partition("=")[0]) for pair in pairs}


def corpus_options(doc: str | None, json_path: Path) -> argparse.ArgumentParser:
    """The options of a benchmark that loads a BEIR split's corpus into a Neo4j it may wipe:
    ``--data``, ``--split``, ``--limit-queries``, ``--reuse``, ``--json`` and ``--uri``."""
    options = argparse.ArgumentParser(description=doc.splitlines()[0] if doc else None)
    options.add_argument("--data", type=Path, required=True, help="BEIR directory")
    options.add_argument("--split", required=True, help="qrels/NAME.tsv (its queries are run)")
    options.add_argument("--limit-queries", type=int, default=None)
    options.add_argument("--reuse", action="store_true",
                         help="keep the loaded corpus when the graph holds exactly it")
    options.add_argument("--json", type=Path, default=json_path)
    options.add_argument("--uri", default=os.environ.get("NEO4J_URI", "bolt://127.0.0.1:7687"),
                         help="Neo4j to use; its database is wiped (default: $NEO4J_URI)")
    return options


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run, print the table, write the JSON."""
    options = corpus_options(__doc__, DEFAULT_OUT)
    options.add_argument("--top-k", type=int, default=10, help="graphrag's top_k")
    options.add_argument("--set", nargs="*", default=[], metavar="FIELD=VALUE",
                         help="engine settings to change (e.g. top_n_chapters=100)")
    args = options.parse_args(argv)
    overrides = settings_overrides(args.set)
    corpus = load_corpus(args.data, args.split, limit_queries=args.limit_queries)
    result = benchmark(args.uri, corpus, top_k=args.top_k, reuse=args.reuse,
                       overrides=overrides,
                       say=lambda msg: print(msg, file=sys.stderr, flush=True))
    return finish(result, table, data=args.data, split=args.split, json_path=args.json)


if __name__ == "__main__":
    sys.exit(main())
