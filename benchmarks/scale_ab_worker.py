"""One side of ``benchmarks.scale_ab``: answers the coordinator's queries with the engine
its interpreter imports, and times each.

Run by the coordinator as ``PYTHON -m benchmarks.scale_ab_worker URI LOOKUP ONTOLOGY
[--index-scale]``: ``LOOKUP`` is a ``.npz`` of the query vectors (``texts``, ``vectors``), so
no model runs; ``--index-scale`` runs the application-graph benchmark's settings
(``CALIBRATION_FILE=none``, the index scale) instead of the calibrated default.
Each stdin line is a query as JSON: its text, or ``{"text": ..., "required": FILTER}`` for the
query held to a required filter (a second graph object on the same driver,
``ThalabusGraph(db, required_filter=FILTER)``, one per filter). Each stdout line is JSON with
the milliseconds of ``ThalabusGraph.query``, the document ids it returned (best first, at
most 10), how many fragments and a digest of them (ids and scores to 9 decimals, in order),
so the coordinator can tell whether two answers are the same. Only ``Settings`` and
``ThalabusGraph.connect`` / ``query`` (and ``required_filter``) are used, an API both sides
share;
that is why it holds its own ``Lookup`` rather than importing ``scale_queries.LookupEmbedder``,
whose module imports this checkout's ``quality`` harness (which the old engine may not load).
"""

from __future__ import annotations

import gc
import hashlib
import json
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from thalabus_graph import Settings, ThalabusGraph

DIMENSIONS = 384


class Lookup:
    """Query vectors by text (the scale benchmark's precomputed ones)."""

    def __init__(self, texts: Sequence[str], vectors: npt.NDArray[np.float32]) -> None:
        self.vectors = {t: vectors[i] for i, t in enumerate(texts)}

    @property
    def dimensions(self) -> int:
        return DIMENSIONS

    @property
    def model_id(self) -> str:
        return "scale-lookup"

    def embed_queries(self, texts: Sequence[str]) -> Any:
        return np.stack([self.vectors[t] for t in texts])

    embed_passages = embed_queries


def main(argv: list[str]) -> int:
    """Serve queries from stdin until it closes."""
    uri, lookup_path, ontology, *flags = argv
    data = np.load(lookup_path, allow_pickle=False)
    lookup = Lookup([str(t) for t in data["texts"]], data["vectors"])
    settings = (Settings(embedding_dimensions=DIMENSIONS) if "--defaults" in flags
                else Settings(embedding_dimensions=DIMENSIONS, hybrid_all_queries=False,
                              short_query_max_words=0))
    limit = next((int(f.split("=", 1)[1]) for f in flags if f.startswith("--limit=")), None)
    if "--index-scale" in flags:
        settings = settings.replace(calibration_file="none")
    with ThalabusGraph.connect(uri, settings=settings, embedder=lookup) as graph:
        held: dict[str, ThalabusGraph] = {}
        gc.collect()
        gc.freeze()  # the lookup's objects stay out of the collections queries trigger
        print(json.dumps({"ready": True}), flush=True)
        for line in sys.stdin:
            asked = json.loads(line)
            text, required = ((asked, None) if isinstance(asked, str)
                              else (asked["text"], asked.get("required")))
            engine = graph if required is None else held.setdefault(required, ThalabusGraph(
                graph.db, settings=settings, embedder=lookup, required_filter=required))
            start = time.perf_counter()
            result = engine.query(text, ontology_id=ontology, limit=limit)
            ms = (time.perf_counter() - start) * 1000
            print(json.dumps({"ms": ms, **answer(result)}), flush=True)
    return 0


def answer(result: Any) -> dict[str, Any]:
    """What a reply says of a query's result: its first 10 documents, its fragments' count
    and a digest of their ids and scores (9 decimals) in order."""
    scored = [[f.fragmentid, round(f.score, 9)] for f in result.fragments]
    return {"ids": [d.documentid for d in (result.documents or [])[:10]],
            "fragments": len(scored),
            "digest": hashlib.sha1(json.dumps(scored).encode()).hexdigest()}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
