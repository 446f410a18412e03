"""Reranking throughput: batched requests against one call per fragment, in the same run.

Run: ``python -m benchmarks.rerank_throughput [--json OUT] [--fragments N]
[--overhead-ms MS] [--batch-size B] [--parallelism P]``.

Scores N fragments (default 5,000) with `ScoreApiReranker` through a loopback vLLM ``/score``
server that sleeps a fixed time per request (a stand-in for a GPU server's per-request cost),
once batched and once with ``batch_size=1`` (the baseline: the original one-call-per-fragment
behaviour). Also measures the client's own cost per fragment against an in-process transport
that answers instantly. Prints a table and writes the figures, with the ratio, as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import platform
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from tests.support.loopback import (
    LoopbackServer,
    overlap_score,
    parse_score_request,
    score_handler,
    score_reply,
)
from thalabus_graph.rerank import Passage, ScoreApiReranker

QUERY = "asylum applicant converted religion contradictions in the interview"
WORDS = ("asylum", "applicant", "interview", "religion", "conversion", "court", "decision",
         "appeal", "country", "evidence", "contradiction", "credibility", "hearing", "family",
         "persecution")


def fragments(n: int) -> list[Passage]:
    """``n`` synthetic fragments of ~60 words, 10 per document."""
    out = []
    for i in range(n):
        words = [WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(60)]
        out.append(Passage(f"docid-{i // 10}-p{i % 10}", " ".join(words), 0.5))
    return out


def _run(reranker: ScoreApiReranker, passages: list[Passage]) -> tuple[float, int, int]:
    started = time.perf_counter()
    reply = asyncio.run(reranker.score(QUERY, passages))
    elapsed = time.perf_counter() - started
    if not reply.ok:
        raise SystemExit(f"benchmark run had failures: {reply.errors[:3]}")
    return elapsed, len(reply.scores), reply.usage.get("requests", 0)


def _serve(urls: Any, stop: Any, overhead_seconds: float) -> None:
    with LoopbackServer(score_handler("vllm-score", delay=overhead_seconds)) as server:
        urls.put(server.url)
        stop.wait()


@contextmanager
def score_server_process(overhead_seconds: float) -> Iterator[str]:
    """A loopback score server in its own process (so it does not share the client's GIL)."""
    ctx = multiprocessing.get_context("spawn")
    urls = ctx.Queue()
    stop = ctx.Event()
    process = ctx.Process(target=_serve, args=(urls, stop, overhead_seconds), daemon=True)
    process.start()
    try:
        yield urls.get(timeout=60)
    finally:
        stop.set()
        process.join(10)
        if process.is_alive():
            process.terminate()


def _instant_transport() -> httpx.MockTransport:
    def handle(request: httpx.Request) -> httpx.Response:
        query, texts = parse_score_request("vllm-score", json.loads(request.content))
        return httpx.Response(200, json=score_reply("vllm-score", query, texts, overlap_score))

    return httpx.MockTransport(handle)


def measure(n: int, overhead_ms: float, batch_size: int, parallelism: int) -> dict[str, Any]:
    """Run both modes against the loopback server and the instant transport."""
    passages = fragments(n)
    results: dict[str, Any] = {}
    with score_server_process(overhead_ms / 1000.0) as url:
        for name, size in (("batched", batch_size), ("one_per_fragment", 1)):
            reranker = ScoreApiReranker(url, protocol="vllm-score", batch_size=size,
                                        max_parallelism=parallelism, max_retries=0)
            seconds, scored, requests = _run(reranker, passages)
            results[name] = {
                "batch_size": size,
                "seconds": round(seconds, 4),
                "requests": requests,
                "scored": scored,
                "fragments_per_second": round(n / seconds, 1),
            }
    for name, size in (("batched", batch_size), ("one_per_fragment", 1)):
        reranker = ScoreApiReranker("http://scorer.invalid", protocol="vllm-score",
                                    batch_size=size, max_parallelism=parallelism,
                                    transport=_instant_transport())
        seconds, _, _ = _run(reranker, passages)
        results[name]["client_overhead_us_per_fragment"] = round(seconds / n * 1e6, 1)
    speedup = results["one_per_fragment"]["seconds"] / results["batched"]["seconds"]
    return {
        "benchmark": "rerank_throughput",
        "fragments": n,
        "server_overhead_ms_per_request": overhead_ms,
        "max_parallelism": parallelism,
        "baseline": "one_per_fragment",
        "batched": results["batched"],
        "one_per_fragment": results["one_per_fragment"],
        "speedup_batched_vs_one_per_fragment": round(speedup, 2),
        "target_speedup": 5.0,
        "target_met": speedup >= 5.0,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run, print, write JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--json", metavar="OUT", help="write the figures to this file")
    parser.add_argument("--fragments", type=int, default=5000)
    parser.add_argument("--overhead-ms", type=float, default=5.0)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--parallelism", type=int, default=10)
    args = parser.parse_args(argv)
    figures = measure(args.fragments, args.overhead_ms, args.batch_size, args.parallelism)
    print(f"reranking {figures['fragments']} fragments, {args.overhead_ms} ms server overhead "
          f"per request, parallelism {args.parallelism}")
    print(f"{'mode':<18}{'batch':>6}{'requests':>10}{'seconds':>10}{'frag/s':>10}"
          f"{'client us/frag':>16}")
    for name in ("one_per_fragment", "batched"):
        r = figures[name]
        print(f"{name:<18}{r['batch_size']:>6}{r['requests']:>10}{r['seconds']:>10.3f}"
              f"{r['fragments_per_second']:>10.0f}{r['client_overhead_us_per_fragment']:>16.1f}")
    print(f"speedup (batched / one per fragment): {figures['speedup_batched_vs_one_per_fragment']}x"
          f" (target >= 5x: {'met' if figures['target_met'] else 'NOT met'})")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(figures, fh, indent=2)
            fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
