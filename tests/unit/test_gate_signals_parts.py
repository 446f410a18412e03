"""The gate-signal benchmark's own parts that decide what it reports: the AUC, the gate's fit,
the lexical shares and what a gate does to a phrase set."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.gate_signals import (
    Lexicon,
    Phrase,
    PhraseSet,
    auc,
    fit_logistic,
    outcome,
)


def test_auc_counts_ties_as_half_and_orders_the_classes() -> None:
    assert auc(np.array([3.0, 4.0]), np.array([1.0, 2.0])) == 1.0
    assert auc(np.array([1.0, 2.0]), np.array([3.0, 4.0])) == 0.0
    assert auc(np.array([1.0]), np.array([1.0])) == 0.5
    assert auc(np.array([2.0, 1.0]), np.array([1.0, 0.0])) == pytest.approx(0.875)


def test_the_fitted_gate_rises_with_the_feature_and_weighs_the_classes_the_same() -> None:
    rng = np.random.default_rng(1)
    present = rng.normal(0.86, 0.02, size=(900, 1))
    absent = rng.normal(0.80, 0.02, size=(90, 1))
    theta = fit_logistic([present], [absent])
    assert theta[1] > 0
    midpoint = -theta[0] / theta[1]
    # equal class weights put the midpoint between the classes whatever their sizes
    assert 0.82 < midpoint < 0.84


def test_lexical_shares_read_the_phrase_words_in_one_fragment() -> None:
    lexicon = Lexicon(["Die Wärmepumpe im Winter", "Asyl wegen Konversion", "im der die"])
    every = np.arange(3)
    best_idf, any_idf, plain_any, plain_top, plain_all, idf_top = lexicon.coverage(
        "Wartung einer Wärmepumpe im Winter", every, 3, np.array([1, 0, 2]))
    assert best_idf == 0.0  # the best candidate (row 1) shares no word
    assert 0.0 < any_idf < 1.0
    # "wärmepumpe" and "winter" of the four words of four letters or more
    assert plain_any == plain_top == plain_all == pytest.approx(2 / 4)
    assert idf_top > 0.0
    assert lexicon.coverage("chocolate cake recipe", every, 3, np.array([0, 1, 2]))[2] == 0.0


def _set(present: bool) -> PhraseSet:
    phrase = Phrase(np.array([0.9, 0.8, 0.7]), np.array([False, True, False]), 1, False,
                    np.zeros(3), 0.8, 0.8, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    data = PhraseSet("one", present, 3, [phrase])
    data.probs = np.array([[0.9, 0.8, 0.05]])
    data.cos = phrase.cos[None, :]
    data.relevant = phrase.relevant[None, :]
    data.ideal = np.array([1.0])
    return data


def test_a_closed_gate_empties_a_phrase_and_an_open_one_keeps_its_ranking() -> None:
    data = _set(True)
    closed = outcome(data, np.array([0.0]), 0.10)
    assert closed["emptied"] == 1.0 and closed["ndcg@10"] == 0.0
    assert closed["relevant_dropped"] == 1.0
    open_ = outcome(data, np.array([1.0]), 0.10)
    assert open_["emptied"] == 0.0
    assert open_["ndcg@10"] == pytest.approx(1 / np.log2(3))  # relevant at rank 2
    assert open_["non_relevant_dropped"] == 0.5  # the third candidate is under MIN_SCORE
    half = outcome(data, np.array([0.5]), 0.10)
    assert half["emptied"] == 0.0 and half["ndcg@10"] == open_["ndcg@10"]
    assert outcome(_set(False), np.array([0.0]), 0.10) == {"emptied": 1.0}
