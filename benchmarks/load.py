"""Load: sustained mixed load from separate processes, what it costs, and what was kept.

Run ``python -m benchmarks.load [--chapters 50000] [--duration 300] [--json OUT]
[--uri URI] [--keep]`` (about 15 minutes with the defaults on a fresh server: building the
50,000-chapter graph, the baseline, 5 minutes of load, the checks).

The graph is the scale benchmark's synthetic corpus (``benchmarks.scale_corpus``: real
SciFact / XQuAD-R texts and perturbed e5 vectors, skewed categories), on a Neo4j of its own
(launcher, temporary data dir) or on ``--uri`` (empty, or holding the scale benchmark's marker
for the same corpus, which is then reused). Then:

1. **Alone**: every query shape of the scale benchmark (``scale.shapes``) runs
   ``--queries`` times in this process with nothing else running: p50 / p95 / p99 per shape,
   before the load and again after it. The ratio is taken against the second: the writers
   change the graph the queries run on (their documents, in an ontology of their own and
   with paragraphs, make a phrase scoped to the scale ontology filter by it and search the
   paragraphs' index too), so the same shape alone on the graph the load left is the
   like-for-like baseline.
2. **Under load**, for ``--duration`` seconds, every worker a spawned process with its own
   driver: ``--query-procs`` (16) send queries of every shape; ``--ingest-procs`` (2) ingest
   and keep re-ingesting documents of their own (2 to 4 chapters and their paragraphs, the
   count changing with every version, so re-ingest must delete and add fragments);
   ``--rerank-procs`` (2) create datasets from semantic queries and rerank them against a
   loopback vLLM ``/score`` server that waits 20 to 200 ms per request and fails 5% of them
   with HTTP 500 (the rerankers do not retry, so each failure degrades a rerank). Each role
   offers a rate (``--query-rate``, ``--ingest-rate``, ``--rerank-rate``; Poisson arrivals
   shared by its processes) and a latency counts from when the operation was due, so time
   spent queued behind a slow one is in the figure; a rate of 0 sends back to back, which
   on a small machine measures only how long the CPU queue is.
3. **Checks**: every dataset the rerankers made (member count, each member's weight,
   lineage, the rerank flags; every rerank with failed batches flagged as degraded) and
   every re-ingested document (one Document node, exactly the fragments of its last
   version: none lost, duplicated or stale). ``benchmarks.load_checks``.

It prints the figures and writes JSON (``--json``). Verdicts: 0 errors (every error is
listed by kind; none is expected), every degraded rerank flagged, 0 data lost or duplicated,
and p95 under load at most ``--p95-ratio`` (3) times the same shape alone. The exit status
is 0 whatever the verdicts: it is a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.load_checks import check_datasets, check_documents
from benchmarks.load_workers import (
    SLOW_MS,
    FlakyScores,
    LookupEmbedder,
    WorkerSpec,
    query_settings,
    run_worker,
)
from benchmarks.report import write_json
from benchmarks.scale import (
    WARMUP_ROUNDS,
    Truth,
    claim,
    corpus_arguments,
    corpus_marker,
    load,
    percentile,
    plan_rounds,
    say,
    server,
    shapes,
)
from benchmarks.scale_corpus import ONTOLOGY, Synthesizer, load_real_sets
from tests.support.loopback import LoopbackServer
from thalabus_graph import ThalabusGraph

DEFAULT_OUT = Path(".thalabus/benchmarks/load.json")
SETUP_TIMEOUT = 900.0
"""Seconds the workers get to start and connect before the run is abandoned."""
QUERY_RATE = 3.0
"""Queries per second the query processes offer together by default: a sustained load a
2-core machine serves with every shape's p95 within 3x of alone, on a fresh graph and on one
that has served such a load (the run's throughput shows it kept up), not a saturation test.
At 8 a second (with 1 ingest batch and 0.5 reranks) the fastest shape (a 4 ms AND of a 0.01%
category) waits for the CPU behind the others' work (docs/operations.md). ``0`` sends back to
back, where every latency is queueing for the CPU."""
INGEST_RATE = 0.3
"""Ingest batches (4 documents) per second offered by default."""
RERANK_RATE = 0.2
"""Dataset-and-rerank pairs per second offered by default."""


def latency(millis: list[float]) -> dict[str, Any]:
    """Count and p50 / p95 / p99 in milliseconds."""
    if not millis:
        return {"n": 0, "p50_ms": None, "p95_ms": None, "p99_ms": None}
    return {"n": len(millis), "p50_ms": round(percentile(millis, 0.50), 2),
            "p95_ms": round(percentile(millis, 0.95), 2),
            "p99_ms": round(percentile(millis, 0.99), 2)}


def alone(graph: ThalabusGraph, rounds: dict[str, list[str]]) -> dict[str, dict[str, Any]]:
    """Every shape's queries in this process, interleaved, nothing else running; the first
    ``WARMUP_ROUNDS`` untimed."""
    times: dict[str, list[float]] = {shape: [] for shape in rounds}
    for j in range(len(next(iter(rounds.values())))):
        for shape, texts in rounds.items():
            start = time.perf_counter()
            graph.query(texts[j], ontology_id=ONTOLOGY)
            if j >= WARMUP_ROUNDS:
                times[shape].append((time.perf_counter() - start) * 1000)
    return {shape: latency(ms) for shape, ms in times.items()}


def per_process(rate: float, procs: int) -> float:
    """One process's share of a role's offered rate (0: back to back)."""
    return rate / procs if procs else 0.0


def run_load(args: argparse.Namespace, uri: str, rounds: dict[str, list[str]],
             lookup: dict[str, Any], score_url: str, run_id: str
             ) -> tuple[list[dict[str, Any]], float]:
    """Start every worker, release them together, collect their results; with the
    wall-clock instant the load started."""
    ctx = multiprocessing.get_context("spawn")
    semantic = {s.name: rounds[s.name] for s in shapes() if s.kind == "semantic"}
    specs = (
        [WorkerSpec("query", i, uri, args.duration, args.seed + i, run_id, rounds, lookup,
                    ONTOLOGY, rate=per_process(args.query_rate, args.query_procs))
         for i in range(args.query_procs)]
        + [WorkerSpec("ingest", i, uri, args.duration, args.seed + 100 + i, run_id,
                      documents=args.ingest_documents,
                      rate=per_process(args.ingest_rate, args.ingest_procs))
           for i in range(args.ingest_procs)]
        + [WorkerSpec("rerank", i, uri, args.duration, args.seed + 200 + i, run_id, semantic,
                      lookup, ONTOLOGY, score_url=score_url,
                      rate=per_process(args.rerank_rate, args.rerank_procs))
           for i in range(args.rerank_procs)])
    barrier = ctx.Barrier(len(specs) + 1, timeout=SETUP_TIMEOUT)
    out = ctx.Queue()
    procs = [ctx.Process(target=run_worker, args=(spec, barrier, out), daemon=True)
             for spec in specs]
    for p in procs:
        p.start()
    say(f"started {len(procs)} worker processes; waiting for them to connect ...")
    try:
        barrier.wait()
    except Exception:  # a worker failed to set up: its result says why
        say("a worker failed before the start; collecting what the workers report")
    else:
        say(f"load running for {args.duration:.0f} s ...")
    started = time.time()
    results = [out.get(timeout=SETUP_TIMEOUT + args.duration) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    return results, started


def slow_operations(results: list[dict[str, Any]], started: float) -> dict[str, Any]:
    """The operations of ``SLOW_MS`` or more, each at the second of the load it was due, and
    how many fell in each 10-second window: clustered, they are a moment of the load (a
    replan, a flush); spread, a steady cost."""
    slow = sorted((round(at - started, 1), op, ms) for r in results
                  for at, op, ms in r.get("slow", []))
    windows: dict[int, int] = {}
    for at, _, _ in slow:
        window = int(at // 10 * 10)
        windows[window] = windows.get(window, 0) + 1
    return {"threshold_ms": SLOW_MS, "count": len(slow), "per_10_s_window": windows,
            "operations": [{"at_s": at, "op": op, "ms": ms} for at, op, ms in slow]}


def summarise(args: argparse.Namespace, baseline: dict[str, dict[str, Any]],
              results: list[dict[str, Any]], flaky: FlakyScores,
              before: dict[str, dict[str, Any]] | None = None, *,
              started: float) -> dict[str, Any]:
    """Throughput, latencies under load against alone (``baseline``: on the graph the load
    left; ``before``: on the graph before it, shown beside), errors by kind, the slow
    operations by when they were due (``started``: the load's wall-clock start)."""
    merged: dict[str, list[float]] = {}
    errors: dict[str, int] = {}
    examples: dict[str, str] = {}
    for r in results:
        for op, ms in r.get("millis", {}).items():
            merged.setdefault(op, []).extend(ms)
        for kind, n in r.get("errors", {}).items():
            errors[kind] = errors.get(kind, 0) + n
        examples.update(r.get("examples", {}))
        if "setup_error" in r:
            errors[f"{r['role']} setup"] = errors.get(f"{r['role']} setup", 0) + 1
            examples[f"{r['role']} setup"] = r["setup_error"]
    shapes_out = []
    for shape, base in baseline.items():
        under = latency(merged.get(shape, []))
        ratio = (round(under["p95_ms"] / base["p95_ms"], 2)
                 if under["p95_ms"] and base["p95_ms"] else None)
        shapes_out.append({"shape": shape, "alone": base,
                           "alone_before_load": (before or {}).get(shape),
                           "under_load": under,
                           "p95_ratio": ratio,
                           "within_ratio": ratio is not None and ratio <= args.p95_ratio})
    queries = sum(len(merged.get(s, [])) for s in baseline)
    return {
        "throughput_per_s": {
            "queries": round(queries / args.duration, 2),
            **{op: round(len(merged.get(op, [])) / args.duration, 2)
               for op in ("ingest", "create_dataset", "rerank")}},
        "shapes": shapes_out,
        "operations": {op: latency(merged.get(op, []))
                       for op in ("ingest", "create_dataset", "rerank")},
        "errors": dict(sorted(errors.items())), "error_examples": examples,
        "score_server": {"requests": flaky.requests, "failed": flaky.failed},
        "slow": slow_operations(results, started),
    }


def verdicts(args: argparse.Namespace, figures: dict[str, Any], datasets: dict[str, Any],
             documents: dict[str, Any], reported_failures: int,
             rerank_errors: int) -> dict[str, Any]:
    """The four lines of the issue, each with the figure behind it."""
    injected = figures["score_server"]["failed"]
    return {
        "errors": sum(figures["errors"].values()),
        "every_degraded_rerank_flagged": (datasets["degraded_reranks"]
                                          == datasets["degraded_flagged"]
                                          and (rerank_errors > 0
                                               or injected == reported_failures)),
        "injected_failures": injected, "failures_reported_by_reranks": reported_failures,
        "data_problems": len(datasets["problems"]) + len(documents["problems"]),
        "fragments_lost": documents["fragments_lost"],
        "fragments_duplicated": documents["fragments_duplicated"],
        "shapes_within_p95_ratio": sum(s["within_ratio"] for s in figures["shapes"]),
        "shapes": len(figures["shapes"]), "p95_ratio_limit": args.p95_ratio,
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Build or reuse the graph, measure alone, load, check; the JSON result."""
    real = load_real_sets([Path(d) for d in args.data_dirs.split(",") if d.strip()])
    synth = Synthesizer(real, args.chapters, args.sigma, args.mix, args.seed)
    shape_list = shapes()
    plans, lookup = plan_rounds(shape_list, real, synth, args.queries + WARMUP_ROUNDS,
                                args.seed)
    rounds = {shape: [r.text for r in rs] for shape, rs in plans.items()}
    wanted = corpus_marker(args, real)
    run_id = str(int(time.time()))
    flaky = FlakyScores(args.fail_rate, args.min_delay, args.max_delay, args.seed)
    with server(args, say) as uri, LoopbackServer(flaky) as scores, ThalabusGraph.connect(
            uri, settings=query_settings(), embedder=LookupEmbedder(lookup)) as graph:
        reused = claim(graph.db, wanted, uri)
        graph.migrate()
        if reused:
            say("the database holds this corpus: reusing it")
        else:
            say(f"ingesting {args.chapters} chapters ...")
            load(graph, synth, Truth(shape_list, plans, lookup, real), wanted, say)
        say(f"alone, before the load: {args.queries} timed rounds (+{WARMUP_ROUNDS} warm-up) "
            f"of {len(rounds)} shapes")
        before = alone(graph, rounds)
        start = time.perf_counter()
        results, started = run_load(args, uri, rounds, lookup, scores.url, run_id)
        wall = time.perf_counter() - start
        say("alone again, on the graph the load left ...")
        baseline = alone(graph, rounds)
        say("checking every dataset and document ...")
        made = [d for r in results if r["role"] == "rerank" for d in r.get("datasets", [])]
        versions: dict[str, int] = {}
        uncertain: dict[str, list[int]] = {}
        for r in results:
            versions.update(r.get("versions", {}))
            uncertain.update(r.get("uncertain", {}))
        datasets = check_datasets(graph, made)
        documents = check_documents(graph, versions, uncertain)
        agent = graph.db.driver.get_server_info().agent
    figures = summarise(args, baseline, results, flaky, before, started=started)
    reported = sum(d["child"]["failures"] for d in made if "child" in d)
    rerank_errors = sum(1 for d in made if d.get("rerank_failed"))
    return {
        "benchmark": "load", "python": platform.python_version(),
        "machine": platform.machine(), "cpus": os.cpu_count(), "neo4j": agent,
        "chapters": args.chapters, "duration_s": args.duration,
        "wall_seconds_of_load_phase": round(wall, 1),
        "processes": {"query": args.query_procs, "ingest": args.ingest_procs,
                      "rerank": args.rerank_procs},
        "offered_per_s": {"queries": args.query_rate or "back to back",
                          "ingest": args.ingest_rate or "back to back",
                          "create_dataset": args.rerank_rate or "back to back"},
        "score_server": {"fail_rate": args.fail_rate, "delay_s": [args.min_delay,
                                                                   args.max_delay]},
        **figures, "datasets": datasets, "documents": documents,
        "verdicts": verdicts(args, figures, datasets, documents, reported, rerank_errors),
    }


def print_report(result: dict[str, Any]) -> None:
    """The figures as a table and the verdicts, on stdout."""
    print(f"load benchmark: {result['chapters']} chapters, {result['neo4j']}, "
          f"{result['cpus']} CPUs, {result['duration_s']:.0f} s; processes "
          f"{result['processes']}")
    print(f"offered per second: {result['offered_per_s']}")
    print(f"throughput per second: {result['throughput_per_s']}")
    print(f"{'shape':<14}{'before p95':>11}{'alone p50/p95/p99 ms':>26}"
          f"{'under load p50/p95/p99 ms':>32}{'n':>7}{'p95 x':>8}")
    for s in result["shapes"]:
        a, u, b = s["alone"], s["under_load"], s.get("alone_before_load") or {}
        print(f"{s['shape']:<14}{b.get('p95_ms')!s:>11}{a['p50_ms']:>9} {a['p95_ms']:>7} "
              f"{a['p99_ms']:>8}{u['p50_ms']!s:>12} {u['p95_ms']!s:>9} {u['p99_ms']!s:>9}"
              f"{u['n']:>7}{s['p95_ratio']!s:>8}")
    for op, lat in result["operations"].items():
        print(f"{op:<14} n={lat['n']} p50={lat['p50_ms']} p95={lat['p95_ms']} "
              f"p99={lat['p99_ms']} ms")
    slow = result["slow"]
    print(f"operations of {slow['threshold_ms']:.0f} ms or more: {slow['count']}; by 10-s "
          f"window of the load: {slow['per_10_s_window'] or 'none'}")
    print(f"errors by kind: {result['errors'] or 'none'}")
    for kind, example in result["error_examples"].items():
        print(f"  {kind}: {example.splitlines()[-1][:200]}")
    d, doc = result["datasets"], result["documents"]
    print(f"datasets checked: {d['datasets_checked']} ({d['reranks']} reranks, "
          f"{d['degraded_reranks']} degraded, {d['degraded_flagged']} flagged); documents "
          f"checked: {doc['documents_checked']} (lost {doc['fragments_lost']}, duplicated "
          f"{doc['fragments_duplicated']}, stale {doc['fragments_stale']})")
    for problem in (d["problems"] + doc["problems"])[:20]:
        print(f"  problem: {problem}")
    print(f"verdicts: {result['verdicts']}")


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--chapters", type=int, default=50_000)
    parser.add_argument("--duration", type=float, default=300.0,
                        help="seconds of load (default 300)")
    parser.add_argument("--queries", type=int, default=80,
                        help="timed queries per shape alone, before and after the load "
                             "(80: about what each shape gets under 5 minutes at 3 a second, "
                             "so both p95 rest on alike samples; with 20, a p95 is the "
                             "second-slowest query)")
    parser.add_argument("--query-procs", type=int, default=16)
    parser.add_argument("--ingest-procs", type=int, default=2)
    parser.add_argument("--rerank-procs", type=int, default=2)
    parser.add_argument("--query-rate", type=float, default=QUERY_RATE,
                        help="queries per second offered by all query processes together "
                             f"(Poisson arrivals; 0 = back to back; default {QUERY_RATE})")
    parser.add_argument("--ingest-rate", type=float, default=INGEST_RATE,
                        help=f"ingest batches per second offered (default {INGEST_RATE})")
    parser.add_argument("--rerank-rate", type=float, default=RERANK_RATE,
                        help="dataset + rerank pairs per second offered "
                             f"(default {RERANK_RATE})")
    parser.add_argument("--ingest-documents", type=int, default=20,
                        help="documents each ingest process owns and re-ingests")
    parser.add_argument("--fail-rate", type=float, default=0.05)
    parser.add_argument("--min-delay", type=float, default=0.02)
    parser.add_argument("--max-delay", type=float, default=0.2)
    parser.add_argument("--p95-ratio", type=float, default=3.0)
    parser.add_argument("--json", type=Path, default=DEFAULT_OUT)
    args = corpus_arguments(parser, argv)
    if args.duration <= 0 or min(args.query_procs, args.ingest_procs, args.rerank_procs,
                                 args.query_rate, args.ingest_rate, args.rerank_rate) < 0:
        parser.error("--duration must be positive, the process counts and rates not negative")
    np.seterr(all="ignore")
    result = run(args)
    print_report(result)
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
