"""Request independence of calibrated scores on a labelled BEIR corpus: a fragment's score
belongs to the phrase, the fragment and the corpus, not to the ``limit`` or the adapter's ``k``
that asked for it.

Run ``python -m benchmarks.request_independence --data DIR --split NAME [--limit-queries N]
[--scope-every 2] [--tolerance 0.01] [--reuse] [--json OUT] [--uri URI]``.

The corpus is loaded as ``benchmarks.quality`` loads it (its precomputed vectors, one chapter
per abstract, the database wiped first unless ``--reuse`` finds exactly this corpus loaded)
and searched with the engine's defaults (``Settings.from_env()``: calibrated scores,
``language-slots`` fusion), what a user gets. Every query of the split (or ``--limit-queries``
of them, spread evenly over the file as ``quality.load_corpus`` picks them: deterministic) is
asked as one SEMANTIC phrase (``quality.semantic_phrase``) in each variant:

- ``plain``: no scope;
- ``dataset``: ``subset_of_datasetids`` of one dataset holding the chapter of every
  ``--scope-every``-th document in corpus order (the corpus as loaded carries no categories
  and no ontology, so a dataset scope is the restriction it offers; written once per run,
  or found again with ``--reuse``);
- ``filter``: the same documents as a filter, the phrase AND a graph-defined category
  (``IN_SCOPE``: a document with a fragment in the dataset named by the value), given as
  ``required_filter`` to the query and to the retrievers alike (answered as
  ``(phrase) AND (filter)``): the path of a phrase with a pushed filter, whose background is
  its unrestricted search's.

In each variant the phrase runs once without a limit (``query(..., return_documents=False)``,
the reference) and then as each request: no limit again (the control: the same request
twice), ``limit`` 3 and 10 (fragments), and through the LangChain and LlamaIndex retrievers
(``ThalabusLangChainRetriever``, ``ThalabusLlamaIndexRetriever``) with ``k`` 3, 4, 5 and 10
and the same scope, which ask the engine with ``limit=k``. Every fragment a request returns is
matched by id to the reference's fragment; the table gives per variant and request the
fragments compared, the largest and the 99th-percentile absolute score difference, how many
differ by more than ``--tolerance`` and, of those, where the difference arose (each fragment's
``calibrated:`` contribution names its fused index-scale score): ``map`` when its calibrated
score cannot come from the reference's (increasing) calibration map at its fused score, so the
phrase's background moved, else ``fused``, consistent with that map, so its fused score moved
(the fusion ordered the request's pool otherwise; ``moved``); and how many fragments the
request returned
that the reference did not (a recall bug: the unlimited query must hold every fragment a
smaller pool finds). The JSON adds the worst differences and the unmatched fragments (the
first 200) with the query, request, scores, fused scores and ranks. The ``all`` rows leave
the control out.

The exit status is 1 when the claim fails (a difference above the tolerance, or an unmatched
fragment), so the run can gate; 0 otherwise. No timing is measured.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from benchmarks.quality import (
    DOC_PREFIX,
    Corpus,
    connect,
    load,
    load_corpus,
    semantic_phrase,
)
from benchmarks.report import finish
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.fragments import Fragment
from thalabus_graph.integrations.langchain import ThalabusLangChainRetriever
from thalabus_graph.integrations.llamaindex import ThalabusLlamaIndexRetriever

DEFAULT_OUT = Path(".thalabus/benchmarks/request_independence.json")
TOLERANCE = 0.01
"""The claim: the same fragment's score differs by at most this between requests."""
CONTROL = "limit=None"
"""The reference asked again: left out of the ``all`` rows, which compare other requests."""
LIMITS = (3, 10)
"""Limits asked besides none (the reference, which also runs a second time as a request: the
run-to-run control)."""
ADAPTER_KS = (3, 4, 5, 10)
SESSION = "request-independence"
"""Session of the scope dataset (``{SESSION}#dataset_N``)."""
IN_SCOPE = "IN_SCOPE"
IN_SCOPE_PATTERN = ("(document)<-[:IN_DOCUMENT]-(:Fragment)<-[:AGGREGATES]-"
                    "(:Dataset {datasetid: $value})")
