"""A fragment's calibrated score belongs to the phrase, the fragment and the corpus, not to the
request: the same fragment scores the same (within ``TOLERANCE``) whatever ``limit`` sized the
query's pools and whatever ``k`` an adapter asked for, because the background a phrase's scores
are read against is a fixed sample of its unrestricted candidates (``scale.BACKGROUND_TOP_N``
per vector source), read with the phrase's own search whatever pool the request keeps.
"""

from __future__ import annotations

import pytest

from benchmarks.quality import semantic_phrase
from tests.integration.sample import load_sample
from thalabus_graph import ThalabusGraph
from thalabus_graph.graph.database import Database
from thalabus_graph.integrations import langchain as lc
from thalabus_graph.integrations import llamaindex as li

pytestmark = pytest.mark.integration

TOLERANCE = 0.01
QUESTIONS = ("how do I clean a kitchen floor?", "asylum seeker from Iraq",
             "Wie lange dauert ein Asylverfahren?")


@pytest.fixture(scope="module")
def graph(db: Database) -> ThalabusGraph:
    return load_sample(db)


def scores_at(graph: ThalabusGraph, question: str, limit: int | None) -> dict[str, float]:
    result = graph.query(semantic_phrase(question), return_documents=False, limit=limit)
    return {f.fragmentid: f.score for f in result.fragments}


@pytest.mark.parametrize("question", QUESTIONS)
def test_a_fragments_score_does_not_depend_on_the_limit(graph: ThalabusGraph,
                                                        question: str) -> None:
    full = scores_at(graph, question, None)
    assert full, question
    for limit in (3, 10):
        for fid, score in scores_at(graph, question, limit).items():
            assert fid in full, (limit, fid)
            assert abs(score - full[fid]) <= TOLERANCE, (question, limit, fid, score,
                                                         full[fid])


def test_a_fragments_score_does_not_depend_on_the_adapters_k(graph: ThalabusGraph) -> None:
    question = QUESTIONS[0]
    full = scores_at(graph, question, None)
    for k in (3, 4, 5, 10):
        for doc in lc.ThalabusLangChainRetriever(graph=graph, k=k).invoke(question):
            fid = doc.metadata["fragment_id"]
            assert abs(doc.metadata["score"] - full[fid]) <= TOLERANCE, ("langchain", k, fid)
        for node in li.ThalabusLlamaIndexRetriever(graph, k=k).retrieve(question):
            fid = node.node.metadata["fragment_id"]
            assert node.score is not None
            assert abs(node.score - full[fid]) <= TOLERANCE, ("llamaindex", k, fid)


@pytest.mark.parametrize("fusion", ["convex", "max", "rrf"])
def test_every_fusion_rule_keeps_its_documents_on_the_calibrated_scale(
        graph: ThalabusGraph, fusion: str) -> None:
    """Each rule's fused order carries the phrase's semantic scores (``fusion.ranked_onto``),
    so the calibration reads a fused score as the index scale it was fitted on."""
    ruled = ThalabusGraph(graph.db, settings=graph.settings.replace(fusion=fusion),
                          embedder=graph.embedder)
    for limit in (3, None):
        result = ruled.query(semantic_phrase(QUESTIONS[0]), limit=limit)
        assert result.documents, (fusion, limit)
        assert result.documents[0].documentid == "docid-2003", (fusion, limit)


@pytest.mark.parametrize("scope", ["COUNTRY_OF_ORIGIN=IQ,AF,SY", "NOT TAG=home",
                                   "CHARACTER=Bob OR DECISION=granted"])
def test_a_filtered_fragments_score_does_not_depend_on_the_limit(graph: ThalabusGraph,
                                                                 scope: str) -> None:
    """A filter (and so a required filter) restricts the phrase's searches; the background
    its scores are read against is still the phrase's unrestricted sample."""
    for question in QUESTIONS:
        text = f"{semantic_phrase(question)} AND ({scope})"
        full = {f.fragmentid: f.score
                for f in graph.query(text, return_documents=False).fragments}
        for limit in (3, 10):
            for f in graph.query(text, return_documents=False, limit=limit).fragments:
                assert f.fragmentid in full, (text, limit, f.fragmentid)
                assert abs(f.score - full[f.fragmentid]) <= TOLERANCE, (
                    text, limit, f.fragmentid, f.score, full[f.fragmentid])
