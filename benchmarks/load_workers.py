"""The processes of the load benchmark (``benchmarks.load``): queriers, ingesters and
rerankers, each a spawned process with its own driver, started together at a barrier and
stopped at a shared deadline. Each sends one result dict back on a queue: its latencies by
operation, its errors by kind, and what it wrote (so the end checks know what must be there).
"""

from __future__ import annotations

import random
import re
import threading
import time
import traceback
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from tests.support.loopback import Handler, Request, Response, score_handler
from thalabus_graph import Settings, ThalabusGraph

LOAD_ONTOLOGY = "load-bench"
PARAGRAPHS_PER_CHAPTER = 2
_CODE = re.compile(r"Neo\.\w+\.\w+\.\w+")


@dataclass(frozen=True)
class WorkerSpec:
    """What one worker process needs (pickled to the spawned process)."""

    role: str
    """``query`` | ``ingest`` | ``rerank``."""
    index: int
    uri: str
    duration: float
    seed: int
    run_id: str
    rounds: dict[str, list[str]] = field(default_factory=dict)
    """Query texts per shape (``query``; ``rerank`` uses the semantic shapes')."""
    lookup: dict[str, npt.NDArray[np.float32]] = field(default_factory=dict)
    ontology: str = ""
    documents: int = 0
    """``ingest``: documents this worker owns and re-ingests."""
    score_url: str = ""
    rate: float = 0.0
    """Operations per second this worker offers (Poisson arrivals); 0 = back to back."""


def error_kind(exc: BaseException) -> str:
    """A short, countable name of a failure: the class, and the Neo4j code when there is one."""
    code = _CODE.search(str(exc))
    return type(exc).__name__ + (f" {code.group(0)}" if code else "")


SLOW_MS = 500.0
"""An operation at least this slow is also listed with the wall-clock instant it was due, so
the report shows whether the slow ones cluster (a moment of the load) or spread."""


class Recorder:
    """Latencies per operation and errors per kind, with one example message per kind."""

    def __init__(self) -> None:
        self.millis: dict[str, list[float]] = {}
        self.slow: list[tuple[float, str, float]] = []
        """(wall-clock instant due, operation, ms) of each operation of ``SLOW_MS`` or more."""
        self.errors: dict[str, int] = {}
        self.examples: dict[str, str] = {}

    def timed(self, op: str, work: Callable[[], Any], since: float | None = None) -> Any:
        """Run ``work``; its milliseconds under ``op`` (from ``since``, a ``perf_counter``
        instant, when given: a paced operation counts the time it waited behind the one
        before), or its error counted (None returned)."""
        start = time.perf_counter() if since is None else since
        try:
            out = work()
        except Exception as exc:  # every failure is counted and reported, none hidden
            kind = f"{op}: {error_kind(exc)}"
            self.errors[kind] = self.errors.get(kind, 0) + 1
            self.examples.setdefault(kind, "".join(
                traceback.format_exception_only(type(exc), exc)).strip()[:500])
            return None
        ms = (time.perf_counter() - start) * 1000
        self.millis.setdefault(op, []).append(ms)
        if ms >= SLOW_MS:
            self.slow.append((time.time() - ms / 1000, op, round(ms, 1)))
        return out

    def result(self, **extra: Any) -> dict[str, Any]:
        """What the worker sends back."""
        return {"millis": self.millis, "errors": self.errors, "examples": self.examples,
                "slow": self.slow, **extra}


class LookupEmbedder:
    """Query vectors looked up by text (the scale corpus's precomputed real query vectors)."""

    def __init__(self, vectors: dict[str, npt.NDArray[np.float32]]) -> None:
        self.vectors = vectors

    @property
    def dimensions(self) -> int:
        return 384

    @property
    def model_id(self) -> str:
        return "multilingual-e5-small-precomputed"

    def embed_queries(self, texts: Any) -> Any:
        return np.stack([self.vectors[t] for t in texts]) if texts else np.zeros((0, 384))

    def embed_passages(self, texts: Any) -> Any:
        raise NotImplementedError("the benchmark supplies every passage vector")


def query_settings(**overrides: Any) -> Settings:
    """The scale benchmark's settings: exact answers without hybrid text fusion."""
    return Settings(embedding_dimensions=384, hybrid_all_queries=False,
                    short_query_max_words=0, **overrides)


