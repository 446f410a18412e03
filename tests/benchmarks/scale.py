"""Scale: recall@10 and p50/p95 of every query shape at hundreds of thousands of chapters.

Run ``python -m tests.benchmarks.scale [--chapters N] [--queries Q] [--json OUT] [--keep]
[--uri URI] [--data-dirs DIRS]`` (default 200,000 chapters, 20 timed queries per shape).

Corpus (``tests.benchmarks.scale_corpus``): N one-chapter documents in one ontology, each a
copy of a real SciFact / XQuAD-R document (its text; its multilingual-e5-small vector
perturbed with noise of the real vectors' covariance and mixed with a second document's), with
skewed categories: ``SKEW`` = ``v50`` (50%), ``v10`` (10%), ``v1`` (1%), ``v0_1`` (0.1%) and a
long tail of 0.01% values; ``REGION`` = ``r20`` (20%), ``r5`` (5%), ``rest``. Streamed through
``ThalabusGraph.ingest(..., embed=False)``; the ground truth is computed with numpy while the
blocks stream by (exact cosine over the matching chapters, never from the engine).

Each shape runs ``ThalabusGraph.query(text, ontology_id=...)`` with the real query vectors of
the sets (a lookup embedder); hybrid fusion is off by default (``--hybrid`` keeps it) so that
the exact-cosine top 10 is the right answer. Shapes are interleaved per round, and the filtered
ones run right after through neo4j-graphrag's ``VectorRetriever`` with ``filters`` on the same
server (the categories copied onto the chapters as properties, with range indexes): the anchor
a Neo4j user would reach for. Peak RSS is the process's high-water mark, reset before each
engine query (``/proc/self/clear_refs``), and its growth over the RSS the query started with.

The benchmark only ever modifies a database it created: without ``--uri`` it starts its own
Neo4j on a temporary data dir (``--keep`` leaves it running for a rerun with ``--uri``); with
``--uri`` it refuses a non-empty database that lacks its marker node.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import math
import os
import platform
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from tests.benchmarks.quality import semantic_phrase
from tests.benchmarks.report import write_json
from tests.benchmarks.scale_corpus import (
    BLOCK,
    DIMENSIONS,
    ONTOLOGY,
    RECALL_AT,
    Block,
    RealSets,
    Synthesizer,
    TopK,
    chapter_index,
    load_real_sets,
    mean_top10_cosine,
    phrase_pattern,
)
from thalabus_graph import Settings, ThalabusGraph, ThalabusSyntaxError
from thalabus_graph.embeddings import Vectors
from thalabus_graph.graph.database import Database

DEFAULT_OUT = Path(".thalabus/benchmarks/scale.json")
DEFAULT_DATA = "../shared/data/scifact,../shared/data/xquad-r"
CYPHER_DIR = Path(__file__).with_name("cypher")
MARKER_VERSION = 1
WARMUP_ROUNDS = 2
Mask = Callable[[Block], npt.NDArray[np.bool_]]


def cypher(name: str) -> str:
    """The benchmark's own named statement ``cypher/<name>.cypher`` (comments dropped)."""
    raw = (CYPHER_DIR / f"{name}.cypher").read_text(encoding="utf-8")
    return "\n".join(x for x in raw.splitlines() if not x.lstrip().startswith("//")).strip()


def run_statement(db: Database, name: str, **params: Any) -> list[dict[str, Any]]:
    """Run a benchmark statement in an auto-commit transaction (``IN TRANSACTIONS`` needs one)."""
    with db.driver.session(database=db.database) as session:
        return [r.data() for r in session.run(cypher(name), **params)]


# --- shapes --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Shape:
    """One query shape: its template, which chapters match, and graphrag's filter if any.

    ``kind``: ``semantic`` (top 10 by cosine among ``mask``), ``or`` (top 10 by the larger
    cosine of two phrases), ``text`` (chapters containing a phrase), ``filter`` (all of
    ``mask``). ``anchor``: whether graphrag runs it (``filters`` None = unfiltered).
    """

    name: str
    kind: str
    template: str
    mask: Mask | None = None
    anchor: bool = False
    filters: dict[str, Any] | None = None


