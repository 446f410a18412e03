"""A/B of two checkouts' engines on one kept scale graph, interleaved query by query.

Run ``python -m benchmarks.scale_ab --uri URI --server-data DIR --old CHECKOUT
[--queries Q] [--warmup W] [--chapters N] [--shapes S,...] [--required-filter F]
[--index-scale] [--defaults] [--limit N] [--json OUT]`` on a graph ``scale --keep`` left.

Two long-lived workers (``benchmarks.scale_ab_worker``) hold one engine each: side
``new`` runs with this checkout's interpreter in this checkout, side ``old`` with
``CHECKOUT/.venv/bin/python`` in a copy of this checkout's ``benchmarks/`` and ``tests/``.
Each worker imports its own checkout's ``thalabus_graph`` and reads its statements and
migrations (``PYTHONPATH``, ``THALABUS_CYPHER_DIR``, ``THALABUS_MIGRATIONS_DIR`` set to the
checkout's), so two worktrees sharing one editable virtualenv each run their own engine.
``--shapes`` keeps some of the scale shapes (their queries are those of the whole run);
``--required-filter F`` also runs every query held to ``F`` (``ThalabusGraph(db,
required_filter=F)``, the application-graph benchmark's case) and written out as
``(query) AND (F)``; ``--index-scale`` uses that benchmark's settings (``CALIBRATION_FILE=
none``). The queries are the scale
benchmark's (``plan_rounds``, same seed), their vectors looked up, no model running. Every
query goes to both workers back to back, the side that goes first alternating from query to
query, the shapes shuffled per round: a drift of the machine or the server hits both sides
alike, which whole runs one after the other cannot promise. The first ``--warmup`` rounds are
not counted. The old checkout must accept the graph (the same migrations), and the server
should be idle first (``--server-data`` waits for it).

Per shape (and way: the query, held, written out): p50 and p95 of each side over
``--queries`` queries, the ratios new / old and the median of the per-query ratios, the share
of queries whose top-10 documents are the same on both sides and whose fragments and scores
are (behaviour unchanged), and per side the share of held queries answering as written out.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO, Any

import numpy as np

from benchmarks.report import write_json
from benchmarks.scale import corpus_arguments, percentile
from benchmarks.scale_corpus import (
    DEFAULT_GENERATOR,
    GENERATORS,
    ONTOLOGY,
    Synthesizer,
    load_real_sets,
)
from benchmarks.scale_queries import plan_rounds, shapes
from benchmarks.scale_server import proc_cpu_seconds, status, wait_idle

HERE = Path(__file__).resolve().parents[1]
DEFAULT_OUT = Path(".thalabus/benchmarks/scale_ab.json")
SIDES = ("old", "new")
WAYS = ("query", "held", "written")
"""The query as written, held to the required filter, and written out with it."""


def checkout_env(checkout: Path) -> dict[str, str]:
    """The environment that makes a worker run ``checkout``'s engine: its package first on
    the path and its statements and migrations (a shared editable install reads another's)."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    for variable, folder in (("THALABUS_CYPHER_DIR", "cypher"),
                             ("THALABUS_MIGRATIONS_DIR", "migrations")):
        if (checkout / folder).is_dir():
            env[variable] = str(checkout / folder)
    return env


