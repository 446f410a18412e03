"""The phrase gate's second feature: the lexical share of the phrase's words among its
candidates (``tokens.lexical_words``, ``share_of``, ``lexical_share``), the two-feature ``Gate``,
its fit and its JSON form."""

from __future__ import annotations

import itertools
import json
import math
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from thalabus_graph.errors import ConfigurationError
from thalabus_graph.scoring.calibration import Calibration, Gate, SourceMap, shipped
from thalabus_graph.scoring.fitting import fit_gate
from thalabus_graph.scoring.lexical import lexical_share, phrase_words, share_of
from thalabus_graph.scoring.tokens import SHARE_MIN_LETTERS, lexical_words

texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=80)
cosine = st.floats(min_value=-1.0, max_value=1.0, allow_nan=False)
unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


def test_words_are_nfc_lowercase_and_of_four_letters_or_more() -> None:
    assert lexical_words("When did the FIRST direct elections take place?") == {
        "when", "first", "direct", "elections", "take", "place"}
    nfd = unicodedata.normalize("NFD", "Zürich Café")
    assert nfd != "Zürich Café"
    assert lexical_words(nfd) == lexical_words("Zürich Café") == {"zürich", "café"}
    assert lexical_words("a an the of to in") == frozenset()
    assert lexical_words("tax in Iran", 1) == {"tax", "in", "iran"}
    assert all(len(w) >= SHARE_MIN_LETTERS
               for w in lexical_words("Wartung einer Wärmepumpe im Winter"))


@given(texts, st.lists(st.none() | texts, max_size=6))
@settings(max_examples=200, deadline=None)
def test_the_share_lies_in_0_1_and_is_none_only_without_a_text(
        phrase: str, candidates: list[str | None]) -> None:
    share = lexical_share(phrase, candidates)
    if all(t is None for t in candidates):
        assert share is None
        return
    assert share is not None and 0.0 <= share <= 1.0
    if phrase_words(phrase):
        # the phrase itself as a candidate holds every word it has
        assert lexical_share(phrase, [*candidates, phrase]) == 1.0
    else:
        assert share == 0.0  # nothing to find


@given(texts, st.lists(texts, min_size=1, max_size=6), texts)
@settings(max_examples=100, deadline=None)
def test_more_candidates_never_lower_the_share(phrase: str, candidates: list[str],
                                              extra: str) -> None:
    before = lexical_share(phrase, candidates)
    after = lexical_share(phrase, [*candidates, extra])
    assert before is not None and after is not None and after >= before


def test_the_share_is_the_best_single_candidate_not_the_union() -> None:
    phrase = lexical_words("direct elections first place")
    found = [lexical_words("the first place"), lexical_words("direct elections")]
    assert share_of(phrase, found) == 0.5
    assert share_of(phrase, []) == 0.0


@given(st.lists(cosine, min_size=1, max_size=60), st.integers(min_value=1, max_value=100_000),
       st.floats(min_value=-200, max_value=200), st.floats(min_value=0.01, max_value=200),
       st.floats(min_value=0.01, max_value=50), st.none() | unit)
@settings(max_examples=200, deadline=None)
def test_the_two_feature_gate_keeps_the_order_of_a_phrase(
        cosines: list[float], size: int, intercept: float, slope: float, share_slope: float,
        share: float | None) -> None:
    calibration = Calibration("m", {"default": SourceMap(2.9, 2.8)},
                              gate=Gate(intercept, slope, share_slope))
    scores = calibration.scores("chapters", cosines, size, share)
    assert all(0.0 <= s <= 1.0 for s in scores)
    for (c1, s1), (c2, s2) in itertools.pairwise(sorted(zip(cosines, scores, strict=True))):
        assert s1 <= s2
        if c2 - c1 > 1e-9:
            assert s1 < s2


@given(st.floats(min_value=-200, max_value=200), st.floats(min_value=0.01, max_value=200),
       st.floats(min_value=0.01, max_value=50), cosine, unit, unit)
def test_the_gate_increases_with_the_share_and_reads_an_unknown_share_as_0(
        intercept: float, slope: float, share_slope: float, best: float, a: float,
        b: float) -> None:
    gate = Gate(intercept, slope, share_slope)
    low, high = sorted((a, b))
    assert 0.0 <= gate.probability(best, low) <= gate.probability(best, high) <= 1.0
    assert gate.probability(best, None) == gate.probability(best, 0.0)


