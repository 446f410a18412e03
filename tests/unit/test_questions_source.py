"""The questions source's pure parts: its place among the vector sources, its own top-N and
its factor, cap and ``MIN_SCORE`` on the index scale, the contribution that names it, and the
path the cost model chooses for it (no database is read)."""

from __future__ import annotations

import pytest

from thalabus_graph import Settings
from thalabus_graph.errors import ConfigurationError
from thalabus_graph.plan import cost
from thalabus_graph.plan.cost import Scope
from thalabus_graph.plan.steps import VECTOR_BY_SOURCE, VECTOR_SOURCES, InIndexFilter
from thalabus_graph.search.hits import semantic_fragments

QUESTIONS = VECTOR_BY_SOURCE["questions"]


def test_questions_are_a_vector_source_with_their_own_index_and_twin() -> None:
    assert (QUESTIONS.label, QUESTIONS.index, QUESTIONS.filtered_index) == (
        "Question", "questions", "questions_ontology")
    assert [src.source for src in VECTOR_SOURCES] == [
        "chapters", "paragraphs", "summaries", "questions"]


def test_top_n_factor_and_cap_of_questions_are_their_own_settings() -> None:
    settings = Settings(top_n_questions=7, top_n_summaries=9, score_factor_questions=0.5,
                        score_cap_questions=0.4, min_score=0.2, calibration_file="none")
    assert cost.top_n(settings, QUESTIONS) == 7
    hits = [("d-1-q1", "d-1", "Who may stay?", 0.9), ("d-2-q1", "d-2", "Why?", 0.6),
            ("d-3-q1", "d-3", "When?", 0.3)]
    found = semantic_fragments(settings, QUESTIONS, hits)
    assert [(f.fragmentid, f.score, f.source, f.contributions) for f in found] == [
        ("d-1-q1", 0.4, "questions", ("semantic:questions",)),        # capped
        ("d-2-q1", pytest.approx(0.3), "questions", ("semantic:questions",)),  # halved
    ]                                                               # 0.15 < min_score: gone
    summaries = semantic_fragments(settings, VECTOR_BY_SOURCE["summaries"], hits)
    assert [f.score for f in summaries] == [0.9, 0.6, 0.3]  # the questions' settings only


@pytest.mark.parametrize("name", ["top_n_questions", "score_factor_questions",
                                  "score_cap_questions"])
def test_the_questions_settings_are_range_checked(name: str) -> None:
    with pytest.raises(ConfigurationError):
        Settings(**{name: -1})


def test_an_ontology_scoped_question_search_takes_its_filtered_twin() -> None:
    settings = Settings(exact_search_max_candidates=10, vector_min_k=10, top_n_questions=10)
    scope = Scope(ontologyid="law", documents=1000,
                  counts={"documents": 4000, "chapters": 4000, "questions": 40_000},
                  in_index=InIndexFilter(True))
    choice = cost.choose_vector_path(scope, settings, QUESTIONS, 10, 1000)
    assert choice.path == "in-index" and "questions_ontology" in choice.reason
    plain = cost.choose_vector_path(
        Scope(ontologyid="law", documents=1000, counts=scope.counts,
              in_index=InIndexFilter(False, "questions_ontology not ONLINE")),
        settings, QUESTIONS, 10, 1000)
    assert plain.path == "index" and "questions_ontology not ONLINE" in plain.reason
