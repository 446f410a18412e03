"""A/B of two checkouts' engines on one kept scale graph, interleaved query by query.

Run ``python -m benchmarks.scale_ab --uri URI --server-data DIR --old CHECKOUT
[--queries Q] [--warmup W] [--chapters N] [--json OUT]`` on a graph ``scale --keep`` left.

Two long-lived workers (``benchmarks.scale_ab_worker``) hold one engine each: side
``new`` runs with this checkout's interpreter in this checkout, side ``old`` with
``CHECKOUT/.venv/bin/python`` in a copy of this checkout's ``tests/`` (so it imports the old
checkout's installed ``thalabus_graph`` and this harness). The queries are the scale
benchmark's (``plan_rounds``, same seed), their vectors looked up, no model running. Every
query goes to both workers back to back, the side that goes first alternating from query to
query, the shapes shuffled per round: a drift of the machine or the server hits both sides
alike, which whole runs one after the other cannot promise. The first ``--warmup`` rounds are
not counted. The old checkout must accept the graph (the same migrations), and the server
should be idle first (``--server-data`` waits for it).

Per shape: p50 and p95 of each side over ``--queries`` queries, the ratios new / old, and the
share of queries whose top-10 documents are the same on both sides (behaviour unchanged).
"""

from __future__ import annotations

import argparse
import json
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


class Worker:
    """One side's worker process and its pipes."""

    def __init__(self, python: Path, cwd: Path, uri: str, lookup: Path) -> None:
        self.proc = subprocess.Popen(
            [str(python), "-m", "benchmarks.scale_ab_worker", uri, str(lookup), ONTOLOGY],
            cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
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

    def query(self, text: str) -> dict[str, Any]:
        self._stdin.write(json.dumps(text) + "\n")
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


def summary(ms: dict[str, dict[str, list[float]]], same: dict[str, list[bool]]
            ) -> list[dict[str, Any]]:
    """Per shape: p50 / p95 of each side, the ratios new / old, the same-top-10 share."""
    rows = []
    for shape, sides in ms.items():
        row: dict[str, Any] = {"shape": shape}
        for side in SIDES:
            row[side] = {"p50_ms": round(statistics.median(sides[side]), 1),
                         "p95_ms": round(percentile(sides[side], 0.95), 1),
                         "queries": len(sides[side])}
        for q in ("p50_ms", "p95_ms"):
            row[f"{q.split('_')[0]}_new_over_old"] = round(
                row["new"][q] / max(row["old"][q], 1e-9), 3)
        row["same_top10"] = round(sum(same[shape]) / max(len(same[shape]), 1), 3)
        rows.append(row)
    return rows


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
    parser.add_argument("--json", type=Path, default=DEFAULT_OUT)
    args = corpus_arguments(parser, argv)
    if not args.uri:
        parser.error("--uri is required: the graph `scale --keep` left")
    real = load_real_sets([Path(d) for d in args.data_dirs.split(",") if d.strip()])
    synth = Synthesizer(real, args.chapters, args.sigma, args.mix, args.seed, args.generator)
    shape_list = shapes()
    plans, lookup = plan_rounds(shape_list, real, synth, args.warmup + args.queries, args.seed)
    if args.server_data:
        pid = int(status(Path(args.server_data))["pid"])
        idle = wait_idle(lambda: proc_cpu_seconds(pid), timeout=900)
        print(f"server {'idle' if idle.idle else 'NOT idle'} after {idle.seconds:.0f} s",
              file=sys.stderr, flush=True)
    ms: dict[str, dict[str, list[float]]] = {s.name: {side: [] for side in SIDES}
                                             for s in shape_list}
    same: dict[str, list[bool]] = {s.name: [] for s in shape_list}
    rng = np.random.default_rng([args.seed, 3])
    with tempfile.TemporaryDirectory(prefix="thalabus-ab-") as tmp:
        texts = sorted(lookup)
        lookup_file = Path(tmp) / "lookup.npz"
        np.savez(lookup_file, texts=np.array(texts),
                 vectors=np.stack([lookup[t] for t in texts]).astype(np.float32))
        workers = {"old": Worker(args.old.resolve() / ".venv" / "bin" / "python",
                                 overlay(Path(tmp) / "old"), args.uri, lookup_file),
                   "new": Worker(Path(sys.executable), HERE, args.uri, lookup_file)}
        try:
            count = 0
            for j in range(args.warmup + args.queries):
                for k in rng.permutation(len(shape_list)):
                    shape = shape_list[int(k)]
                    text = plans[shape.name][j].text
                    order = SIDES if count % 2 == 0 else SIDES[::-1]
                    count += 1
                    replies = {side: workers[side].query(text) for side in order}
                    if j < args.warmup:
                        continue
                    for side in SIDES:
                        ms[shape.name][side].append(replies[side]["ms"])
                    same[shape.name].append(replies["old"]["ids"] == replies["new"]["ids"])
                if j >= args.warmup:
                    print(f"  round {j - args.warmup + 1} / {args.queries} done",
                          file=sys.stderr, flush=True)
        finally:
            for worker in workers.values():
                worker.close()
    rows = summary(ms, same)
    print(f"{'shape':12} {'old p50':>8} {'new p50':>8} {'ratio':>6} | {'old p95':>8} "
          f"{'new p95':>8} {'ratio':>6} | same top-10")
    for row in rows:
        o, n = row["old"], row["new"]
        print(f"{row['shape']:12} {o['p50_ms']:8.1f} {n['p50_ms']:8.1f} "
              f"{row['p50_new_over_old']:6.3f} | {o['p95_ms']:8.1f} {n['p95_ms']:8.1f} "
              f"{row['p95_new_over_old']:6.3f} | {row['same_top10']:.3f}")
    write_json(args.json, {"benchmark": "scale_ab", "uri": args.uri, "old": str(args.old),
                           "warmup_rounds": args.warmup, "queries_per_shape": args.queries,
                           "chapters": args.chapters, "shapes": rows,
                           "ms": ms})
    return 0


if __name__ == "__main__":
    sys.exit(main())
