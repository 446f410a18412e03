"""Which filtered phrase plans the procedure plugin runs (``procedure.filtered``) and what its
call carries (``procedure.filter_options``): the restriction as values, every category form as
the plugin's disjunctive normal form, and the plan's choices for each search."""

from __future__ import annotations

from typing import Any

import pytest

from thalabus_graph.plan.steps import (
    VECTOR_SOURCES,
    CategoryPattern,
    FilterPattern,
    Fusion,
    PhraseCall,
    PhrasePlan,
    Restriction,
    Search,
    TextSearch,
    VectorSearch,
)
from thalabus_graph.search.procedure import eligible, filter_options, filtered

PHRASE = "river floods"
TAG = CategoryPattern("TAG", ("a", "b"))


def vector(path: str, restriction: Restriction | None = None,
           category: CategoryPattern | None = TAG, *, role: str = "results",
           detail: dict[str, Any] | None = None) -> VectorSearch:
    return VectorSearch(PHRASE, VECTOR_SOURCES[0], 100, restriction, category, path, 1500,
                        detail or {"estimated_fragments": 2000.0, "filtered_documents": 2000},
                        "search_vector", role, filtered=True)  # type: ignore[arg-type]


def text(path: str = "candidates", category: CategoryPattern | None = TAG,
         k: int | None = 400) -> TextSearch:
    return TextSearch(PHRASE, "chapters", "chapters_fulltext_english", "river floods", False,
                      None, category, k, {}, False, "results", path)  # type: ignore[arg-type]


def plan(*searches: Search, primed: bool = True, restricted: bool = True) -> PhrasePlan:
    call = PhraseCall(PHRASE, True, "river floods", results=not primed, statistics=primed)
    return PhrasePlan(PHRASE, True, (call, *searches, Fusion(PHRASE, "language-slots",
                                                               restricted)))


def test_a_primed_fused_filtered_phrase_is_the_plugins() -> None:
    searches = [vector("exact"), vector("none"), text()]
    assert filtered(plan(*searches)) == searches
    assert eligible(plan(*searches), scoped=False)
    assert not eligible(plan(*searches), scoped=True)


@pytest.mark.parametrize("found", [
    plan(vector("in-index"), text()),                            # the ontology's own index
    plan(vector("exact", role="fit"), text()),                   # a fit searched on its own
    plan(vector("exact"), text(), primed=False),                 # no unrestricted statistics
    plan(vector("exact"), text(), restricted=False),             # an unrestricted fusion
    plan(vector("exact"), text(category=CategoryPattern("TAG", ("c",)))),  # two restrictions
])
def test_other_plans_run_the_engines_statements(found: PhrasePlan) -> None:
    assert filtered(found) is None
    assert not eligible(found, scoped=False)


def test_the_call_carries_the_restriction_and_the_plans_choices() -> None:
    ids = frozenset({"d2", "d1"})
    options = filter_options([vector("index", ids), vector("none", ids), text("index", k=800),
                              text(k=None)])
    assert options["documentids"] == ["d1", "d2"]
    assert options["filter"] == [[{"name": "TAG", "values": ["a", "b"], "negated": False}]]
    assert options["searches"] == [
        {"kind": "index", "source": "chapters", "k": 1500, "top_n": 100, "walked": 2000.0},
        {"kind": "text", "source": "chapters", "index": "chapters_fulltext_english",
         "k": 800}]


def test_every_category_form_is_one_normal_form() -> None:
    negated = CategoryPattern("TAG", ("a",), negated=True)
    both = FilterPattern("", (), False, ((TAG, negated), (CategoryPattern("YEAR", ("2024",)),)))
    assert filter_options([vector("exact", category=negated)])["filter"] == [
        [{"name": "TAG", "values": ["a"], "negated": True}]]
    assert filter_options([vector("exact", category=both)])["filter"] == [
        [{"name": "TAG", "values": ["a", "b"], "negated": False},
         {"name": "TAG", "values": ["a"], "negated": True}],
        [{"name": "YEAR", "values": ["2024"], "negated": False}]]
    only_ids = filter_options([vector("exact", frozenset({"d1"}), None)])
    assert only_ids["filter"] is None and only_ids["documentids"] == ["d1"]
