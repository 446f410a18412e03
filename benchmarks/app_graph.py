"""The application's graph at scale: a graph-defined category against the stored one, and a
required filter on every scale shape.

Run ``python -m benchmarks.app_graph [--uri URI --server-data DIR] [--queries Q]
[--warmup W] [--filters NAMES] [--limit K] [--defaults] [--json OUT] [--keep]`` (default
200,000 chapters, 100 timed queries per shape after 2 warm-up rounds). With ``--uri`` it runs
on the graph ``benchmarks.scale --keep`` left (the same corpus options, its marker checked);
without, it starts the CLI's default server, ingests the scale corpus and measures right
after ``ingest`` returns (then marks the graph complete for ``scale --uri``). Which it was,
the server's heap and page cache, and whether its JVM was idle first are printed beside the
figures and kept in the JSON.

Corpus, shapes and queries are the scale benchmark's (``benchmarks.scale_corpus``,
``benchmarks.scale_queries``: the real query vectors through a lookup embedder, the same
seed). Settings: the scale benchmark's own (index scale, ``CALIBRATION_FILE=none``, fusion
off), the settings its rows use; ``--defaults`` runs the engine's defaults (fusion,
calibrated scores), what a user gets. Either is printed.

1. **Graph-defined against stored category** (alone with ``--filters none``). The run adds
   the application's own nodes: ``(:Tag {name: 'v1'})-[:TAGS]->(d:Document)`` for exactly
   the documents with stored category ``SKEW=v1`` (1%; checked by count), and defines
   ``TAGGED`` as ``(document)<-[:TAGS]-(:Tag {name: $value})``
   (``ThalabusGraph.define_category``). Each round asks the same phrase as
   ``"p" AND SKEW=v1`` and ``"p" AND TAGGED=v1``, back to back (the side going first
   alternating), and a pure filter ``SKEW=v1`` / ``TAGGED=v1`` too: p50 / p95 of each, the
   ratio defined / stored, the median of the per-query ratios, and every query whose
   fragments or scores differ between the two (the two must answer alike).
2. **A required filter.** A second graph object on the same driver,
   ``ThalabusGraph(db, required_filter=F)``, runs every scale shape's query; the same query
   runs without it and written out as ``(query) AND (F)`` on the first object, all back to
   back in rotating order. Per shape: p50 / p95 without and with, the ratio with / without
   (what the filter costs a user's query: a phrase held to a 10% filter is a filtered search),
   with / written-out (what the mechanism costs over writing the filter: one more parse),
   whether with and written-out return the same fragments and scores, and whether every
   document returned with the filter satisfies it (from the corpus's own codes, not the
   engine). Filters (``--filters``): ``10%`` ``SKEW=v10``, ``not_50%`` ``NOT SKEW=v50``,
   ``or_14.5%`` ``SKEW=v10 OR REGION=r5``, ``defined_1%`` ``TAGGED=v1``.

Shapes are shuffled per round (one RNG stream, the seed); the first ``--warmup`` rounds are
not counted. The JSON keeps every query's milliseconds and every mismatch.

The benchmark only modifies a database holding the scale benchmark's marker (or an empty one
it claims, ``benchmarks.scale.claim``): a database without the marker is refused before any
write. The Tag node, its TAGS relationships, an index on ``:Tag(name)`` and the ``TAGGED``
definition are written idempotently, and the marker records them (``app_graph_tag``).
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from benchmarks.report import write_json
from benchmarks.scale import claim as claim_database
from benchmarks.scale import (
    corpus_arguments,
    corpus_marker,
    finish_load,
    ingest,
    percentile,
    run_statement,
    say,
)
from benchmarks.scale_corpus import (
    DEFAULT_GENERATOR,
    DIMENSIONS,
    GENERATORS,
    ONTOLOGY,
    Synthesizer,
    chapter_index,
    load_real_sets,
    region_codes,
    skew_codes,
)
from benchmarks.scale_queries import LookupEmbedder, Round, Shape, Truth, plan_rounds, shapes
from benchmarks.scale_server import IDLE_CORES, IDLE_WINDOW_S, cli_server, cpu_meter, wait_idle
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.fragments import Fragment

DEFAULT_OUT = Path(".thalabus/benchmarks/app_graph.json")
DEFINED = "TAGGED"
DEFINED_PATTERN = "(document)<-[:TAGS]-(:Tag {name: $value})"
STORED = "SKEW"
VALUE = "v1"
"""The 1% value of the scale corpus's ``SKEW`` (code 2), the one the Tag copies."""
SCORE_TOLERANCE = 1e-9
Codes = npt.NDArray[np.int64]


