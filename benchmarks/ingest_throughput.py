"""Ingestion throughput: the batched writer against one chapter per transaction, same run.

Run ``python -m benchmarks.ingest_throughput [--chapters N] [--baseline-rows M]
[--chapters-per-doc C] [--json OUT] [--uri URI]``.

Streams N chapters (one per document by default) with precomputed random 384-d unit
embeddings from a generator through ``ThalabusGraph.ingest(..., embed=False)``; the input is
never held in memory whole. The baseline writes M chapters with ``ingest_single_chapter``
(one ``Database.write`` call, i.e. one write transaction, per chapter) in the same run, on the
same server, interleaved with the batched run in slices (at 0%, 10%, ... of the input, between
two batch transactions; its time is subtracted from the batched time), so that both writers
see the same graph sizes (index insertion slows as the graph grows) and the same machine load.
Reported: fragments per second of both and their ratio (target >= 20x), and the process
memory (current RSS and peak ``ru_maxrss``) sampled when the generator has produced 10%, 50%
and 100% of the input, to show it stays flat.

The batched run writes more than the baseline (each document also gets its category links,
see ``documents``), so the ratio is conservative. Embedding throughput of the model is
measured by ``benchmarks.embed_throughput``, not here.

The corpus (``documents``) is deterministic and shared with ``benchmarks.filtered_search``,
which can reuse the graph this benchmark leaves behind (``--reuse``). Without ``--uri`` (and
without ``$NEO4J_URI``) a local Neo4j is started on a temporary data dir and stopped at the end.
Documents whose id starts with ``bench-`` or ``baseline-`` are deleted before the run.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import platform
import resource
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from benchmarks.report import write_json
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.graph.database import Database

DEFAULT_OUT = Path(".thalabus/benchmarks/ingest_throughput.json")
DIMENSIONS = 384
SEED = 20261130
BLOCK = 1000
"""Documents per generated block of vectors (one RNG stream per block)."""
DOC_PREFIX = "bench-"
BASELINE_PREFIX = "baseline-"
SELECTIVITY_CATEGORIES: dict[str, float] = {
    "SEL_0_1": 0.001, "SEL_1": 0.01, "SEL_10": 0.1, "SEL_50": 0.5, "SEL_100": 1.0,
}
"""Category name -> fraction of documents having ``NAME=yes`` (nested: 0.1% within 1% ...)."""
_PERMUTE = 1_000_003
"""A prime larger than any document count here: ``i * P mod N`` permutes 0..N-1."""
Matrix = npt.NDArray[np.float32]


def documentid_for(i: int) -> str:
    """Id of the i-th benchmark document."""
    return f"{DOC_PREFIX}{i}"


def rank(i: int, documents: int) -> int:
    """A pseudo-random permutation of 0..documents-1 deciding category membership."""
    return (i * _PERMUTE) % documents


def in_category(i: int, documents: int, fraction: float) -> bool:
    """Whether document i has ``NAME=yes`` for a category of that fraction (exact counts)."""
    return rank(i, documents) < fraction * documents


def category_members(documents: int, fraction: float) -> npt.NDArray[np.int64]:
    """Indices of the documents in a category of that fraction, ascending."""
    ranks = (np.arange(documents, dtype=np.int64) * _PERMUTE) % documents
    return np.flatnonzero(ranks < fraction * documents)


def vector_block(block: int, rows: int, seed: int = SEED) -> Matrix:
    """Unit float32 vectors of one block: ``rows`` rows, deterministic in (seed, block)."""
    rng = np.random.default_rng([seed, block])
    vectors = rng.standard_normal((rows, DIMENSIONS), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def all_vectors(documents: int, chapters_per_doc: int, seed: int = SEED) -> Matrix:
    """Every chapter vector of the corpus, row ``doc * chapters_per_doc + (chapter - 1)``."""
    parts = []
    for start in range(0, documents, BLOCK):
        n = min(BLOCK, documents - start)
        parts.append(vector_block(start // BLOCK, n * chapters_per_doc, seed))
    return np.concatenate(parts) if parts else np.zeros((0, DIMENSIONS), np.float32)


def documents(count: int, chapters_per_doc: int = 1, seed: int = SEED,
              on_document: Callable[[int], None] | None = None) -> Iterator[dict[str, Any]]:
    """The benchmark corpus, generated lazily one block of vectors at a time.

    Document i is ``bench-{i}`` with ``chapters_per_doc`` chapters (no paragraphs), their
    embeddings, and ``NAME=yes`` for each selectivity category it belongs to.
    ``on_document(i)`` is called before document i is yielded (memory sampling).
    """
    for start in range(0, count, BLOCK):
        n = min(BLOCK, count - start)
        vectors = vector_block(start // BLOCK, n * chapters_per_doc, seed)
        for j in range(n):
            i = start + j
            if on_document is not None:
                on_document(i)
            rows = vectors[j * chapters_per_doc:(j + 1) * chapters_per_doc]
            yield {
                "documentid": documentid_for(i),
                "categories": {name: ["yes"] for name, fraction in
                               SELECTIVITY_CATEGORIES.items()
                               if in_category(i, count, fraction)},
                "chapters": [f"benchmark chapter {c} of document {i}"
                             for c in range(1, chapters_per_doc + 1)],
                "paragraphs": [[] for _ in range(chapters_per_doc)],
                "embeddings": {"chapters": [row.tolist() for row in rows]},
            }


# --- graph helpers -------------------------------------------------------------------------
def delete_prefix(db: Database, prefix: str) -> int:
    """Delete documents whose id starts with ``prefix``, with their fragments; how many."""
    with db.driver.session(database=db.database) as session:
        count = session.run("MATCH (d:Document) WHERE d.documentid STARTS WITH $p "
                            "RETURN count(d) AS n", p=prefix).single()
        session.run("MATCH (f:Fragment) WHERE f.documentid STARTS WITH $p "
                    "CALL (f) { DETACH DELETE f } IN TRANSACTIONS OF 5000 ROWS",
                    p=prefix).consume()
        session.run("MATCH (d:Document) WHERE d.documentid STARTS WITH $p "
                    "CALL (d) { DETACH DELETE d } IN TRANSACTIONS OF 5000 ROWS",
                    p=prefix).consume()
    return int(count["n"]) if count else 0


def await_indexes(db: Database, timeout: int = 600) -> None:
    """Block until every index is online."""
    db.read("migrations_await_indexes", timeout=timeout)


@contextlib.contextmanager
def neo4j_uri(uri: str | None) -> Iterator[str]:
    """``uri``, else ``$NEO4J_URI``, else a local server on a temporary data dir (stopped)."""
    target = uri or os.environ.get("NEO4J_URI")
    if target:
        yield target
        return
    from thalabus_graph.graph.launcher import LocalNeo4j

    with tempfile.TemporaryDirectory(prefix="thalabus-bench-") as tmp:
        server = LocalNeo4j(data_dir=Path(tmp), heap="2g", page_cache="1g",
                            transaction_memory="1g")
        print(f"starting a local Neo4j on {tmp} ...", file=sys.stderr, flush=True)
        started = server.start()
        try:
            yield started
        finally:
            server.stop()


def bench_settings(**overrides: Any) -> Settings:
    """Settings for the benchmarks: 384-d, defaults otherwise."""
    return Settings(embedding_dimensions=DIMENSIONS, **overrides)


# --- memory ------------------------------------------------------------------------------
def rss_mib() -> float:
    """Current resident set size of this process, MiB (Linux /proc; else the peak)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            pages = int(fh.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError):
        return peak_rss_mib()


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far, MiB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024