def _skew(code: int) -> Mask:
    return lambda b: b.skew == code


def shapes() -> list[Shape]:
    """The query shapes of issue 18."""
    return [
        Shape("phrase", "semantic", "{p}", None, anchor=True),
        Shape("and_50%", "semantic", "{p} AND SKEW=v50", _skew(0), True,
              {"cat_SKEW": {"$eq": "v50"}}),
        Shape("and_10%", "semantic", "{p} AND SKEW=v10", _skew(1), True,
              {"cat_SKEW": {"$eq": "v10"}}),
        Shape("and_1%", "semantic", "{p} AND SKEW=v1", _skew(2), True,
              {"cat_SKEW": {"$eq": "v1"}}),
        Shape("and_0.1%", "semantic", "{p} AND SKEW=v0_1", _skew(3), True,
              {"cat_SKEW": {"$eq": "v0_1"}}),
        Shape("and_0.01%", "semantic", "{p} AND SKEW=t00000", _skew(4), True,
              {"cat_SKEW": {"$eq": "t00000"}}),
        Shape("and_not_50%", "semantic", "{p} AND NOT SKEW=v50", lambda b: b.skew != 0, True,
              {"cat_SKEW": {"$ne": "v50"}}),
        Shape("nested", "semantic", "{p} AND (SKEW=v10 OR (REGION=r5 AND NOT SKEW=v50))",
              lambda b: (b.skew == 1) | ((b.region == 1) & (b.skew != 0)), True,
              {"$or": [{"cat_SKEW": {"$eq": "v10"}},
                       {"$and": [{"cat_REGION": {"$eq": "r5"}},
                                 {"cat_SKEW": {"$ne": "v50"}}]}]}),
        Shape("or_phrases", "or", "{p} OR {p2}"),
        Shape("fulltext", "text", "{t}"),
        Shape("filter_1%", "filter", "SKEW=v1", _skew(2)),
    ]


@dataclass
class Round:
    """One query of a shape: the Thalabus text, its phrases and full-text phrase."""

    text: str
    phrases: tuple[str, ...] = ()
    fulltext: str | None = None


class LookupEmbedder:
    """An ``Embedder`` answering query texts with the real sets' precomputed vectors."""

    def __init__(self, vectors: dict[str, npt.NDArray[np.float32]]) -> None:
        self.vectors = vectors

    @property
    def dimensions(self) -> int:
        """Vector length."""
        return DIMENSIONS

    @property
    def model_id(self) -> str:
        """The model the stored vectors come from."""
        return "multilingual-e5-small-precomputed"

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """The stored vector of each text (a clear error for a text the sets do not have)."""
        missing = [t for t in texts if t not in self.vectors]
        if missing:
            raise KeyError(f"no precomputed query vector for {missing[0]!r}")
        if not texts:
            return np.zeros((0, DIMENSIONS), np.float32)
        return np.stack([self.vectors[t] for t in texts])

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        """Not used: the corpus brings its vectors."""
        raise NotImplementedError("the scale corpus supplies its embeddings")


def plan_rounds(shape_list: list[Shape], real: RealSets, synth: Synthesizer, rounds: int,
                seed: int) -> tuple[dict[str, list[Round]], dict[str, npt.NDArray[np.float32]]]:
    """Per shape, ``rounds`` queries (distinct real queries; full-text phrases from bases)."""
    rng = np.random.default_rng([seed, 1])
    lookup: dict[str, npt.NDArray[np.float32]] = {}
    usable: list[str] = []
    for text, vec in zip(real.query_texts, real.query_vectors, strict=True):
        try:
            semantic_phrase(text)
        except (ValueError, ThalabusSyntaxError):
            continue
        if text not in lookup:
            lookup[text] = vec
            usable.append(text)
    order = [usable[i] for i in rng.permutation(len(usable))]
    pos = 0

    def take() -> str:
        nonlocal pos
        pos += 1
        return str(order[(pos - 1) % len(order)])

    plans: dict[str, list[Round]] = {}
    for shape in shape_list:
        out: list[Round] = []
        for _ in range(rounds):
            if shape.kind == "semantic":
                p = take()
                out.append(Round(shape.template.format(p=semantic_phrase(p)), (p,)))
            elif shape.kind == "or":
                p, p2 = take(), take()
                out.append(Round(shape.template.format(p=semantic_phrase(p),
                                                       p2=semantic_phrase(p2)), (p, p2)))
            elif shape.kind == "text":
                t = text_phrase(real, synth, rng)
                out.append(Round(shape.template.format(t=f"'{t}'"), fulltext=t))
            else:
                out.append(Round(shape.template))
        plans[shape.name] = out
    return plans, lookup


