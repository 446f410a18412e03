"""The phrase's score scale: calibrated after fusion, order kept per source, MIN_SCORE on the
calibrated value, raw and calibrated values in the contributions."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from thalabus_graph.fragments import Fragment
from thalabus_graph.scoring.calibration import LANGUAGE_MATTERS, Calibration, Gate, SourceMap
from thalabus_graph.scoring.scale import PhraseScale, calibration_of, semantic_scaler
from thalabus_graph.settings import Settings

PRIOR = SourceMap(-4.7, 0.56)
"""About the shipped model's reading at its data's prior (one candidate in 111 relevant)."""
CAL = Calibration("m", {"default": SourceMap(2.9, 2.8)}, reading=PRIOR)


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
    assert calibration_of(Settings()) is not None  # on by default: the shipped one


def test_min_score_acts_on_the_calibrated_value_and_the_order_is_kept() -> None:
    hits = background_hits()
    scale = PhraseScale(Settings(), CAL)
    scale.remember("p", hits, {"chapters": 5000})
    out = scale.apply("p", hits)
    assert out[0].fragmentid == "d0-c1" and out[0].score > 0.5 > out[1].score
    assert 0 < len(out) < len(hits)
    assert all(f.score >= Settings().min_score for f in out)
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
    assert semantic_scaler(off, "chapters")(0.001) is None  # under MIN_SCORE
    assert semantic_scaler(off.replace(score_factor_chapters=0.5), "chapters")(0.8) == 0.4
    assert semantic_scaler(Settings(calibration_file=""), "chapters")(0.001) == 0.001


GATED = Calibration("m", {"default": SourceMap(2.9, 2.8)}, gate=Gate(-135.4, 159.1, 12.3),
                    reading=PRIOR)


def hits_with_texts(best: float, texts: list[str | None]) -> list[Fragment]:
    """A phrase's candidates: the best at cosine ``best``, the rest a background below it."""
    rng = np.random.default_rng(2)
    cos = sorted((best - 0.08 + 0.015 * rng.standard_normal(len(texts) - 1)).tolist(),
                 reverse=True)
    return [Fragment(f"d{i}-c1", f"d{i}", text, (1 + c) / 2, "chapters", ("semantic:chapters",))
            for i, (c, text) in enumerate(zip([best, *cos], texts, strict=True))]


def test_the_gate_reads_the_share_of_the_phrase_words_in_the_candidates_texts() -> None:
    phrase = "direct elections first place"
    others: list[str | None] = ["unrelated words here"] * 59
    sharing = hits_with_texts(0.80, ["when the first direct elections took place", *others])
    foreign = hits_with_texts(0.80, ["a passage about something else entirely", *others])
    for hits, kept in ((sharing, True), (foreign, False)):
        scale = PhraseScale(Settings(), GATED)
        scale.remember(phrase, hits, {"chapters": 5000})
        assert scale.backgrounds[phrase].share == (1.0 if kept else 0.0)
        out = scale.apply(phrase, hits)
        assert bool(out) is kept
        if kept:  # the gate is one factor per phrase: the order of its hits is kept
            order = [f.fragmentid for f in hits if f.fragmentid in {g.fragmentid for g in out}]
            assert [f.fragmentid for f in out] == order


def test_candidates_without_texts_give_no_share_and_the_gate_reads_it_as_no_shared_word(
        ) -> None:
    phrase = "direct elections first place"
    blind = hits_with_texts(0.80, [None] * 60)
    scale = PhraseScale(Settings(), GATED)
    scale.remember(phrase, blind, {"chapters": 5000})
    bg = scale.backgrounds[phrase]
    assert bg.share is None and bg.best is not None
    assert GATED.gate_of(bg) == GATED.gate_of(replace(bg, share=0.0)) < 0.1
    assert scale.apply(phrase, blind) == []
    # a clear hit still passes the gate without any text
    strong = hits_with_texts(0.90, [None] * 60)
    scale.remember("other", strong, {"chapters": 5000})
    assert scale.apply("other", strong)[0].fragmentid == "d0-c1"


def test_a_cosine_only_gate_does_not_read_the_texts() -> None:
    cosine_only = Calibration("m", {"default": SourceMap(2.9, 2.8)}, gate=Gate(-111.5, 133.7),
                              reading=PRIOR)
    scale = PhraseScale(Settings(), cosine_only)
    hits = hits_with_texts(0.85, ["direct elections first place"] * 60)
    scale.remember("direct elections first place", hits, {"chapters": 5000})
    assert scale.backgrounds["direct elections first place"].share is None
    assert "word" not in str(scale.explain()["gate"])
    assert "with no word shared" in str(PhraseScale(Settings(), GATED).explain()["gate"])


FOREIGN = replace(GATED, foreign_gate=Gate(-115.8, 146.0))
"""GATED with a gate for phrases in a language the graph lacks (midpoint 0.793)."""


def test_a_phrase_in_a_language_the_graph_lacks_gets_the_more_lenient_gate() -> None:
    phrase = "disertore dal servizio militare"
    hits = hits_with_texts(0.82, ["a deserter from the army", *["other words"] * 59])
    asked: list[str] = []

    def held(answer: bool | None) -> Callable[[str], bool | None]:
        def ask(p: str) -> bool | None:
            asked.append(p)
            return answer
        return ask

    outcomes = {}
    for answer in (True, False, None):
        scale = PhraseScale(Settings(), FOREIGN, held(answer))
        scale.remember(phrase, hits, {"chapters": 5000})
        bg = scale.backgrounds[phrase]
        assert bg.foreign is (answer is False)
        outcomes[answer] = scale.apply(phrase, hits)
    assert asked == [phrase] * 3
    # held, or not known: the words decide and none is shared; not held: the cosine alone
    assert outcomes[True] == outcomes[None] == []
    assert [f.fragmentid for f in outcomes[False]][:1] == ["d0-c1"]
    bg = scale.backgrounds[phrase]
    assert bg.best is not None and FOREIGN.gate_of(replace(bg, foreign=True)) == max(
        FOREIGN.gate_of(bg), Gate(-115.8, 146.0).probability(bg.best))


def test_the_language_is_read_only_when_it_can_change_the_gate() -> None:
    asked: list[str] = []

    def held(p: str) -> bool | None:
        asked.append(p)
        return False

    sharing = hits_with_texts(0.90, ["direct elections first place", *["x"] * 59])
    scale = PhraseScale(Settings(), FOREIGN, held)
    scale.remember("direct elections first place", sharing, {"chapters": 5000})
    bg = scale.backgrounds["direct elections first place"]
    assert not FOREIGN.language_matters(bg) and not bg.foreign and asked == []
    # a foreign gate more lenient by less than LANGUAGE_MATTERS is not worth a detection
    close = hits_with_texts(0.88, ["unrelated words", *["x"] * 59])
    scale.remember("direct elections first place again", close, {"chapters": 5000})
    near = scale.backgrounds["direct elections first place again"]
    gain = FOREIGN.gate_of(replace(near, foreign=True)) - FOREIGN.gate_of(near)
    assert 0.0 < gain < LANGUAGE_MATTERS and asked == [] and not near.foreign
    # without a foreign gate the language never matters
    assert not GATED.language_matters(replace(bg, best=0.80, share=0.0))
    assert "0.793" in str(scale.explain()["foreign_gate"])
    assert "none" in str(PhraseScale(Settings(), GATED).explain()["foreign_gate"])