"""A graph-defined category: the documents with a fragment in the dataset named by the
value (the scope dataset's documents as a filter instead of a scope)."""
WORST = 25
"""Largest differences kept per variant in the JSON."""
_CALIBRATED = re.compile(r"calibrated:\w+ (\d+\.\d+) -> ")
RAW_PRINTED = 5e-5
"""Half the last printed digit of a ``calibrated:`` contribution's fused score."""


class Hit(NamedTuple):
    """One fragment of a request's result."""

    score: float
    rank: int
    raw: float | None
    """Its fused index-scale score before calibration (its ``calibrated:`` contribution;
    None without one)."""


Scores = dict[str, Hit]
"""Fragment id -> its hit in one request's result."""


@dataclass
class Tally:
    """One variant and request's comparison against the unlimited reference."""

    diffs: list[float] = field(default_factory=list)
    above: int = 0
    fused_moved: int = 0
    map_moved: int = 0
    unmatched: int = 0

    def add(self, diff: float, tolerance: float, where: str | None) -> None:
        """Count one matched fragment's absolute difference and, above the tolerance,
        where it arose (``moved``)."""
        self.diffs.append(diff)
        if diff > tolerance:
            self.above += 1
            if where == "map":
                self.map_moved += 1
            elif where == "fused":
                self.fused_moved += 1

    def row(self) -> dict[str, Any]:
        """The JSON row: fragments compared, max and p99 difference, counts."""
        values = np.asarray(self.diffs, dtype=np.float64)
        return {"fragments": int(values.size),
                "max_diff": float(values.max()) if values.size else 0.0,
                "p99_diff": float(np.percentile(values, 99)) if values.size else 0.0,
                "above_tolerance": self.above, "fused_moved": self.fused_moved,
                "map_moved": self.map_moved, "unmatched": self.unmatched}


def merged(tallies: Iterable[Tally]) -> Tally:
    """The tallies of several requests as one."""
    out = Tally()
    for tally in tallies:
        out.diffs += tally.diffs
        out.above += tally.above
        out.fused_moved += tally.fused_moved
        out.map_moved += tally.map_moved
        out.unmatched += tally.unmatched
    return out


Request = tuple[str, Callable[[str], Scores]]
"""A request's name and what it returns for a question: its fragments' scores and ranks."""


def raw_of(contributions: Iterable[str]) -> float | None:
    """The fused index-scale score a ``calibrated:`` contribution names (None: none)."""
    for contribution in contributions:
        match = _CALIBRATED.match(contribution)
        if match:
            return float(match.group(1))
    return None


def ranked(hits: Iterable[tuple[str, float, Iterable[str]]]) -> Scores:
    """(fragment id, score, contributions) in result order as ``Scores``."""
    return {fid: Hit(score, rank, raw_of(contributions))
            for rank, (fid, score, contributions) in enumerate(hits, start=1)}


def moved(hit: Hit, reference: Sequence[tuple[float, float]], tolerance: float) -> str | None:
    """Where a fragment's difference arose, read against the reference's calibration map
    (``reference``: its fragments' (fused index-scale score, calibrated score) pairs; the map
    is increasing, and ``calibrated:`` prints the fused score to 4 decimals): ``map`` when
    the request's calibrated score lies more than ``tolerance`` outside what the reference's
    map gives between the neighbours of its fused score (a fused score printed alike may lie
    on either side), so the same fused score is read otherwise and the phrase's background
    moved; else ``fused`` (consistent with that map: the fragment's fused score moved, the
    fusion ordering the request's pool otherwise); None without a fused score."""
    if hit.raw is None:
        return None
    below = [score for raw, score in reference if raw < hit.raw - RAW_PRINTED]
    above = [score for raw, score in reference if raw > hit.raw + RAW_PRINTED]
    if (below and hit.score < max(below) - tolerance) or (
            above and hit.score > min(above) + tolerance):
        return "map"
    return "fused"