class Worker:
    """One side's worker process and its pipes."""

    def __init__(self, python: Path, cwd: Path, uri: str, lookup: Path, checkout: Path,
                 flags: tuple[str, ...] = ()) -> None:
        self.proc = subprocess.Popen(
            [str(python), "-m", "benchmarks.scale_ab_worker", uri, str(lookup), ONTOLOGY,
             *flags], cwd=cwd, env=checkout_env(checkout),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self._stdin: IO[str] = self.proc.stdin  # type: ignore[assignment]
        self._stdout: IO[str] = self.proc.stdout  # type: ignore[assignment]
        ready = self._reply()
        if not ready.get("ready"):
            raise SystemExit(f"worker {python} did not start: {ready}")

    def _reply(self) -> dict[str, Any]:
        line = self._stdout.readline()
        if not line:
            raise SystemExit(f"a worker ended (exit {self.proc.wait()}); see its stderr above")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def query(self, asked: str | dict[str, Any]) -> dict[str, Any]:
        """Time one query: its text, or ``{"text": ..., "required": F}`` held to ``F``."""
        self._stdin.write(json.dumps(asked) + "\n")
        self._stdin.flush()
        return self._reply()

    def close(self) -> None:
        self._stdin.close()
        self.proc.wait(timeout=60)


def overlay(where: Path) -> Path:
    """A directory holding this checkout's ``benchmarks/`` and ``tests/`` (the old side's
    working directory)."""
    for folder in ("benchmarks", "tests"):
        shutil.copytree(HERE / folder, where / folder,
                        ignore=shutil.ignore_patterns("__pycache__", "data"))
    return where


Timings = dict[str, dict[str, dict[str, list[Any]]]]
"""shape -> way -> side -> one value per query (milliseconds, or the reply)."""


def summary(ms: Timings, replies: Timings) -> list[dict[str, Any]]:
    """Per shape and way: p50 / p95 of each side, the ratios new / old and the median
    per-query ratio, the shares of the same top-10 and the same answer on both sides, and
    (held) each side's share answering as written out."""
    rows = []
    for shape, ways in ms.items():
        for way, sides in ways.items():
            got = replies[shape][way]
            row: dict[str, Any] = {"shape": shape, "way": way}
            for side in SIDES:
                row[side] = {"p50_ms": round(statistics.median(sides[side]), 1),
                             "p95_ms": round(percentile(sides[side], 0.95), 1),
                             "queries": len(sides[side])}
            for q in ("p50_ms", "p95_ms"):
                row[f"{q.split('_')[0]}_new_over_old"] = round(
                    row["new"][q] / max(row["old"][q], 1e-9), 3)
            row["median_query_new_over_old"] = round(statistics.median(
                n / max(o, 1e-9) for n, o in zip(sides["new"], sides["old"], strict=True)), 3)
            pairs = list(zip(got["old"], got["new"], strict=True))
            row["same_top10"] = round(sum(o["ids"] == n["ids"] for o, n in pairs)
                                      / max(len(pairs), 1), 3)
            row["same_answer"] = round(sum(o.get("digest") == n.get("digest")
                                           for o, n in pairs) / max(len(pairs), 1), 3)
            if way == "held":
                row["held_as_written"] = {side: round(sum(
                    h.get("digest") == w.get("digest") for h, w in zip(
                        got[side], replies[shape]["written"][side], strict=True))
                    / max(len(got[side]), 1), 3) for side in SIDES}
            rows.append(row)
    return rows


def asked_of(text: str, way: str, required: str | None) -> str | dict[str, Any]:
    """What a worker is asked for ``text`` in ``way``."""
    if way == "held":
        return {"text": text, "required": required}
    return written_out(text, required) if way == "written" and required else text


def written_out(text: str, required: str) -> str:
    """The query a required filter makes, written as text: ``(query) AND (required)``."""
    return f"({text}) AND ({required})"


def run_rounds(workers: dict[str, Worker], plans: dict[str, Any], shape_names: list[str],
               args: argparse.Namespace) -> tuple[Timings, Timings]:
    """Every round: each shape (shuffled) in each way, the sides back to back, which goes
    first alternating from query to query; the first ``--warmup`` rounds not kept."""
    ways = WAYS if args.required_filter else WAYS[:1]
    ms: Timings = {s: {w: {side: [] for side in SIDES} for w in ways} for s in shape_names}
    replies: Timings = {s: {w: {side: [] for side in SIDES} for w in ways}
                        for s in shape_names}
    rng = np.random.default_rng([args.seed, 3])
    count = 0
    for j in range(args.warmup + args.queries):
        for k in rng.permutation(len(shape_names)):
            shape = shape_names[int(k)]
            text = plans[shape][j].text
            for way in ways:
                order = SIDES if count % 2 == 0 else SIDES[::-1]
                count += 1
                got = {side: workers[side].query(asked_of(text, way, args.required_filter))
                       for side in order}
                if j < args.warmup:
                    continue
                for side in SIDES:
                    ms[shape][way][side].append(got[side]["ms"])
                    replies[shape][way][side].append(got[side])
        if j >= args.warmup:
            print(f"  round {j - args.warmup + 1} / {args.queries} done",
                  file=sys.stderr, flush=True)
    return ms, replies


def print_rows(rows: list[dict[str, Any]]) -> None:
    """The table: per shape and way, p50 / p95 of each side and the ratios."""
    print(f"{'shape':12} {'way':8} {'old p50':>8} {'new p50':>8} {'ratio':>6} {'med':>6} | "
          f"{'old p95':>8} {'new p95':>8} {'ratio':>6} | same answer, top-10")
    for row in rows:
        o, n = row["old"], row["new"]
        held = row.get("held_as_written")
        print(f"{row['shape']:12} {row['way']:8} {o['p50_ms']:8.1f} {n['p50_ms']:8.1f} "
              f"{row['p50_new_over_old']:6.3f} {row['median_query_new_over_old']:6.3f} | "
              f"{o['p95_ms']:8.1f} {n['p95_ms']:8.1f} {row['p95_new_over_old']:6.3f} | "
              f"{row['same_answer']:.3f}, {row['same_top10']:.3f}"
              + ("" if held is None else f"; held as written {held}"))


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--old", type=Path, required=True, help="the old checkout (with .venv)")
    parser.add_argument("--chapters", type=int, default=200_000)
    parser.add_argument("--queries", type=int, default=60, help="timed queries per shape")
    parser.add_argument("--warmup", type=int, default=2, help="untimed rounds first")
    parser.add_argument("--server-data", default=None, metavar="DIR",
                        help="the server's data dir: wait until its JVM is idle first")
    parser.add_argument("--generator", choices=GENERATORS, default=DEFAULT_GENERATOR,
                        help="the generator the graph was built with")
    parser.add_argument("--shapes", default=None,
                        help="comma-separated scale shapes to run (default: every one)")
    parser.add_argument("--required-filter", default=None, metavar="F",
                        help="also run each query held to F and written out with it")
    parser.add_argument("--index-scale", action="store_true",
                        help="CALIBRATION_FILE=none (the application-graph benchmark's "
                        "settings) instead of the calibrated default")
    parser.add_argument("--defaults", action="store_true",
                        help="the engine's default settings (fusion and calibrated scores, as "
                             "scale --defaults) instead of the index-only phrase")
    parser.add_argument("--limit", type=int, default=None,
                        help="the engine's query(limit=...), as scale --limit")
    parser.add_argument("--json", type=Path, default=DEFAULT_OUT)
    args = corpus_arguments(parser, argv)
    if not args.uri:
        parser.error("--uri is required: the graph `scale --keep` left")
    real = load_real_sets([Path(d) for d in args.data_dirs.split(",") if d.strip()])
    synth = Synthesizer(real, args.chapters, args.sigma, args.mix, args.seed, args.generator)
    shape_list = shapes()
    plans, lookup = plan_rounds(shape_list, real, synth, args.warmup + args.queries, args.seed)
    names = [s.name for s in shape_list]
    if args.shapes:
        wanted = args.shapes.split(",")
        if set(wanted) - set(names):
            parser.error(f"--shapes: {sorted(set(wanted) - set(names))} not among {names}")
        names = [n for n in names if n in wanted]
    if args.server_data:
        pid = int(status(Path(args.server_data))["pid"])
        idle = wait_idle(lambda: proc_cpu_seconds(pid), timeout=900)
        print(f"server {'idle' if idle.idle else 'NOT idle'} after {idle.seconds:.0f} s",
              file=sys.stderr, flush=True)
    flags = (*(("--index-scale",) if args.index_scale else ()),
             *(("--defaults",) if args.defaults else ()),
             *((f"--limit={args.limit}",) if args.limit else ()))
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="thalabus-ab-") as tmp:
        texts = sorted(lookup)
        lookup_file = Path(tmp) / "lookup.npz"
        np.savez(lookup_file, texts=np.array(texts),
                 vectors=np.stack([lookup[t] for t in texts]).astype(np.float32))
        old = args.old.resolve()
        workers = {"old": Worker(old / ".venv" / "bin" / "python",
                                 overlay(Path(tmp) / "old"), args.uri, lookup_file, old, flags),
                   "new": Worker(Path(sys.executable), HERE, args.uri, lookup_file, HERE,
                                 flags)}
        try:
            ms, replies = run_rounds(workers, plans, names, args)
        finally:
            for worker in workers.values():
                worker.close()
    rows = summary(ms, replies)
    load = [round(load0, 2), round(os.getloadavg()[0], 2)]
    print(f"machine load (1 min) {load}")
    print_rows(rows)
    write_json(args.json, {"benchmark": "scale_ab", "uri": args.uri, "old": str(args.old),
                           "warmup_rounds": args.warmup, "queries_per_shape": args.queries,
                           "chapters": args.chapters, "required_filter": args.required_filter,
                           "index_scale": args.index_scale, "defaults": args.defaults,
                           "limit": args.limit, "machine_load_1min": load,
                           "shapes": rows, "ms": ms})
    return 0


if __name__ == "__main__":
    sys.exit(main())