class MemorySampler:
    """Records RSS when the generator reaches given fractions of the input."""

    def __init__(self, total: int, fractions: tuple[float, ...] = (0.1, 0.5, 1.0)) -> None:
        self.marks = {max(math.ceil(f * total) - 1, 0): f for f in fractions}
        self.samples: list[dict[str, float]] = []
        self.start = time.perf_counter()

    def __call__(self, i: int) -> None:
        fraction = self.marks.get(i)
        if fraction is not None:
            self.samples.append({"fraction": fraction, "documents": i + 1,
                                 "seconds": round(time.perf_counter() - self.start, 2),
                                 "rss_mib": round(rss_mib(), 1),
                                 "peak_rss_mib": round(peak_rss_mib(), 1)})


def materialised_mib(sample: dict[str, Any], count: int) -> float:
    """Rough size of the whole input as Python objects (what streaming avoids), MiB."""
    floats = sum(len(v) for v in sample["embeddings"]["chapters"])
    per_doc = floats * (24 + 8) + 1500  # a float object plus its list slot; dicts and strings
    return per_doc * count / 2**20


# --- the two writers -----------------------------------------------------------------------
class Baseline:
    """One chapter per write transaction (``ingest_single_chapter``), timed slice by slice."""

    def __init__(self, db: Database, rows: int, slices: int, seed: int = SEED) -> None:
        self.db = db
        self.rows = rows
        self.slices = max(1, min(slices, rows))
        self.seed = seed
        self.written = 0
        self.seconds = 0.0
        self.per_slice: list[dict[str, Any]] = []

    def run_slice(self, at_fraction: float) -> None:
        """Write the next slice of rows (rows / slices of them) and time it."""
        done = len(self.per_slice)
        if done >= self.slices:
            return
        n = self.rows * (done + 1) // self.slices - self.written
        vectors = vector_block(10**6 + done, n, self.seed)
        start = time.perf_counter()
        for j in range(n):
            documentid = f"{BASELINE_PREFIX}{self.written + j}"
            self.db.write("ingest_single_chapter", documentid=documentid,
                          fragmentid=f"{documentid}-c1",
                          text=f"baseline chapter of document {self.written + j}",
                          embedding=vectors[j].tolist())
        seconds = time.perf_counter() - start
        self.written += n
        self.seconds += seconds
        self.per_slice.append({"at_fraction": round(at_fraction, 3), "fragments": n,
                               "fragments_per_second": round(n / seconds, 1)})

    def result(self) -> dict[str, Any]:
        """Totals."""
        return {"fragments": self.written, "seconds": round(self.seconds, 3),
                "fragments_per_second": round(self.written / max(self.seconds, 1e-9), 1),
                "slices": self.per_slice}


