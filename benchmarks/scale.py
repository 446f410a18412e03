"""Scale: recall@10 and p50/p95 of every query shape at hundreds of thousands of chapters.

Run ``python -m benchmarks.scale [--chapters N] [--queries Q] [--generator G]
[--json OUT] [--keep] [--uri URI [--server-data DIR] [--queries-only]] [--no-graphrag]
[--limit K] [--data-dirs DIRS]`` (default 200,000 chapters, 20 timed queries per shape;
``--limit 10`` asks the engine for the ten results graphrag is asked for, its pools sized to
them, instead of the seed's pools).

Server: without ``--uri``, the one a user gets: ``thalabus-graph neo4j start --data DIR`` with
no size flags (``benchmarks.scale_server``; ``--heap`` / ``--page-cache`` are passed on
when given). Its heap and page cache are printed beside the figures and kept in the JSON.

Corpus (``benchmarks.scale_corpus``): N one-chapter documents in one ontology, each a
copy of a real SciFact / XQuAD-R document (its text; its multilingual-e5-small vector
perturbed with noise, ``--generator``: ``covariance``, shaped like the real vectors, or
``isotropic``, not shaped like them, and mixed with a second document's), with
skewed categories: ``SKEW`` = ``v50`` (50%), ``v10`` (10%), ``v1`` (1%), ``v0_1`` (0.1%) and a
long tail of 0.01% values; ``REGION`` = ``r20`` (20%), ``r5`` (5%), ``rest``. Streamed through
``ThalabusGraph.ingest(..., embed=False)``; the ground truth is computed with numpy while the
blocks stream by (exact cosine over the matching chapters, never from the engine).

Each shape runs ``ThalabusGraph.query(text, ontology_id=...)`` with the real query vectors of
the sets (a lookup embedder); hybrid fusion and the score calibration are off by default so
that the exact-cosine top 10 is the right answer: the runs measure the index paths
(``--hybrid`` keeps the fusion; ``--defaults`` runs the engine's default settings, fusion and
calibrated scores, what a user gets, where recall against the cosine understates: a calibrated
``MIN_SCORE`` drops non-relevant hits on purpose). Shapes are interleaved per round. Two
phases:

* ``right_after_ingest`` (a graph loaded by this run): starts the moment ``ingest`` returns,
  every round timed (no warm-up, nothing waited for), engine only;
* ``settled``: once the server's JVM stayed below 0.1 cores for 10 s (the wait is reported),
  two warm-up rounds, and the filtered shapes also through neo4j-graphrag's
  ``VectorRetriever`` with ``filters`` on the same server (the categories copied onto the
  chapters as properties, with range indexes, after the first phase): the anchor a Neo4j user
  would reach for (``--no-graphrag`` leaves it out).

Peak RSS is the process's high-water mark, reset before each engine query
(``/proc/self/clear_refs``), and its growth over the RSS the query started with. The JSON
also keeps every query's milliseconds and the Lucene segments of each index on disk.

The benchmark only ever modifies a database it created: without ``--uri`` it starts its own
Neo4j on a temporary data dir (``--keep`` leaves it running for a rerun with ``--uri``); with
``--uri`` it refuses a non-empty database that lacks its marker node, reuses one holding the
same corpus (queries only), and ``--queries-only`` refuses rather than rebuilds any other.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import math
import os
import platform
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from benchmarks.report import write_json
from benchmarks.scale_corpus import (
    BLOCK,
    DEFAULT_GENERATOR,
    DIMENSIONS,
    GENERATORS,
    ONTOLOGY,
    RECALL_AT,
    RealSets,
    Synthesizer,
    chapter_index,
    load_real_sets,
    mean_top10_cosine,
)
from benchmarks.scale_queries import (
    LookupEmbedder,
    ShapeTruth,
    Truth,
    plan_rounds,
    shapes,
    stream,
)
from benchmarks.scale_server import (
    IDLE_CORES,
    IDLE_WINDOW_S,
    cli_server,
    cpu_meter,
    index_files,
    wait_idle,
)
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.graph.database import Database

DEFAULT_OUT = Path(".thalabus/benchmarks/scale.json")
DEFAULT_DATA = "../shared/data/scifact,../shared/data/xquad-r"
CYPHER_DIR = Path(__file__).with_name("cypher")
MARKER_VERSION = 1
WARMUP_ROUNDS = 2


def cypher(name: str) -> str:
    """The benchmark's own named statement ``cypher/<name>.cypher`` (comments dropped)."""
    raw = (CYPHER_DIR / f"{name}.cypher").read_text(encoding="utf-8")
    return "\n".join(x for x in raw.splitlines() if not x.lstrip().startswith("//")).strip()


