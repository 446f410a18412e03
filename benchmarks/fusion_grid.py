"""The ``language-slots`` fusion's two parameters as a grid, replayed on the candidates the
engine searched: nDCG@10 per (text weight, full coverage) cell, paired against semantic-only.

Run ``python -m benchmarks.fusion_grid --data DIR --split NAME --uri URI
[--weights 0.4 0.5 ...] [--coverages 0.5 0.75 ...] [--json OUT]``.

The corpus is loaded as ``benchmarks.quality`` loads it (the database at ``URI`` is
wiped). Every query then runs once semantic-only and once with the configured settings through
``ThalabusGraph.query``; during the second run the inputs the engine hands to
``LanguageSlots.fit`` (the phrase, its unrestricted semantic and text candidates, their
documents' languages) are kept. Each grid cell fits and fuses those same inputs in Python
(``LanguageSlots.fit(...).fuse``), so a cell differs from the engine only in its two
parameters. The run first checks that the replay at the configured parameters reproduces the
engine's own ranking (``replay_matches``: queries whose top 10 agree), which is what makes the
grid's cells comparable with an engine run.

On a mixed-language pool the table adds the ceiling of the rule (``slots-ceiling``): the
semantic ranking with the query's same-language relevant document moved to its language's
best slot, every other language's documents untouched. No choice of lexical evidence can
score above it while the rule keeps each language's semantic slots.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import quality
from benchmarks.report import finish
from thalabus_graph.fragments import Fragment, aggregate_documents
from thalabus_graph.scoring import fusion

DEFAULT_OUT = Path(".thalabus/benchmarks/fusion_grid.json")
DEFAULT_WEIGHTS = (0.4, 0.45, 0.5, 0.55, 0.6)
DEFAULT_COVERAGES = (0.4, 0.5, 0.6, 0.75, 1.0)
Ranking = dict[str, list[tuple[str, float]]]


@dataclass(frozen=True)
class FitInputs:
    """What the engine handed ``LanguageSlots.fit`` for one query's phrase."""

    phrase: str
    semantic: list[Fragment]
    text: list[Fragment]
    languages: dict[str, str | None]


@contextmanager
def recorded_fits() -> Iterator[list[FitInputs]]:
    """Keep the inputs of every ``LanguageSlots.fit`` call made inside the block (the fit
    itself runs unchanged)."""
    calls: list[FitInputs] = []
    original = fusion.LanguageSlots.__dict__["fit"]

    def fit(cls: type[fusion.LanguageSlots], query: str, semantic: Sequence[Fragment],
            text: Sequence[Fragment], **options: Any) -> fusion.LanguageSlots:
        calls.append(FitInputs(query, list(semantic), list(text), dict(options["languages"])))
        result: fusion.LanguageSlots = original.__func__(cls, query, semantic, text, **options)
        return result

    fusion.LanguageSlots.fit = classmethod(fit)  # type: ignore[assignment,method-assign]
    try:
        yield calls
    finally:
        fusion.LanguageSlots.fit = original  # type: ignore[method-assign]


def _documents(fragments: Sequence[Fragment]) -> list[tuple[str, float]]:
    return [(doc.removeprefix(quality.DOC_PREFIX), score)
            for doc, score in aggregate_documents(fragments)[:quality.RUN_DEPTH]]


def replay(inputs: Mapping[str, FitInputs], fallback: Ranking, *, text_weight: float,
           full_coverage: float) -> Ranking:
    """Each query's documents fused again from its recorded inputs with these parameters (a
    query whose phrase was not fused keeps its ``fallback`` ranking)."""
    out: Ranking = {}
    for qid, ranked in fallback.items():
        got = inputs.get(qid)
        if got is None:
            out[qid] = ranked
            continue
        rule = fusion.LanguageSlots.fit(got.phrase, got.semantic, got.text,
                                        languages=got.languages, text_weight=text_weight,
                                        full_coverage=full_coverage)
        out[qid] = _documents(rule.fuse(got.semantic, got.text))
    return out


def slots_ceiling(semantic: Ranking, qrels: Mapping[str, Mapping[str, int]],
                  doc_languages: Mapping[str, str], query_languages: Mapping[str, str]
                  ) -> Ranking:
    """The semantic ranking with each query's same-language documents reordered relevant
    first, in the positions its language held: the best any within-language reordering does.

    Example:
        >>> slots_ceiling({"q": [("a-de", 0.9), ("b-en", 0.8), ("c-en", 0.7)]},
        ...               {"q": {"c-en": 1}}, {"a-de": "de", "b-en": "en", "c-en": "en"},
        ...               {"q": "en"})["q"]
        [('a-de', 0.9), ('c-en', 0.8), ('b-en', 0.7)]
    """
    out: Ranking = {}
    for qid, ranked in semantic.items():
        lang, relevant = query_languages.get(qid), qrels.get(qid, {})
        positions = [i for i, (doc, _) in enumerate(ranked) if doc_languages.get(doc) == lang]
        same = sorted((ranked[i][0] for i in positions), key=lambda d: -relevant.get(d, 0))
        docs = [doc for doc, _ in ranked]
        for i, doc in zip(positions, same, strict=True):
            docs[i] = doc
        out[qid] = [(doc, score) for doc, (_, score) in zip(docs, ranked, strict=True)]
    return out


def top10_agreement(a: Ranking, b: Ranking) -> float:
    """Share of queries whose top-10 documents are the same, in the same order."""
    same = sum([d for d, _ in a[q][:10]] == [d for d, _ in b.get(q, [])[:10]] for q in a)
    return same / max(len(a), 1)