@dataclass(frozen=True)
class RequiredCase:
    """A required filter measured on every shape, and which chapters satisfy it (by the
    corpus's ``SKEW`` and ``REGION`` codes)."""

    name: str
    text: str
    holds: Callable[[Codes, Codes], npt.NDArray[np.bool_]]


REQUIRED: tuple[RequiredCase, ...] = (
    RequiredCase("10%", "SKEW=v10", lambda s, r: s == 1),
    RequiredCase("not_50%", "NOT SKEW=v50", lambda s, r: s != 0),
    RequiredCase("or_14.5%", "SKEW=v10 OR REGION=r5", lambda s, r: (s == 1) | (r == 1)),
    RequiredCase("defined_1%", f"{DEFINED}={VALUE}", lambda s, r: s == 2),
)


# --- pure parts (tests/unit/test_app_graph_parts.py) ---------------------------------------
def fragment_mismatch(a: Sequence[Fragment], b: Sequence[Fragment],
                      tolerance: float = SCORE_TOLERANCE) -> dict[str, Any] | None:
    """None when ``a`` and ``b`` hold the same fragments in the same order with the same
    scores (within ``tolerance``); else what differs: fragments only in each, whether the
    order differs, the largest score difference over the common ones."""
    ids_a, ids_b = [f.fragmentid for f in a], [f.fragmentid for f in b]
    score_a = {f.fragmentid: f.score for f in a}
    score_b = {f.fragmentid: f.score for f in b}
    common = score_a.keys() & score_b.keys()
    diff = max((abs(score_a[i] - score_b[i]) for i in common), default=0.0)
    if ids_a == ids_b and diff <= tolerance:
        return None
    return {"fragments": [len(a), len(b)], "only_first": len(score_a.keys() - common),
            "only_second": len(score_b.keys() - common), "order_differs": ids_a != ids_b,
            "max_score_diff": diff,
            "first_ids": ids_a[:5], "second_ids": ids_b[:5]}


def paired_ratio(numerator: Sequence[float], denominator: Sequence[float]) -> float:
    """The median of the per-query ratios ``numerator[i] / denominator[i]`` (queries timed
    back to back, so a drift of the machine cancels in each ratio)."""
    if len(numerator) != len(denominator) or not numerator:
        raise ValueError("paired_ratio needs two equally long, non-empty series")
    return statistics.median(n / max(d, 1e-9) for n, d in zip(numerator, denominator,
                                                                 strict=True))


def latency(millis: Sequence[float]) -> dict[str, float]:
    """p50 and p95 (nearest rank) milliseconds."""
    return {"p50_ms": round(statistics.median(millis), 1),
            "p95_ms": round(percentile(millis, 0.95), 1)}


def rotated(sides: Sequence[str], turn: int) -> list[str]:
    """``sides`` starting at ``turn`` (mod their number): which side goes first rotates from
    one query to the next."""
    k = turn % len(sides)
    return [*sides[k:], *sides[:k]]


def written_out(query: str, required: str) -> str:
    """The query a required filter makes, written as text: ``(query) AND (required)``."""
    return f"({query}) AND ({required})"


# --- the database --------------------------------------------------------------------------
def add_tags(graph: ThalabusGraph, n: int) -> dict[str, Any]:
    """The Tag copying ``SKEW=v1``, its index and the ``TAGGED`` definition (idempotent),
    checked against the stored category and the corpus's own count."""
    start = time.perf_counter()
    tagged = run_statement(graph.db, "app_graph_tag", category=STORED, value=VALUE)[0]["tagged"]
    run_statement(graph.db, "app_graph_tag_index")
    run_statement(graph.db, "scale_await_indexes", timeout=600)
    graph.define_category(DEFINED, DEFINED_PATTERN)
    seconds = time.perf_counter() - start
    check = run_statement(graph.db, "app_graph_tag_check", category=STORED, value=VALUE)[0]
    expected = int((skew_codes(np.arange(n, dtype=np.int64), n) == 2).sum())
    if not check["tagged"] == check["tagged_stored"] == check["stored"] == expected:
        raise SystemExit(f"the Tag does not copy {STORED}={VALUE}: {check}, the corpus has "
                         f"{expected}")
    return {"tagged_documents": int(check["tagged"]), "written_now": int(tagged),
            "seconds": round(seconds, 1), "pattern": DEFINED_PATTERN}


