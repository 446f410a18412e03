"""One side of ``benchmarks.scale_ab``: answers the coordinator's queries with the engine
its interpreter imports, and times each.

Run by the coordinator as ``PYTHON -m benchmarks.scale_ab_worker URI LOOKUP ONTOLOGY``:
``LOOKUP`` is a ``.npz`` of the query vectors (``texts``, ``vectors``), so no model runs.
Each stdin line is a query text as JSON; each stdout line is JSON with the milliseconds of
``ThalabusGraph.query`` and the document ids it returned (best first, at most 10). Only
``Settings`` and ``ThalabusGraph.connect`` / ``query`` are used, an API both sides share;
that is why it holds its own ``Lookup`` rather than importing ``scale_queries.LookupEmbedder``,
whose module imports this checkout's ``quality`` harness (which the old engine may not load).
"""

from __future__ import annotations

import gc
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
    uri, lookup_path, ontology = argv
    data = np.load(lookup_path, allow_pickle=False)
    lookup = Lookup([str(t) for t in data["texts"]], data["vectors"])
    settings = Settings(embedding_dimensions=DIMENSIONS, hybrid_all_queries=False,
                        short_query_max_words=0)
    with ThalabusGraph.connect(uri, settings=settings, embedder=lookup) as graph:
        gc.collect()
        gc.freeze()  # the lookup's objects stay out of the collections queries trigger
        print(json.dumps({"ready": True}), flush=True)
        for line in sys.stdin:
            text = json.loads(line)
            start = time.perf_counter()
            result = graph.query(text, ontology_id=ontology)
            ms = (time.perf_counter() - start) * 1000
            ids = [d.documentid for d in (result.documents or [])[:10]]
            print(json.dumps({"ms": ms, "ids": ids}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
