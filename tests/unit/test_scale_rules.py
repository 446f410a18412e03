"""The calibrated scale's recall rules and what it reports, on hand-made candidates with the
shipped multilingual-e5-small calibration (no Neo4j): the background is read from a fixed
sample whatever pool a request keeps, a short phrase held whole passes the gate, a topic found
near in another language is kept with doubt rather than emptied, and every emptied, doubtful or
gate-cut phrase is a ``DroppedWarning`` naming its rule."""

from __future__ import annotations

from thalabus_graph.fragments import Fragment
from thalabus_graph.scoring.calibration import shipped
from thalabus_graph.scoring.lexical import covers, lexical_share, phrase_words
from thalabus_graph.scoring.scale import (
    BACKGROUND_TOP_N,
    DOUBT,
    Candidate,
    DroppedWarning,
    PhraseScale,
    other_language_best,
    sample,
)
from thalabus_graph.scoring.tokens import lexical_words
from thalabus_graph.settings import Settings

SIZES = {"chapters": 5000}


def fragments(cosines: list[float], *, text: str = "unrelated words here",
              prefix: str = "f") -> list[Fragment]:
    return [Fragment(f"{prefix}{i}", f"{prefix}d{i}", text, (1.0 + c) / 2.0, "chapters",
                     ("semantic:chapters",)) for i, c in enumerate(cosines)]


def flat(best: float, n: int = 200) -> list[float]:
    """A candidate list whose best cosine is ``best``, the rest a smooth tail below it."""
    return [best - 0.0004 * i for i in range(n)]


def scale() -> PhraseScale:
    calibration = shipped("multilingual-e5-small")
    assert calibration is not None
    return PhraseScale(Settings(), calibration)


def test_the_background_is_the_same_from_a_small_pool_and_the_candidates_beyond_it() -> None:
    cosines = flat(0.86, 300)
    whole, cut = scale(), scale()
    every = fragments(cosines)
    whole.remember("p", every, SIZES)
    pool = every[:30]
    beyond = [Candidate("chapters", f.score, f.text, None) for f in every[30:]]
    cut.remember("p", pool, SIZES, beyond)
    assert whole.backgrounds["p"] == cut.backgrounds["p"]
    assert len(sample(every)) == BACKGROUND_TOP_N


def test_short_phrases_read_every_word_and_spaceless_scripts_read_bigrams() -> None:
    assert lexical_words("Zug") == frozenset()
    assert phrase_words("Zug") == {"zug"}
    assert lexical_share("Zug", ["Der Zug fährt ab"]) == 1.0
    assert lexical_share("冰川融化", ["全球冰川正在融化"]) == 2 / 3
    assert covers("wine", ["Wine"]) and not covers("wine", ["winery"])
    assert not covers("one two three four five", ["one two three four five"])


def test_a_short_phrase_held_whole_passes_the_gate_and_its_exact_match_leads() -> None:
    s = scale()
    found = fragments(flat(0.80), text="nothing shared")
    keyword = Fragment("kw", "kwd", "wine", (1.0 + 0.70) / 2.0, "keywords", ("text:keywords",))
    s.remember("wine", found, SIZES, text=[keyword])
    assert s.backgrounds["wine"].lexical
    out = s.apply("wine", [*found, keyword])
    assert out and out[0].fragmentid in ("kw", found[0].fragmentid)
    assert "kw" in {f.fragmentid for f in out}
    scores = {f.fragmentid: f.score for f in out}
    assert scores["kw"] == max(scores.values())
    assert s.warnings() == [] or all(w.rule != "gate" for w in s.warnings())


def test_an_absent_topic_is_emptied_and_reported_by_its_gate() -> None:
    s = scale()
    found = fragments(flat(0.80), text="nothing shared")
    s.remember("quantum chromodynamics on lattices", found, SIZES)
    assert s.apply("quantum chromodynamics on lattices", found) == []
    [warning] = s.warnings()
    assert isinstance(warning, DroppedWarning)
    assert warning.rule == "gate" and warning.dropped == len(found) and warning.kept == 0
    assert abs((warning.best_cosine or 0.0) - 0.80) < 1e-9
    assert warning.to_dict()["subject"] == "quantum chromodynamics on lattices"


