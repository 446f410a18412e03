"""A fragment's score does not depend on the request on a corpus larger than a sized pool: the
committed XQuAD-R slice (90 documents, precomputed vectors, ``test_quality_smoke``) holds more
candidates than ``limit=3`` keeps (a pool of 30 per source), so the fusion's fit and the
calibrated background would move with the limit if they were read from the request's pool.

Every question of the slice is asked without a limit (the reference), at ``limit`` 3 and 10
and through both adapters at ``k`` 3, 4, 5 and 10 (``benchmarks.request_independence``'s
requests), unscoped and within a dataset of every second document; every fragment a request
returns must be in the reference with a score within ``TOLERANCE``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from benchmarks.quality import PrecomputedEmbedder, documents
from benchmarks.request_independence import is_calibrated, requests, scope_dataset
from tests.integration.test_quality_smoke import xquad_slice
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.graph.database import Database

pytestmark = pytest.mark.integration

TOLERANCE = 0.01


def differences(graph: ThalabusGraph, questions: list[str], scope: Mapping[str, Any]
                ) -> tuple[int, list[tuple[str, str, str, float]]]:
    """The fragments compared, and (question, request, fragment id, difference) of every
    fragment a request returns whose score differs from the unlimited reference's by more
    than ``TOLERANCE`` (a fragment the reference lacks counts as 1.0)."""
    asks = requests(graph, scope)
    reference_of = asks[0][1]
    compared = 0
    out: list[tuple[str, str, str, float]] = []
    for question in questions:
        reference = reference_of(question)
        for name, ask in asks[1:]:
            for fid, hit in ask(question).items():
                compared += 1
                known = reference.get(fid)
                diff = 1.0 if known is None else abs(hit.score - known.score)
                if diff > TOLERANCE:
                    out.append((question, name, fid, diff))
    return compared, out


def test_scores_on_the_slice_do_not_depend_on_the_limit_or_k(clean_db: Database,
                                                              db_settings: Settings) -> None:
    corpus = xquad_slice()
    assert corpus.query_vectors is not None
    embedder = PrecomputedEmbedder(corpus.query_vectors,
                                   dimensions=db_settings.embedding_dimensions)
    graph = ThalabusGraph(clean_db, settings=db_settings, embedder=embedder)
    try:
        graph.ingest(documents(corpus), strict=True, progress=False, embed=False)
        questions = list(corpus.queries.values())[::3]
        assert is_calibrated(graph, questions[0])
        dataset, size = scope_dataset(graph, corpus, 2)
        assert size == 45
        unscoped = differences(graph, questions, {})
        scoped = differences(graph, questions, {"subset_of_datasetids": [dataset]})
    finally:
        clean_db.write("migrations_delete_data_nodes")
    # 28 questions, 11 requests each: most return fragments (a few are gated out whole)
    assert unscoped[0] >= 500 and scoped[0] >= 500, (unscoped[0], scoped[0])
    assert unscoped[1] == [], unscoped[1][:10]
    assert scoped[1] == [], scoped[1][:10]