def engine_request(graph: ThalabusGraph, limit: int | None,
                   scope: Mapping[str, Any]) -> Callable[[str], Scores]:
    """``query(phrase, return_documents=False, limit=limit)`` within ``scope``."""
    def ask(question: str) -> Scores:
        result = graph.query(semantic_phrase(question), return_documents=False,
                             limit=limit, **scope)
        return ranked((f.fragmentid, f.score, f.contributions) for f in result.fragments)

    return ask


def langchain_request(graph: ThalabusGraph, k: int,
                      scope: Mapping[str, Any]) -> Callable[[str], Scores]:
    """The LangChain retriever with ``k`` and ``scope``; its hits' metadata scores."""
    retriever = ThalabusLangChainRetriever(graph=graph, k=k, **scope)

    def ask(question: str) -> Scores:
        return ranked((d.metadata["fragment_id"], float(d.metadata["score"]),
                       d.metadata["contributions"]) for d in retriever.invoke(question))

    return ask


def llamaindex_request(graph: ThalabusGraph, k: int,
                       scope: Mapping[str, Any]) -> Callable[[str], Scores]:
    """The LlamaIndex retriever with ``k`` and ``scope``; its nodes' scores."""
    retriever = ThalabusLlamaIndexRetriever(graph, k=k, **scope)

    def ask(question: str) -> Scores:
        return ranked((n.node.metadata["fragment_id"], float(n.score or 0.0),
                       n.node.metadata["contributions"]) for n in retriever.retrieve(question))

    return ask


def requests(graph: ThalabusGraph, scope: Mapping[str, Any]) -> list[Request]:
    """Every request compared with the unlimited reference, in the order they run."""
    out: list[Request] = [(f"limit={n}", engine_request(graph, n, scope))
                          for n in (None, *LIMITS)]
    out += [(f"langchain k={k}", langchain_request(graph, k, scope)) for k in ADAPTER_KS]
    out += [(f"llamaindex k={k}", llamaindex_request(graph, k, scope)) for k in ADAPTER_KS]
    return out


def scope_dataset(graph: ThalabusGraph, corpus: Corpus, every: int) -> tuple[str, int]:
    """The dataset of every ``every``-th document's chapter in corpus order (reused when a
    dataset of ``SESSION`` already holds exactly as many members): its id and size."""
    chosen = list(corpus.docs)[::every]
    for row in graph.datasets.list_datasets(SESSION):
        if int(row["members"]) == len(chosen):
            return str(row["datasetid"]), len(chosen)
    members = [Fragment(f"{DOC_PREFIX}{d}-c1", DOC_PREFIX + d, None, 1.0, "chapters")
               for d in chosen]
    return graph.datasets.create(members, session=SESSION, query=""), len(chosen)


def is_calibrated(graph: ThalabusGraph, question: str) -> bool:
    """Whether the engine put the question's fragments on the calibrated scale (their
    contributions say ``calibrated:``), as the defaults do for the precomputed vectors'
    model."""
    result = graph.query(semantic_phrase(question), return_documents=False)
    return any(c.startswith("calibrated:") for f in result.fragments for c in f.contributions)


def _loaded(graph: ThalabusGraph, corpus: Corpus) -> bool:
    """True when the graph holds exactly this corpus's chapters (for ``--reuse``)."""
    counts = graph.db.read("search_counts")[0]
    return bool(counts["documents"] == len(corpus.docs) == counts["chapters"])


