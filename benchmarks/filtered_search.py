"""Filtered vector search: recall@10 and p50 latency of the planner against its alternatives.

Run ``python -m benchmarks.filtered_search [--chapters N] [--queries Q] [--top-n K]
[--reuse] [--json OUT] [--uri URI]``.

Corpus: the deterministic one of ``benchmarks.ingest_throughput`` (N chapters, one per
document by default, random 384-d unit vectors); document i has ``SEL_0_1=yes`` for 0.1% of
the documents, ``SEL_1`` 1%, ``SEL_10`` 10%, ``SEL_50`` 50% and ``SEL_100`` 100% (nested sets
chosen by a fixed permutation, exact counts). ``--reuse`` keeps a graph that already holds
exactly this corpus (left behind by the ingest benchmark); otherwise it is (re)ingested.

Queries are ``"phrase" AND SEL_x=yes`` with a fixed random unit query vector per phrase (an
embedder stub). Ground truth is brute-force cosine in numpy over the filtered chapters. For
each selectivity, in one run on one server:

(a)  the planner: ``phrase_plan(..., restriction, with_text=False)`` run on a
     fresh executor (what the compiled plan runs for the scored side of the AND), and the whole
     ``ThalabusGraph.query(..., return_documents=False)`` with hybrid text fusion off
     (``hybrid_all_queries=False, short_query_max_words=0``), which adds the category lookup;
(b)  global top-N then filter: ``search_vector`` with ``documentids`` and ``k = top_n``;
(c)  exact cosine over the filtered set: ``search_vector_exact``;
(d)  a sweep of the vector index with over-fetch ``k = ceil(top_n * f / selectivity)`` for
     several factors f (k <= index_max_k), to find the settings that would meet the targets.

Targets: recall@10 >= 0.99 at every selectivity and the planner's p50 <= 1.2x the faster of
(b) and (c). Random vectors in 384 dimensions are the hard case for HNSW: the true neighbours
are barely nearer than everything else, so index recall is a lower bound for real embeddings.
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from benchmarks.ingest_throughput import (
    DIMENSIONS,
    DOC_PREFIX,
    SELECTIVITY_CATEGORIES,
    all_vectors,
    await_indexes,
    bench_settings,
    category_members,
    delete_prefix,
    documentid_for,
    documents,
    neo4j_uri,
)
from benchmarks.report import write_json
from tests.support.embedders import SeededEmbedder, text_seed
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.embeddings import Vectors
from thalabus_graph.graph.database import Database, Record
from thalabus_graph.plan.searches import PhraseState, phrase_plan
from thalabus_graph.query import Semantic
from thalabus_graph.search.executor import SearchExecutor

DEFAULT_OUT = Path(".thalabus/benchmarks/filtered_search.json")
RECALL_AT = 10
TARGET_RECALL = 0.99
TARGET_LATENCY_RATIO = 1.2
SWEEP_FACTORS = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
CHAPTER_INDEX = "typical_rag"


class RandomQueryEmbedder(SeededEmbedder):
    """An Embedder whose query vector is a fixed random unit vector per phrase."""

    name = "benchmark-random-query"

    def __init__(self, dimensions: int = DIMENSIONS) -> None:
        super().__init__(dimensions)

    def vector(self, text: str) -> npt.NDArray[np.float32]:
        """The phrase's unit vector (seeded by its sha256)."""
        vec = np.random.default_rng(text_seed(text, "little")).standard_normal(
            self.dimensions).astype(np.float32)
        out: npt.NDArray[np.float32] = vec / np.linalg.norm(vec)
        return out

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        """Not used by the benchmark (the corpus brings its own vectors)."""
        raise NotImplementedError("the benchmark corpus supplies its embeddings")