def run_statement(db: Database, name: str, **params: Any) -> list[dict[str, Any]]:
    """Run a benchmark statement in an auto-commit transaction (``IN TRANSACTIONS`` needs one)."""
    with db.driver.session(database=db.database) as session:
        return [r.data() for r in session.run(cypher(name), **params)]


# --- the database: only ever our own --------------------------------------------------------
def corpus_marker(args: argparse.Namespace, real: RealSets) -> dict[str, Any]:
    """What the marker records about the corpus (a rerun reuses a graph with equal values)."""
    return {"version": MARKER_VERSION, "chapters": args.chapters, "seed": args.seed,
            "sigma": args.sigma, "mix": args.mix, "sources": ",".join(real.sources),
            "generator": getattr(args, "generator", DEFAULT_GENERATOR)}


def claim(db: Database, wanted: dict[str, Any], uri: str, *, reuse_only: bool = False
          ) -> bool:
    """Make sure the database is ours; True when it already holds the wanted corpus whole.

    An empty database is claimed (marker written); one holding our marker is reused when the
    corpus matches (a marker without ``generator`` holds the default one), else emptied;
    anything else is refused without a write. ``reuse_only``: refuse instead of loading.
    """
    nodes = int(run_statement(db, "scale_count_nodes")[0]["nodes"])
    markers = run_statement(db, "scale_marker_read")
    if reuse_only and not markers:
        raise SystemExit(f"--queries-only: {uri} holds no scale-benchmark graph")
    if nodes and not markers:
        raise SystemExit(f"refusing to use {uri}: the database holds {nodes} nodes and "
                         "no scale-benchmark marker (it is not the benchmark's own database)")
    if markers:
        marker = markers[0]["marker"]
        found = {"generator": DEFAULT_GENERATOR, **marker}
        if marker.get("complete") and all(found.get(k) == v for k, v in wanted.items()):
            return True
        if reuse_only:
            raise SystemExit(f"--queries-only: {uri} holds another corpus or an unfinished one "
                             f"({marker}); wanted {wanted}")
        run_statement(db, "scale_wipe")
    run_statement(db, "scale_marker_write", props={**wanted, "complete": False})
    return False


def ingest(graph: ThalabusGraph, synth: Synthesizer, truth: Truth,
           say: Callable[[str], None]) -> dict[str, Any]:
    """Ingest the corpus through ``ThalabusGraph.ingest``; nothing waited for after it returns
    (what a user's next query meets)."""
    start = time.perf_counter()
    report = graph.ingest(stream(synth, truth, say), progress=False, embed=False, strict=True)
    ingest_s = time.perf_counter() - start
    say(f"ingested {report.fragments} fragments in {ingest_s:.0f} s")
    return {"reused": False, "ingest_seconds": round(ingest_s, 1),
            "fragments": report.fragments,
            "fragments_per_second": round(report.fragments / ingest_s, 1)}


