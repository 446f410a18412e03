"""The phrase's score scale: calibrated after fusion, order kept per source, MIN_SCORE on the
calibrated value, raw and calibrated values in the contributions."""

from __future__ import annotations

import numpy as np

from thalabus_graph.calibration import Calibration, SourceMap
from thalabus_graph.fragments import Fragment
from thalabus_graph.scale import PhraseScale, calibration_of, semantic_scale
from thalabus_graph.settings import Settings

CAL = Calibration("m", {"default": SourceMap(2.9, 2.8)})


def chapters(phrase_scores: list[float]) -> list[Fragment]:
    return [Fragment(f"d{i}-c1", f"d{i}", "t", s, "chapters", ("semantic:chapters",))
            for i, s in enumerate(phrase_scores)]


def background_hits() -> list[Fragment]:
    rng = np.random.default_rng(1)
    cos = sorted((0.74 + 0.02 * rng.standard_normal(200)).tolist(), reverse=True)
    cos[0] = 0.9  # one hit standing far out
    return chapters([(1 + c) / 2 for c in cos])


def test_the_shipped_calibration_is_selected_by_the_model_setting() -> None:
    shipped = Settings(calibration_file="")
    assert calibration_of(shipped) is not None
    assert calibration_of(shipped.replace(embedder_model="unknown-model")) is None
    assert calibration_of(Settings(calibration_file="none")) is None
    assert calibration_of(Settings()) is None  # off by default: the index scale


def test_min_score_acts_on_the_calibrated_value_and_the_order_is_kept() -> None:
    hits = background_hits()
    scale = PhraseScale(Settings(), CAL)
    scale.remember("p", hits, {"chapters": 5000})
    out = scale.apply("p", hits)
    assert out[0].fragmentid == "d0-c1" and out[0].score > 0.9
    assert 0 < len(out) < len(hits)
    assert all(f.score >= 0.10 for f in out)
    kept = {f.fragmentid for f in out}
    raw_order = [f.fragmentid for f in hits if f.fragmentid in kept]
    assert [f.fragmentid for f in out] == raw_order
    assert any(c.startswith("calibrated:chapters 0.9500 -> ") for c in out[0].contributions)
    assert "semantic:chapters" in out[0].contributions


def test_a_restricted_search_is_read_against_the_unrestricted_background() -> None:
    hits = background_hits()
    scale = PhraseScale(Settings(), CAL)
    scale.remember("p", hits, {"chapters": 5000})
    whole = {f.fragmentid: f.score for f in scale.apply("p", hits)}
    scale.remember("p", hits[5:], {"chapters": 5000})  # a later, restricted search
    part = scale.apply("p", hits[5:8])
    assert all(whole.get(f.fragmentid) == f.score for f in part)


def test_sources_share_the_phrase_background_so_the_fused_order_is_kept() -> None:
    hits = background_hits()
    summaries = [Fragment(f"d{i}-s1", f"d{i}", "s", f.score - 0.001, "summaries",
                          ("semantic:summaries",)) for i, f in enumerate(hits[:50])]
    fused = sorted([*hits, *summaries], key=lambda f: (-f.score, f.fragmentid))
    scale = PhraseScale(Settings(min_score=0.0), CAL)
    scale.remember("p", fused, {"chapters": 5000, "summaries": 5000})
    assert [f.fragmentid for f in scale.apply("p", fused)] == [f.fragmentid for f in fused]


def test_factor_and_cap_act_on_the_calibrated_scale() -> None:
    hits = background_hits()
    scale = PhraseScale(Settings(score_factor_chapters=0.5, score_cap_chapters=0.3), CAL)
    scale.remember("p", hits, {"chapters": 5000})
    assert scale.apply("p", hits[:1])[0].score == 0.3


def test_a_text_only_hit_stays_below_the_semantic_hits() -> None:
    hits = background_hits()
    scale = PhraseScale(Settings(min_score=0.0), CAL)
    scale.remember("p", hits, {"chapters": 5000})
    keyword = Fragment("d9-k1", "d9", "kw", 0.3, "keywords", ("text:keywords",))
    out = scale.apply("p", [*hits[:3], keyword])
    assert out[-1].fragmentid == "d9-k1" and out[-1].score < out[-2].score


def test_without_a_calibration_nothing_changes_after_fusion() -> None:
    hits = background_hits()
    scale = PhraseScale(Settings(), None)
    scale.remember("p", hits, {"chapters": 5000})
    assert scale.apply("p", hits) == hits
    off = Settings(calibration_file="none")
    assert semantic_scale(off, "chapters", 0.05) is None
    assert semantic_scale(off.replace(score_factor_chapters=0.5), "chapters", 0.8) == 0.4
    assert semantic_scale(Settings(calibration_file=""), "chapters", 0.05) == 0.05
