"""Selection policies and the per-clause combination rules."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from thalabus_graph.errors import ConfigurationError
from thalabus_graph.fragments import document_id_of
from thalabus_graph.rerank import (
    Percentile,
    PerQueryNormalised,
    ScoredFragment,
    ScoreGap,
    SelectionPolicy,
    ThresholdWithTiers,
    TopK,
    combine_clause_scores,
)
from thalabus_graph.rerank.policies import (
    geometric_mean,
    normalise_min_max,
    order_key,
    weighted_minimum,
)
from thalabus_graph.settings import Settings


def frag(fragmentid: str, score: float) -> ScoredFragment:
    return ScoredFragment(fragmentid, f"text of {fragmentid}", score, original_score=0.5)


def ids(fragments: list[ScoredFragment]) -> list[str]:
    return [f.fragmentid for f in fragments]


def docs(fragments: list[ScoredFragment]) -> set[str]:
    return {f.documentid for f in fragments}


def test_document_id_is_everything_before_the_last_hyphen() -> None:
    assert document_id_of("docid-3894-c12") == "docid-3894"
    assert document_id_of("a-b-c-p1") == "a-b-c"
    assert document_id_of("plain") == "plain"
    assert frag("docid-7-s1", 0.1).documentid == "docid-7"
    assert ScoredFragment("x-1", "", 0.1, documentid="other").documentid == "other"


def test_scored_fragment_keeps_both_scores() -> None:
    f = ScoredFragment("docid-1-c1", "t", 0.04, original_score=0.78)
    assert f.to_dict() == {"fragmentid": "docid-1-c1", "documentid": "docid-1", "text": "t",
                           "score": 0.04, "ranking": 0.04, "original_score": 0.78}


# --- ThresholdWithTiers -----------------------------------------------------------------------


def test_tier_1_keeps_every_fragment_at_or_above_the_threshold() -> None:
    policy = ThresholdWithTiers(min_score=0.2, min_output_doc=2)
    scored = [frag("a-1", 0.3), frag("a-2", 0.2), frag("b-1", 0.19), frag("a-3", 0.5)]
    selection = policy.select_explained(scored)
    assert selection.tier == 1
    assert ids(selection.fragments) == ["a-3", "a-1", "a-2", "b-1"]  # b-1: the safety net
    assert selection.safety_net_added == 1


def test_tier_1_without_safety_net_when_enough_documents_pass() -> None:
    policy = ThresholdWithTiers(min_score=0.2, min_output_doc=2)
    scored = [frag("a-1", 0.3), frag("b-1", 0.25), frag("c-1", 0.1)]
    assert ids(policy.select(scored)) == ["a-1", "b-1"]


def test_nothing_passes_still_returns_at_least_five_documents() -> None:
    # 219 fragments, all below 0.1; the best 50 all belong to two documents
    scored = [frag(f"docid-1-c{i}", 0.05 - i * 0.0001) for i in range(30)]
    scored += [frag(f"docid-2-c{i}", 0.04 - i * 0.0001) for i in range(30)]
    scored += [frag(f"docid-{d}-c{i}", 0.001 * (10 - d) / 10 + 0.0001 * i / 100)
               for d in range(3, 10) for i in range(20)]
    scored += [frag("docid-99-c1", 0.0)]
    policy = ThresholdWithTiers(min_score=0.1, min_output_frag=50, max_output_frag=100,
                                min_output_doc=5)
    selection = policy.select_explained(scored)
    assert selection.tier == 2
    assert len(docs(selection.fragments)) >= 5
    assert len(selection.fragments) == 53  # top 50 + the best fragment of 3 further documents
    assert ids(selection.fragments)[:50] == ids(sorted(scored, key=order_key)[:50])
    added = [f for f in selection.fragments if f.documentid not in ("docid-1", "docid-2")]
    best_of = {d: max((f for f in scored if f.documentid == d), key=lambda f: f.score)
               for d in ("docid-3", "docid-4", "docid-5")}
    assert sorted(ids(added)) == sorted(f.fragmentid for f in best_of.values())


def test_tier_2_is_capped_keeping_document_coverage() -> None:
    scored = [frag(f"docid-1-c{i:02d}", 0.05 - i * 0.0001) for i in range(60)]
    scored += [frag(f"docid-{d}-c1", 0.001) for d in range(2, 6)]
    policy = ThresholdWithTiers(min_score=0.1, min_output_frag=50, max_output_frag=20,
                                min_output_doc=5)
    out = policy.select(scored)
    assert len(out) == 20
    assert len(docs(out)) == 5
    assert out == sorted(out, key=order_key)


def test_tier_2_with_fewer_documents_than_asked_returns_all_documents() -> None:
    scored = [frag("a-1", 0.01), frag("a-2", 0.02), frag("b-1", 0.001)]
    out = ThresholdWithTiers(min_score=0.5, min_output_frag=1, min_output_doc=5).select(scored)
    assert ids(out) == ["a-2", "b-1"]


def test_historical_language_bias_example() -> None:
    """German fragments pass, French ones do not: the safety net keeps the French document."""
    scored = [frag(f"docid-4975-c{i}", s) for i, s in enumerate([0.32, 0.25, 0.2, 0.15, 0.14])]
    scored += [frag(f"docid-3894-c{i}", 0.01 + i * 0.002) for i in range(10)]
    scored += [frag(f"docid-3782-c{i}", 0.08 + i * 0.005) for i in range(7)]
    out = ThresholdWithTiers(min_score=0.1).select(scored)
    assert docs(out) == {"docid-4975", "docid-3782", "docid-3894"}


def test_from_settings() -> None:
    policy = ThresholdWithTiers.from_settings(Settings(min_reranking_score_frag=0.3))
    assert policy == ThresholdWithTiers(0.3, 50, 100, 5)


def test_ties_are_broken_by_fragment_id() -> None:
    scored = [frag("b-1", 0.5), frag("a-2", 0.5), frag("a-10", 0.5)]
    assert ids(ThresholdWithTiers().select(scored)) == ["a-10", "a-2", "b-1"]


# --- relative policies ------------------------------------------------------------------------


def test_top_k() -> None:
    scored = [frag("a-1", 0.1), frag("b-1", 0.3), frag("c-1", 0.2)]
    assert ids(TopK(2).select(scored)) == ["b-1", "c-1"]
    assert ids(TopK(10).select(scored)) == ["b-1", "c-1", "a-1"]
    with pytest.raises(ConfigurationError):
        TopK(0)


def test_percentile() -> None:
    scored = [frag(f"d-{i:02d}", i / 100) for i in range(100)]
    assert len(Percentile(90).select(scored)) == 11  # nearest rank 90 -> scores >= 0.89
    assert len(Percentile(100).select(scored)) == 1
    assert len(Percentile(0).select(scored)) == 100
    assert Percentile(50).select([]) == []
    with pytest.raises(ConfigurationError):
        Percentile(101)


def test_score_gap() -> None:
    scored = [frag("a-1", 0.06), frag("a-2", 0.055), frag("b-1", 0.05), frag("c-1", 0.01),
              frag("d-1", 0.009)]
    assert ids(ScoreGap().select(scored)) == ["a-1", "a-2", "b-1"]
    assert ids(ScoreGap(max_keep=2).select(scored)) == ["a-1"]
    assert ids(ScoreGap(min_keep=4).select(scored)) == ["a-1", "a-2", "b-1", "c-1"]
    assert ScoreGap().select([]) == []
    with pytest.raises(ConfigurationError):
        ScoreGap(min_keep=3, max_keep=2)


def test_per_query_normalised() -> None:
    scored = [frag("a-1", 0.010), frag("b-1", 0.050), frag("c-1", 0.040), frag("d-1", 0.025)]
    assert ids(PerQueryNormalised(0.5).select(scored)) == ["b-1", "c-1"]
    assert ids(PerQueryNormalised(0.0).select(scored)) == ["b-1", "c-1", "d-1", "a-1"]
    flat = [frag("a-1", 0.02), frag("b-1", 0.02)]
    assert ids(PerQueryNormalised(0.9).select(flat)) == ["a-1", "b-1"]
    assert PerQueryNormalised(0.9).select(flat)[0].score == 0.02  # raw scores kept


fragment_lists = st.lists(
    st.builds(
        ScoredFragment,
        fragmentid=st.builds(lambda d, c: f"docid-{d}-c{c}", st.integers(0, 8), st.integers(0, 9)),
        text=st.just("t"),
        score=st.floats(0.0, 1.0, allow_nan=False) | st.sampled_from([0.0, 0.01, 0.5]),
    ),
    max_size=40,
    unique_by=lambda f: f.fragmentid,
)

POLICIES: list[SelectionPolicy] = [
    ThresholdWithTiers(min_score=0.3, min_output_frag=5, max_output_frag=8, min_output_doc=3),
    ThresholdWithTiers(),
    TopK(4),
    Percentile(75),
    ScoreGap(min_keep=2, max_keep=10),
    PerQueryNormalised(0.4),
]


@settings(max_examples=60, deadline=None)
@given(fragment_lists, st.randoms(use_true_random=False))
def test_every_policy_returns_a_sorted_subset_independent_of_input_order(
    scored: list[ScoredFragment], rnd: object
) -> None:
    shuffled = list(scored)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    for policy in POLICIES:
        out = policy.select(scored)
        assert out == policy.select(shuffled), policy
        assert set(ids(out)) <= set(ids(scored))
        assert len(set(ids(out))) == len(out)
        assert out == sorted(out, key=order_key)
        if scored:
            assert out, policy  # a non-empty input never selects nothing


@settings(max_examples=60, deadline=None)
@given(fragment_lists)
def test_threshold_tiers_invariants(scored: list[ScoredFragment]) -> None:
    policy = ThresholdWithTiers(min_score=0.3, min_output_frag=5, max_output_frag=8,
                                min_output_doc=3)
    out = policy.select(scored)
    passing = [f for f in scored if f.score >= 0.3]
    assert set(ids(passing)) <= set(ids(out))
    assert len(docs(out)) >= min(3, len(docs(scored)))
    if not passing:
        assert len(out) <= 8
        # everything kept scores at least as high as anything dropped from its own document
        for f in scored:
            if f not in out and f.documentid in docs(out):
                best_kept = max(g.score for g in out if g.documentid == f.documentid)
                assert best_kept >= f.score


# --- per-clause combination -----------------------------------------------------------------


def test_normalise_min_max() -> None:
    assert normalise_min_max({}) == {}
    assert normalise_min_max({"a": 3.0, "b": 3.0}) == {"a": 1.0, "b": 1.0}
    assert normalise_min_max({"a": 0.01, "b": 0.03, "c": 0.02}) == pytest.approx(
        {"a": 0.0, "b": 1.0, "c": 0.5})


def test_geometric_mean_and_minimum() -> None:
    assert geometric_mean([0.25, 1.0]) == pytest.approx(0.5)
    assert geometric_mean([0.0, 1.0]) == 0.0
    assert geometric_mean([0.5, 0.5, 0.5]) == pytest.approx(0.5)
    assert geometric_mean([0.25, 1.0], [1.0, 0.0]) == pytest.approx(0.25)
    assert weighted_minimum([0.2, 0.9]) == 0.2
    assert weighted_minimum([0.2, 0.9], [0.5, 1.0]) == pytest.approx(0.6)
    for bad in ([], ):
        with pytest.raises(ConfigurationError):
            geometric_mean(bad)
        with pytest.raises(ConfigurationError):
            weighted_minimum(bad)
    with pytest.raises(ConfigurationError):
        geometric_mean([0.5], [1.0, 2.0])


def test_combining_clauses_rewards_joint_evidence_not_one_clause() -> None:
    conversion = {"both": 0.05, "only-conversion": 0.06, "neither": 0.01}
    contradiction = {"both": 0.04, "only-conversion": 0.01, "neither": 0.01}
    for rule in ("geometric", "minimum"):
        combined = combine_clause_scores([conversion, contradiction], rule=rule)
        assert max(combined, key=lambda k: combined[k]) == "both"
        assert combined["only-conversion"] == 0.0
    # a bare maximum would have preferred the one-clause match
    assert max(conversion, key=lambda k: max(conversion[k], contradiction[k])) == (
        "only-conversion")


def test_combination_needs_every_clause_and_a_known_rule() -> None:
    assert combine_clause_scores([{"a": 0.5, "b": 0.4}, {"a": 0.5}], normalise=False) == {
        "a": 0.5}
    assert combine_clause_scores([]) == {}
    with pytest.raises(ConfigurationError):
        combine_clause_scores([{"a": 0.5}], rule="max")


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=6))
def test_and_rules_never_exceed_the_weakest_clause_by_much(values: list[float]) -> None:
    assert weighted_minimum(values) == min(values)
    g = geometric_mean(values)
    assert min(values) - 1e-12 <= g <= max(values) + 1e-12
    assert not math.isnan(g)