# --- corpus --------------------------------------------------------------------------------
def corpus_present(db: Database, docs: int, chapters_per_doc: int) -> bool:
    """Whether the graph holds exactly the benchmark corpus (counts and spot-checked vectors)."""
    with db.driver.session(database=db.database) as session:
        row = session.run(
            "RETURN COUNT { (:Document) } AS documents, COUNT { (:Chapter) } AS chapters, "
            "COUNT { (d:Document) WHERE d.documentid STARTS WITH $p } AS bench",
            p=DOC_PREFIX).single()
        if row is None or (row["documents"], row["bench"], row["chapters"]) != (
                docs, docs, docs * chapters_per_doc):
            return False
        for name, fraction in SELECTIVITY_CATEGORIES.items():
            got = len(db.read("search_category", name=name, values=["yes"],
                              ontologyid=None)[0]["documentids"])
            if got != len(category_members(docs, fraction)):
                return False
        sample = [0, docs // 2, docs - 1]
        stored = {r["f"]: r["e"] for r in session.run(
            "UNWIND $ids AS id MATCH (c:Chapter {fragmentid: id}) "
            "RETURN c.fragmentid AS f, c.embedding AS e",
            ids=[f"{documentid_for(i)}-c1" for i in sample])}
    expected = all_vectors(docs, chapters_per_doc)
    for i in sample:
        vec = stored.get(f"{documentid_for(i)}-c1")
        if vec is None or not np.allclose(np.asarray(vec), expected[i * chapters_per_doc],
                                           atol=1e-6):
            return False
    return True


def load_corpus(graph: ThalabusGraph, docs: int, chapters_per_doc: int) -> dict[str, Any]:
    """Delete any benchmark documents and ingest the corpus (not timed as a benchmark)."""
    delete_prefix(graph.db, DOC_PREFIX)
    start = time.perf_counter()
    report = graph.ingest(documents(docs, chapters_per_doc), progress=False, embed=False,
                          strict=True)
    await_indexes(graph.db)
    return {"ingested_fragments": report.fragments,
            "seconds": round(time.perf_counter() - start, 1)}


# --- measuring -----------------------------------------------------------------------------
def fragment_ids(rows: Sequence[int], chapters_per_doc: int) -> list[str]:
    """Fragment ids of corpus rows (row = doc * chapters_per_doc + chapter - 1)."""
    return [f"{documentid_for(r // chapters_per_doc)}-c{r % chapters_per_doc + 1}"
            for r in rows]


def ground_truth(vectors: npt.NDArray[np.float32], rows: npt.NDArray[np.int64],
                 queries: npt.NDArray[np.float32], chapters_per_doc: int) -> list[list[str]]:
    """Top-10 fragment ids per query by exact cosine (float64) over the given rows."""
    q = queries.astype(np.float64)
    scores = np.empty((len(queries), len(rows)))
    for start in range(0, len(rows), 20_000):
        chunk = vectors[rows[start:start + 20_000]].astype(np.float64)
        scores[:, start:start + len(chunk)] = (chunk @ q.T).T
    out = []
    for s in scores:
        top = np.argsort(-s, kind="stable")[:RECALL_AT]
        out.append(fragment_ids(rows[top].tolist(), chapters_per_doc))
    return out


def top_ids(rows: Sequence[Record]) -> list[str]:
    """The 10 best fragment ids of result rows (score desc, then id)."""
    ranked = sorted(rows, key=lambda r: (-float(r["score"]), r["fragmentid"]))
    return [r["fragmentid"] for r in ranked[:RECALL_AT]]


def recall(found: Sequence[str], truth: Sequence[str]) -> float:
    """|found ∩ truth| / |truth|."""
    return len(set(found) & set(truth)) / len(truth)


def timed(work: Callable[[], Any]) -> tuple[Any, float]:
    """Result and milliseconds of one call."""
    start = time.perf_counter()
    result = work()
    return result, (time.perf_counter() - start) * 1000


def summary(recalls: list[float], millis: list[float]) -> dict[str, Any]:
    """Mean/min recall and p50/p90 latency."""
    ordered = sorted(millis)
    p90 = ordered[min(len(ordered) - 1, math.ceil(0.9 * len(ordered)) - 1)]
    return {"recall_mean": round(statistics.fmean(recalls), 4),
            "recall_min": round(min(recalls), 4),
            "p50_ms": round(statistics.median(millis), 2), "p90_ms": round(p90, 2)}


class Bench:
    """One selectivity at a time: every method on every query, interleaved."""

    def __init__(self, graph: ThalabusGraph, embedder: RandomQueryEmbedder,
                 vectors: npt.NDArray[np.float32], docs: int, chapters_per_doc: int,
                 top_n: int, phrases: list[str]) -> None:
        self.graph = graph
        self.db = graph.db
        self.embedder = embedder
        self.vectors = vectors
        self.docs = docs
        self.cpd = chapters_per_doc
        self.top_n = top_n
        self.phrases = phrases
        self.queries = np.stack([embedder.vector(p) for p in phrases])

    def methods(self, name: str | None, ids: list[str], restrict: frozenset[str],
                fraction: float) -> dict[str, Callable[[int], tuple[list[str], dict[str, Any]]]]:
        """Method name -> call(query number) returning (top-10 ids, details)."""
        top_n = self.top_n
        total = self.docs * self.cpd
        s = self.graph.settings

        def planner(j: int) -> tuple[list[str], dict[str, Any]]:
            ex = SearchExecutor(self.db, s, self.embedder)
            chosen = phrase_plan(ex, PhraseState.of(ex), Semantic(self.phrases[j]), restrict,
                                 None, with_text=False)
            frags = ex.run(chosen)
            step = next(st for st in ex.steps if st.detail.get("source") == "chapters")
            return ([f.fragmentid for f in frags[:RECALL_AT]],
                    {"path": step.detail.get("path"), "k": step.detail.get("overfetch_k"),
                     "reason": step.detail.get("reason")})

        def query(j: int) -> tuple[list[str], dict[str, Any]]:
            result = self.graph.query(f'"{self.phrases[j]}" AND {name}=yes',
                                      return_documents=False)
            return [f.fragmentid for f in result.fragments[:RECALL_AT]], {}

        def post_filter(j: int) -> tuple[list[str], dict[str, Any]]:
            rows = self.db.read("search_vector", index=CHAPTER_INDEX, k=top_n, top_n=top_n,
                                vector=self.queries[j].tolist(), documentids=ids,
                                ontologyid=None, name=None, values=None, negated=False)
            return top_ids(rows), {"rows": len(rows)}

        def exact(j: int) -> tuple[list[str], dict[str, Any]]:
            rows = self.db.read("search_vector_exact", documentids=ids, label="Chapter",
                                ontologyid=None, name=None, values=None, negated=False,
                                vector=self.queries[j].tolist(), k=top_n)
            return top_ids(rows), {}

        out: dict[str, Callable[[int], tuple[list[str], dict[str, Any]]]] = {
            "a_planner": planner, "a_planner_query": query,
            "b_global_topn_then_filter": post_filter, "c_exact": exact,
        }
        if name is None:
            del out["a_planner_query"]
        for factor in SWEEP_FACTORS:
            k = math.ceil(top_n * factor / fraction)
            if k > s.index_max_k or k > total:
                continue

            def overfetch(j: int, k: int = k) -> tuple[list[str], dict[str, Any]]:
                rows = self.db.read("search_vector", index=CHAPTER_INDEX, k=k, top_n=top_n,
                                    vector=self.queries[j].tolist(), documentids=ids,
                                    ontologyid=None, name=None, values=None, negated=False)
                return top_ids(rows), {"rows": len(rows)}

            out[f"d_index_overfetch_x{factor:g}"] = overfetch
        return out

    def selectivity(self, name: str | None, fraction: float) -> dict[str, Any]:
        """Measure every method for one category; ``name=None``: a document set of that
        fraction given to the executor directly (no category, so no whole-query timing)."""
        members = category_members(self.docs, fraction)
        expected = frozenset(documentid_for(int(i)) for i in members)
        restrict = expected
        if name is not None:
            restrict = frozenset(self.db.read("search_category", name=name,
                                              values=["yes"], ontologyid=None)[0]["documentids"])
            if restrict != expected:
                raise SystemExit(f"{name}: the graph's members differ from the corpus")
        ids = sorted(restrict)
        rows = (members[:, None] * self.cpd + np.arange(self.cpd)).ravel()
        truth = ground_truth(self.vectors, rows, self.queries, self.cpd)
        methods = self.methods(name, ids, restrict, fraction)
        for call in methods.values():  # warm-up: plans cached, pages in memory
            call(0)
        recalls: dict[str, list[float]] = {m: [] for m in methods}
        millis: dict[str, list[float]] = {m: [] for m in methods}
        extra: dict[str, list[dict[str, Any]]] = {m: [] for m in methods}
        for j in range(len(self.phrases)):
            for m, call in methods.items():
                (found, detail), ms = timed(functools.partial(call, j))
                recalls[m].append(recall(found, truth[j]))
                millis[m].append(ms)
                extra[m].append(detail)
        result: dict[str, Any] = {
            "category": name or f"restrict_{fraction:g}", "selectivity": fraction,
            "documents": len(restrict), "fragments": len(rows), "methods": {},
        }
        for m in methods:
            result["methods"][m] = summary(recalls[m], millis[m])
        paths = sorted({str(d.get("path")) for d in extra["a_planner"]})
        ks = sorted({d["k"] for d in extra["a_planner"] if d.get("k")})
        result["planner_path"] = "/".join(paths) + (f" (k={ks})" if ks else "")
        result["planner_reasons"] = sorted({str(d.get("reason")) for d in extra["a_planner"]})
        rows_b = [d["rows"] for d in extra["b_global_topn_then_filter"]]
        result["b_rows_returned_mean"] = round(statistics.fmean(rows_b), 1)
        ms = result["methods"]
        fastest = min(ms["b_global_topn_then_filter"]["p50_ms"], ms["c_exact"]["p50_ms"])
        good = [v["p50_ms"] for k, v in ms.items()
                if k.startswith(("b_", "c_", "d_")) and v["recall_mean"] >= TARGET_RECALL]
        planner = ms["a_planner"]
        result["planner_vs_faster_of_b_c"] = round(planner["p50_ms"] / fastest, 2)
        result["planner_vs_fastest_meeting_recall"] = (
            round(planner["p50_ms"] / min(good), 2) if good else None)
        result["meets_recall"] = planner["recall_mean"] >= TARGET_RECALL
        result["meets_latency"] = result["planner_vs_faster_of_b_c"] <= TARGET_LATENCY_RATIO
        return result


def recommend(results: list[dict[str, Any]], settings: Settings) -> dict[str, Any]:
    """Per selectivity the fastest way meeting the recall target; the settings implied."""
    per: list[dict[str, Any]] = []
    for r in results:
        ms = r["methods"]
        exact = ms["c_exact"]
        best_index = None
        for name, v in ms.items():
            if name.startswith("d_") and v["recall_mean"] >= TARGET_RECALL and (
                    best_index is None or v["p50_ms"] < ms[best_index]["p50_ms"]):
                best_index = name
        choice = "exact"
        if best_index is not None and ms[best_index]["p50_ms"] < exact["p50_ms"]:
            choice = best_index
        per.append({"category": r["category"], "fragments": r["fragments"],
                    "exact_p50_ms": exact["p50_ms"],
                    "best_index_meeting_recall": best_index,
                    "best_index_p50_ms": ms[best_index]["p50_ms"] if best_index else None,
                    "choice": choice})
    exact_max = max((p["fragments"] for p in per if p["choice"] == "exact"), default=0)
    index_min = min((p["fragments"] for p in per if p["choice"] != "exact"), default=None)
    factors = [float(p["choice"].rsplit("x", 1)[1]) for p in per if p["choice"] != "exact"]
    return {
        "per_selectivity": per,
        "exact_search_max_candidates_range": [exact_max, index_min],
        "vector_overfetch_factor_needed": max(factors) if factors else None,
        "current": {"exact_search_max_candidates": settings.exact_search_max_candidates,
                    "vector_overfetch_factor": settings.vector_overfetch_factor,
                    "index_max_k": settings.index_max_k},
        "note": "exact below the range's upper end, index with the factor above it; "
                "None as upper end: exact won at every measured selectivity",
    }


def run(uri: str, chapters: int, chapters_per_doc: int, queries: int, top_n: int,
        reuse: bool, overrides: dict[str, Any], extra: Sequence[float] = ()) -> dict[str, Any]:
    """Load (or reuse) the corpus, then measure every selectivity."""
    docs = math.ceil(chapters / chapters_per_doc)
    settings = bench_settings(hybrid_all_queries=False, short_query_max_words=0,
                              top_n_chapters=top_n, **overrides)
    embedder = RandomQueryEmbedder()
    with ThalabusGraph.connect(uri, settings=settings, embedder=embedder) as graph:
        graph.migrate()
        loaded: dict[str, Any] = {"reused": True}
        if not (reuse and corpus_present(graph.db, docs, chapters_per_doc)):
            print(f"ingesting {docs * chapters_per_doc} chapters ...", file=sys.stderr,
                  flush=True)
            loaded = {"reused": False, **load_corpus(graph, docs, chapters_per_doc)}
        vectors = all_vectors(docs, chapters_per_doc)
        phrases = [f"benchmark query {j}" for j in range(queries)]
        bench = Bench(graph, embedder, vectors, docs, chapters_per_doc, top_n, phrases)
        results = []
        points: list[tuple[str | None, float]] = [*SELECTIVITY_CATEGORIES.items()]
        points += [(None, f) for f in extra]
        for name, fraction in sorted(points, key=lambda p: p[1]):
            print(f"{name or 'restrict'} ({fraction:.1%}) ...", file=sys.stderr, flush=True)
            results.append(bench.selectivity(name, fraction))
            print_row(results[-1])
        server = graph.db.driver.get_server_info()
    return {
        "benchmark": "filtered_search",
        "python": platform.python_version(), "machine": platform.machine(),
        "cpus": os.cpu_count(), "neo4j": server.agent,
        "chapters": docs * chapters_per_doc, "chapters_per_document": chapters_per_doc,
        "dimensions": DIMENSIONS, "queries": queries, "top_n_chapters": top_n,
        "recall_at": RECALL_AT, "corpus": loaded,
        "settings": {"exact_search_max_candidates": settings.exact_search_max_candidates,
                     "vector_overfetch_factor": settings.vector_overfetch_factor,
                     "index_max_k": settings.index_max_k},
        "targets": {"recall": TARGET_RECALL, "latency_ratio": TARGET_LATENCY_RATIO},
        "selectivities": results,
        "meets_targets": all(r["meets_recall"] and r["meets_latency"] for r in results),
        "recommendation": recommend(results, settings),
    }


def print_row(r: dict[str, Any]) -> None:
    """One selectivity's table."""
    print(f"{r['category']} selectivity {r['selectivity']:.1%}: {r['documents']} documents, "
          f"{r['fragments']} chapters; planner path {r['planner_path']}: "
          f"{'; '.join(r['planner_reasons'])}")
    print(f"  {'method':32} {'recall@10':>9} {'min':>6} {'p50 ms':>9} {'p90 ms':>9}")
    for m, v in r["methods"].items():
        print(f"  {m:32} {v['recall_mean']:9.3f} {v['recall_min']:6.2f} {v['p50_ms']:9.1f} "
              f"{v['p90_ms']:9.1f}")
    best = r["planner_vs_fastest_meeting_recall"]
    print(f"  planner p50 / faster of (b),(c): {r['planner_vs_faster_of_b_c']}x; / fastest "
          f"meeting recall: {best}x; recall {'met' if r['meets_recall'] else 'MISSED'}, "
          f"latency {'met' if r['meets_latency'] else 'MISSED'} "
          f"((b) returned {r['b_rows_returned_mean']} rows on average)", flush=True)


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chapters", type=int, default=100_000)
    parser.add_argument("--chapters-per-doc", type=int, default=1)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--top-n", type=int, default=100,
                        help="top_n_chapters for the planner and k of (b) and (c)")
    parser.add_argument("--reuse", action="store_true",
                        help="keep the corpus when the graph already holds exactly it")
    parser.add_argument("--extra-selectivities", default="0.003,0.03,0.2",
                        help="comma-separated fractions measured without a category (the "
                        "document set handed to the executor), to locate the exact/index "
                        "crossover; empty for none")
    parser.add_argument("--exact-search-max-candidates", type=int, default=None)
    parser.add_argument("--vector-overfetch-factor", type=float, default=None)
    parser.add_argument("--index-max-k", type=int, default=None)
    parser.add_argument("--uri", default=None, help="Neo4j URI (default $NEO4J_URI, else a "
                        "local server on a temporary data dir)")
    parser.add_argument("--json", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    overrides = {k: v for k, v in (
        ("exact_search_max_candidates", args.exact_search_max_candidates),
        ("vector_overfetch_factor", args.vector_overfetch_factor),
        ("index_max_k", args.index_max_k)) if v is not None}
    with neo4j_uri(args.uri) as uri:
        extra = [float(f) for f in args.extra_selectivities.split(",") if f.strip()]
        result = run(uri, args.chapters, args.chapters_per_doc, args.queries, args.top_n,
                     args.reuse, overrides, extra)
    rec = result["recommendation"]
    print(f"targets (recall@10 >= {TARGET_RECALL}, p50 <= {TARGET_LATENCY_RATIO}x faster of "
          f"(b),(c)) {'met' if result['meets_targets'] else 'MISSED'}; settings "
          f"{result['settings']}")
    print(f"recommendation: exact up to {rec['exact_search_max_candidates_range']} fragments, "
          f"over-fetch factor {rec['vector_overfetch_factor_needed']}")
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