def text_phrase(real: RealSets, synth: Synthesizer, rng: np.random.Generator) -> str:
    """Two consecutive lower-case words (4+ letters) of a base document used by the corpus."""
    while True:
        i = int(rng.integers(0, synth.n))
        words = real.texts[int(synth.bases(np.array([i]))[0])].split(" ")
        pairs = [(a, b) for a, b in itertools.pairwise(words)
                 if len(a) >= 4 and len(b) >= 4 and a.isalpha() and b.isalpha()
                 and a.islower() and b.islower()]
        if pairs:
            a, b = pairs[int(rng.integers(0, len(pairs)))]
            return f"{a} {b}"


# --- ground truth while streaming ----------------------------------------------------------
@dataclass
class ShapeTruth:
    """What the benchmark knows about one shape's queries once the corpus has streamed."""

    shape: Shape
    rounds: list[Round]
    matching: int = 0
    top: TopK | None = None
    vectors: list[npt.NDArray[np.float32]] = field(default_factory=list)
    base_match: list[npt.NDArray[np.bool_]] = field(default_factory=list)
    text_matching: list[int] = field(default_factory=list)
    members: list[npt.NDArray[np.int64]] = field(default_factory=list)


class Truth:
    """Exact answers of every planned query, accumulated block by block (numpy only)."""

    def __init__(self, shape_list: list[Shape], plans: dict[str, list[Round]],
                 lookup: dict[str, npt.NDArray[np.float32]], real: RealSets) -> None:
        self.shapes: dict[str, ShapeTruth] = {}
        for shape in shape_list:
            st = ShapeTruth(shape, plans[shape.name])
            if shape.kind in ("semantic", "or"):
                st.top = TopK(len(st.rounds))
                width = 1 if shape.kind == "semantic" else 2
                st.vectors = [np.stack([lookup[r.phrases[w]] for r in st.rounds]).astype(
                    np.float32) for w in range(width)]
            if shape.kind == "text":
                texts = [t.lower() for t in real.texts]
                for r in st.rounds:
                    pattern = phrase_pattern(r.fulltext or "")
                    st.base_match.append(np.array([bool(pattern.search(t)) for t in texts]))
                st.text_matching = [0] * len(st.rounds)
            self.shapes[shape.name] = st
        self.sample: npt.NDArray[np.float32] | None = None
        self.sample_top: TopK | None = None

    def update(self, block: Block) -> None:
        """Fold one block into every shape's answer and the synthetic top-10 sample."""
        vt = block.vectors.T
        for st in self.shapes.values():
            mask = st.shape.mask(block) if st.shape.mask else np.ones(len(block.idx), bool)
            st.matching += int(mask.sum())
            if st.top is not None:
                scores = np.max([(v @ vt) for v in st.vectors], axis=0).astype(np.float64)
                scores[:, ~mask] = -np.inf
                st.top.merge(scores, block.idx)
            for j, bm in enumerate(st.base_match):
                st.text_matching[j] += int(bm[block.base].sum())
            if st.shape.kind == "filter":
                st.members.append(block.idx[mask])
        if self.sample is None:
            self.sample = block.vectors.copy()
            self.sample_top = TopK(len(self.sample))
        assert self.sample_top is not None
        s = (self.sample @ vt).astype(np.float64)
        own = block.idx < len(self.sample)
        s[block.idx[own], np.flatnonzero(own)] = -np.inf
        self.sample_top.merge(s, block.idx)


