"""The engine on the procedure plugin against the engine on its own statements, every query of
a split: the same fragments in the same order, scores within 1e-6.

    python -m benchmarks.procedures_conformance --data ../shared/data/scifact --split train \\
        --uri URI [--reuse]

Loads the split's corpus into the server (its database is wiped; ``--reuse`` keeps a graph that
holds exactly it), then asks every query, as one phrase, of two graph objects on that server:
``procedures`` off (the engine's statements) and on (``thalabus.phraseResult``, which the
server must carry: a server ``thalabus-graph neo4j start`` started), at the default pools and
at ``limit=10``. Each pair of answers is taken on one state of the full-text index: the
statements' answer is asked before and after the plugin's and the pair is asked again while
the two differ (BM25's statistics move by about 1e-6 while Lucene merges after an ingest).
Prints the fragments compared and every mismatch; writes JSON. Not a timed benchmark.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.quality import Corpus, connect, load, load_corpus, semantic_phrase
from benchmarks.report import finish
from benchmarks.vs_graphrag import corpus_options
from thalabus_graph import Settings, ThalabusGraph

DEFAULT_OUT = Path(".thalabus/benchmarks/procedures_conformance.json")
TOLERANCE = 1e-6
ATTEMPTS = 8
LIMITS = (None, 10)
Answer = list[tuple[str, float, str]]


def answer(graph: ThalabusGraph, text: str, limit: int | None) -> Answer:
    """(fragment id, score, source) of the phrase's fragments through ``graph``, in order."""
    return [(f.fragmentid, f.score, f.source)
            for f in graph.query(semantic_phrase(text), return_documents=False,
                                 limit=limit).fragments]


def settled(reference: Callable[[], Answer], other: Callable[[], Answer]
            ) -> tuple[Answer, Answer]:
    """The reference and the other answer on one state of the full-text index: the reference
    asked before and after the other gives the same answer. Right after an ingest Lucene's
    background merges still move BM25's statistics (deleted nodes leave their segments), and
    with them, by about 1e-6, the scores of fragments only the text search found: two reads of
    the engine's own path differ as much then. The conformance tests share it."""
    for _ in range(ATTEMPTS):
        before, theirs, after = reference(), other(), reference()
        if before == after:
            return before, theirs
    raise RuntimeError(f"the reference answer kept moving over {ATTEMPTS} attempts")


def difference(ours: Answer, theirs: Answer) -> str | None:
    """Why two answers differ (None: the same fragments in the same order, the same sources,
    scores within ``TOLERANCE``)."""
    if [f for f, _, _ in ours] != [f for f, _, _ in theirs]:
        return f"fragments differ: {len(ours)} vs {len(theirs)}, first ids " \
               f"{[f for f, _, _ in ours[:3]]} vs {[f for f, _, _ in theirs[:3]]}"
    for (fid, a, source_a), (_, b, source_b) in zip(ours, theirs, strict=True):
        if abs(a - b) > TOLERANCE or source_a != source_b:
            return f"{fid}: {a!r} ({source_a}) vs {b!r} ({source_b})"
    return None


def compare(uri: str, corpus: Corpus, *, reuse: bool) -> dict[str, Any]:
    """Load (or reuse) the corpus, compare every query at each of ``LIMITS``."""
    dims = len(next(iter(corpus.doc_vectors.values()))) if corpus.doc_vectors else None
    settings = Settings.from_env(embedding_dimensions=dims) if dims else Settings.from_env()
    with connect(uri, settings.replace(procedures="off"), corpus) as statements, \
            connect(uri, settings.replace(procedures="on"), corpus) as plugin:
        counts = statements.db.read("search_counts")[0]
        if not (reuse and counts["documents"] == len(corpus.docs)):
            load(statements, corpus)
        compared, mismatches = 0, []
        for position, (qid, text) in enumerate(corpus.queries.items()):
            for limit in LIMITS:
                ours, theirs = settled(partial(answer, statements, text, limit),
                                       partial(answer, plugin, text, limit))
                compared += len(ours)
                why = difference(ours, theirs)
                if why is not None:
                    mismatches.append({"query": qid, "limit": limit, "why": why})
            if (position + 1) % 100 == 0:
                print(f"{position + 1} queries", file=sys.stderr, flush=True)
    return {"benchmark": "procedures_conformance", "queries": len(corpus.queries),
            "limits": list(LIMITS), "fragments_compared": compared,
            "tolerance": TOLERANCE, "mismatches": mismatches}


def table(result: Mapping[str, Any]) -> str:
    """The result as text: what was compared and each mismatch."""
    lines = [f"{result['queries']} queries at limits {result['limits']}: "
             f"{result['fragments_compared']} fragments compared, "
             f"{len(result['mismatches'])} mismatches (scores within {result['tolerance']})"]
    lines += [f"  {m['query']} limit={m['limit']}: {m['why']}" for m in result["mismatches"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, compare, print, write the JSON; exit 1 on a mismatch."""
    args = corpus_options(__doc__, DEFAULT_OUT).parse_args(argv)
    corpus = load_corpus(args.data, args.split, limit_queries=args.limit_queries)
    result = compare(args.uri, corpus, reuse=args.reuse)
    finish(result, table, data=args.data, split=args.split, json_path=args.json)
    return 1 if result["mismatches"] else 0


if __name__ == "__main__":
    sys.exit(main())