# --- measuring -----------------------------------------------------------------------------
@dataclass
class Answer:
    """One timed query: milliseconds, fragments, chapters of the documents returned."""

    ms: float
    fragments: list[Fragment]
    chapters: list[int]


def timed(graph: ThalabusGraph, text: str, limit: int | None) -> Answer:
    """``graph.query(text)`` timed as a user's call."""
    start = time.perf_counter()
    result = graph.query(text, ontology_id=ONTOLOGY, limit=limit)
    ms = (time.perf_counter() - start) * 1000
    return Answer(ms, list(result.fragments),
                  [chapter_index(d.documentid) for d in result.documents or []])


class Bench:
    """The graph objects and the queries of both parts."""

    def __init__(self, graph: ThalabusGraph, held: dict[str, ThalabusGraph],
                 cases: Sequence[RequiredCase], plans: dict[str, list[Round]],
                 shape_list: list[Shape], n: int, limit: int | None) -> None:
        self.graph = graph
        self.held = held
        self.cases = list(cases)
        self.plans = plans
        self.shapes = shape_list
        self.n = n
        self.limit = limit
        self.turn = 0

    def violations(self, case: RequiredCase, chapters: list[int]) -> int:
        """Returned documents that do not satisfy the required filter."""
        if not chapters:
            return 0
        idx = np.array(chapters, np.int64)
        ok = case.holds(skew_codes(idx, self.n), region_codes(idx, self.n))
        return int((~ok).sum())

    def run(self, rounds: int, warmup: int, seed: int) -> dict[str, Any]:
        """Every round: the defined/stored pairs and every shape under every filter, shapes
        shuffled, sides rotated; the first ``warmup`` rounds untimed."""
        pair_kinds = ("and_1%", "filter_1%")
        pairs: dict[str, dict[str, Any]] = {
            k: {"stored": [], "defined": [], "mismatches": []} for k in pair_kinds}
        sides = ["without"] + [f"{c.name}:{w}" for c in self.cases for w in ("held", "written")]
        held: dict[str, dict[str, Any]] = {
            s.name: {"ms": {side: [] for side in sides},
                     "mismatches": {c.name: [] for c in self.cases},
                     "violations": {c.name: 0 for c in self.cases},
                     "returned": {c.name: 0 for c in self.cases}} for s in self.shapes}
        rng = np.random.default_rng([seed, 7])
        tasks = [("pair", k) for k in pair_kinds]
        if self.cases:  # --filters none: part 1 only
            tasks += [("shape", s.name) for s in self.shapes]
        for j in range(rounds):
            for t in rng.permutation(len(tasks)):
                kind, name = tasks[int(t)]
                if kind == "pair":
                    self.pair(name, j, pairs[name], count=j >= warmup)
                else:
                    self.shape(name, j, sides, held[name], count=j >= warmup)
            if j >= warmup:
                say(f"  round {j - warmup + 1} / {rounds - warmup} done")
        return {"defined_vs_stored": pairs, "required": held}

    def pair(self, kind: str, j: int, rec: dict[str, Any], *, count: bool) -> None:
        """One round of a defined/stored pair: the same phrase (or none) with either name."""
        phrase = self.plans["pair"][j].text
        texts = {side: (f"{phrase} AND {name}={VALUE}" if kind == "and_1%" else
                        f"{name}={VALUE}")
                 for side, name in (("stored", STORED), ("defined", DEFINED))}
        answers = {side: timed(self.graph, texts[side], self.limit)
                   for side in rotated(("stored", "defined"), self.next_turn())}
        if not count:
            return
        for side in ("stored", "defined"):
            rec[side].append(answers[side].ms)
        diff = fragment_mismatch(answers["stored"].fragments, answers["defined"].fragments)
        if diff is not None:
            rec["mismatches"].append({"round": j, "query": texts["defined"], **diff})

    def shape(self, name: str, j: int, sides: list[str], rec: dict[str, Any], *,
              count: bool) -> None:
        """One round of a shape: without, held to each filter, and written out."""
        text = self.plans[name][j].text
        cases = {c.name: c for c in self.cases}
        answers: dict[str, Answer] = {}
        for side in rotated(sides, self.next_turn()):
            if side == "without":
                answers[side] = timed(self.graph, text, self.limit)
                continue
            case_name, way = side.split(":")
            case = cases[case_name]
            answers[side] = (timed(self.held[case_name], text, self.limit) if way == "held"
                             else timed(self.graph, written_out(text, case.text), self.limit))
        if not count:
            return
        for side, answer in answers.items():
            rec["ms"][side].append(answer.ms)
        for case in self.cases:
            got = answers[f"{case.name}:held"]
            rec["violations"][case.name] += self.violations(case, got.chapters)
            rec["returned"][case.name] += len(got.chapters)
            diff = fragment_mismatch(got.fragments, answers[f"{case.name}:written"].fragments)
            if diff is not None:
                rec["mismatches"][case.name].append({"round": j, "query": text, **diff})

    def next_turn(self) -> int:
        self.turn += 1
        return self.turn - 1