def stream(synth: Synthesizer, truth: Truth, say: Callable[[str], None]) -> Iterator[
        dict[str, Any]]:
    """The corpus as ingestion input, one block at a time, folding each block into ``truth``."""
    start = time.perf_counter()
    for block in synth.blocks():
        truth.update(block)
        for j in range(len(block.idx)):
            yield synth.document(block, j)
        done = int(block.idx[-1]) + 1
        if done % (BLOCK * 20) == 0 or done == synth.n:
            rate = done / max(time.perf_counter() - start, 1e-9)
            say(f"  {done} / {synth.n} chapters generated ({rate:.0f}/s)")


# --- the database: only ever our own --------------------------------------------------------
def corpus_marker(args: argparse.Namespace, real: RealSets) -> dict[str, Any]:
    """What the marker records about the corpus (a rerun reuses a graph with equal values)."""
    return {"version": MARKER_VERSION, "chapters": args.chapters, "seed": args.seed,
            "sigma": args.sigma, "mix": args.mix, "sources": ",".join(real.sources)}


def claim(db: Database, wanted: dict[str, Any], uri: str) -> bool:
    """Make sure the database is ours; True when it already holds the wanted corpus whole.

    An empty database is claimed (marker written); one holding our marker is reused when the
    corpus matches, else emptied; anything else is refused without a write.
    """
    nodes = int(run_statement(db, "scale_count_nodes")[0]["nodes"])
    markers = run_statement(db, "scale_marker_read")
    if nodes and not markers:
        raise SystemExit(f"refusing to use {uri}: the database holds {nodes} nodes and "
                         "no scale-benchmark marker (it is not the benchmark's own database)")
    if markers:
        marker = markers[0]["marker"]
        if marker.get("complete") and all(marker.get(k) == v for k, v in wanted.items()):
            return True
        run_statement(db, "scale_wipe")
    run_statement(db, "scale_marker_write", props={**wanted, "complete": False})
    return False


def load(graph: ThalabusGraph, synth: Synthesizer, truth: Truth, wanted: dict[str, Any],
         say: Callable[[str], None]) -> dict[str, Any]:
    """Ingest the corpus, copy the categories for graphrag, then mark the database complete."""
    start = time.perf_counter()
    report = graph.ingest(stream(synth, truth, say), progress=False, embed=False, strict=True)
    run_statement(graph.db, "scale_await_indexes", timeout=3600)
    ingest_s = time.perf_counter() - start
    say(f"ingested {report.fragments} fragments in {ingest_s:.0f} s; copying categories")
    start = time.perf_counter()
    run_statement(graph.db, "scale_copy_categories")
    run_statement(graph.db, "scale_index_skew")
    run_statement(graph.db, "scale_index_region")
    run_statement(graph.db, "scale_await_indexes", timeout=3600)
    copy_s = time.perf_counter() - start
    run_statement(graph.db, "scale_marker_write", props={**wanted, "complete": True})
    return {"reused": False, "ingest_seconds": round(ingest_s, 1),
            "fragments": report.fragments,
            "fragments_per_second": round(report.fragments / ingest_s, 1),
            "graphrag_property_copy_seconds": round(copy_s, 1)}


@contextlib.contextmanager
def server(args: argparse.Namespace, say: Callable[[str], None]) -> Iterator[str]:
    """``--uri``, else a Neo4j of our own on a temporary data dir (stopped unless ``--keep``)."""
    if args.uri:
        yield args.uri
        return
    from thalabus_graph.graph.launcher import LocalNeo4j

    tmp = tempfile.mkdtemp(prefix="thalabus-scale-")
    heap = args.heap or ("2g" if args.chapters <= 300_000 else "4g")
    page_cache = args.page_cache or f"{max(512, math.ceil(args.chapters * 6 / 1024))}m"
    neo = LocalNeo4j(data_dir=Path(tmp), heap=heap, page_cache=page_cache,
                     transaction_memory="2g", version=getattr(args, "neo4j_version", None))
    say(f"starting a local Neo4j on {tmp} (heap {heap}, page cache {page_cache}) ...")
    uri = neo.start()
    try:
        yield uri
    finally:
        if args.keep:
            say(f"kept: {uri} on {tmp}; rerun with --uri {uri}; stop with "
                f"`thalabus-graph neo4j stop --data {tmp}`")
        else:
            neo.stop()
            shutil.rmtree(tmp, ignore_errors=True)