def finish_load(graph: ThalabusGraph, wanted: dict[str, Any]) -> dict[str, Any]:
    """Copy the categories onto the chapters for graphrag, with range indexes, then mark the
    database complete."""
    start = time.perf_counter()
    run_statement(graph.db, "scale_copy_categories")
    run_statement(graph.db, "scale_index_skew")
    run_statement(graph.db, "scale_index_region")
    run_statement(graph.db, "scale_await_indexes", timeout=3600)
    copy_s = time.perf_counter() - start
    run_statement(graph.db, "scale_marker_write", props={**wanted, "complete": True})
    return {"graphrag_property_copy_seconds": round(copy_s, 1)}


def load(graph: ThalabusGraph, synth: Synthesizer, truth: Truth, wanted: dict[str, Any],
         say: Callable[[str], None]) -> dict[str, Any]:
    """Ingest the corpus, wait for the indexes, copy the categories for graphrag, then mark
    the database complete."""
    loaded = ingest(graph, synth, truth, say)
    run_statement(graph.db, "scale_await_indexes", timeout=3600)
    return {**loaded, **finish_load(graph, wanted)}


def fold_truth(synth: Synthesizer, truth: Truth) -> None:
    """The ground truth of a reused graph: every block folded in, no documents built."""
    for block in synth.blocks():
        truth.update(block)


@contextlib.contextmanager
def server(args: argparse.Namespace, say: Callable[[str], None]) -> Iterator[str]:
    """``--uri``, else a Neo4j of our own on a temporary data dir (stopped unless ``--keep``)."""
    if args.uri:
        yield args.uri
        return
    from thalabus_graph.graph.launcher import LocalNeo4j

    tmp = tempfile.mkdtemp(prefix="thalabus-scale-")
    heap = args.heap or ("2g" if args.chapters <= 300_000 else "4g")
    page_cache = args.page_cache or f"{max(512, math.ceil(args.chapters * 6 / 1024))}m"
    neo = LocalNeo4j(data_dir=Path(tmp), heap=heap, page_cache=page_cache,
                     transaction_memory="2g", version=getattr(args, "neo4j_version", None))
    say(f"starting a local Neo4j {neo.version} on {tmp} (heap {heap}, page cache {page_cache}) ...")
    uri = neo.start()
    try:
        yield uri
    finally:
        if args.keep:
            say(f"kept: {uri} on {tmp}; rerun with --uri {uri}; stop with "
                f"`thalabus-graph neo4j stop --data {tmp}`")
        else:
            neo.stop()
            shutil.rmtree(tmp, ignore_errors=True)


# --- measuring -----------------------------------------------------------------------------
def reset_peak_rss() -> bool:
    """Reset this process's RSS high-water mark (Linux); False when not possible."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def peak_rss_mib() -> float:
    """This process's RSS high-water mark, MiB (``VmHWM``; ``ru_maxrss`` elsewhere)."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def stats(recalls: list[float], millis: list[float]) -> dict[str, Any]:
    """Mean / min recall and p50 / p95 milliseconds."""
    return {"recall_mean": round(statistics.fmean(recalls), 4),
            "recall_min": round(min(recalls), 4),
            "p50_ms": round(statistics.median(millis), 1),
            "p95_ms": round(percentile(millis, 0.95), 1)}


def engine_recall(st: ShapeTruth, synth: Synthesizer, j: int, found: list[int]) -> float:
    """Recall of one engine answer against the exact answer of round ``j``."""
    kind = st.shape.kind
    if kind == "filter":
        expected = set(np.concatenate(st.members).tolist()) if st.members else set()
        return len(set(found) & expected) / max(1, len(expected))
    top = found[:RECALL_AT]
    if kind == "text":
        if not top:
            return 0.0 if st.text_matching[j] else 1.0
        hits = st.base_match[j][synth.bases(np.array(top, np.int64))].sum()
        return float(hits) / min(RECALL_AT, max(1, st.text_matching[j]))
    assert st.top is not None
    truth = st.top.truth(j)
    return len(set(top) & truth) / len(truth) if truth else float(not top)


