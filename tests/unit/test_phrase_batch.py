"""Which searches of a phrase's plan one ``search_phrase_filtered`` call runs (``batched``):
a pure function of the plan, so explain and the run name the same statement."""

from __future__ import annotations

from thalabus_graph.plan.batches import batched
from thalabus_graph.plan.steps import (
    VECTOR_SOURCES,
    CategoryPattern,
    Fusion,
    PhraseCall,
    PhrasePlan,
    Restriction,
    Role,
    TextSearch,
    VectorSearch,
)

JANE = CategoryPattern("CHARACTER", ("Jane",))
CHAPTERS, PARAGRAPHS = VECTOR_SOURCES[0], VECTOR_SOURCES[1]


def _vector(path: str, *, role: Role = "results", category: CategoryPattern | None = JANE,
            restriction: Restriction | None = None, source: int = 0) -> VectorSearch:
    return VectorSearch("cat", VECTOR_SOURCES[source], 200, restriction, category, path, 200,
                        {}, "", role, filtered=True)


def _text(k: int | None = 400, *, role: Role = "results",
          category: CategoryPattern | None = JANE) -> TextSearch:
    return TextSearch("cat", "chapters", "chapters_fulltext", "cat", False, None, category, k,
                      {}, False, role)


def _plan(*searches: object) -> PhrasePlan:
    return PhrasePlan("cat", True, tuple(searches))  # type: ignore[arg-type]


def test_a_filtered_fused_phrase_is_one_call_with_its_statistics() -> None:
    primed = PhraseCall("cat", True, "cat", results=False, statistics=True)
    plan = _plan(primed, _vector("exact"), _vector("index", source=1), _vector("none", source=2),
                 _text(), _text(None), Fusion("cat", "language-slots", True))
    # the skipped source, the text index without k and the fusion run no statement
    assert batched(plan) == ((0, 1, 2, 4),)


def test_a_single_search_is_its_own_statement() -> None:
    assert batched(_plan(_vector("exact"), _vector("none", source=1))) == ()
    # an unfiltered phrase's call is search_phrase, never batched
    assert batched(_plan(PhraseCall("cat", True, "cat"), _vector("exact"))) == ()


def test_searches_of_one_role_restricted_alike_share_a_call() -> None:
    ids = frozenset({"d1"})
    plan = _plan(_vector("exact"), _vector("in-index", source=1),
                 _vector("exact", role="fit", category=None),
                 _text(role="fit", category=None), _vector("exact", restriction=ids, source=2),
                 _text())
    # the results; the fusion's fit on the scope's candidates; the in-index path and the
    # search restricted otherwise run alone
    assert batched(plan) == ((0, 5), (2, 3))


def test_the_statistics_ride_with_the_results_only() -> None:
    primed = PhraseCall("cat", True, "cat", results=False, statistics=True)
    fit = _plan(primed, _vector("exact", role="fit", category=None),
                _text(role="fit", category=None))
    assert batched(fit) == ((1, 2),)
