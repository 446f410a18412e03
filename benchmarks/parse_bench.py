"""Parser benchmark: a 10,000-term query and a 5,000-deep parenthesised one, per character.

Run ``python -m benchmarks.parse_bench [--json OUT]``. Timings are best-of-N wall
clock; each is also given as a ratio against a baseline measured in the same run (one
pure-Python pass over the same characters), and the per-character cost at growing sizes shows
whether parsing stays linear.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.report import write_json
from thalabus_graph.query import parse, semantic_clauses, serialize

DEFAULT_OUT = Path(".thalabus/benchmarks/parse_bench.json")


def best_of(repeat: int, work: Callable[[], object]) -> float:
    """The fastest of ``repeat`` runs of ``work``, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def char_loop(text: str) -> int:
    """The baseline: one pure-Python pass over every character."""
    count = 0
    for char in text:
        if char == "(":
            count += 1
    return count


def chain(terms: int) -> str:
    """``"t0" AND "t1" AND ...`` with ``terms`` phrases (a left-deep tree)."""
    return " AND ".join(f'"t{i}"' for i in range(terms))


def nested(levels: int) -> str:
    """``((( ... "a" ... )))`` with ``levels`` pairs of parentheses."""
    return "(" * levels + '"a"' + ")" * levels


def right_deep(levels: int) -> str:
    """``"a" AND ("a" AND ( ... ))``: a right-deep tree ``levels`` deep, kept by serialize."""
    return '"a" AND (' * levels + '"b"' + ")" * levels


def measure(name: str, text: str, repeat: int) -> dict[str, Any]:
    """Time parse, serialize and semantic_clauses of one query against the baseline."""
    node = parse(text)
    baseline = best_of(repeat, lambda: char_loop(text))
    parse_s = best_of(repeat, lambda: parse(text))
    serialize_s = best_of(repeat, lambda: serialize(node))
    clauses_s = best_of(repeat, lambda: semantic_clauses(node))
    chars = len(text)
    return {
        "name": name,
        "chars": chars,
        "parse_seconds": parse_s,
        "parse_us_per_char": parse_s / chars * 1e6,
        "serialize_us_per_char": serialize_s / chars * 1e6,
        "semantic_clauses_seconds": clauses_s,
        "baseline_us_per_char": baseline / chars * 1e6,
        "parse_vs_baseline": parse_s / baseline,
        "serialize_vs_baseline": serialize_s / baseline,
    }


def run(repeat: int) -> dict[str, Any]:
    """Every measurement of this benchmark as one JSON-ready dict."""
    cases = [
        measure("chain_10000_terms", chain(10_000), repeat),
        measure("parens_5000_deep", nested(5_000), repeat),
        measure("right_deep_5000", right_deep(5_000), repeat),
    ]
    scaling = []
    for terms in (1_000, 2_500, 5_000, 10_000, 20_000):
        text = chain(terms)
        seconds = best_of(repeat, lambda text=text: parse(text))  # type: ignore[misc]
        per_char = seconds / len(text) * 1e6
        scaling.append({"terms": terms, "chars": len(text), "us_per_char": per_char})
    linearity = scaling[-1]["us_per_char"] / scaling[0]["us_per_char"]
    return {
        "benchmark": "parse_bench",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "repeat": repeat,
        "cases": cases,
        "scaling": scaling,
        "linearity_ratio_20000_vs_1000_terms": linearity,
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the figures and write the JSON."""
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    options.add_argument(
        "--json", type=Path, default=DEFAULT_OUT, help=f"output file (default {DEFAULT_OUT})"
    )
    options.add_argument("--repeat", type=int, default=5, help="best of N runs (default 5)")
    args = options.parse_args(argv)
    result = run(args.repeat)
    print(f"{'case':<20} {'chars':>8} {'parse s':>9} {'us/char':>8} {'x baseline':>11} "
          f"{'serialize us/char':>18}")
    for case in result["cases"]:
        print(f"{case['name']:<20} {case['chars']:>8} {case['parse_seconds']:>9.4f} "
              f"{case['parse_us_per_char']:>8.3f} {case['parse_vs_baseline']:>11.1f} "
              f"{case['serialize_us_per_char']:>18.3f}")
    print("scaling (chain of N terms):", ", ".join(
        f"{row['terms']}: {row['us_per_char']:.3f} us/char" for row in result["scaling"]))
    print(f"linearity (us/char at 20,000 terms / at 1,000 terms): "
          f"{result['linearity_ratio_20000_vs_1000_terms']:.2f}  (1.0 = perfectly linear)")
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