def connect(spec: WorkerSpec, **settings: Any) -> ThalabusGraph:
    from thalabus_graph.rerank import reranker_from_settings

    s = query_settings(**settings)
    return ThalabusGraph.connect(spec.uri, settings=s, embedder=LookupEmbedder(spec.lookup),
                                 reranker=reranker_from_settings(s))


# --- documents the ingesters own --------------------------------------------------------------
def document_id(run_id: str, worker: int, k: int) -> str:
    return f"load-{run_id}-{worker}-{k}"


def chapters_of(version: int) -> int:
    """How many chapters version ``version`` of a document has (2, 3 or 4: re-ingests grow and
    shrink documents, so stale fragments must go)."""
    return 2 + version % 3


def expected_fragments(documentid: str, version: int) -> set[str]:
    """The fragment ids a document holds at ``version``."""
    n = chapters_of(version)
    return ({f"{documentid}-c{c}" for c in range(1, n + 1)}
            | {f"{documentid}-p{p}" for p in range(1, n * PARAGRAPHS_PER_CHAPTER + 1)})


def _unit(rng: np.random.Generator) -> list[float]:
    v = rng.standard_normal(384) + 0.05
    return [float(x) for x in v / np.linalg.norm(v)]


def make_document(documentid: str, version: int) -> dict[str, Any]:
    """Version ``version`` of a document, with supplied vectors (no model is loaded); every
    fragment text names the version, so the end check sees which one is stored."""
    rng = np.random.default_rng([zlib.crc32(documentid.encode()), version])
    n = chapters_of(version)
    chapters = [f"load document {documentid} version {version} chapter {c} about "
                f"{'asylum' if c % 2 else 'river'} matters" for c in range(1, n + 1)]
    paragraphs = [[f"{documentid} version {version} chapter {c} paragraph {p}"
                   for p in range(1, PARAGRAPHS_PER_CHAPTER + 1)] for c in range(1, n + 1)]
    ids = sorted(expected_fragments(documentid, version))
    return {"documentid": documentid, "ontology": LOAD_ONTOLOGY, "title": documentid,
            "categories": {"LOADV": [str(version % 5)]}, "chapters": chapters,
            "paragraphs": paragraphs, "embeddings": {i: _unit(rng) for i in ids}}


# --- the workers ----------------------------------------------------------------------------
def run_worker(spec: WorkerSpec, barrier: Any, out: Any) -> None:
    """Entry point of every spawned worker: set up, wait at the barrier, work until the
    deadline, send the result (or the setup failure)."""
    try:
        work = {"query": query_worker, "ingest": ingest_worker, "rerank": rerank_worker}
        result = work[spec.role](spec, barrier)
    except Exception as exc:  # a setup failure is reported, and the other workers released
        barrier.abort()
        result = {"setup_error": "".join(traceback.format_exception(exc))[-2000:]}
    out.put({"role": spec.role, "index": spec.index, **result})


def _start(barrier: Any, duration: float) -> float:
    barrier.wait()
    return time.monotonic() + duration


class Pacer:
    """Open-loop arrivals: the instants (``perf_counter``) at which a paced worker's
    operations are due, exponential gaps at ``rate`` per second. A due operation starts when
    the one before ends, and its latency counts from when it was due, so a server that falls
    behind shows it (no coordinated omission). ``rate`` 0: back to back, counted from the
    start of each operation."""

    def __init__(self, rate: float, rng: random.Random) -> None:
        self.rate, self.rng = rate, rng
        self.due = time.perf_counter()

    def next(self) -> float | None:
        """Wait until the next operation is due; its due instant (None when unpaced)."""
        if self.rate <= 0:
            return None
        self.due += self.rng.expovariate(self.rate)
        wait = self.due - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
        return self.due


def query_worker(spec: WorkerSpec, barrier: Any) -> dict[str, Any]:
    """Queries of every shape, round-robin from a per-worker offset, random round each."""
    rng = random.Random(spec.seed)
    shapes = sorted(spec.rounds)
    rec = Recorder()
    with connect(spec) as graph:
        graph.query(spec.rounds[shapes[spec.index % len(shapes)]][0], ontology_id=spec.ontology)
        deadline = _start(barrier, spec.duration)  # after one untimed query: a warm process
        pacer = Pacer(spec.rate, rng)
        i = spec.index
        while time.monotonic() < deadline:
            shape = shapes[i % len(shapes)]
            text = rng.choice(spec.rounds[shape])
            due = pacer.next()
            rec.timed(shape, lambda t=text: graph.query(t, ontology_id=spec.ontology), due)
            i += 1
    return rec.result()