# --- measuring -----------------------------------------------------------------------------
def reset_peak_rss() -> bool:
    """Reset this process's RSS high-water mark (Linux); False when not possible."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def peak_rss_mib() -> float:
    """This process's RSS high-water mark, MiB (``VmHWM``; ``ru_maxrss`` elsewhere)."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def stats(recalls: list[float], millis: list[float]) -> dict[str, Any]:
    """Mean / min recall and p50 / p95 milliseconds."""
    return {"recall_mean": round(statistics.fmean(recalls), 4),
            "recall_min": round(min(recalls), 4),
            "p50_ms": round(statistics.median(millis), 1),
            "p95_ms": round(percentile(millis, 0.95), 1)}


def engine_recall(st: ShapeTruth, synth: Synthesizer, j: int, found: list[int]) -> float:
    """Recall of one engine answer against the exact answer of round ``j``."""
    kind = st.shape.kind
    if kind == "filter":
        expected = set(np.concatenate(st.members).tolist()) if st.members else set()
        return len(set(found) & expected) / max(1, len(expected))
    top = found[:RECALL_AT]
    if kind == "text":
        if not top:
            return 0.0 if st.text_matching[j] else 1.0
        hits = st.base_match[j][synth.bases(np.array(top, np.int64))].sum()
        return float(hits) / min(RECALL_AT, max(1, st.text_matching[j]))
    assert st.top is not None
    truth = st.top.truth(j)
    return len(set(top) & truth) / len(truth) if truth else float(not top)


class Runner:
    """Runs every shape's rounds, interleaved, through the engine and graphrag."""

    def __init__(self, graph: ThalabusGraph, truth: Truth, synth: Synthesizer,
                 lookup: dict[str, npt.NDArray[np.float32]]) -> None:
        from neo4j_graphrag.retrievers import VectorRetriever
        from neo4j_graphrag.types import RetrieverResultItem

        self.graph = graph
        self.truth = truth
        self.synth = synth
        self.lookup = lookup

        def fmt(record: Any) -> RetrieverResultItem:
            return RetrieverResultItem(content=record["node"]["fragmentid"],
                                       metadata={"score": record["score"]})

        self.retriever = VectorRetriever(graph.db.driver, "typical_rag",
                                         return_properties=["fragmentid"],
                                         result_formatter=fmt,
                                         neo4j_database=graph.db.database)

    def engine(self, st: ShapeTruth, j: int) -> tuple[list[int], float, float, float]:
        """Chapters found (best first), milliseconds, peak RSS MiB of one engine query and
        its growth over the RSS the query started with."""
        reset_peak_rss()
        before = peak_rss_mib()
        start = time.perf_counter()
        result = self.graph.query(st.rounds[j].text, ontology_id=ONTOLOGY)
        ms = (time.perf_counter() - start) * 1000
        found = [chapter_index(d.documentid) for d in result.documents or []]
        peak = peak_rss_mib()
        return found, ms, peak, peak - before

    def graphrag(self, st: ShapeTruth, j: int) -> tuple[list[int], float]:
        """Chapters found and milliseconds of graphrag's ``VectorRetriever.search``."""
        vector = [float(x) for x in self.lookup[st.rounds[j].phrases[0]]]
        start = time.perf_counter()
        result = self.retriever.search(query_vector=vector, top_k=RECALL_AT,
                                       filters=st.shape.filters)
        ms = (time.perf_counter() - start) * 1000
        return [chapter_index(str(item.content)) for item in result.items], ms

    def run(self, warmup: int, seed: int, say: Callable[[str], None]) -> list[dict[str, Any]]:
        """Every round of every shape, shapes shuffled per round; the first rounds untimed."""
        shape_truths = list(self.truth.shapes.values())
        rounds = len(shape_truths[0].rounds)
        rec: dict[str, dict[str, list[float]]] = {
            st.shape.name: {k: [] for k in ("e_recall", "e_ms", "e_rss", "e_grow", "g_recall",
                                            "g_ms")}
            for st in shape_truths}
        rng = np.random.default_rng([seed, 2])
        for j in range(rounds):
            for k in rng.permutation(len(shape_truths)):
                st = shape_truths[int(k)]
                found, ms, rss, grow = self.engine(st, j)
                g = self.graphrag(st, j) if st.shape.anchor else None
                if j < warmup:
                    continue
                r = rec[st.shape.name]
                r["e_recall"].append(engine_recall(st, self.synth, j, found))
                r["e_ms"].append(ms)
                r["e_rss"].append(rss)
                r["e_grow"].append(grow)
                if g is not None:
                    r["g_recall"].append(engine_recall(st, self.synth, j, g[0]))
                    r["g_ms"].append(g[1])
            if j >= warmup:
                say(f"  round {j - warmup + 1} / {rounds - warmup} done")
        return [self.summarise(st, rec[st.shape.name]) for st in shape_truths]

    def summarise(self, st: ShapeTruth, r: dict[str, list[float]]) -> dict[str, Any]:
        """One shape's row of the report."""
        engine = stats(r["e_recall"], r["e_ms"])
        engine["peak_rss_mib_max"] = round(max(r["e_rss"]), 1)
        engine["rss_growth_mib_max"] = round(max(r["e_grow"]), 1)
        out: dict[str, Any] = {
            "shape": st.shape.name, "kind": st.shape.kind, "example": st.rounds[-1].text[:160],
            "matching_chapters": st.matching, "selectivity": round(st.matching / self.synth.n, 6),
            "engine": engine, "graphrag": None, "engine_over_graphrag_p50": None,
        }
        if st.shape.kind == "text":
            out["matching_chapters"] = round(statistics.fmean(st.text_matching), 1)
            out["selectivity"] = round(out["matching_chapters"] / self.synth.n, 6)
        if r["g_ms"]:
            out["graphrag"] = stats(r["g_recall"], r["g_ms"])
            out["graphrag"]["filters"] = st.shape.filters
            out["engine_over_graphrag_p50"] = round(
                engine["p50_ms"] / max(out["graphrag"]["p50_ms"], 1e-9), 2)
        return out