def compare(variant: str, reference: Scores, name: str, got: Scores, qid: str,
            tally: Tally, tolerance: float, cases: list[dict[str, Any]],
            unmatched: list[dict[str, Any]]) -> None:
    """Match one request's fragments with the reference's, counting into ``tally``."""
    pairs = [(known.raw, known.score) for known in reference.values() if known.raw is not None]
    for fid, hit in got.items():
        if fid not in reference:
            tally.unmatched += 1
            unmatched.append({"variant": variant, "query": qid, "request": name,
                              "fragment": fid, "score": hit.score, "rank": hit.rank,
                              "raw": hit.raw, "reference_fragments": len(reference)})
            continue
        base = reference[fid]
        diff = abs(hit.score - base.score)
        tally.add(diff, tolerance, moved(hit, pairs, tolerance))
        if diff > 0.0:
            cases.append({"variant": variant, "query": qid, "request": name, "fragment": fid,
                          "score": hit.score, "reference": base.score, "diff": diff,
                          "rank": hit.rank, "reference_rank": base.rank, "raw": hit.raw,
                          "reference_raw": base.raw})


def benchmark(uri: str, corpus: Corpus, *, scope_every: int = 2,
              tolerance: float = TOLERANCE, reuse: bool = False,
              say: Callable[[str], None] = print) -> dict[str, Any]:
    """Load (or reuse) the corpus, ask every query in every variant, compare."""
    if not corpus.precomputed or corpus.doc_vectors is None:
        raise SystemExit("request_independence needs precomputed embeddings/ in the data "
                         "directory")
    started = time.perf_counter()
    dims = len(next(iter(corpus.doc_vectors.values())))
    settings = Settings.from_env(embedding_dimensions=dims)
    loading: dict[str, Any] = {"reused": True}
    with connect(uri, settings, corpus) as graph:
        if not (reuse and _loaded(graph, corpus)):
            loading = load(graph, corpus)
            say(f"loaded {len(corpus.docs)} documents in {loading['seconds']:.1f} s")
        datasetid, scoped = scope_dataset(graph, corpus, scope_every)
        say(f"scope dataset {datasetid}: {scoped} of {len(corpus.docs)} documents")
        calibrated = is_calibrated(graph, next(iter(corpus.queries.values())))
        graph.define_category(IN_SCOPE, IN_SCOPE_PATTERN)
        variants: dict[str, dict[str, Any]] = {
            "plain": {}, "dataset": {"subset_of_datasetids": [datasetid]},
            "filter": {"required_filter": f"{IN_SCOPE}='{datasetid}'"}}
        tallies: dict[str, dict[str, Tally]] = {}
        cases: dict[str, list[dict[str, Any]]] = {v: [] for v in variants}
        unmatched: list[dict[str, Any]] = []
        empty: dict[str, int] = dict.fromkeys(variants, 0)
        for variant, scope in variants.items():
            reference_of = engine_request(graph, None, scope)
            asked = requests(graph, scope)
            tallies[variant] = {name: Tally() for name, _ in asked}
            for position, (qid, question) in enumerate(corpus.queries.items(), start=1):
                reference = reference_of(question)
                if not reference:
                    empty[variant] += 1
                for name, ask in asked:
                    compare(variant, reference, name, ask(question), qid,
                            tallies[variant][name], tolerance, cases[variant], unmatched)
                if position % 100 == 0:
                    say(f"{variant}: {position} queries")
    rows: list[dict[str, Any]] = []
    for variant, by_request in tallies.items():
        rows += [{"variant": variant, "request": name, **tally.row()}
                 for name, tally in by_request.items()]
        rows.append({"variant": variant, "request": "all",
                     **merged(t for name, t in by_request.items() if name != CONTROL).row()})
    total = merged(t for by_request in tallies.values() for name, t in by_request.items()
                   if name != CONTROL).row()
    control = merged(by_request[CONTROL] for by_request in tallies.values()).row()
    rows.append({"variant": "all", "request": "all", **total})
    worst = {v: sorted(found, key=lambda c: -c["diff"])[:WORST] for v, found in cases.items()}
    holds = all(r["above_tolerance"] == 0 and r["unmatched"] == 0 for r in (total, control))
    return {"benchmark": "request_independence", "python": platform.python_version(),
            "machine": platform.machine(), "documents": len(corpus.docs),
            "queries": len(corpus.queries), "scope_dataset": datasetid,
            "scope_documents": scoped, "scope_every": scope_every, "tolerance": tolerance,
            "limits": [None, *LIMITS], "adapter_ks": list(ADAPTER_KS),
            "calibrated": calibrated, "fusion": settings.fusion,
            "empty_references": empty, "load": loading, "results": rows,
            "worst": worst, "unmatched": unmatched[:200],
            "queries_with_difference": {v: len({c["query"] for c in found
                                                if c["diff"] > tolerance})
                                        for v, found in cases.items()},
            "claim_holds": holds, "wall_seconds": round(time.perf_counter() - started, 1)}