def ingest_worker(spec: WorkerSpec, barrier: Any) -> dict[str, Any]:
    """Ingest this worker's documents, then re-ingest random groups of them with a new
    version each time; report the version each document must hold."""
    rng = random.Random(spec.seed)
    rec = Recorder()
    ids = [document_id(spec.run_id, spec.index, k) for k in range(spec.documents)]
    version = dict.fromkeys(ids, 0)
    uncertain: dict[str, list[int]] = {}
    with connect(spec) as graph:
        graph.ingest([make_document(d, 0) for d in ids], progress=False, embed=False,
                     strict=True)
        deadline = _start(barrier, spec.duration)
        pacer = Pacer(spec.rate, rng)
        while time.monotonic() < deadline:
            group = rng.sample(ids, min(4, len(ids)))
            docs = [make_document(d, version[d] + 1) for d in group]
            due = pacer.next()
            done = rec.timed("ingest", lambda docs=docs: graph.ingest(
                docs, progress=False, embed=False, strict=True), due)
            for d in group:
                if done is not None:
                    version[d] += 1
                    uncertain.pop(d, None)
                else:  # failed: the batch either committed or not, never half
                    uncertain[d] = [version[d], version[d] + 1]
                    version[d] += 1
    return rec.result(versions=version, uncertain=uncertain)


def rerank_worker(spec: WorkerSpec, barrier: Any) -> dict[str, Any]:
    """Create a dataset from a semantic query, rerank it against the flaky score server;
    record both datasets as the results described them."""
    rng = random.Random(spec.seed)
    rec = Recorder()
    texts = [t for shape in sorted(spec.rounds) for t in spec.rounds[shape]]
    session = f"load{spec.run_id}r{spec.index}"
    made: list[dict[str, Any]] = []
    with connect(spec, reranker_url=spec.score_url, reranker_protocol="vllm-score",
                 reranker_max_retries=0, reranker_batch_size=16) as graph:
        deadline = _start(barrier, spec.duration)
        pacer = Pacer(spec.rate, rng)
        while time.monotonic() < deadline:
            text = rng.choice(texts)
            due = pacer.next()
            result = rec.timed("create_dataset", lambda t=text: graph.query(
                t, ontology_id=spec.ontology, create_dataset=True, session=session,
                return_documents=False), due)
            if result is None:
                continue
            entry: dict[str, Any] = {
                "dataset": result.dataset_ids[0],
                "members": _first_weights((f.fragmentid, f.score) for f in result.fragments)}
            made.append(entry)
            reranked = rec.timed("rerank", lambda d=entry["dataset"]: graph.rerank_dataset(d))
            if reranked is None:
                entry["rerank_failed"] = True
                continue
            entry["child"] = {
                "dataset": reranked.dataset_id, "reranked": reranked.reranked,
                "reason": reranked.reason, "failures": reranked.failures,
                "unscored": reranked.unscored, "weight_scale": reranked.weight_scale,
                "members": _first_weights((f.fragmentid, f.score)
                                          for f in reranked.fragments)}
    return rec.result(datasets=made)


def _first_weights(pairs: Any) -> dict[str, float]:
    """fragment id -> weight, the first occurrence winning (as a dataset write keeps it)."""
    out: dict[str, float] = {}
    for fragmentid, score in pairs:
        out.setdefault(fragmentid, float(score))
    return out


# --- the flaky score server -----------------------------------------------------------------
class FlakyScores:
    """A vLLM /score handler that waits ``min_delay``..``max_delay`` seconds per request and
    fails ``fail_rate`` of them with HTTP 500; it counts what it did."""

    def __init__(self, fail_rate: float, min_delay: float, max_delay: float,
                 seed: int) -> None:
        self.inner: Handler = score_handler("vllm-score", seed=seed)
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.fail_rate, self.min_delay, self.max_delay = fail_rate, min_delay, max_delay
        self.requests = 0
        self.failed = 0

    def __call__(self, request: Request) -> Response:
        with self.lock:
            self.requests += 1
            fail = self.rng.random() < self.fail_rate
            delay = self.rng.uniform(self.min_delay, self.max_delay)
            self.failed += fail
        if fail:
            return Response(status=500, json_body={"error": "injected failure"}, delay=delay)
        reply = self.inner(request)
        reply.delay = delay
        return reply
