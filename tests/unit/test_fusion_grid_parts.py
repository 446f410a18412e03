"""The fusion grid benchmark's own parts: its replay is the engine's rule, its ceiling only
reorders within the query's language, and recording leaves ``LanguageSlots.fit`` as it was."""

from __future__ import annotations

from benchmarks.fusion_grid import (
    FitInputs,
    recorded_fits,
    replay,
    slots_ceiling,
    top10_agreement,
)
from thalabus_graph.fragments import Fragment
from thalabus_graph.scoring import fusion


def _frag(doc: str, score: float, text: str, source: str = "chapters") -> Fragment:
    return Fragment(f"sf-{doc}-c1", f"sf-{doc}", text, score, source, (source,))


SEMANTIC = [_frag("a-de", 0.95, "Brot und Butter"), _frag("b-en", 0.93, "bread with salt"),
            _frag("c-en", 0.90, "bread and butter recipe")]
TEXT = [_frag("c-en", 1.0, "bread and butter recipe", "chapters_text"),
        _frag("b-en", 0.4, "bread with salt", "chapters_text")]
LANGUAGES: dict[str, str | None] = {"sf-a-de": "de", "sf-b-en": "en", "sf-c-en": "en"}


def test_replay_fuses_like_the_rule_and_keeps_unfused_queries() -> None:
    inputs = {"q": FitInputs("bread and butter", SEMANTIC, TEXT, LANGUAGES)}
    fallback = {"q": [("x", 1.0)], "other": [("y", 1.0)]}
    out = replay(inputs, fallback, text_weight=0.5, full_coverage=0.5)
    # lexical evidence lifts c-en above b-en inside English; a-de keeps the first slot
    assert [d for d, _ in out["q"]] == ["a-de", "c-en", "b-en"]
    assert out["other"] == [("y", 1.0)]
    semantic_only = replay(inputs, fallback, text_weight=0.0, full_coverage=0.5)
    assert [d for d, _ in semantic_only["q"]] == ["a-de", "b-en", "c-en"]


def test_ceiling_moves_only_the_query_languages_documents() -> None:
    ranked = {"q": [("a-de", 0.9), ("b-en", 0.8), ("c-de", 0.7), ("d-en", 0.6)]}
    langs = {"a-de": "de", "b-en": "en", "c-de": "de", "d-en": "en"}
    out = slots_ceiling(ranked, {"q": {"d-en": 1, "c-de": 1}}, langs, {"q": "en"})
    assert out["q"] == [("a-de", 0.9), ("d-en", 0.8), ("c-de", 0.7), ("b-en", 0.6)]


def test_recording_keeps_the_inputs_and_restores_fit() -> None:
    before = fusion.LanguageSlots.__dict__["fit"]
    with recorded_fits() as calls:
        rule = fusion.LanguageSlots.fit("bread and butter", SEMANTIC, TEXT,
                                        languages=LANGUAGES, text_weight=0.5, full_coverage=0.5)
    assert rule.query_language == "en"
    assert [c.phrase for c in calls] == ["bread and butter"]
    assert calls[0].text == TEXT
    assert fusion.LanguageSlots.__dict__["fit"] is before


def test_top10_agreement_compares_order() -> None:
    a = {"q": [("x", 2.0), ("y", 1.0)], "r": [("x", 1.0)]}
    b = {"q": [("y", 2.0), ("x", 1.0)], "r": [("x", 5.0)]}
    assert top10_agreement(a, b) == 0.5