def run_batched(graph: ThalabusGraph, chapters: int, chapters_per_doc: int,
                baseline: Baseline | None, seed: int = SEED) -> dict[str, Any]:
    """Stream the corpus through ``ThalabusGraph.ingest``, sampling memory on the way.

    With ``baseline``, its slices run interleaved, before the documents at 0%, 1/slices, ...
    of the input (between two batch transactions, since the writer pulls a whole batch from
    the generator before writing it), and their time is subtracted from the batched time:
    both writers then see the same graph sizes and the same machine load.
    """
    count = math.ceil(chapters / chapters_per_doc)
    sampler = MemorySampler(count)
    marks: dict[int, float] = {}
    if baseline is not None:
        marks = {count * k // baseline.slices: k / baseline.slices
                 for k in range(baseline.slices)}

    def on_document(i: int) -> None:
        sampler(i)
        if baseline is not None and i in marks:
            baseline.run_slice(marks[i])

    rss_before = rss_mib()
    report = graph.ingest(documents(count, chapters_per_doc, seed, on_document=on_document),
                          progress=False, embed=False, strict=True)
    after_ingest = time.perf_counter()
    await_indexes(graph.db)
    index_wait = time.perf_counter() - after_ingest
    result = report.to_dict()
    result.pop("errors", None)
    wall = report.seconds
    excluded = baseline.seconds if baseline is not None else 0.0
    result["wall_seconds_including_interleaved_baseline"] = round(wall, 3)
    result["seconds"] = round(wall - excluded, 3)
    result["fragments_per_second"] = round(report.fragments / max(wall - excluded, 1e-9), 1)
    result["documents_per_second"] = round(report.documents / max(wall - excluded, 1e-9), 1)
    sample = next(documents(1, chapters_per_doc, seed))
    samples = sampler.samples
    growth = samples[-1]["rss_mib"] - samples[0]["rss_mib"] if samples else 0.0
    result.update(rss_before_mib=round(rss_before, 1), memory=samples,
                  rss_growth_10_to_100_percent_mib=round(growth, 1),
                  input_if_materialised_mib_estimate=round(materialised_mib(sample, count)),
                  index_wait_seconds=round(index_wait, 3))
    return result