def _row(name: str, scored: Mapping[str, Mapping[str, float]],
         base: Mapping[str, Mapping[str, float]], queries: Sequence[str],
         **extra: Any) -> dict[str, Any]:
    values = [scored["ndcg@10"][q] for q in queries]
    reference = [base["ndcg@10"][q] for q in queries]
    return {"mode": name, **quality.means(scored), **extra,
            "ndcg@10_vs_semantic": (sum(values) - sum(reference)) / max(len(queries), 1),
            "p_vs_semantic": quality.paired_randomisation(values, reference)}


def benchmark(uri: str, corpus: quality.Corpus, weights: Sequence[float],
              coverages: Sequence[float], log: Any = print) -> dict[str, Any]:
    """Load, record the engine's fusion inputs, replay the grid; the JSON-ready result."""
    started = time.perf_counter()
    dims = len(next(iter(corpus.doc_vectors.values()))) if corpus.doc_vectors else None
    settings = quality.base_settings(dimensions=dims)
    languages = (corpus.doc_languages, corpus.query_languages) if corpus.multilingual else None
    with quality.connect(uri, settings, corpus) as graph:
        loading = quality.load(graph, corpus)
    log(f"loaded {len(corpus.docs)} documents in {loading['seconds']:.1f} s")
    semantic_mode, default_mode = quality.mode("semantic"), quality.mode("default")
    with quality.connect(uri, semantic_mode.settings(settings), corpus) as graph:
        semantic = quality.run_mode(graph, semantic_mode, corpus.queries)
    inputs: dict[str, FitInputs] = {}
    engine: Ranking = {}
    with quality.connect(uri, settings, corpus) as graph, recorded_fits() as calls:
        for qid, text in corpus.queries.items():
            calls.clear()
            engine[qid] = quality.search(graph, default_mode, text)
            if calls:
                inputs[qid] = calls[0]
    queries = sorted(corpus.qrels)
    base = quality.per_query(corpus.qrels, semantic, languages)
    rows = [_row("semantic", base, base, queries),
            _row("engine default", quality.per_query(corpus.qrels, engine, languages), base,
                 queries, text_weight=settings.fusion_text_weight,
                 full_coverage=settings.fusion_full_coverage)]
    again = replay(inputs, engine, text_weight=settings.fusion_text_weight,
                   full_coverage=settings.fusion_full_coverage)
    agreement = top10_agreement(engine, again)
    log(f"replay at the configured parameters: top 10 identical for {agreement:.1%} of queries")
    for w in weights:
        for c in coverages:
            ranking = replay(inputs, engine, text_weight=w, full_coverage=c)
            rows.append(_row(f"slots w{w:g} c{c:g}",
                             quality.per_query(corpus.qrels, ranking, languages), base, queries,
                             text_weight=w, full_coverage=c))
            log(f"w {w:g} c {c:g}: nDCG@10 {rows[-1]['ndcg@10']:.4f}")
    if corpus.multilingual:
        ceiling = slots_ceiling(semantic, corpus.qrels, corpus.doc_languages,
                                corpus.query_languages)
        rows.append(_row("slots-ceiling", quality.per_query(corpus.qrels, ceiling, languages),
                         base, queries))
    return {"benchmark": "fusion_grid", "documents": len(corpus.docs),
            "queries": len(corpus.queries), "multilingual": corpus.multilingual,
            "load": loading, "replay_matches": agreement, "results": rows,
            "wall_seconds": time.perf_counter() - started}


def table(result: Mapping[str, Any]) -> str:
    """The rows as a fixed-width text table."""
    multilingual = bool(result.get("multilingual"))
    lines = [f"{'mode':<22} {'nDCG@10':>8} {'vs sem':>8} {'p':>7} {'R@100':>7}"
             + (f" {'R@10-oth':>8} {'MRR-same':>8}" if multilingual else "")]
    for r in result["results"]:
        lines.append(f"{r['mode']:<22} {r['ndcg@10']:>8.4f} {r['ndcg@10_vs_semantic']:>+8.4f} "
                     f"{r['p_vs_semantic']:>7.4f} {r['recall@100']:>7.4f}"
                     + (f" {r['recall@10-other']:>8.4f} {r['mrr@10-same']:>8.4f}"
                        if multilingual else ""))
    lines.append(f"{result['documents']} documents, {result['queries']} queries; replay at the "
                 f"configured parameters matches the engine's top 10 on "
                 f"{result['replay_matches']:.1%} of queries; wall time "
                 f"{result['wall_seconds']:.1f} s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run the grid, print the table and write the JSON."""
    options = argparse.ArgumentParser(
        description=__doc__.splitlines()[0] if __doc__ else None)
    options.add_argument("--data", type=Path, required=True, help="BEIR directory")
    options.add_argument("--split", required=True, help="qrels/NAME.tsv to evaluate")
    options.add_argument("--weights", nargs="+", type=float, default=list(DEFAULT_WEIGHTS))
    options.add_argument("--coverages", nargs="+", type=float, default=list(DEFAULT_COVERAGES))
    options.add_argument("--json", type=Path, default=DEFAULT_OUT,
                         help=f"output file (default {DEFAULT_OUT})")
    options.add_argument("--uri", default=os.environ.get("NEO4J_URI", "bolt://127.0.0.1:7687"),
                         help="Neo4j to use; its database is wiped (default: $NEO4J_URI)")
    args = options.parse_args(argv)
    corpus = quality.load_corpus(args.data, args.split)
    result = benchmark(args.uri, corpus, args.weights, args.coverages,
                       log=lambda msg: print(msg, file=sys.stderr, flush=True))
    return finish(result, table, data=args.data, split=args.split, json_path=args.json)


if __name__ == "__main__":
    sys.exit(main())
