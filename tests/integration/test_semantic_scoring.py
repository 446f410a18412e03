"""Semantic scores per source on the index scale (``CALIBRATION_FILE=none``): the index's
(1 + cosine) / 2, times the source's factor, capped, then dropped under ``MIN_SCORE``; the exact
path of a filtered search scores the same. The calibrated scale is tested in
``test_calibrated_scores.py``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.graph.database import Database

pytestmark = pytest.mark.integration

DIMS = 384
CHAPTER_COSINES = {"sf-1": 0.9, "sf-2": 0.5, "sf-3": 0.1, "sf-4": -0.8}
SUMMARY_COSINES = {"sf-1": 0.8, "sf-2": 0.0, "sf-3": -0.2, "sf-4": 0.6}
TUNED = {"score_factor_chapters": 1.5, "score_cap_chapters": 0.9,
         "score_factor_summaries": 0.5, "score_cap_summaries": 1.0, "min_score": 0.3,
         "hybrid_all_queries": False, "short_query_max_words": 0, "calibration_file": "none"}


def _at_cosine(cos: float, axis: int) -> list[float]:
    """A unit vector whose cosine with the query (the first basis vector) is ``cos``."""
    v = np.zeros(DIMS, dtype=np.float64)
    v[0], v[axis] = cos, math.sqrt(1 - cos * cos)
    return [float(x) for x in v]


class AxisEmbedder:
    """Every query is the first basis vector (the corpus is ingested with its vectors)."""

    @property
    def dimensions(self) -> int:
        return DIMS

    @property
    def model_id(self) -> str:
        return "axis"

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), DIMS), dtype=np.float32)
        out[:, 0] = 1.0
        return out

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        raise AssertionError("passages are ingested with their vectors")


@pytest.fixture()
def graph(clean_db: Database) -> ThalabusGraph:
    loader = ThalabusGraph(clean_db, settings=Settings.from_env())
    loader.ingest([{"documentid": doc, "chapters": [f"chapter of {doc}"], "paragraphs": [[]],
                    "summaries": [f"summary of {doc}"], "categories": {"TAG": ["all"]},
                    "embeddings": {f"{doc}-c1": _at_cosine(CHAPTER_COSINES[doc], 1 + i),
                                   f"{doc}-s1": _at_cosine(SUMMARY_COSINES[doc], 10 + i)}}
                   for i, doc in enumerate(CHAPTER_COSINES)], embed=False, progress=False)
    return ThalabusGraph(clean_db, settings=Settings.from_env().replace(**TUNED),
                         embedder=AxisEmbedder())


def _expected() -> dict[str, float]:
    out = {}
    for kind, cosines in (("chapters", CHAPTER_COSINES), ("summaries", SUMMARY_COSINES)):
        factor, cap = TUNED[f"score_factor_{kind}"], TUNED[f"score_cap_{kind}"]
        for doc, cos in cosines.items():
            score = min((1 + cos) / 2 * factor, cap)
            if score >= TUNED["min_score"]:
                out[f"{doc}-{kind[0]}1"] = score
    return out


def _paths(plan: Any) -> set[str]:
    """Every ``path`` a step of the profiled plan took (iteratively)."""
    found: set[str] = set()
    stack = [plan]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if isinstance(value.get("path"), str):
                found.add(value["path"])
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return found


def test_factor_cap_and_min_score_apply_per_source(graph: ThalabusGraph) -> None:
    expected = _expected()
    # the case is not vacuous: a chapter is capped, a summary is scaled down, some drop
    assert expected["sf-1-c1"] == 0.9 and expected["sf-1-s1"] == pytest.approx(0.45)
    assert "sf-4-c1" not in expected and "sf-2-s1" not in expected
    result = graph.query('"kitchen"', return_documents=False)
    got = {f.fragmentid: f.score for f in result.fragments}
    assert got.keys() == expected.keys()
    for fragmentid, score in expected.items():
        assert got[fragmentid] == pytest.approx(score, abs=1e-5), fragmentid


def test_the_exact_path_of_a_filtered_search_scores_like_the_index(
        graph: ThalabusGraph) -> None:
    unfiltered = graph.query('"kitchen"', return_documents=False)
    filtered = graph.query('"kitchen" AND TAG=all', return_documents=False, profile=True)
    assert "exact" in _paths(filtered.plan)
    assert {f.fragmentid: round(f.score, 5) for f in filtered.fragments} == \
        {f.fragmentid: round(f.score, 5) for f in unfiltered.fragments}