def summarise(raw: dict[str, Any], cases: Sequence[RequiredCase]) -> dict[str, Any]:
    """The rows of both tables (ratios of p50 / p95 and the median per-query ratio)."""
    pairs = []
    for kind, rec in raw["defined_vs_stored"].items():
        s, d = latency(rec["stored"]), latency(rec["defined"])
        pairs.append({"shape": kind, "queries": len(rec["stored"]), "stored": s, "defined": d,
                      "p50_defined_over_stored": round(d["p50_ms"] / s["p50_ms"], 3),
                      "p95_defined_over_stored": round(d["p95_ms"] / s["p95_ms"], 3),
                      "median_query_ratio": round(paired_ratio(rec["defined"], rec["stored"]),
                                                  3),
                      "mismatched_queries": len(rec["mismatches"])})
    required = []
    for case in cases:
        rows = []
        for shape, rec in raw["required"].items():
            ms = rec["ms"]
            w, h, x = (ms["without"], ms[f"{case.name}:held"], ms[f"{case.name}:written"])
            lw, lh, lx = latency(w), latency(h), latency(x)
            rows.append({"shape": shape, "queries": len(w), "without": lw, "held": lh,
                         "written": lx,
                         "p95_held_over_without": round(lh["p95_ms"] / lw["p95_ms"], 3),
                         "p50_held_over_without": round(lh["p50_ms"] / lw["p50_ms"], 3),
                         "median_query_held_over_without": round(paired_ratio(h, w), 3),
                         "p95_held_over_written": round(lh["p95_ms"] / lx["p95_ms"], 3),
                         "median_query_held_over_written": round(paired_ratio(h, x), 3),
                         "mismatched_vs_written": len(rec["mismatches"][case.name]),
                         "documents_returned": rec["returned"][case.name],
                         "documents_outside_filter": rec["violations"][case.name]})
        required.append({"filter": case.name, "required_filter": case.text, "shapes": rows})
    return {"defined_vs_stored": pairs, "required": required}


