"""The fusion rules on hand-made score lists (pure functions, no Neo4j).

``language-slots`` must behave like convex fusion on a monolingual list, keep every
other-language document at its semantic rank on a mixed list, keep weak text evidence weak,
and give a fragment the same score whether or not a filter restricted its search.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from thalabus_graph.errors import ConfigurationError
from thalabus_graph.fragments import Fragment, aggregate_documents
from thalabus_graph.scoring.fusion import (
    LanguageSlots,
    convex_scores,
    fuse_convex,
    fuse_rrf,
    slot_scores,
)
from thalabus_graph.settings import Settings


def fuse_language_slots(query: str, semantic: Sequence[Fragment], text: Sequence[Fragment],
                        *, languages: Mapping[str, str | None], text_weight: float,
                        full_coverage: float) -> list[Fragment]:
    """``LanguageSlots`` fitted on these hits and applied to them, as an unrestricted
    search does (``SearchExecutor._fuse``)."""
    model = LanguageSlots.fit(query, semantic, text, languages=languages,
                              text_weight=text_weight, full_coverage=full_coverage)
    return model.fuse(semantic, text)

QUERY = "alpha beta gamma delta"


def sem(doc: str, score: float) -> Fragment:
    return Fragment(f"{doc}-c1", doc, f"semantic text of {doc}", score, "chapters",
                    ("semantic:chapters",))


def txt(doc: str, score: float, text: str = QUERY) -> Fragment:
    return Fragment(f"{doc}-c1", doc, text, score, "chapters", ("text:chapters",))


def ranking(fragments: list[Fragment]) -> list[str]:
    return [d for d, _ in aggregate_documents(fragments)]


def slots(semantic: list[Fragment], text: list[Fragment], languages: dict[str, str | None],
          *, w: float = 0.5, full_coverage: float = 0.0) -> list[Fragment]:
    return fuse_language_slots(QUERY, semantic, text, languages=languages, text_weight=w,
                               full_coverage=full_coverage)


# --- hypothesis strategies: distinct semantic scores, text scores in (0, 1] -----------------
scores = st.floats(min_value=0.5, max_value=1.0, allow_nan=False)
text_scores = st.floats(min_value=0.01, max_value=1.0, allow_nan=False)


@st.composite
def score_lists(draw: st.DrawFn, *, langs: tuple[str, ...]
                ) -> tuple[list[Fragment], list[Fragment], dict[str, str | None]]:
    """Semantic hits for n documents (distinct scores), text hits on a subset, languages."""
    n = draw(st.integers(min_value=2, max_value=12))
    values = draw(st.lists(scores, min_size=n, max_size=n, unique=True))
    docs = [f"d{i}" for i in range(n)]
    languages: dict[str, str | None] = {d: draw(st.sampled_from(langs)) for d in docs}
    semantic = [sem(d, v) for d, v in zip(docs, values, strict=True)]
    hit = draw(st.lists(st.sampled_from(docs), unique=True, max_size=n))
    text = [txt(d, draw(text_scores)) for d in hit]
    return semantic, text, languages


# --- monolingual: a convex fusion -------------------------------------------------------------
@given(score_lists(langs=("en",)), st.floats(min_value=0.0, max_value=1.0))
def test_monolingual_order_is_the_convex_fusion_order(
        lists: tuple[list[Fragment], list[Fragment], dict[str, str | None]], w: float) -> None:
    semantic, text, languages = lists
    lo = min(f.score for f in semantic)
    hi = max(f.score for f in semantic)
    convex = convex_scores(semantic, text, semantic_range=(lo, hi), text_weight=w)
    fused = slots(semantic, text, languages, w=w)
    got = [convex[f.fragmentid] for f in fused]
    assert got == sorted(got, reverse=True)  # the convex order (ties may swap)
    # the scores are the semantic slots: the same values, handed out in the new order
    assert sorted(f.score for f in fused) == sorted(f.score for f in semantic)


def test_monolingual_hand_made_list_reorders_by_text_evidence() -> None:
    semantic = [sem("a", 0.90), sem("b", 0.89), sem("c", 0.80)]
    text = [txt("b", 1.0), txt("c", 0.2)]
    fused = slots(semantic, text, {"a": "en", "b": "en", "c": "en"})
    assert ranking(fused) == ["b", "a", "c"]  # b: 0.5*0.9 + 0.5 beats a: 0.5*1.0
    assert [f.score for f in fused] == [0.90, 0.89, 0.80]
    assert ranking(fuse_convex(semantic, text, semantic_range=(0.80, 0.90),
                               text_weight=0.5)) == ["b", "a", "c"]


def test_text_weight_zero_keeps_the_semantic_order() -> None:
    semantic = [sem("a", 0.9), sem("b", 0.8), sem("c", 0.7)]
    fused = slots(semantic, [txt("c", 1.0)], {"a": "en", "b": "en", "c": "en"}, w=0.0)
    assert ranking(fused) == ["a", "b", "c"]


# --- mixed languages: other languages keep their semantic ranks --------------------------------
@given(score_lists(langs=("de", "en", "fr")), st.floats(min_value=0.0, max_value=1.0))
def test_other_language_documents_keep_their_semantic_rank(
        lists: tuple[list[Fragment], list[Fragment], dict[str, str | None]], w: float) -> None:
    semantic, text, languages = lists
    text = [f for f in text if languages[f.documentid] == "fr"]  # lexical hits: query language
    before = ranking(semantic)
    after = ranking(slots(semantic, text, languages, w=w))
    for position, doc in enumerate(before):
        if languages[doc] != "fr":
            assert after[position] == doc  # same rank, among themselves and against the rest
    # the query language's documents fill exactly the ranks they held
    assert {after[i] for i, d in enumerate(before) if languages[d] == "fr"} == \
        {d for d in before if languages[d] == "fr"}


def test_mixed_hand_made_list_french_evidence_cannot_push_down_german_or_english() -> None:
    semantic = [sem("fr1", 0.95), sem("de1", 0.93), sem("en1", 0.92), sem("fr2", 0.90),
                sem("fr3", 0.85)]
    text = [txt("fr3", 1.0), txt("fr2", 0.9)]
    languages: dict[str, str | None] = {"fr1": "fr", "fr2": "fr", "fr3": "fr", "de1": "de",
                                        "en1": "en"}
    fused = slots(semantic, text, languages)
    # fr2 (0.5 x 0.5 + 0.5 x 0.9) moves to the first French slot; de1 and en1 stay 2nd and 3rd
    assert ranking(fused) == ["fr2", "de1", "en1", "fr1", "fr3"]
    # plain convex fusion of the same lists puts every French document first
    convex = fuse_convex(semantic, text, semantic_range=(0.85, 0.95), text_weight=0.5)
    assert ranking(convex) == ["fr2", "fr1", "fr3", "de1", "en1"]


def test_text_only_documents_take_slots_below_every_semantic_hit() -> None:
    semantic = [sem("a", 0.9), sem("b", 0.8), sem("c", 0.7)]
    text = [txt("x", 1.0), txt("b", 1.0)]
    fused = slots(semantic, text, {"a": "en", "b": "en", "c": "en", "x": "en"})
    # fused: b 0.75, a 0.5 (semantic 0.9 wins the tie), x 0.5, c 0.0
    assert ranking(fused) == ["b", "a", "x", "c"]
    scores = dict(aggregate_documents(fused))
    assert (scores["b"], scores["a"], scores["x"]) == (0.9, 0.8, 0.7)  # x holds a slot
    assert scores["c"] < 0.7  # the displaced one lies below every semantic score


def test_slot_scores_keep_unchosen_groups_in_semantic_order() -> None:
    out = slot_scores({"a": 0.9, "b": 0.8}, {"a": 0.1, "b": 0.9, "c": 0.5},
                      {"a": "de", "b": "de", "c": "de"}, reordered=("fr",))
    assert out["a"] == 0.9 and out["b"] == 0.8 and out["c"] == pytest.approx(0.8 * 0.5)


# --- weak evidence -------------------------------------------------------------------------
def test_a_hit_sharing_only_a_common_word_stays_weak() -> None:
    query = "vegetarisches Gericht mit Gemüse"
    semantic = [sem("bread", 0.86), sem("veg", 0.85), sem("other", 0.80)]
    text = [txt("bread", 1.0, "Brot mit Butter und mit Salz"),
            txt("veg", 0.7, "Gemüse mit Reis"),
            txt("other", 0.5, "Kuchen mit Sahne")]
    languages: dict[str, str | None] = {"bread": "de", "veg": "de", "other": "de"}
    model = LanguageSlots.fit(query, semantic, text, languages=languages, text_weight=0.5,
                              full_coverage=0.25)
    evidence = {f.documentid: f.score for f in model.evidence(text)}
    assert evidence["veg"] > evidence["bread"]
    assert evidence["bread"] < 0.6  # the best BM25 hit is not worth 1.0 when it shares "mit"
    assert ranking(model.fuse(semantic, text))[0] == "veg"
    # without the coverage weighting the bread keeps its full score and wins
    assert ranking(fuse_language_slots(query, semantic, text, languages=languages,
                                       text_weight=0.5, full_coverage=0.0))[0] == "bread"


def test_coverage_weights_words_by_rarity_among_the_candidates() -> None:
    semantic = [sem(f"s{i}", 0.9 - i / 100) for i in range(8)]
    text = [txt(f"s{i}", 1.0, "common") for i in range(6)] + [txt("s7", 0.5, "rare")]
    model = LanguageSlots.fit("common rare", semantic, text, languages={},
                              text_weight=0.5, full_coverage=1.0)
    assert model.idf["rare"] > model.idf["common"]
    assert model.coverage("rare") > model.coverage("common")


# --- filters never change a fragment's score ----------------------------------------------
@given(score_lists(langs=("de", "en")), st.data())
def test_a_restricted_search_scores_like_the_unrestricted_one(
        lists: tuple[list[Fragment], list[Fragment], dict[str, str | None]],
        data: st.DataObject) -> None:
    semantic, text, languages = lists
    model = LanguageSlots.fit(QUERY, semantic, text, languages=languages, text_weight=0.5,
                              full_coverage=0.25)
    full = {f.fragmentid: f.score for f in model.fuse(semantic, text)}
    keep = data.draw(st.sets(st.sampled_from(sorted(languages))))
    restricted = model.fuse([f for f in semantic if f.documentid in keep],
                            [f for f in text if f.documentid in keep])
    assert {f.fragmentid: f.score for f in restricted} == \
        {fragmentid: s for fragmentid, s in full.items() if fragmentid.removesuffix("-c1") in keep}


# --- the other rules and the settings -------------------------------------------------------
def test_rrf_sums_reciprocal_ranks() -> None:
    fused = fuse_rrf([sem("a", 0.9), sem("b", 0.8)], [txt("b", 1.0)], k=60)
    assert ranking(fused) == ["b", "a"]
    assert fused[0].score == pytest.approx(1 / 62 + 1 / 61)
    assert fused[0].contributions == ("semantic:chapters", "text:chapters")


def test_language_slots_is_the_default_and_its_settings_are_checked() -> None:
    assert Settings().fusion == "language-slots"
    with pytest.raises(ConfigurationError):
        Settings(fusion_full_coverage=1.5)
    with pytest.raises(ConfigurationError):
        Settings(fusion="slots")


def test_ranked_onto_keeps_the_fused_order_on_the_semantic_scores() -> None:
    from thalabus_graph.scoring.fusion import ranked_onto

    semantic = [Fragment(f"s{i}", f"d{i}", None, s, "chapters", ())
                for i, s in enumerate((0.91, 0.88, 0.80))]
    text_only = Fragment("t", "dt", None, 1.0, "chapters", ())
    fused = fuse_rrf(semantic, [text_only, semantic[2]], 60)
    out = ranked_onto(fused, semantic)
    assert [f.fragmentid for f in out] == [f.fragmentid for f in fused]
    assert [f.score for f in out[:3]] == [0.91, 0.88, 0.80]
    assert 0.0 <= out[3].score < 0.80