def test_min_score_alone_emptying_a_phrase_is_reported_as_such() -> None:
    s = scale()
    found = fragments(flat(0.95), text="quantum chromodynamics lattices")
    s.remember("quantum chromodynamics lattices", found, SIZES)
    bg = s.backgrounds["quantum chromodynamics lattices"]
    assert s.calibration is not None and s.calibration.gate_of(bg) > 0.99
    s.settings = Settings(min_score=0.9999)
    assert s.apply("quantum chromodynamics lattices", found) == []
    assert [w.rule for w in s.warnings()] == ["min_score"]
    assert "the score floor 0.9999" in s.warnings()[0].message  # the floor that acted


def near_in_another_language(other_cosine: float) -> tuple[PhraseScale, list[Fragment]]:
    """A phrase whose English candidates share none of its words and whose best German one
    has ``other_cosine``, remembered and applied."""
    s = scale()
    own = fragments(flat(0.80), text="nothing shared", prefix="en")
    other = fragments([other_cosine], text="ganz andere Wörter", prefix="de")
    languages = {f.documentid: "en" for f in own} | {f.documentid: "de" for f in other}
    s.remember("melting of the ice sheets", [*own, *other], SIZES, languages=languages)
    return s, s.apply("melting of the ice sheets", [*own, *other])


def test_a_topic_near_in_another_language_is_kept_with_doubt_not_emptied() -> None:
    s, out = near_in_another_language(0.775)
    bg = s.backgrounds["melting of the ice sheets"]
    assert bg.other is not None and abs(bg.other - 0.775) < 1e-9
    outcomes = {}
    for step in range(40):
        s, out = near_in_another_language(0.760 + step * 0.001)
        rules = [w.rule for w in s.warnings()]
        outcomes[tuple(rules)] = out
    # lower cosines empty the phrase (its gate), higher ones keep it whole; in between the
    # phrase's candidates are kept under MIN_SCORE, with the warning
    assert ("gate",) in outcomes and ("doubtful",) in outcomes
    doubtful = outcomes[("doubtful",)]
    floor = Settings().min_score
    assert doubtful and all(DOUBT * floor <= f.score < floor for f in doubtful)


def test_a_pool_kept_whole_with_doubt_still_says_so() -> None:
    # a small pool (a query's limit) whose every fragment is kept with doubt drops none: the
    # warning that they all score under MIN_SCORE must not go with the drops
    for step in range(40):
        cosine = 0.760 + step * 0.001
        s, out = near_in_another_language(cosine)
        if [w.rule for w in s.warnings()] == ["doubtful"]:
            break
    else:
        raise AssertionError("no cosine kept the phrase with doubt")
    kept = {f.fragmentid for f in out}
    s = scale()
    own = fragments(flat(0.80), text="nothing shared", prefix="en")
    other = fragments([cosine], text="ganz andere Wörter", prefix="de")
    languages = {f.documentid: "en" for f in own} | {f.documentid: "de" for f in other}
    s.remember("melting of the ice sheets", [*own, *other], SIZES, languages=languages)
    pool = [f for f in (*own, *other) if f.fragmentid in kept]
    assert {f.fragmentid for f in s.apply("melting of the ice sheets", pool)} == kept
    [warning] = s.warnings()
    assert isinstance(warning, DroppedWarning)
    assert (warning.rule, warning.dropped, warning.kept) == ("doubtful", 0, len(kept))
    assert "every fragment under the score floor" in warning.message


def test_the_best_cosine_in_another_language_reads_document_languages() -> None:
    drawn = [Candidate("chapters", 0.95, None, "en"), Candidate("chapters", 0.93, None, "de"),
             Candidate("chapters", 0.90, None, "en")]
    assert abs((other_language_best(drawn) or 0.0) - 0.86) < 1e-9
    assert other_language_best([Candidate("chapters", 0.9, None, None)]) is None


def test_a_viewed_query_gets_its_counts_without_the_graphs_cosine_or_gate() -> None:
    s = scale()
    found = fragments(flat(0.80), text="nothing shared")
    s.viewed = True
    s.remember("quantum chromodynamics on lattices", found, SIZES)
    assert s.apply("quantum chromodynamics on lattices", found) == []
    [warning] = s.warnings()
    assert isinstance(warning, DroppedWarning)
    assert (warning.rule, warning.dropped, warning.best_cosine) == ("gate", len(found), None)
    assert "0.8" not in warning.message and "cosine" not in warning.message