class Runner:
    """Runs every shape's rounds, interleaved, through the engine and graphrag."""

    def __init__(self, graph: ThalabusGraph, truth: Truth, synth: Synthesizer,
                 lookup: dict[str, npt.NDArray[np.float32]], limit: int | None = None) -> None:
        from neo4j_graphrag.retrievers import VectorRetriever
        from neo4j_graphrag.types import RetrieverResultItem

        self.graph = graph
        self.truth = truth
        self.synth = synth
        self.lookup = lookup
        self.limit = limit
        self.rounds = len(next(iter(truth.shapes.values())).rounds)

        def fmt(record: Any) -> RetrieverResultItem:
            return RetrieverResultItem(content=record["node"]["fragmentid"],
                                       metadata={"score": record["score"]})

        self.retriever = VectorRetriever(graph.db.driver, "typical_rag",
                                         return_properties=["fragmentid"],
                                         result_formatter=fmt,
                                         neo4j_database=graph.db.database)

    def engine(self, st: ShapeTruth, j: int) -> tuple[list[int], float, float, float]:
        """Chapters found (best first), milliseconds, peak RSS MiB of one engine query and
        its growth over the RSS the query started with."""
        reset_peak_rss()
        before = peak_rss_mib()
        start = time.perf_counter()
        result = self.graph.query(st.rounds[j].text, ontology_id=ONTOLOGY, limit=self.limit)
        ms = (time.perf_counter() - start) * 1000
        found = [chapter_index(d.documentid) for d in result.documents or []]
        peak = peak_rss_mib()
        return found, ms, peak, peak - before

    def graphrag(self, st: ShapeTruth, j: int) -> tuple[list[int], float]:
        """Chapters found and milliseconds of graphrag's ``VectorRetriever.search``."""
        vector = [float(x) for x in self.lookup[st.rounds[j].phrases[0]]]
        start = time.perf_counter()
        result = self.retriever.search(query_vector=vector, top_k=RECALL_AT,
                                       filters=st.shape.filters)
        ms = (time.perf_counter() - start) * 1000
        return [chapter_index(str(item.content)) for item in result.items], ms

    def run(self, warmup: int, seed: int, say: Callable[[str], None], *, anchors: bool = True
            ) -> list[dict[str, Any]]:
        """Every round of every shape, shapes shuffled per round; the first ``warmup`` rounds
        untimed; graphrag runs the anchored shapes when ``anchors``."""
        shape_truths = list(self.truth.shapes.values())
        rounds = len(shape_truths[0].rounds)
        rec: dict[str, dict[str, list[float]]] = {
            st.shape.name: {k: [] for k in ("e_recall", "e_ms", "e_rss", "e_grow", "g_recall",
                                            "g_ms")}
            for st in shape_truths}
        rng = np.random.default_rng([seed, 2])
        for j in range(rounds):
            for k in rng.permutation(len(shape_truths)):
                st = shape_truths[int(k)]
                found, ms, rss, grow = self.engine(st, j)
                g = self.graphrag(st, j) if anchors and st.shape.anchor else None
                if j < warmup:
                    continue
                r = rec[st.shape.name]
                r["e_recall"].append(engine_recall(st, self.synth, j, found))
                r["e_ms"].append(ms)
                r["e_rss"].append(rss)
                r["e_grow"].append(grow)
                if g is not None:
                    r["g_recall"].append(engine_recall(st, self.synth, j, g[0]))
                    r["g_ms"].append(g[1])
            if j >= warmup:
                say(f"  round {j - warmup + 1} / {rounds - warmup} done")
        return [self.summarise(st, rec[st.shape.name]) for st in shape_truths]

    def summarise(self, st: ShapeTruth, r: dict[str, list[float]]) -> dict[str, Any]:
        """One shape's row of the report."""
        engine = stats(r["e_recall"], r["e_ms"])
        engine["peak_rss_mib_max"] = round(max(r["e_rss"]), 1)
        engine["rss_growth_mib_max"] = round(max(r["e_grow"]), 1)
        out: dict[str, Any] = {
            "shape": st.shape.name, "kind": st.shape.kind, "example": st.rounds[-1].text[:160],
            "matching_chapters": st.matching, "selectivity": round(st.matching / self.synth.n, 6),
            "engine": engine, "graphrag": None, "engine_over_graphrag_p50": None,
            "engine_ms": [round(x, 2) for x in r["e_ms"]],
        }
        if st.shape.kind == "text":
            out["matching_chapters"] = round(statistics.fmean(st.text_matching), 1)
            out["selectivity"] = round(out["matching_chapters"] / self.synth.n, 6)
        if r["g_ms"]:
            out["graphrag"] = stats(r["g_recall"], r["g_ms"])
            out["graphrag"]["filters"] = st.shape.filters
            out["engine_over_graphrag_p50"] = round(
                engine["p50_ms"] / max(out["graphrag"]["p50_ms"], 1e-9), 2)
        return out


