"""The reliability diagram and the expected calibration error: their algebra (bounds,
permutations, weights as repeats, exact frequencies) and that calibrated synthetic scores
give an ECE near 0."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from thalabus_graph.errors import ConfigurationError
from thalabus_graph.scoring.reliability import balanced_weights, reliability

probability = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
items = st.lists(st.tuples(probability, st.booleans(),
                           st.floats(min_value=0.01, max_value=100.0)), min_size=1,
                 max_size=80)


@given(items, st.integers(min_value=1, max_value=20))
@settings(max_examples=200, deadline=None)
def test_the_ece_lies_in_0_1_and_the_bins_share_the_weight(
        rows: list[tuple[float, bool, float]], bins: int) -> None:
    s, y, w = zip(*rows, strict=True)
    found = reliability(s, y, w, bins)
    assert 0.0 <= found.ece <= 1.0
    assert len(found.bins) == bins
    assert sum(b.weight for b in found.bins) == pytest.approx(1.0)
    assert sum(b.count for b in found.bins) == len(rows)


@given(items, st.randoms(use_true_random=False))
@settings(max_examples=200, deadline=None)
def test_the_ece_does_not_depend_on_the_order_of_the_items(
        rows: list[tuple[float, bool, float]], rng: random.Random) -> None:
    shuffled = list(rows)
    rng.shuffle(shuffled)
    a, b = (reliability(*zip(*r, strict=True)) for r in (rows, shuffled))
    assert a.ece == pytest.approx(b.ece, abs=1e-12)


@given(items, st.integers(min_value=1, max_value=5), st.floats(min_value=0.1, max_value=10))
@settings(max_examples=200, deadline=None)
def test_a_weight_reads_as_that_many_repeats_and_only_relative_weights_count(
        rows: list[tuple[float, bool, float]], times: int, scale: float) -> None:
    s, y, _ = zip(*rows, strict=True)
    weighted = reliability(s, y, [times] + [1] * (len(rows) - 1))
    repeated = reliability([s[0]] * times + list(s[1:]), [y[0]] * times + list(y[1:]))
    assert weighted.ece == pytest.approx(repeated.ece, abs=1e-9)
    w = [r[2] for r in rows]
    assert reliability(s, y, w).ece == pytest.approx(
        reliability(s, y, [x * scale for x in w]).ece, abs=1e-9)


@given(st.lists(st.tuples(st.integers(min_value=1, max_value=30), st.data()), min_size=1,
                max_size=10))
@settings(max_examples=100, deadline=None)
def test_scores_equal_to_their_bins_frequencies_have_no_error(
        groups: list[tuple[int, st.DataObject]]) -> None:
    scores: list[float] = []
    labels: list[bool] = []
    used: set[int] = set()
    for count, data in groups:
        positives = data.draw(st.integers(min_value=0, max_value=count))
        score = positives / count
        b = min(int(score * 10), 9)
        if b in used:  # one group per bin: a bin's mean is then its one score
            continue
        used.add(b)
        scores += [score] * count
        labels += [True] * positives + [False] * (count - positives)
    assert reliability(scores, labels).ece == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_calibrated_synthetic_scores_give_an_ece_that_shrinks_towards_0(seed: int) -> None:
    rng = np.random.default_rng(seed)
    errors = []
    for n in (1_000, 100_000):
        s = rng.uniform(0, 1, n)
        errors.append(reliability(s, rng.uniform(0, 1, n) < s).ece)
    assert errors[1] < 0.01
    assert errors[1] < errors[0]


def test_an_overconfident_score_has_its_gap_as_ece() -> None:
    found = reliability([0.9] * 10, [True] * 5 + [False] * 5)
    assert found.ece == pytest.approx(0.4)
    assert found.bins[9].frequency == pytest.approx(0.5)
    assert found.bins[0].score is None and found.bins[0].frequency is None


def test_balanced_weights_give_each_class_and_each_set_the_same_weight() -> None:
    w = balanced_weights([[True, False, False, False], [True, True, False]])
    assert w.sum() == pytest.approx(1.0)
    assert w[:1].sum() == pytest.approx(w[1:4].sum()) == pytest.approx(0.25)
    assert w[4:6].sum() == pytest.approx(w[6:].sum()) == pytest.approx(0.25)
    # at even odds, a score of 0.5 for everything is calibrated
    assert reliability([0.5] * 7, [True, False, False, False, True, True, False], w).ece == (
        pytest.approx(0.0))


def test_weights_at_prior_odds_give_each_set_those_odds() -> None:
    w = balanced_weights([[True, False, False, False], [True, True, False]], odds=0.25)
    assert w.sum() == pytest.approx(1.0)
    assert w[:1].sum() / w[1:4].sum() == pytest.approx(0.25)
    assert w[4:6].sum() / w[6:].sum() == pytest.approx(0.25)
    assert w[:4].sum() == pytest.approx(w[4:].sum())
    # at odds 1:4, a score of 0.2 for everything is calibrated
    assert reliability([0.2] * 7, [True, False, False, False, True, True, False], w).ece == (
        pytest.approx(0.0))


@pytest.mark.parametrize(("scores", "labels", "weights"), [
    ([1.5], [True], None), ([float("nan")], [True], None), ([0.5], [True, False], None),
    ([0.5], [True], [-1.0]), ([0.5], [True], [0.0]), ([0.5], [True], [float("inf")]),
])
def test_what_is_no_probability_or_weight_is_refused(
        scores: list[float], labels: list[bool], weights: list[float] | None) -> None:
    with pytest.raises(ConfigurationError):
        reliability(scores, labels, weights)
