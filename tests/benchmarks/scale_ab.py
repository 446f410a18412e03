"""A/B of two checkouts' engines on one kept scale graph, runs interleaved (ABBA...).

Run ``python -m tests.benchmarks.scale_ab --uri URI --server-data DIR --old CHECKOUT
[--rounds 3] [--discard 1] [--chapters N] [--queries Q] [--json OUT]`` on a graph
``scale --keep`` left.

Both sides run this checkout's ``tests.benchmarks.scale --queries-only --no-graphrag`` (one
harness, so only the engine differs), each in a fresh process: side ``new`` with this
checkout's interpreter, side ``old`` with ``CHECKOUT/.venv/bin/python`` on a copy of this
checkout's ``tests/`` whose ``benchmarks/quality.py`` is the old checkout's own (its imports
follow that engine's API; the scale benchmark uses only its ``semantic_phrase``). The old
checkout must accept the graph: the same migrations. Each run waits for an idle server first.

Per shape the report pools every timed query of a side (``--rounds`` x ``--queries``) for p50
and p95 and gives the ratio new / old, beside each run's own p95.
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
from typing import Any

from tests.benchmarks.report import write_json
from tests.benchmarks.scale import DEFAULT_DATA, percentile

HERE = Path(__file__).resolve().parents[2]
DEFAULT_OUT = Path(".thalabus/benchmarks/scale_ab.json")


def old_overlay(old: Path, where: Path) -> Path:
    """A directory holding this checkout's ``tests/`` with the old checkout's quality.py."""
    shutil.copytree(HERE / "tests", where / "tests",
                    ignore=shutil.ignore_patterns("__pycache__", "data"))
    shutil.copy(old / "tests" / "benchmarks" / "quality.py",
                where / "tests" / "benchmarks" / "quality.py")
    return where


def one_run(python: Path, cwd: Path, args: argparse.Namespace, out: Path) -> dict[str, Any]:
    """One queries-only pass of the scale benchmark; its settled phase."""
    argv = [str(python), "-m", "tests.benchmarks.scale", "--chapters", str(args.chapters),
            "--queries", str(args.queries), "--uri", args.uri, "--queries-only",
            "--no-graphrag", "--data-dirs", args.data_dirs, "--json", str(out)]
    if args.server_data:
        argv += ["--server-data", args.server_data]
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    phase: dict[str, Any] = result["phases"][-1]
    return phase


def summary(runs: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Per shape: pooled p50 / p95 of each side, the ratios, each run's p95."""
    rows = []
    for shape in [s["shape"] for s in runs["new"][0]["shapes"]]:
        row: dict[str, Any] = {"shape": shape}
        for side, phases in runs.items():
            per_run = [next(s for s in p["shapes"] if s["shape"] == shape) for p in phases]
            pooled = [ms for s in per_run for ms in s["engine_ms"]]
            row[side] = {"p50_ms": round(statistics.median(pooled), 1),
                         "p95_ms": round(percentile(pooled, 0.95), 1),
                         "queries": len(pooled),
                         "p95_ms_by_run": [s["engine"]["p95_ms"] for s in per_run],
                         "recall_min": min(s["engine"]["recall_min"] for s in per_run)}
        for q in ("p50_ms", "p95_ms"):
            row[f"{q.split('_')[0]}_new_over_old"] = round(
                row["new"][q] / max(row["old"][q], 1e-9), 3)
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--uri", required=True)
    parser.add_argument("--server-data", default=None, metavar="DIR")
    parser.add_argument("--old", type=Path, required=True, help="the old checkout (with .venv)")
    parser.add_argument("--rounds", type=int, default=3, help="runs per side")
    parser.add_argument("--discard", type=int, default=1,
                        help="leading run pairs (old, new) left out of the figures: the first "
                             "queries after a pause meet a cold server on either side")
    parser.add_argument("--chapters", type=int, default=200_000)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--data-dirs", default=DEFAULT_DATA)
    parser.add_argument("--json", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    args.data_dirs = ",".join(str(Path(d).resolve()) for d in args.data_dirs.split(","))
    old_python = args.old.resolve() / ".venv" / "bin" / "python"
    runs: dict[str, list[dict[str, Any]]] = {"old": [], "new": []}
    with tempfile.TemporaryDirectory(prefix="thalabus-ab-") as tmp:
        overlay = old_overlay(args.old.resolve(), Path(tmp) / "old")
        sides = (("old", old_python, overlay), ("new", Path(sys.executable), HERE))
        for r in range(args.discard + args.rounds):
            # ABBA: each side runs first as often as second, so a drift of the server
            # between the two runs of a pair favours neither.
            for side, python, cwd in (sides if r % 2 == 0 else sides[::-1]):
                phase = one_run(python, cwd, args, Path(tmp) / f"{side}-{r}.json")
                kept = r >= args.discard
                if kept:
                    runs[side].append(phase)
                p95 = {s["shape"]: s["engine"]["p95_ms"] for s in phase["shapes"]}
                print(f"run {r + 1} {side}{'' if kept else ' (discarded)'}: p95 {p95}",
                      file=sys.stderr, flush=True)
    rows = summary(runs)
    print(f"{'shape':12} {'old p50':>8} {'new p50':>8} {'ratio':>6} | {'old p95':>8} "
          f"{'new p95':>8} {'ratio':>6}")
    for row in rows:
        o, n = row["old"], row["new"]
        print(f"{row['shape']:12} {o['p50_ms']:8.1f} {n['p50_ms']:8.1f} "
              f"{row['p50_new_over_old']:6.3f} | {o['p95_ms']:8.1f} {n['p95_ms']:8.1f} "
              f"{row['p95_new_over_old']:6.3f}")
    write_json(args.json, {"benchmark": "scale_ab", "uri": args.uri, "old": str(args.old),
                           "rounds": args.rounds, "discarded": args.discard,
                           "queries_per_shape": args.queries,
                           "chapters": args.chapters, "shapes": rows, "runs": runs})
    return 0


if __name__ == "__main__":
    sys.exit(main())