def table(result: Mapping[str, Any]) -> str:
    """Per variant and request: fragments compared, max and p99 difference, counts."""
    lines = [f"{'variant':<8} {'request':<15} {'fragments':>9} {'max diff':>9} "
             f"{'p99 diff':>9} {'> tol':>6} {'fused':>6} {'map':>6} {'unmatched':>9}"]
    for r in result["results"]:
        lines.append(f"{r['variant']:<8} {r['request']:<15} {r['fragments']:>9} "
                     f"{r['max_diff']:>9.5f} {r['p99_diff']:>9.5f} "
                     f"{r['above_tolerance']:>6} {r['fused_moved']:>6} {r['map_moved']:>6} "
                     f"{r['unmatched']:>9}")
    lines.append("(> tol: differences above the tolerance; of them map: the reference's "
                 "calibration map cannot give that score, fused: consistent with it, the "
                 "fused score moved)")
    lines.append("queries with a difference above the tolerance: " + ", ".join(
        f"{variant} {n} of {result['queries']}"
        for variant, n in result["queries_with_difference"].items()))
    for variant, found in result["worst"].items():
        for c in found[:5]:
            lines.append(f"  worst {variant}: query {c['query']} {c['request']} "
                         f"{c['fragment']} {c['score']:.4f} vs {c['reference']:.4f} "
                         f"(rank {c['rank']} vs {c['reference_rank']}; fused "
                         f"{c['raw']} vs {c['reference_raw']})")
    for c in result["unmatched"][:10]:
        lines.append(f"  unmatched {c['variant']}: query {c['query']} {c['request']} "
                     f"{c['fragment']} {c['score']:.4f} (rank {c['rank']}; reference "
                     f"{c['reference_fragments']} fragments)")
    lines.append(f"{result['documents']} documents, {result['queries']} queries, scope "
                 f"{result['scope_documents']} documents; tolerance {result['tolerance']}: "
                 + ("the claim holds" if result["claim_holds"] else "the claim FAILS")
                 + f"; wall time {result['wall_seconds']} s")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments, run, print the table, write the JSON; 1 when the claim fails."""
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    options.add_argument("--data", type=Path, required=True, help="BEIR directory")
    options.add_argument("--split", required=True, help="qrels/NAME.tsv (its queries are run)")
    options.add_argument("--limit-queries", type=int, default=None,
                         help="that many queries spread evenly over the file (default: all)")
    options.add_argument("--scope-every", type=int, default=2,
                         help="the scope dataset holds every N-th document (default 2)")
    options.add_argument("--tolerance", type=float, default=TOLERANCE)
    options.add_argument("--reuse", action="store_true",
                         help="keep the loaded corpus when the graph holds exactly it")
    options.add_argument("--json", type=Path, default=DEFAULT_OUT)
    options.add_argument("--uri", default=os.environ.get("NEO4J_URI", "bolt://127.0.0.1:7687"),
                         help="Neo4j to use; its database is wiped (default: $NEO4J_URI)")
    args = options.parse_args(argv)
    corpus = load_corpus(args.data, args.split, limit_queries=args.limit_queries)
    result = benchmark(args.uri, corpus, scope_every=args.scope_every,
                       tolerance=args.tolerance, reuse=args.reuse,
                       say=lambda msg: print(msg, file=sys.stderr, flush=True))
    finish(result, table, data=args.data, split=args.split, json_path=args.json)
    return 0 if result["claim_holds"] else 1


if __name__ == "__main__":
    sys.exit(main())