def run(uri: str, chapters: int, baseline_rows: int, chapters_per_doc: int,
        write_batch_size: int, slices: int) -> dict[str, Any]:
    """Both writers on one server; the batched corpus stays in the graph afterwards."""
    settings = bench_settings(write_batch_size=write_batch_size)
    with ThalabusGraph.connect(uri, settings=settings) as graph:
        graph.migrate()
        removed = delete_prefix(graph.db, DOC_PREFIX)
        delete_prefix(graph.db, BASELINE_PREFIX)
        baseline = Baseline(graph.db, baseline_rows, slices)
        print(f"batched: {chapters} chapters through ThalabusGraph.ingest, with the baseline "
              f"({baseline_rows} chapters, one transaction each) interleaved in "
              f"{baseline.slices} slices ...", file=sys.stderr, flush=True)
        batched = run_batched(graph, chapters, chapters_per_doc, baseline)
        delete_prefix(graph.db, BASELINE_PREFIX)
        server = graph.db.driver.get_server_info()
    ratio = batched["fragments_per_second"] / max(baseline.result()["fragments_per_second"],
                                                  1e-9)
    return {
        "benchmark": "ingest_throughput",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "neo4j": server.agent,
        "chapters": chapters,
        "chapters_per_document": chapters_per_doc,
        "dimensions": DIMENSIONS,
        "write_batch_size": write_batch_size,
        "previous_bench_documents_deleted": removed,
        "baseline_single_transaction": baseline.result(),
        "batched": batched,
        "speedup_vs_baseline": round(ratio, 1),
        "target_speedup": 20.0,
        "meets_target": ratio >= 20.0,
    }


def print_report(result: dict[str, Any]) -> None:
    """Human-readable summary."""
    b, s = result["batched"], result["baseline_single_transaction"]
    print(f"ingest throughput ({result['neo4j']}, {result['cpus']} cpus, "
          f"{result['dimensions']}-d, write_batch_size {result['write_batch_size']})")
    print(f"  baseline, 1 chapter/transaction: {s['fragments']:>7} fragments in "
          f"{s['seconds']:8.1f} s = {s['fragments_per_second']:9.1f} fragments/s")
    print(f"  batched ThalabusGraph.ingest:    {b['fragments']:>7} fragments in "
          f"{b['seconds']:8.1f} s = {b['fragments_per_second']:9.1f} fragments/s "
          f"(+{b['index_wait_seconds']:.1f} s until indexes online)")
    print(f"  speed-up: {result['speedup_vs_baseline']}x (target >= 20x: "
          f"{'met' if result['meets_target'] else 'MISSED'})")
    print(f"  memory: {b['rss_before_mib']} MiB before; "
          + ", ".join(f"{m['fraction']:.0%}: rss {m['rss_mib']} MiB (peak {m['peak_rss_mib']})"
                      for m in b["memory"])
          + f"; growth 10%->100%: {b['rss_growth_10_to_100_percent_mib']} MiB; the input "
          f"materialised would be ~{b['input_if_materialised_mib_estimate']} MiB")


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chapters", type=int, default=100_000)
    parser.add_argument("--baseline-rows", type=int, default=2_000)
    parser.add_argument("--baseline-slices", type=int, default=10,
                        help="run the baseline in this many slices spread over the input")
    parser.add_argument("--chapters-per-doc", type=int, default=1)
    parser.add_argument("--write-batch-size", type=int, default=Settings().write_batch_size)
    parser.add_argument("--uri", default=None, help="Neo4j URI (default $NEO4J_URI, else a "
                        "local server on a temporary data dir)")
    parser.add_argument("--json", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    with neo4j_uri(args.uri) as uri:
        result = run(uri, args.chapters, args.baseline_rows, args.chapters_per_doc,
                     args.write_batch_size, args.baseline_slices)
    print_report(result)
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