def print_table(rows: list[dict[str, Any]]) -> None:
    """The per-shape table."""
    print(f"{'shape':12} {'select.':>8} {'recall':>7} {'p50 ms':>8} {'p95 ms':>8} "
          f"{'RSS MiB':>8} {'+MiB':>6} | {'graphrag recall':>15} {'p50 ms':>8} {'p95 ms':>8} "
          f"{'ratio':>6}")
    for row in rows:
        e, g = row["engine"], row["graphrag"]
        anchor = (f"{g['recall_mean']:15.3f} {g['p50_ms']:8.1f} {g['p95_ms']:8.1f} "
                  f"{row['engine_over_graphrag_p50']:6.2f}") if g else f"{'-':>15}"
        print(f"{row['shape']:12} {row['selectivity']:8.2%} {e['recall_mean']:7.3f} "
              f"{e['p50_ms']:8.1f} {e['p95_ms']:8.1f} {e['peak_rss_mib_max']:8.1f} "
              f"{e['rss_growth_mib_max']:6.1f} | {anchor}")


def graphrag_version() -> str:
    """The installed neo4j-graphrag release (a clear exit when it is missing)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("neo4j-graphrag")
    except PackageNotFoundError:
        raise SystemExit("neo4j-graphrag is not installed: pip install 'neo4j-graphrag~=1.21.0' "
                         "(1.21 works with neo4j 6.1; 1.22 needs neo4j>=6.3.1)") from None


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict[str, Any]:
    """Generate, load (or reuse), measure; the JSON result."""
    gr_version = graphrag_version()
    real = load_real_sets([Path(d) for d in args.data_dirs.split(",") if d.strip()])
    say(f"real sets {real.sources}: {len(real.vectors)} documents, "
        f"{len(real.query_texts)} queries")
    real_top10 = mean_top10_cosine(real.vectors)
    synth = Synthesizer(real, args.chapters, args.sigma, args.mix, args.seed)
    shape_list = shapes()
    plans, lookup = plan_rounds(shape_list, real, synth, args.queries + WARMUP_ROUNDS, args.seed)
    truth = Truth(shape_list, plans, lookup, real)
    settings = Settings(embedding_dimensions=DIMENSIONS) if args.hybrid else Settings(
        embedding_dimensions=DIMENSIONS, hybrid_all_queries=False, short_query_max_words=0)
    wanted = corpus_marker(args, real)
    with server(args, say) as uri, ThalabusGraph.connect(
            uri, settings=settings, embedder=LookupEmbedder(lookup)) as graph:
        reused = claim(graph.db, wanted, uri)
        graph.migrate()
        if reused:
            say("the database holds this corpus: reusing it (ground truth regenerated)")
            for _ in stream(synth, truth, say):
                pass
            loaded: dict[str, Any] = {"reused": True}
        else:
            say(f"ingesting {args.chapters} chapters ...")
            loaded = load(graph, synth, truth, wanted, say)
        assert truth.sample_top is not None
        synth_top10 = truth.sample_top.mean_score()
        say(f"mean top-10 cosine: real {real_top10:.4f}, synthetic {synth_top10:.4f}")
        say(f"querying: {args.queries} timed rounds (+{WARMUP_ROUNDS} warm-up) of "
            f"{len(shape_list)} shapes")
        rss_before = peak_rss_mib()
        rows = Runner(graph, truth, synth, lookup).run(WARMUP_ROUNDS, args.seed, say)
        server_agent = graph.db.driver.get_server_info().agent
    return {
        "benchmark": "scale", "python": platform.python_version(),
        "machine": platform.machine(), "cpus": os.cpu_count(), "neo4j": server_agent,
        "neo4j_graphrag": gr_version, "chapters": args.chapters, "ontology": ONTOLOGY,
        "queries_per_shape": args.queries, "warmup_rounds": WARMUP_ROUNDS,
        "hybrid_fusion": args.hybrid, "recall_at": RECALL_AT,
        "corpus": {"sources": real.sources, "base_documents": len(real.vectors),
                   "sigma": args.sigma, "mix": args.mix, "seed": args.seed,
                   "mean_top10_cosine_real": round(real_top10, 4),
                   "mean_top10_cosine_synthetic": round(synth_top10, 4),
                   "synthetic_sample": BLOCK, **loaded},
        "rss_mib_before_queries": round(rss_before, 1),
        "shapes": rows,
    }


def corpus_arguments(parser: argparse.ArgumentParser, argv: list[str] | None
                     ) -> argparse.Namespace:
    """Add the options of the synthetic corpus and its server (shared by the benchmarks over
    ``scale_corpus``) to ``parser`` and parse ``argv``."""
    parser.add_argument("--uri", default=None,
                        help="an existing Neo4j: empty, or holding this benchmark's marker")
    parser.add_argument("--keep", action="store_true",
                        help="leave the benchmark's own Neo4j running for a rerun with --uri")
    parser.add_argument("--data-dirs", default=DEFAULT_DATA,
                        help="comma-separated real sets with embeddings/ (read, never copied)")
    parser.add_argument("--sigma", type=float, default=0.4,
                        help="noise scale (0.4: synthetic mean top-10 cosine near the real one)")
    parser.add_argument("--mix", type=float, default=0.1, help="weight of the second base")
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--heap", default=None, help="JVM heap of the own Neo4j")
    parser.add_argument("--page-cache", default=None, help="page cache of the own Neo4j")
    args = parser.parse_args(argv)
    if args.chapters < BLOCK or args.queries < 1:
        parser.error(f"--chapters must be >= {BLOCK} and --queries >= 1")
    return args


def say(text: str) -> None:
    """Progress, on stderr."""
    print(text, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--chapters", type=int, default=200_000)
    parser.add_argument("--queries", type=int, default=20, help="timed queries per shape")
    parser.add_argument("--json", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--hybrid", action="store_true",
                        help="keep hybrid text fusion on (recall against cosine then understates)")
    args = corpus_arguments(parser, argv)
    result = run(args, say)
    print(f"scale benchmark: {result['chapters']} chapters, {result['neo4j']}, neo4j-graphrag "
          f"{result['neo4j_graphrag']}; mean top-10 cosine real "
          f"{result['corpus']['mean_top10_cosine_real']} vs synthetic "
          f"{result['corpus']['mean_top10_cosine_synthetic']}")
    print_table(result["shapes"])
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