def print_tables(summary: dict[str, Any]) -> None:
    """Both tables."""
    print(f"\n1. graph-defined {DEFINED}={VALUE} against stored {STORED}={VALUE} "
          "(p50 / p95 ms)")
    print(f"{'shape':10} {'n':>4} {'stored':>13} {'defined':>13} {'p50 x':>6} {'p95 x':>6} "
          f"{'med x':>6} {'mismatch':>8}")
    for row in summary["defined_vs_stored"]:
        s, d = row["stored"], row["defined"]
        print(f"{row['shape']:10} {row['queries']:4} {s['p50_ms']:6.1f}/{s['p95_ms']:6.1f} "
              f"{d['p50_ms']:6.1f}/{d['p95_ms']:6.1f} {row['p50_defined_over_stored']:6.2f} "
              f"{row['p95_defined_over_stored']:6.2f} {row['median_query_ratio']:6.2f} "
              f"{row['mismatched_queries']:8}")
    for block in summary["required"]:
        print(f"\n2. required_filter={block['required_filter']!r} ({block['filter']}), "
              "p50 / p95 ms")
        print(f"{'shape':12} {'without':>13} {'held':>13} {'p95 x':>6} {'med x':>6} | "
              f"{'written':>13} {'p95 x':>6} {'med x':>6} {'diff':>4} {'out':>4}")
        for row in block["shapes"]:
            w, h, x = row["without"], row["held"], row["written"]
            print(f"{row['shape']:12} {w['p50_ms']:6.1f}/{w['p95_ms']:6.1f} "
                  f"{h['p50_ms']:6.1f}/{h['p95_ms']:6.1f} {row['p95_held_over_without']:6.2f} "
                  f"{row['median_query_held_over_without']:6.2f} | "
                  f"{x['p50_ms']:6.1f}/{x['p95_ms']:6.1f} {row['p95_held_over_written']:6.2f} "
                  f"{row['median_query_held_over_written']:6.2f} "
                  f"{row['mismatched_vs_written']:4} {row['documents_outside_filter']:4}")


