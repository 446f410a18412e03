"""The seed's numeric defaults, pinned where they take effect: the settings, the reranker the
settings build, the HTTP reranker's and the selection policy's own defaults, the round size."""

from __future__ import annotations

import inspect

from thalabus_graph.rerank import ScoreApiReranker, ThresholdWithTiers, reranker_from_settings
from thalabus_graph.rerank.rounds import rerank_fragments
from thalabus_graph.scoring.calibration import at_prior, shipped
from thalabus_graph.settings import Settings


def test_the_settings_carry_the_seed_s_numbers() -> None:
    s = Settings()
    assert s.max_rerank_chars == 24_000
    assert s.max_reranking_input_frag == 5_000
    assert s.max_parallelism == 10
    assert s.min_reranking_score_frag == 0.02


def test_the_score_floors_are_the_seed_s_read_at_the_shipped_prior() -> None:
    # the seed's MIN_SCORE 0.10 and MIN_RERANKING_SCORE_DOC 0.05 are its operating points on
    # a calibrated score at even odds; the score reads at the labelled data's prior instead
    s = Settings()
    calibration = shipped(s.embedder_model)
    assert calibration is not None and calibration.reading is not None
    for seed, default in ((0.10, s.min_score), (0.05, s.min_reranking_score_doc)):
        assert float(f"{at_prior(seed, calibration.reading):.2g}") == default


def test_the_configured_reranker_and_the_backends_default_to_them() -> None:
    built = reranker_from_settings(Settings(reranker_url="http://127.0.0.1:9"))
    assert isinstance(built, ScoreApiReranker)
    assert (built.max_chars, built.max_parallelism) == (24_000, 10)
    plain = ScoreApiReranker("http://127.0.0.1:9")
    assert (plain.max_chars, plain.max_parallelism) == (24_000, 10)
    assert ThresholdWithTiers().min_score == 0.02
    assert ThresholdWithTiers.from_settings(Settings()).min_score == 0.02
    assert inspect.signature(rerank_fragments).parameters["round_size"].default == 5_000
