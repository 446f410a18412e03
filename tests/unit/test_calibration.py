"""The semantic-score calibration: bounds, order, the phrase gate, the shipped file, fitting and
the CLI."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from thalabus_graph.cli import main
from thalabus_graph.errors import ConfigurationError
from thalabus_graph.scoring.calibration import (
    Calibration,
    Gate,
    SourceMap,
    at_prior,
    background,
    evidence,
    load_for,
    shipped,
)
from thalabus_graph.scoring.fitting import (
    Labelled,
    candidates,
    fit,
    fit_gate,
    fit_map,
    fit_reading,
    prior_odds_of,
)

cosine = st.floats(min_value=-1.0, max_value=1.0, allow_nan=False)
candidate_lists = st.lists(cosine, min_size=1, max_size=60)


@given(candidate_lists, st.integers(min_value=1, max_value=100_000),
       st.floats(min_value=-20, max_value=20), st.floats(min_value=0.01, max_value=20),
       st.none() | st.tuples(st.floats(min_value=-200, max_value=200),
                             st.floats(min_value=0.01, max_value=200)))
@settings(max_examples=200, deadline=None)
def test_scores_lie_in_0_1_and_keep_the_order_of_a_phrase(
        cosines: list[float], size: int, intercept: float, slope: float,
        gate: tuple[float, float] | None) -> None:
    calibration = Calibration("m", {"default": SourceMap(intercept, slope)},
                              gate=Gate(*gate) if gate else None)
    scores = calibration.scores("chapters", cosines, size)
    assert all(0.0 <= s <= 1.0 for s in scores)
    pairs = sorted(zip(cosines, scores, strict=True))
    for (c1, s1), (c2, s2) in itertools.pairwise(pairs):
        assert s1 <= s2
        if c2 - c1 > 1e-9:  # strictly: a saturated map still keeps the order
            assert s1 < s2


@given(candidate_lists, st.integers(min_value=1, max_value=10_000))
def test_the_background_spread_is_positive_and_evidence_increases(
        cosines: list[float], size: int) -> None:
    bg = background(cosines, size)
    assert bg.sigma > 0 and bg.size >= len(cosines)
    assert evidence(0.5, bg) <= evidence(0.6, bg)


def test_a_hit_standing_out_scores_higher_than_the_best_of_a_flat_list() -> None:
    rng = np.random.default_rng(7)
    flat = sorted((0.75 + 0.02 * rng.standard_normal(200)).tolist(), reverse=True)
    outstanding = [0.95, *flat[1:]]
    calibration = shipped("multilingual-e5-small")
    assert calibration is not None
    best_flat = max(calibration.scores("chapters", flat, 5000))
    best_outstanding = max(calibration.scores("chapters", outstanding, 5000))
    assert best_outstanding > 0.9 > best_flat


def test_the_gate_empties_a_phrase_whose_best_hit_stands_out_at_a_low_similarity() -> None:
    # the same shape shifted down: equal tail evidence, but the best hit of the lower list is
    # as similar as an unrelated text's nearest fragment (the model's gate), so it drops
    rng = np.random.default_rng(11)
    shape = sorted((0.02 * rng.standard_normal(90)).tolist(), reverse=True)
    present = [0.90, *(0.83 + x for x in shape[1:])]
    absent = [c - 0.10 for c in present]
    found = shipped("multilingual-e5-small")
    assert found is not None and found.gate is not None
    calibration = dataclasses.replace(found, reading=None)  # the gate acts at even odds
    assert calibration.gate is not None and 0.78 < calibration.gate.midpoint < 0.88
    ungated = Calibration(calibration.model, calibration.sources, calibration.skip)
    assert max(ungated.scores("chapters", absent, 90)) > 0.9  # stands out as much
    assert max(calibration.scores("chapters", present, 90)) > 0.9
    assert max(calibration.scores("chapters", absent, 90)) < 0.1
    assert calibration.gate_of(calibration.background(absent, 90)) < 0.1


def test_fitting_the_gate_puts_its_midpoint_between_present_and_absent_best_hits() -> None:
    rng = np.random.default_rng(5)
    present = [0.87 + 0.02 * rng.standard_normal(300), 0.85 + 0.02 * rng.standard_normal(200)]
    absent = [0.79 + 0.02 * rng.standard_normal(300)]
    gate = fit_gate(present, absent)
    assert 0.80 < gate.midpoint < 0.85 and gate.slope > 0
    assert gate.probability(0.90) > 0.9 > 0.1 > gate.probability(0.76)
    with pytest.raises(ConfigurationError, match="no increasing gate"):
        fit_gate(absent, present)
    with pytest.raises(ConfigurationError, match="with and without"):
        fit_gate(present, [np.zeros(0)])


def test_the_shipped_calibration_is_found_by_model_name() -> None:
    assert shipped("intfloat/multilingual-e5-small") == shipped("multilingual-e5-small")
    assert shipped("no-such-model") is None
    e5 = load_for("multilingual-e5-small")
    assert e5 is not None and e5.map_for("paragraphs").slope > 0
    assert set(e5.fitted_on) == {"scifact (train)", "xquad-r (dev)"}


probability = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
readings = st.builds(SourceMap, st.floats(min_value=-20.0, max_value=20.0),
                     st.floats(min_value=0.05, max_value=5.0))


@given(probability, probability, readings)
def test_reading_at_a_prior_keeps_the_order_and_the_ends(
        p: float, q: float, reading: SourceMap) -> None:
    low, high = sorted((p, q))
    assert 0.0 <= at_prior(low, reading) <= at_prior(high, reading) <= 1.0
    assert at_prior(p, None) == p
    assert at_prior(1.0, reading) == 1.0 and at_prior(0.0, reading) == 0.0


def test_a_reading_of_slope_1_multiplies_the_odds_by_its_exponent() -> None:
    # Bayes' rule: posterior odds = likelihood ratio x prior odds
    reading = SourceMap(math.log(0.01), 1.0)
    for p in (0.1, 0.5, 0.95):
        read = at_prior(p, reading)
        assert read / (1 - read) == pytest.approx(0.01 * p / (1 - p), rel=1e-12)


def test_a_score_reads_at_the_calibration_s_prior() -> None:
    even = Calibration("m", {"default": SourceMap(2.9, 2.8)})
    reading = SourceMap(-4.7, 0.56)
    read = Calibration("m", {"default": SourceMap(2.9, 2.8)}, reading=reading)
    bg = background([0.74 - 0.001 * i for i in range(200)], 5000)
    for cos in (0.70, 0.76, 0.80, 0.95):
        p = even.score("default", cos, bg)
        assert read.score("default", cos, bg) == pytest.approx(at_prior(p, reading), abs=2e-6)


def test_the_reading_is_the_map_fitted_at_the_data_s_prior() -> None:
    rng = np.random.default_rng(3)
    sets = []
    for n_rel in (40, 200):
        feats = np.concatenate([rng.normal(2.0, 1.0, n_rel), rng.normal(-1.5, 1.0, 8000)])
        labels = np.arange(feats.size) < n_rel
        sets.append((feats, labels))
    even = fit_map(sets)
    odds = float(np.exp(np.mean([np.log(n / 8000) for n in (40, 200)])))
    at_odds = fit_map(sets, odds=odds)
    reading = fit_reading(sets, even, odds)
    for e in (-2.0, 0.0, 1.5, 4.0):
        assert at_prior(even.probability(e), reading) == pytest.approx(
            at_odds.probability(e), rel=1e-9)


def test_the_prior_odds_are_each_set_s_odds_and_their_geometric_mean() -> None:
    def labelled(relevant: int, total: int) -> Labelled:
        labels = np.zeros(total, dtype=bool)
        labels[:relevant] = True
        return Labelled("s", [np.linspace(0.9, 0.7, total)], [labels], total)
    assert prior_odds_of([labelled(1, 101)]) == pytest.approx(0.01)
    assert prior_odds_of([labelled(1, 101), labelled(1, 10_001)]) == pytest.approx(0.001)
    assert prior_odds_of([labelled(0, 10)]) == 1.0  # no relevant candidate: even odds


def test_a_calibration_file_round_trips_and_a_bad_one_is_refused(tmp_path: Path) -> None:
    original = Calibration("m", {"default": SourceMap(1.0, 2.0),
                                 "summaries": SourceMap(0.5, 1.5)}, skip=10,
                           gate=Gate(-80.0, 100.0))
    path = tmp_path / "c.json"
    original.save(path)
    again = load_for("ignored", str(path))
    assert again == original
    data = json.loads(path.read_text())
    data["gate"]["slope"] = 0.0
    with pytest.raises(ConfigurationError, match=r"'gate\.slope' must be positive"):
        Calibration.from_dict(data)
    del data["gate"]
    assert Calibration.from_dict(data).gate is None
    data["sources"]["default"]["slope"] = -1.0
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigurationError, match=r"c\.json: field 'sources.default.slope'"):
        Calibration.load(path)
    with pytest.raises(ConfigurationError, match="cannot read"):
        Calibration.load(tmp_path / "missing.json")
    with pytest.raises(ConfigurationError, match="format"):
        Calibration.from_dict({"format": "other"})


@pytest.mark.parametrize("reading", [{"intercept": -4.7, "slope": 0.0},
                                     {"intercept": -4.7, "slope": -1.0}, {"intercept": -4.7},
                                     {"intercept": "x", "slope": 1.0}, [1, 2], 0.01])
def test_a_bad_reading_is_refused_and_a_file_without_one_reads_as_fitted(
        reading: object) -> None:
    data = Calibration("m", {"default": SourceMap(1.0, 2.0)},
                       reading=SourceMap(-4.7, 0.56)).to_dict()
    assert Calibration.from_dict(data).reading == SourceMap(-4.7, 0.56)
    del data["reading"]
    assert Calibration.from_dict(data).reading is None
    data["reading"] = reading
    with pytest.raises(ConfigurationError, match=r"field 'reading"):
        Calibration.from_dict(data)


def test_a_foreign_gate_round_trips_and_reads_the_cosine_alone(tmp_path: Path) -> None:
    original = Calibration("m", {"default": SourceMap(1.0, 2.0)},
                           gate=Gate(-135.0, 159.0, 12.3), foreign_gate=Gate(-115.8, 146.0))
    path = tmp_path / "c.json"
    original.save(path)
    assert Calibration.load(path) == original
    data = json.loads(path.read_text())
    data["foreign_gate"]["share_slope"] = 1.0
    with pytest.raises(ConfigurationError, match="best cosine alone"):
        Calibration.from_dict(data)
    del data["foreign_gate"]["share_slope"]
    del data["gate"]
    with pytest.raises(ConfigurationError, match="needs a gate beside it"):
        Calibration.from_dict(data)
    e5 = shipped("multilingual-e5-small")
    assert e5 is not None and e5.foreign_gate is not None
    assert 0.75 < e5.foreign_gate.midpoint < e5.gate.midpoint if e5.gate else False


def synthetic(name: str, seed: int, queries: int = 40, size: int = 400) -> Labelled:
    """Queries whose 3 relevant documents stand out from a normal background."""
    rng = np.random.default_rng(seed)
    dim = 64
    corpus = rng.standard_normal((size, dim))
    corpus /= np.linalg.norm(corpus, axis=1, keepdims=True)
    rows = []
    relevant = []
    for _ in range(queries):
        rel = rng.choice(size, 3, replace=False)
        q = corpus[rel].sum(axis=0) + 0.1 * rng.standard_normal(dim)
        rows.append(q / np.linalg.norm(q))
        relevant.append({int(r) for r in rel})
    return candidates(name, np.asarray(rows), corpus, relevant, 100)


def test_fitting_gives_an_increasing_map_that_keeps_most_relevant_hits() -> None:
    sets = [synthetic("a", 1), synthetic("b", 2)]
    calibration = fit("toy", {"default": sets})
    assert calibration.map_for("chapters").slope > 0
    for labelled in sets:
        rel = np.concatenate(list(labelled.relevant))
        scores = np.concatenate([calibration.scores("chapters", list(c), labelled.size)
                                 for c in labelled.cosines])
        assert (scores[rel] >= 0.1).mean() > 0.9
        assert (scores[~rel] < 0.1).mean() > 0.5


def test_fitting_without_relevant_candidates_is_refused() -> None:
    empty = Labelled("x", [np.array([0.5, 0.4])], [np.array([False, False])], 10)
    with pytest.raises(ConfigurationError, match="relevant and non-relevant"):
        fit("toy", {"default": [empty]})


def test_the_calibrate_command_writes_a_file_the_setting_loads(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(3)
    dim = 64
    corpus = rng.standard_normal((300, dim))
    corpus /= np.linalg.norm(corpus, axis=1, keepdims=True)
    emb = tmp_path / "embeddings"
    emb.mkdir()
    queries, qrels = [], ["query-id\tcorpus-id\tscore"]
    for i in range(30):
        rel = rng.choice(300, 2, replace=False)
        q = corpus[rel].sum(axis=0) + 0.1 * rng.standard_normal(dim)
        queries.append(q / np.linalg.norm(q))
        qrels += [f"q{i}\td{int(r)}\t1" for r in rel]
    np.save(emb / "corpus.npy", corpus.astype(np.float32))
    np.save(emb / "queries.npy", np.asarray(queries, dtype=np.float32))
    (emb / "corpus.ids.json").write_text(json.dumps([f"d{i}" for i in range(300)]))
    (emb / "queries.ids.json").write_text(json.dumps([f"q{i}" for i in range(30)]))
    (tmp_path / "qrels.tsv").write_text("\n".join(qrels) + "\n")
    (tmp_path / "corpus.jsonl").write_text("".join(
        json.dumps({"_id": f"d{i}", "title": "", "text": f"passage number {i}"}) + "\n"
        for i in range(300)))
    (tmp_path / "queries.jsonl").write_text("".join(
        json.dumps({"_id": f"q{i}", "text": f"question about passage {i}"}) + "\n"
        for i in range(30)))
    out = tmp_path / "mine.json"
    args = ["calibrate", "--corpus", str(tmp_path / "corpus.jsonl"),
            "--queries", str(tmp_path / "queries.jsonl"),
            "--qrels", str(tmp_path / "qrels.tsv"), "--embeddings", str(emb),
            "--out", str(out), "--model", "toy"]
    code = main(args)
    assert code == 0
    written = load_for("multilingual-e5-small", str(out))
    assert written is not None and written.model == "toy"
    rates = next(iter(written.measured.values()))["min_score"]
    assert rates["relevant_dropped"] < 0.2 < rates["non_relevant_dropped"]
    assert written.gate is None  # no model of that name ships a gate
    # its scores read at this data's prior, and it says where the seed's floors lie there
    assert written.reading is not None and written.reading.slope > 0
    floor = float(f"{at_prior(0.10, written.reading):.2g}")
    assert f"THALABUS_MIN_SCORE={floor:g}" in capsys.readouterr().out
    e5 = tmp_path / "e5.json"
    assert main([*args[:-3], str(e5), "--model", "multilingual-e5-small"]) == 0
    refitted, known = load_for("ignored", str(e5)), shipped("multilingual-e5-small")
    assert refitted is not None and known is not None
    assert refitted.gate == known.gate and refitted.sources == written.sources
    # the shipped e5 gate reads the lexical share, so its drop rates need the texts
    assert known.gate is not None and known.gate.share_slope is not None
    (tmp_path / "corpus.jsonl").unlink()
    assert main([*args[:-3], str(tmp_path / "e5b.json"), "--model",
                 "multilingual-e5-small"]) == 2


def test_the_calibrate_command_refuses_unmatched_sets(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["calibrate", "--corpus", "a", "--corpus", "b", "--queries", "q",
                 "--qrels", "r", "--out", str(tmp_path / "x.json")])
    assert code == 2
    assert "once per labelled set" in capsys.readouterr().err