def settings_for(args: argparse.Namespace) -> tuple[Settings, str]:
    """The settings the run uses and how to say them."""
    settings = Settings(embedding_dimensions=DIMENSIONS)
    if args.defaults:
        return settings, "the engine's defaults (fusion, calibrated scores)"
    return (settings.replace(calibration_file="none", hybrid_all_queries=False,
                             short_query_max_words=0),
            "the scale benchmark's (index scale, CALIBRATION_FILE=none, fusion off)")


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Load or reuse the graph, add the Tag, time both parts; the JSON result."""
    names = [] if args.filters == "none" else args.filters.split(",")
    unknown = sorted(set(names) - {c.name for c in REQUIRED})
    if unknown:
        raise SystemExit(f"--filters: {', '.join(unknown)} is not one of "
                         f"{', '.join(c.name for c in REQUIRED)} (or none)")
    cases = [c for c in REQUIRED if c.name in names]
    real = load_real_sets([Path(d) for d in args.data_dirs.split(",") if d.strip()])
    synth = Synthesizer(real, args.chapters, args.sigma, args.mix, args.seed, args.generator)
    shape_list = shapes()
    # the pair's phrases are planned after the scale shapes', which stay the scale run's
    plans, lookup = plan_rounds([*shape_list, Shape("pair", "semantic", "{p}")], real, synth,
                                args.warmup + args.queries, args.seed)
    settings, settings_said = settings_for(args)
    wanted = corpus_marker(args, real)
    embedder = LookupEmbedder(lookup)
    with cli_server(args, say) as info, ThalabusGraph.connect(
            info.uri, settings=settings, embedder=embedder) as graph:
        reused = claim_database(graph.db, wanted, info.uri, reuse_only=args.queries_only)
        graph.migrate()
        loaded: dict[str, Any] = {"reused": reused}
        if not reused:
            say(f"ingesting {args.chapters} chapters ...")
            loaded.update(ingest(graph, synth, Truth([], {}, lookup, real), say))
        tags = add_tags(graph, args.chapters)
        run_statement(graph.db, "scale_marker_write",
                      props={"app_graph_tag": f"{STORED}={VALUE}"})
        say(f"Tag {VALUE}: {tags['tagged_documents']} documents ({tags['written_now']} "
            f"matched now, {tags['seconds']} s); {DEFINED} defined")
        idle = None
        if reused and info.pid is not None:
            _, meter = cpu_meter(info, graph.db, run_statement)
            say(f"waiting for the server to be idle (JVM CPU < {IDLE_CORES} cores for "
                f"{IDLE_WINDOW_S:.0f} s, at most {args.settle_timeout:.0f} s) ...")
            wait = wait_idle(meter, timeout=args.settle_timeout)
            idle = {"idle": wait.idle, "seconds": wait.seconds}
            say(f"  {'idle' if wait.idle else 'NOT idle'} after {wait.seconds:.0f} s")
        held = {c.name: ThalabusGraph(graph.db, settings=settings, embedder=embedder,
                                      required_filter=c.text) for c in cases}
        bench = Bench(graph, held, cases, plans, shape_list, args.chapters, args.limit)
        say(f"{args.warmup} warm-up + {args.queries} timed rounds: 2 defined/stored pairs"
            + (f", {len(shape_list)} shapes x (without + {len(cases)} filters held and "
               "written)" if cases else ""))
        gc.collect()
        gc.freeze()  # the harness's objects stay out of the collections queries trigger
        load0, t0 = os.getloadavg()[0], time.perf_counter()
        raw = bench.run(args.warmup + args.queries, args.warmup, args.seed)
        wall = time.perf_counter() - t0
        if not reused:
            say("copying the categories onto the chapters (marks the graph complete) ...")
            loaded.update(finish_load(graph, wanted))
        agent = graph.db.driver.get_server_info().agent
    return {
        "benchmark": "app_graph", "python": platform.python_version(), "cpus": os.cpu_count(),
        "neo4j": agent, "server": info.to_dict(),
        "graph": "right after ingest" if not reused else "kept server (reused graph)",
        "idle_wait": idle, "settings": settings_said, "defaults": args.defaults,
        "engine_limit": args.limit, "chapters": args.chapters, "ontology": ONTOLOGY,
        "queries_per_shape": args.queries, "warmup_rounds": args.warmup,
        "seconds": round(wall, 1),
        "machine_load_1min": [round(load0, 2), round(os.getloadavg()[0], 2)],
        "corpus": {**wanted, **loaded}, "tag": tags,
        "defined_category": {"name": DEFINED, "pattern": DEFINED_PATTERN,
                             "stored_twin": f"{STORED}={VALUE}"},
        **summarise(raw, cases), "raw": raw,
    }


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--chapters", type=int, default=200_000)
    parser.add_argument("--queries", type=int, default=100, help="timed queries per shape")
    parser.add_argument("--warmup", type=int, default=2, help="untimed rounds first")
    parser.add_argument("--filters", default=",".join(c.name for c in REQUIRED),
                        help="comma-separated required filters to measure, of "
                        # argparse formats help with %: the names' own are escaped
                        + ", ".join(f"{c.name} ({c.text})" for c in REQUIRED).replace("%", "%%")
                        + "; none: part 1 only")
    parser.add_argument("--limit", type=int, default=None,
                        help="the engine's query(limit=...) (default: the seed's pools)")
    parser.add_argument("--defaults", action="store_true",
                        help="the engine's default settings (fusion, calibrated scores) "
                        "instead of the scale benchmark's index scale")
    parser.add_argument("--generator", choices=GENERATORS, default=DEFAULT_GENERATOR,
                        help="the generator the graph was (or is) built with")
    parser.add_argument("--server-data", default=None, metavar="DIR",
                        help="with --uri: the data dir of that server (its pid, sizes, idle "
                        "wait)")
    parser.add_argument("--settle-timeout", type=float, default=120.0,
                        help="on a reused graph: seconds to wait at most for an idle server")
    parser.add_argument("--queries-only", action="store_true",
                        help="with --uri: refuse (never build) when it holds no complete "
                        "scale corpus")
    parser.add_argument("--json", type=Path, default=DEFAULT_OUT)
    args = corpus_arguments(parser, argv)
    result = run(args)
    server = result["server"]
    idle = result["idle_wait"]
    print(f"app_graph benchmark: {result['chapters']} chapters, {result['graph']} "
          f"({server['uri']}, data {server['data_dir']}), {result['neo4j']} (heap "
          f"{server['heap']}, page cache {server['page_cache']}, started by "
          f"{server['started_by']})"
          + (f"; {'idle' if idle['idle'] else 'NOT idle'} after {idle['seconds']} s"
             if idle else "")
          + f"; settings: {result['settings']}; limit {result['engine_limit']}; "
          f"{result['queries_per_shape']} queries a shape after {result['warmup_rounds']} "
          f"warm-up rounds, {result['seconds']} s, load {result['machine_load_1min']}")
    print_tables(result)
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