@given(st.floats(min_value=-200, max_value=200), st.floats(min_value=0.01, max_value=200),
       cosine, st.none() | unit)
def test_a_gate_without_a_share_slope_reads_the_cosine_alone(
        intercept: float, slope: float, best: float, share: float | None) -> None:
    data = {"format": "thalabus-calibration/1", "model": "m",
            "sources": {"default": {"intercept": 1.0, "slope": 2.0}},
            "gate": {"intercept": intercept, "slope": slope}}
    gate = Calibration.from_dict(data).gate
    assert gate is not None and gate.share_slope is None
    expected = 1.0 / (1.0 + math.exp(-(intercept + slope * best)))
    assert gate.probability(best, share) == pytest.approx(expected, rel=1e-12, abs=1e-300)
    assert "share_slope" not in Calibration("m", {"default": SourceMap(1.0, 2.0)},
                                            gate=gate).to_dict()["gate"]


def test_a_gate_with_a_share_slope_round_trips_and_a_bad_one_is_refused(tmp_path: Path) -> None:
    original = Calibration("m", {"default": SourceMap(1.0, 2.0)},
                           gate=Gate(-135.4, 159.1, 12.3))
    path = tmp_path / "c.json"
    original.save(path)
    assert Calibration.load(path) == original
    data = json.loads(path.read_text())
    for bad in (0.0, -1.0, float("inf")):
        data["gate"]["share_slope"] = bad
        with pytest.raises(ConfigurationError, match=r"'gate\.share_slope'"):
            Calibration.from_dict(data)
    data["gate"] = ["not", "a", "gate"]
    with pytest.raises(ConfigurationError, match="field 'gate' must be a JSON object"):
        Calibration.from_dict(data)


def test_the_shipped_gate_lets_shared_words_through_at_a_lower_cosine() -> None:
    calibration = shipped("multilingual-e5-small")
    assert calibration is not None and calibration.gate is not None
    gate = calibration.gate
    assert gate.share_slope is not None and gate.share_slope > 0
    assert gate.midpoint_at(1.0) < gate.midpoint_at(0.5) < gate.midpoint_at(0.0)
    # a hard same-language question: its relevant passage shares its words at cosine 0.79
    assert gate.probability(0.79, 1.0) > 0.5 > gate.probability(0.79, 0.0)


def test_fitting_the_gate_on_two_features_gives_the_share_its_weight() -> None:
    rng = np.random.default_rng(9)
    # present and absent phrases overlap in cosine; present ones share more words
    present = [np.column_stack([0.83 + 0.02 * rng.standard_normal(400),
                                rng.uniform(0.4, 1.0, 400)])]
    absent = [np.column_stack([0.81 + 0.02 * rng.standard_normal(400),
                               rng.uniform(0.0, 0.5, 400)])]
    gate = fit_gate(present, absent)
    assert gate.slope > 0 and gate.share_slope is not None and gate.share_slope > 0
    assert gate.probability(0.82, 0.9) > 0.5 > gate.probability(0.82, 0.1)
    cosine_only = fit_gate([p[:, 0] for p in present], [a[:, 0] for a in absent])
    assert cosine_only.share_slope is None
    assert gate.shifted(1.0).probability(0.82, 0.5) > gate.probability(0.82, 0.5)
    with pytest.raises(ConfigurationError, match="same features"):
        fit_gate(present, [a[:, 0] for a in absent])


pieces = st.sampled_from(["wort", "Wörter", "élan", "e\u0301lan", "_elan", "elan2", "Straße",
                          "STRASSE", "wortwort", "İstanbul", "ǅemal", "٣٤٥٦", "x", " ", "-",
                          "\u0301", "'", "\n", "ßwort"])
mixed = st.lists(pieces | texts, max_size=12).map("".join)


@given(mixed, st.lists(st.none() | mixed, max_size=5))
@settings(max_examples=300, deadline=None)
def test_the_search_share_equals_the_tokenised_share(phrase: str,
                                                     candidates: list[str | None]) -> None:
    read = [lexical_words(t, 1) for t in candidates if t is not None]
    expected = share_of(phrase_words(phrase), read) if read else None
    assert lexical_share(phrase, candidates) == expected