def print_table(rows: list[dict[str, Any]]) -> None:
    """The per-shape table."""
    print(f"{'shape':12} {'select.':>8} {'recall':>7} {'p50 ms':>8} {'p95 ms':>8} "
          f"{'RSS MiB':>8} {'+MiB':>6} | {'graphrag recall':>15} {'p50 ms':>8} {'p95 ms':>8} "
          f"{'ratio':>6}")
    for row in rows:
        e, g = row["engine"], row["graphrag"]
        anchor = (f"{g['recall_mean']:15.3f} {g['p50_ms']:8.1f} {g['p95_ms']:8.1f} "
                  f"{row['engine_over_graphrag_p50']:6.2f}") if g else f"{'-':>15}"
        print(f"{row['shape']:12} {row['selectivity']:8.2%} {e['recall_mean']:7.3f} "
              f"{e['p50_ms']:8.1f} {e['p95_ms']:8.1f} {e['peak_rss_mib_max']:8.1f} "
              f"{e['rss_growth_mib_max']:6.1f} | {anchor}")


def graphrag_version() -> str:
    """The installed neo4j-graphrag release (a clear exit when it is missing)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("neo4j-graphrag")
    except PackageNotFoundError:
        raise SystemExit("neo4j-graphrag is not installed: pip install 'neo4j-graphrag~=1.21.0' "
                         "(1.21 works with neo4j 6.1; 1.22 needs neo4j>=6.3.1)") from None


def timed_phase(runner: Runner, name: str, warmup: int, seed: int, anchors: bool,
                meter: Callable[[], float], say: Callable[[str], None]) -> dict[str, Any]:
    """One pass over every shape; with its wall time and the JVM's mean CPU use meanwhile
    (cores: merges still running show here) and the machine's 1-minute load before and
    after (other work on a shared machine shows there)."""
    say(f"{name}: {runner.rounds - warmup} timed rounds (+{warmup} warm-up) of "
        f"{len(runner.truth.shapes)} shapes{' and the graphrag anchors' if anchors else ''}")
    # The harness holds millions of objects (the real sets, the ground truth): frozen, they
    # are not traversed by the collections the timed queries' allocations trigger, which
    # otherwise land on whichever query is running at that count and time the harness.
    gc.collect()
    gc.freeze()
    cpu0, t0, load0 = meter(), time.perf_counter(), os.getloadavg()[0]
    rows = runner.run(warmup, seed, say, anchors=anchors)
    wall = time.perf_counter() - t0
    return {"phase": name, "warmup_rounds": warmup, "timed_rounds": runner.rounds - warmup,
            "graphrag": anchors, "seconds": round(wall, 1),
            "machine_load_1min": [round(load0, 2), round(os.getloadavg()[0], 2)],
            "jvm_cpu_cores_mean": round((meter() - cpu0) / max(wall, 1e-9), 2), "shapes": rows}


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict[str, Any]:
    """Generate, load (or reuse), measure right after ingest and once idle; the JSON result."""
    gr_version = graphrag_version() if args.graphrag else None
    real = load_real_sets([Path(d) for d in args.data_dirs.split(",") if d.strip()])
    say(f"real sets {real.sources}: {len(real.vectors)} documents, "
        f"{len(real.query_texts)} queries")
    real_top10 = mean_top10_cosine(real.vectors)
    synth = Synthesizer(real, args.chapters, args.sigma, args.mix, args.seed, args.generator)
    shape_list = shapes()
    plans, lookup = plan_rounds(shape_list, real, synth, args.queries + WARMUP_ROUNDS, args.seed)
    truth = Truth(shape_list, plans, lookup, real)
    settings = Settings(embedding_dimensions=DIMENSIONS)
    if not args.defaults:
        settings = settings.replace(calibration_file="none")
        if not args.hybrid:
            settings = settings.replace(hybrid_all_queries=False, short_query_max_words=0)
    wanted = corpus_marker(args, real)
    phases: list[dict[str, Any]] = []
    indexes: dict[str, Any] = {}
    with cli_server(args, say) as info, ThalabusGraph.connect(
            info.uri, settings=settings, embedder=LookupEmbedder(lookup)) as graph:
        reused = claim(graph.db, wanted, info.uri, reuse_only=args.queries_only)
        graph.migrate()
        meter_source, meter = cpu_meter(info, graph.db, run_statement)
        runner = Runner(graph, truth, synth, lookup, args.limit)
        if reused:
            say("the database holds this corpus: reusing it (ground truth regenerated)")
            fold_truth(synth, truth)
            loaded: dict[str, Any] = {"reused": True}
        else:
            say(f"ingesting {args.chapters} chapters ...")
            loaded = ingest(graph, synth, truth, say)
            if info.data_dir:
                indexes["after_ingest"] = index_files(info.data_dir, graph.db, run_statement)
            phases.append(timed_phase(runner, "right_after_ingest", 0, args.seed, False,
                                      meter, say))
            say("copying the categories onto the chapters for graphrag ...")
            loaded.update(finish_load(graph, wanted))
        say(f"waiting for the server to be idle (JVM CPU < {IDLE_CORES} cores for "
            f"{IDLE_WINDOW_S:.0f} s, from {meter_source}) ...")
        idle = wait_idle(meter, timeout=args.settle_timeout)
        say(f"  {'idle' if idle.idle else 'NOT idle'} after {idle.seconds:.0f} s")
        if info.data_dir:
            indexes["settled"] = index_files(info.data_dir, graph.db, run_statement)
        settled = timed_phase(runner, "settled", WARMUP_ROUNDS, args.seed, args.graphrag,
                              meter, say)
        settled["idle_wait"] = {"seconds": idle.seconds, "idle": idle.idle,
                                "meter": meter_source, "cores_by_second": idle.cores_by_second}
        phases.append(settled)
        server_agent = graph.db.driver.get_server_info().agent
    assert truth.sample_top is not None
    synth_top10 = truth.sample_top.mean_score()
    return {
        "benchmark": "scale", "python": platform.python_version(),
        "machine": platform.machine(), "cpus": os.cpu_count(), "neo4j": server_agent,
        "server": info.to_dict(), "neo4j_graphrag": gr_version, "chapters": args.chapters,
        "ontology": ONTOLOGY, "queries_per_shape": args.queries,
        "hybrid_fusion": args.hybrid or args.defaults, "defaults": args.defaults,
        "calibration_file": settings.calibration_file, "recall_at": RECALL_AT,
        "engine_limit": args.limit,
        "corpus": {"sources": real.sources, "base_documents": len(real.vectors),
                   "generator": args.generator, "sigma": args.sigma, "mix": args.mix,
                   "seed": args.seed, "mean_top10_cosine_real": round(real_top10, 4),
                   "mean_top10_cosine_synthetic": round(synth_top10, 4),
                   "synthetic_sample": BLOCK, **loaded},
        "lucene_indexes": indexes, "phases": phases,
    }


def corpus_arguments(parser: argparse.ArgumentParser, argv: list[str] | None
                     ) -> argparse.Namespace:
    """Add the options of the synthetic corpus and its server (shared by the benchmarks over
    ``scale_corpus``) to ``parser`` and parse ``argv``."""
    parser.add_argument("--uri", default=None,
                        help="an existing Neo4j: empty, or holding this benchmark's marker")
    parser.add_argument("--keep", action="store_true",
                        help="leave the benchmark's own Neo4j running for a rerun with --uri")
    parser.add_argument("--data-dirs", default=DEFAULT_DATA,
                        help="comma-separated real sets with embeddings/ (read, never copied)")
    parser.add_argument("--sigma", type=float, default=0.4,
                        help="noise scale (0.4: synthetic mean top-10 cosine near the real one)")
    parser.add_argument("--mix", type=float, default=0.1, help="weight of the second base")
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--heap", default=None, help="JVM heap of the own Neo4j")
    parser.add_argument("--page-cache", default=None, help="page cache of the own Neo4j")
    args = parser.parse_args(argv)
    if args.chapters < BLOCK or args.queries < 1:
        parser.error(f"--chapters must be >= {BLOCK} and --queries >= 1")
    return args


def say(text: str) -> None:
    """Progress, on stderr."""
    print(text, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--chapters", type=int, default=200_000)
    parser.add_argument("--queries", type=int, default=20, help="timed queries per shape")
    parser.add_argument("--json", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--hybrid", action="store_true",
                        help="keep hybrid text fusion on (recall against cosine then understates)")
    parser.add_argument("--limit", type=int, default=None,
                        help=f"the engine's query(limit=...): pools sized to that many results "
                        f"(e.g. {RECALL_AT}, as many as graphrag's top_k; default: the seed's "
                        f"pools)")
    parser.add_argument("--defaults", action="store_true",
                        help="the engine's default settings: fusion and calibrated scores "
                        "(recall against cosine then understates)")
    parser.add_argument("--generator", choices=GENERATORS, default=DEFAULT_GENERATOR,
                        help="noise of the synthetic vectors: the real vectors' covariance, or "
                        "isotropic (not shaped like them)")
    parser.add_argument("--server-data", default=None, metavar="DIR",
                        help="with --uri: the data dir of that server (its pid and sizes)")
    parser.add_argument("--settle-timeout", type=float, default=900.0,
                        help="seconds to wait at most for the server to be idle")
    parser.add_argument("--no-graphrag", dest="graphrag", action="store_false",
                        help="time the engine only (no neo4j-graphrag anchors)")
    parser.add_argument("--queries-only", action="store_true",
                        help="with --uri: time the queries on the graph it holds; refuse "
                        "(never rebuild) when it holds another corpus")
    args = corpus_arguments(parser, argv)
    if args.queries_only and not args.uri:
        parser.error("--queries-only needs --uri")
    result = run(args, say)
    server = result["server"]
    print(f"scale benchmark: {result['chapters']} chapters ({result['corpus']['generator']} "
          f"noise), {result['neo4j']} (heap {server['heap']}, page cache "
          f"{server['page_cache']}, started by {server['started_by']}), neo4j-graphrag "
          f"{result['neo4j_graphrag']}; mean top-10 cosine real "
          f"{result['corpus']['mean_top10_cosine_real']} vs synthetic "
          f"{result['corpus']['mean_top10_cosine_synthetic']}; ingest "
          f"{result['corpus'].get('ingest_seconds', 'reused')} s; settings: "
          + ("the engine's defaults (fusion, calibrated scores)" if result["defaults"] else
             "index scale (CALIBRATION_FILE=none), fusion "
             + ("on" if result["hybrid_fusion"] else "off")))
    for phase in result["phases"]:
        wait = phase.get("idle_wait")
        print(f"\n{phase['phase']}: {phase['timed_rounds']} rounds, JVM CPU "
              f"{phase['jvm_cpu_cores_mean']} cores meanwhile"
              + (f"; idle after {wait['seconds']} s" if wait else ""))
        print_table(phase["shapes"])
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
