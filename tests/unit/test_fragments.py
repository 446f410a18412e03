"""Combination rules (docs/architecture.md, "Evaluation rules"), with property-based checks."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from thalabus_graph.fragments import (
    Fragment,
    aggregate_documents,
    combine_and,
    combine_not,
    combine_or,
    document_id_of,
    rag_select,
    stub,
)


def frag(fragmentid: str, score: float, source: str = "chapters",
         text: str | None = "t") -> Fragment:
    return Fragment(fragmentid, document_id_of(fragmentid), text, score, source,
                    (f"semantic:{source}",))


def ids(fragments: list[Fragment]) -> list[str]:
    return [f.fragmentid for f in fragments]


def test_document_id_is_everything_before_the_last_hyphen() -> None:
    assert document_id_of("docid-3894-c1") == "docid-3894"
    assert document_id_of("a-b-c-p12") == "a-b-c"
    assert document_id_of("plain") == "plain"


def test_a_category_stub_is_its_own_document_hyphens_and_all() -> None:
    assert document_id_of("docid-1001", "category") == "docid-1001"
    assert document_id_of("docid-1001-c1", "chapters") == "docid-1001"


def test_and_of_two_scored_sides_uses_geometric_mean_with_the_best_of_the_other_side() -> None:
    left = [frag("d1-c1", 0.8), frag("d1-c2", 0.4), frag("d2-c1", 0.9)]
    right = [frag("d1-p1", 0.5, "paragraphs"), frag("d3-p1", 0.7, "paragraphs")]
    out = {f.fragmentid: f for f in combine_and(left, right)}
    assert set(out) == {"d1-c1", "d1-c2", "d1-p1"}
    assert math.isclose(out["d1-c1"].score, math.sqrt(0.8 * 0.5))
    assert math.isclose(out["d1-c2"].score, math.sqrt(0.4 * 0.5))
    assert math.isclose(out["d1-p1"].score, math.sqrt(0.5 * 0.8))
    assert "semantic:paragraphs" in out["d1-c1"].contributions


def test_and_keeps_a_shared_fragment_once_with_the_higher_result() -> None:
    left = [frag("d1-c1", 0.9), frag("d1-c2", 0.1)]
    right = [frag("d1-c1", 0.4)]
    out = combine_and(left, right)
    assert ids(out).count("d1-c1") == 1
    shared = next(f for f in out if f.fragmentid == "d1-c1")
    assert math.isclose(shared.score, max(math.sqrt(0.9 * 0.4), math.sqrt(0.4 * 0.9)))


def test_and_with_a_pure_filter_keeps_scores_and_drops_stubs() -> None:
    scored = [frag("d1-c1", 0.7), frag("d2-c1", 0.6)]
    out = combine_and([stub("d2"), stub("d9")], scored)
    assert [(f.fragmentid, f.score) for f in out] == [("d2-c1", 0.6)]
    assert "category" in out[0].contributions


def test_and_of_two_filters_gives_stubs_of_common_documents() -> None:
    out = combine_and([stub("d1"), stub("d2")], [stub("d2"), stub("d3")])
    assert [(f.fragmentid, f.score, f.text, f.source) for f in out] == [
        ("d2", 1.0, None, "category")
    ]


def test_a_mixed_side_lets_its_stubs_take_part() -> None:
    mixed = [stub("d1"), frag("d2-c1", 0.5)]
    scored = [frag("d1-c1", 0.64), frag("d2-c2", 0.25)]
    out = {f.fragmentid: f.score for f in combine_and(mixed, scored)}
    assert math.isclose(out["d1"], math.sqrt(1.0 * 0.64))
    assert math.isclose(out["d1-c1"], math.sqrt(0.64 * 1.0))
    assert math.isclose(out["d2-c1"], math.sqrt(0.5 * 0.25))


def test_a_side_said_to_be_scored_is_scored_though_it_holds_only_stubs() -> None:
    # a mixed side searched within the other side's documents, its phrase hits all outside
    seen = [stub("d1"), stub("d2")]
    scored = [frag("d1-c1", 0.64), frag("d2-c1", 0.25)]
    out = {f.fragmentid: f.score for f in combine_and(seen, scored, left_filter=False)}
    assert out == pytest.approx({"d1": 0.8, "d1-c1": 0.8, "d2": 0.5, "d2-c1": 0.5})
    as_filter = combine_and(seen, scored)
    assert [(f.fragmentid, f.score) for f in as_filter] == [("d1-c1", 0.64), ("d2-c1", 0.25)]


def test_or_takes_the_higher_score_with_its_text_and_source_and_merges_contributions() -> None:
    a = Fragment("d1-c1", "d1", "from a", 0.3, "chapters", ("semantic:chapters",))
    b = Fragment("d1-c1", "d1", "from b", 0.6, "keywords", ("text:chapters",))
    out = combine_or([a], [b])
    assert len(out) == 1
    assert (out[0].text, out[0].source, out[0].score) == ("from b", "keywords", 0.6)
    assert out[0].contributions == ("semantic:chapters", "text:chapters")


def test_not_removes_whole_documents_and_keeps_scores() -> None:
    universe = [stub("d1"), stub("d2"), frag("d3-c1", 0.4)]
    out = combine_not(universe, [frag("d1-c9", 0.1)])
    assert ids(out) == ["d2", "d3-c1"]


def test_ties_are_broken_by_fragment_id() -> None:
    out = combine_or([frag("d2-c1", 0.5)], [frag("d1-c1", 0.5), frag("d1-c10", 0.5)])
    assert ids(out) == ["d1-c1", "d1-c10", "d2-c1"]


def test_aggregate_and_rag_select() -> None:
    frs = [frag("d1-c1", 0.9), frag("d1-c2", 0.8), frag("d1-c3", 0.7), frag("d2-c1", 0.03),
           frag("d3-c1", 0.8)]
    assert aggregate_documents(frs) == [("d1", 0.9), ("d3", 0.8), ("d2", 0.03)]
    picked = rag_select(frs, min_score=0.05, max_per_doc=2, max_total=3)
    assert ids(picked) == ["d1-c1", "d1-c2", "d3-c1"]


# --- properties ------------------------------------------------------------------------

doc_ids = st.sampled_from(["d1", "d2", "d3", "d4"])
scores = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@st.composite
def fragments(draw: st.DrawFn) -> Fragment:
    if draw(st.booleans()) and draw(st.booleans()):
        return stub(draw(doc_ids))
    doc = draw(doc_ids)
    kind = draw(st.sampled_from(["c", "p"]))
    source = "chapters" if kind == "c" else "paragraphs"
    return Fragment(f"{doc}-{kind}{draw(st.integers(1, 3))}", doc, "x", draw(scores), source,
                    (f"semantic:{source}",))


frag_lists = st.lists(fragments(), max_size=8).map(lambda fs: combine_or(fs, []))
filters = st.lists(doc_ids, max_size=4).map(lambda ds: combine_or([stub(d) for d in ds], []))


def as_set(fs: list[Fragment]) -> set[tuple[str, float, str | None, str, tuple[str, ...]]]:
    return {(f.fragmentid, round(f.score, 12), f.text, f.source, f.contributions) for f in fs}


@settings(max_examples=150, deadline=None)
@given(frag_lists, frag_lists, frag_lists)
def test_or_is_associative_and_commutative_on_ids_and_scores(a: list[Fragment],
                                                              b: list[Fragment],
                                                              c: list[Fragment]) -> None:
    assert combine_or(combine_or(a, b), c) == combine_or(a, combine_or(b, c))
    swapped = {(f.fragmentid, f.score) for f in combine_or(b, a)}
    assert {(f.fragmentid, f.score) for f in combine_or(a, b)} == swapped


@settings(max_examples=150, deadline=None)
@given(st.lists(fragments().filter(lambda f: not f.is_stub), max_size=8), filters)
def test_and_with_a_pure_filter_never_changes_scores(scored: list[Fragment],
                                                      flt: list[Fragment]) -> None:
    scored = combine_or(scored, [])
    allowed = {f.documentid for f in flt}
    expected = {(f.fragmentid, f.score) for f in scored if f.documentid in allowed}
    for out in (combine_and(scored, flt), combine_and(flt, scored)):
        assert {(f.fragmentid, f.score) for f in out} == expected


@settings(max_examples=150, deadline=None)
@given(frag_lists, frag_lists)
def test_not_of_not_is_the_intersection_of_universes(universe: list[Fragment],
                                                     x: list[Fragment]) -> None:
    once = combine_not(universe, x)
    twice = combine_not(universe, once)
    x_docs = {f.documentid for f in x}
    assert {f.fragmentid for f in twice} == {
        f.fragmentid for f in universe if f.documentid in x_docs
    }


@settings(max_examples=150, deadline=None)
@given(frag_lists, frag_lists)
def test_results_are_sorted_and_unique_and_stable(a: list[Fragment], b: list[Fragment]) -> None:
    for op in (combine_and, combine_or, combine_not):
        out = op(a, b)
        assert out == op(list(reversed(a)), list(reversed(b)))
        keys = [(-f.score, f.fragmentid) for f in out]
        assert keys == sorted(keys)
        assert len(ids(out)) == len(set(ids(out)))
