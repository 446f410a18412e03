# ruff: noqa: RUF001 - Greek capitals and look-alike letters are the point of the cases
"""The plugin's Java fusion rules (``thalabus.procedures.fusion``) answer as the engine does.

Every case runs through the Python rule and through the Java ``Check`` main
(``tests/support/java_rules.py``): the same fragment ids in the same order, the same documents,
texts, sources and contributions, and scores within ``TOLERANCE``. Hand-written cases hold the
hard spots (ties, empty lists, one to three languages, text-only hits, fragments both searches
found, unicode words); seeded random ones have a real phrase's size (about 200 semantic and 50
text hits). No database: only the Neo4j line's jars and JDK are needed.
"""

from __future__ import annotations

import random
import re
import unicodedata
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.support import java_rules
from thalabus_graph.fragments import Fragment
from thalabus_graph.graph.launcher.install import default_version
from thalabus_graph.lucene import phrase_query, terms_query
from thalabus_graph.plan.steps import TEXT_SOURCES, VECTOR_BY_SOURCE, VECTOR_SOURCES
from thalabus_graph.scoring.fusion import (
    LanguageSlots,
    fuse_convex,
    fuse_max,
    fuse_rrf,
    ranked_onto,
    shared_words,
)
from thalabus_graph.scoring.scale import calibration_of
from thalabus_graph.scoring.tokens import plain_words
from thalabus_graph.search.fusing import PhraseFusion
from thalabus_graph.search.hits import semantic_fragments, text_fragments
from thalabus_graph.settings import Settings

TOLERANCE = 1e-9
"""Scores agree to this. Where Python's own float order is fixed Java computes the same bits;
a sum of rarity weights runs over a frozenset of words, whose order Python's string hashing
picks per process, so those sums (and the scores made of them) may differ in the last bits."""

MAIN = "thalabus.procedures.fusion.Check"

Case = dict[str, Any]
Runner = Callable[[Sequence[Case]], list[Any]]


@pytest.fixture(scope="session")
def java(tmp_path_factory: pytest.TempPathFactory) -> Runner:
    """Runs cases through the Java ``Check`` (all plugin sources compiled once a session)."""
    out: Path = tmp_path_factory.mktemp("procedures-classes")
    executable, classpath = java_rules.compiled(default_version(), out)

    def run(cases: Sequence[Case]) -> list[Any]:
        answers = java_rules.run(executable, classpath, MAIN, cases)
        assert len(answers) == len(cases)
        return answers
    return run


# --- fragments and settings as the wire carries them --------------------------------------


def frag(fid: str, score: float, source: str = "chapters", text: str | None = None,
         contributions: tuple[str, ...] | None = None, documentid: str | None = None
         ) -> Fragment:
    """A fragment of document ``fid`` before its last hyphen, contributed by ``source``'s
    semantic search unless told."""
    doc = documentid if documentid is not None else fid.rpartition("-")[0] or fid
    return Fragment(fid, doc, text, score, source,
                    contributions if contributions is not None else (f"semantic:{source}",))


def tfrag(fid: str, score: float, text: str | None, source: str = "chapters",
          documentid: str | None = None) -> Fragment:
    """A text hit (score already divided by its search's best)."""
    return frag(fid, score, source, text, (f"text:{source}",), documentid)


def wire(fragments: Sequence[Fragment]) -> list[dict[str, Any]]:
    return [f.to_dict() for f in fragments]


def wire_settings(settings: Settings) -> dict[str, Any]:
    """The settings the Java ``FusionSettings`` reads, by their Python names."""
    names = ["fusion", "fusion_text_weight", "fusion_full_coverage", "rrf_k", "top_n_text",
             "min_score"]
    names += [f"score_{kind}_{src.source}" for kind in ("factor", "cap") for src in VECTOR_SOURCES]
    out = {name: getattr(settings, name) for name in names}
    out["calibrated"] = calibration_of(settings) is not None
    return out


def assert_same_fragments(python: Sequence[Fragment], java: Sequence[dict[str, Any]],
                          what: str) -> None:
    assert [f.fragmentid for f in python] == [f["fragmentid"] for f in java], what
    for p, j in zip(python, java, strict=True):
        assert (p.documentid, p.text, p.source, list(p.contributions)) == (
            j["documentid"], j["text"], j["source"], j["contributions"]), what
        assert j["score"] == pytest.approx(p.score, abs=TOLERANCE, rel=0), (what, p.fragmentid)


def assert_same_scores(python: dict[str, float], java: dict[str, float], what: str) -> None:
    assert python.keys() == java.keys(), what
    for key, value in python.items():
        assert java[key] == pytest.approx(value, abs=TOLERANCE, rel=0), (what, key)


# --- realistic phrases ----------------------------------------------------------------------

WORDS = ["gemüse", "Gemüsepfanne", "reis", "Brot", "mit", "und", "in", "within", "the",
         "vegetarisches", "Gericht", "İstanbul", "ISTANBUL", "ΟΔΟΣ", "οδός", "ΣΑΣ", "Straße",
         "STRASSE", "ﬁsch", "café", "cafe\u0301", "naïve", "日本語", "東京タワー", "x😀y", "3.5",
         "e-mail", "l'eau", "Ǆemal", "ǅa", "glacier", "melting", "ice", "sheet", "protein",
         "cell", "Zellkern", "noyau", "cellule", "α-helix", "DNA", "ℌilbert", "Ⅻ", "²",
         "under_score", "ÉCOLE", "école"]
LANGUAGES = ["de", "en", "fr"]


def sentence(rng: random.Random, low: int, high: int) -> str:
    """Words of ``WORDS`` with punctuation and mixed case."""
    words = []
    for _ in range(rng.randint(low, high)):
        w = rng.choice(WORDS)
        w = w.upper() if rng.random() < 0.1 else w
        words.append(w + rng.choice(["", "", "", ",", ".", "!", "'s", ":"]))
    return " ".join(words)


def phrase_hits(rng: random.Random, n_semantic: int = 200, n_text: int = 50,
                n_docs: int = 80) -> tuple[list[Fragment], list[Fragment]]:
    """A phrase's semantic hits (chapters and paragraphs, index-scale scores) and text hits
    (chapters and keywords, divided by the best), some fragments found by both."""
    docs = [f"doc{i:03d}" for i in range(n_docs)]
    texts: dict[str, str] = {}
    semantic: list[Fragment] = []
    for _ in range(n_semantic):
        doc = rng.choice(docs)
        kind, source = rng.choice([("c", "chapters"), ("p", "paragraphs")])
        fid = f"{doc}-{kind}{rng.randint(0, 9)}"
        text = texts.setdefault(fid, sentence(rng, 3, 14))
        if any(f.fragmentid == fid for f in semantic):
            continue
        semantic.append(frag(fid, round(rng.uniform(0.78, 0.93), 12), source, text))
    raw = sorted((rng.uniform(0.5, 12.0) for _ in range(n_text)), reverse=True)
    text: list[Fragment] = []
    for score in raw:
        if rng.random() < 0.5 and semantic:
            f = rng.choice(semantic)
            fid, doc, source = f.fragmentid, f.documentid, "chapters"
        else:
            doc = rng.choice(docs + [f"new{i}" for i in range(10)])
            source = rng.choice(["chapters", "keywords"])
            fid = f"{doc}-{'k' if source == 'keywords' else 'c'}{rng.randint(0, 9)}"
        body = texts.setdefault(fid, sentence(rng, 1, 14))
        text.append(tfrag(fid, score / raw[0], body, source, doc))
    return semantic, text


def languages_of(rng: random.Random, fragments: Sequence[Fragment], count: int
                 ) -> dict[str, str | None]:
    """A language per document among ``count`` languages; some none, some not listed."""
    out: dict[str, str | None] = {}
    for f in fragments:
        roll = rng.random()
        if roll < 0.05:
            continue
        out.setdefault(f.documentid, None if roll < 0.1 else rng.choice(LANGUAGES[:count]))
    return out


def restricted(rng: random.Random, fragments: Sequence[Fragment], keep: float
               ) -> list[Fragment]:
    """The fragments of a random share of their documents (a filtered search's hits)."""
    docs = sorted({f.documentid for f in fragments})
    kept = {d for d in docs if rng.random() < keep}
    return [f for f in fragments if f.documentid in kept]


# --- text rules -----------------------------------------------------------------------------

LOWER_CASES = ["İstanbul", "ΟΔΟΣ", "ΟΔΟΣ.", "Α..Σ", "ΑΣ'Α", "Α.Σ", "ΑΣ-Α", "Σ", "ΣΑ", "ΑΣ1",
               "Α\u0301Σ", "ΑΣ\u0301", "ΑΣ\u0301Α", "1Σ", "ʰΣ", "ΑʰΣ", "ΑΣʰΑ", "ǅ Ǆ ǆ", "Straße",
               "ẞ", "ﬁ", "Å", "Ω", "K", "x😀y", "𐐀𐐁", "ℌ", "Ⅻ", "ⓐⒶ", "", "ΑΣ\u00adΑ", "ΑΣ\u200dx"]


def test_text_rules_read_words_as_python_does(java: Runner) -> None:
    texts = [*LOWER_CASES, *WORDS, "Brot mit Butter, mit Salz", "cafe\u0301 naïve_x 3.5 e-mail",
             "日本語のテキスト", "a\u0300b", "l'été ÉTÉ", "Ⅻ² ½"]
    query_words = ["gemüse", "reis", "brot", "i", "stanbul", "ς", "σ", "οδος", "οδοσ", "ss",
                   "fi", "ﬁ", "😀", "é", "e", "x😀y", "ǆ", "ⅻ"]
    cases: list[Case] = []
    expected: list[Any] = []
    for text in texts:
        cases.append({"fn": "lower", "args": {"text": text}})
        expected.append(text.lower())
        cases.append({"fn": "plain_words", "args": {"text": text}})
        expected.append(sorted(plain_words(text)))
        cases.append({"fn": "shared_words", "args": {"words": query_words, "text": text}})
        expected.append(sorted(shared_words(frozenset(query_words), text)))
    cases.append({"fn": "plain_words", "args": {"text": None}})
    expected.append([])
    assert java(cases) == expected


def _python_chars(start: int, end: int) -> dict[str, Any]:
    word = re.compile(r"\w")
    out: dict[str, Any] = {"word": set(), "space": set(), "either": set(), "cased_only": set(),
                           "lower": {}}
    for cp in range(start, end):
        ch = chr(cp)
        if word.match(ch):
            out["word"].add(cp)
        if ch.isspace():
            out["space"].add(cp)
        if ("Α" + ch + "Σ").lower()[-1] == "ς":  # ch is cased or case-ignorable
            out["either"].add(cp)
        if ("1" + ch + "Σ").lower()[-1] == "ς":  # ch is cased, not case-ignorable
            out["cased_only"].add(cp)
        if ch.lower() != ch:
            out["lower"][cp] = ch.lower()
    return out


def _expand(ranges: list[list[int]]) -> set[int]:
    return {cp for lo, hi in ranges for cp in range(lo, hi)}


def test_character_classes_agree_on_every_character_python_knows(java: Runner) -> None:
    """Python's ``\\w``, ``\\s``, ``lower()`` and the final sigma's neighbours, for every code
    point: Java's answers differ only where the JDK's Unicode database gives a character
    another general category than Python's (14.0 for Python 3.11): characters assigned or
    reclassified by another Unicode version (the JDK 17 of Neo4j 5.26 knows Unicode 13, the
    JDK of Neo4j 2026.x Unicode 16)."""
    start, end = 0, 0x110000
    (answer,) = java([{"fn": "chars", "args": {"start": start, "end": end}}])
    python = _python_chars(start, end)
    cased, ignorable = _expand(answer["cased"]), _expand(answer["ignorable"])
    java_sets = {"word": _expand(answer["word"]), "space": _expand(answer["space"]),
                 "either": cased | ignorable, "cased_only": cased - ignorable}
    java_lower = {int(cp): low for cp, low in answer["lower"].items()}
    java_category = {cp: category for lo, hi, category in answer["categories"]
                     for cp in range(lo, hi)}
    reclassified = {cp for cp, category in java_category.items()
                    if unicodedata.category(chr(cp)) != category}
    # characters one database assigns and the other not are expected; a character both know
    # under two categories is rare (U+1171E, Mn in Unicode 14, Mc since 15)
    assert len({cp for cp in reclassified if "Cn" not in (
        java_category[cp], unicodedata.category(chr(cp)))}) < 10
    for name, found in java_sets.items():
        assert (found ^ python[name]) - reclassified == set(), name
    differing = {cp for cp in java_lower.keys() | python["lower"].keys()
                 if java_lower.get(cp) != python["lower"].get(cp)}
    assert differing - reclassified == set()


# --- hits to fragments ----------------------------------------------------------------------


def test_hits_become_the_same_fragments(java: Runner) -> None:
    rng = random.Random(7)
    settings_list = [
        Settings(),
        Settings(calibration_file="none"),
        Settings(calibration_file="none", min_score=0.5, score_factor_chapters=1.2,
                 score_cap_chapters=0.95, score_factor_paragraphs=0.7,
                 score_factor_summaries=2.0, score_cap_questions=0.6),
        Settings(top_n_text=3),
    ]
    hits = [(f"doc{i}-c{i}", f"doc{i}", None if i % 7 == 0 else sentence(rng, 1, 5),
             round(rng.uniform(0.3, 1.0), 9)) for i in range(60)]
    hits.append(("doc-x-c1", "doc-x", "edge", 0.5))  # exactly min_score at 0.5
    cases: list[Case] = []
    expected: list[list[Fragment]] = []
    for settings in settings_list:
        for src in VECTOR_SOURCES:
            cases.append({"fn": "semantic_fragments", "args": {
                "settings": wire_settings(settings), "source": src.source,
                "hits": [list(h) for h in hits]}})
            expected.append(semantic_fragments(settings, VECTOR_BY_SOURCE[src.source], hits))
        bm25 = sorted(((fid, doc, text, rng.uniform(0.1, 9.0)) for fid, doc, text, _ in hits),
                      key=lambda h: -h[3])
        for source, _index in TEXT_SOURCES:
            for best, top_n in ((bm25[0][3], None), (bm25[0][3], 5), (bm25[0][3], 0),
                                (bm25[0][3], -3), (bm25[0][3], 500), (0.0, None),
                                (-1.0, None), (bm25[0][3] * 2, 10)):
                cases.append({"fn": "text_fragments", "args": {
                    "settings": wire_settings(settings), "source": source,
                    "hits": [list(h) for h in bm25], "best": best, "top_n": top_n}})
                expected.append(text_fragments(settings, source, bm25, best, top_n))
    for case, python, answer in zip(cases, expected, java(cases), strict=True):
        assert_same_fragments(python, answer, case["fn"])
    assert sum(len(e) for e in expected) > 1000


# --- language-slots -------------------------------------------------------------------------


def slots_case(query: str, fit: tuple[list[Fragment], list[Fragment]],
               languages: dict[str, str | None], semantic: list[Fragment],
               text: list[Fragment], text_weight: float = 0.45, full_coverage: float = 0.5,
               low: float | None = None) -> tuple[Case, Any]:
    """A language-slots case and the Python rule's answer (its fit and its fused list)."""
    model = LanguageSlots.fit(query, fit[0], fit[1], languages=languages,
                              text_weight=text_weight, full_coverage=full_coverage, low=low)
    case = {"fn": "language_slots", "args": {
        "query": query, "fit": {"semantic": wire(fit[0]), "text": wire(fit[1])},
        "languages": languages, "text_weight": text_weight, "full_coverage": full_coverage,
        "low": low, "semantic": wire(semantic), "text": wire(text)}}
    return case, (model, model.fuse(semantic, text))


def hand_slots_cases() -> list[tuple[Case, Any]]:
    """The hard spots of language-slots, each fitted and fused on the same hits unless a
    restricted list is the point."""
    sem = [frag("a-1", 0.9, text="Gemüsepfanne mit Reis"), frag("b-1", 0.8, text="Brot"),
           frag("c-1", 0.7, text="Reis und Gemüse"), frag("a-2", 0.6, "paragraphs", "mit")]
    txt = [tfrag("c-1", 1.0, "Reis und Gemüse"), tfrag("d-1", 0.8, "vegetarisches Gericht"),
           tfrag("a-1", 0.5, "Gemüsepfanne mit Reis"), tfrag("e-1", 0.3, "mit", "keywords")]
    two = {"a": "de", "b": "en", "c": "de", "d": "de", "e": "fr"}
    three = {"a": "de", "b": "en", "c": "fr", "d": "fr", "e": None}
    query = "vegetarisches Gericht mit Gemüse und Reis"
    ties = [frag("t-1", 0.8), frag("t-2", 0.8), frag("s-1", 0.8), frag("s-2", 0.8)]
    tie_text = [tfrag("t-2", 1.0, "x"), tfrag("s-1", 1.0, "x"), tfrag("u-1", 1.0, "x")]
    twice = [frag("a-1", 0.9, text="Reis"), frag("a-1", 0.95, "paragraphs", "Reis"),
             frag("b-1", 0.85, text="Brot")]
    twice_text = [tfrag("a-1", 1.0, "Reis"), tfrag("a-1", 0.4, "Reis", "keywords"),
                  tfrag("b-1", 0.2, "Brot")]
    unicode_sem = [frag("i-1", 0.9, text="İSTANBUL ΟΔΟΣ"), frag("j-1", 0.85, text="Straße ﬁsch"),
                   frag("k-1", 0.8, text="東京タワー x😀y")]
    unicode_txt = [tfrag("i-1", 1.0, "İSTANBUL ΟΔΟΣ"), tfrag("k-1", 0.7, "東京タワー x😀y"),
                   tfrag("m-1", 0.4, "οδος Istanbul")]
    out = [
        slots_case(query, (sem, txt), two, sem, txt),
        slots_case(query, (sem, txt), three, sem, txt),
        slots_case(query, (sem, txt), {d: "de" for d in "abcde"}, sem, txt),
        slots_case(query, (sem, txt), {}, sem, txt),
        slots_case(query, (sem, txt), two, sem, txt, text_weight=0.0),
        slots_case(query, (sem, txt), two, sem, txt, text_weight=1.0),
        slots_case(query, (sem, txt), two, sem, txt, full_coverage=0.0),
        slots_case(query, (sem, txt), two, sem, txt, full_coverage=1.0),
        slots_case(query, (sem, txt), two, sem, txt, low=0.5),
        slots_case(query, (sem, txt), two, sem, txt, low=0.75),
        slots_case(query, (sem, txt), two, sem[:2], txt[1:2]),
        slots_case(query, (sem, txt), two, [*sem, frag("z-1", 0.65)],
                   [*txt, tfrag("y-1", 0.9, "Gemüse Reis")]),
        slots_case(query, (sem, txt), two, [], []),
        slots_case(query, (sem, []), two, sem, []),
        slots_case(query, ([], txt), two, [], txt),
        slots_case(query, ([], []), two, sem, txt),
        slots_case("", (sem, txt), two, sem, txt),
        slots_case("!!", (sem, txt), two, sem, txt),
        slots_case("x", (ties, tie_text), {"t": "de", "s": "de", "u": "de"}, ties, tie_text),
        slots_case("x", (ties, tie_text), {"t": "de", "s": "en"}, ties, tie_text),
        slots_case("x", (ties, tie_text), {}, ties, tie_text, text_weight=0.0),
        slots_case("Reis Brot", (twice, twice_text), {"a": "de", "b": "en"}, twice, twice_text),
        slots_case("istanbul οδος x😀y ﬁsch strasse 東京タワー", (unicode_sem, unicode_txt),
                   {"i": "tr", "j": "de", "k": "ja", "m": "el"}, unicode_sem, unicode_txt),
        slots_case("İstanbul ΟΔΟΣ", (unicode_sem, unicode_txt), {"i": "tr", "m": "el"},
                   unicode_sem, unicode_txt),
    ]
    return out


def random_slots_cases(count: int) -> list[tuple[Case, Any]]:
    """Seeded random phrases of a real phrase's size, fused unrestricted, restricted, and with
    hits the fit never saw."""
    out = []
    for seed in range(count):
        rng = random.Random(seed)
        semantic, text = phrase_hits(rng)
        languages = languages_of(rng, semantic + text, 1 + seed % 3)
        query = sentence(rng, 1, 7)
        weight = rng.choice([0.45, 0.0, 1.0, round(rng.random(), 6)])
        coverage = rng.choice([0.5, 0.0, 1.0, round(rng.random(), 6)])
        low = rng.choice([None, None, 0.7, 0.8])
        out.append(slots_case(query, (semantic, text), languages, semantic, text, weight,
                              coverage, low))
        out.append(slots_case(query, (semantic, text), languages,
                              restricted(rng, semantic, 0.3), restricted(rng, text, 0.3),
                              weight, coverage, low))
        extra_sem, extra_text = phrase_hits(rng, 20, 10, 100)
        out.append(slots_case(query, (semantic, text), languages,
                              restricted(rng, semantic, 0.5) + extra_sem,
                              restricted(rng, text, 0.5) + extra_text, weight, coverage, low))
    return out


def test_language_slots_fuse_as_python_does(java: Runner) -> None:
    built = hand_slots_cases() + random_slots_cases(40)
    answers = java([case for case, _ in built])
    for (case, (model, fused)), answer in zip(built, answers, strict=True):
        assert "error" not in answer, answer
        what = case["args"]["query"]
        assert answer["query_language"] == model.query_language, what
        assert answer["floor"] == pytest.approx(model.floor, abs=TOLERANCE, rel=0)
        assert answer["range"] == pytest.approx(list(model.semantic_range), abs=TOLERANCE)
        assert_same_scores(dict(model.idf), answer["idf"], what)
        assert_same_scores(dict(model.slots), answer["slots"], what)
        assert_same_scores(dict(model.best_fused), answer["best_fused"], what)
        assert_same_scores(dict(model.fitted), answer["fitted"], what)
        assert_same_fragments(fused, answer["fused"], what)
    assert len(built) == 24 + 120


# --- the text search's query ----------------------------------------------------------------

QUERY_TERMS = [
    "", "   ", "AND OR NOT", "a AND (b OR c)", 'title:"x" +y -z', "fo* ba? ~1 ^2 a/b \\c",
    "a && b || !c {d} [e TO f]", "Jane's ‘quoted’ l’eau rock`n´roll ʼokina", "'lead trail'",
    "3.5 example.org u.s.a a:b", "end. ...x x... a..b a.,;b .a a. :;", "ＡＢＣ ３．５ ﬁsh ﬀ",
    "東京タワーに行きます", "日本語" * 400, "word " * 1200, "İstanbul ΟΔΟΣ Straße",
    "tab\there\nnew\u00a0nbsp\u2003em\u001cfs\u0085nel", "«guillemets» „low“ ”quote”", "x😀y 😀",
    "e-mail co-op -minus +plus", "café cafe\u0301 naïve", "a_b __ _", "C++ C# .NET F#",
    "ﬁ\u0307 Å Ω K", "한국어 텍스트", "ﾃｽﾄ ｶﾀｶﾅ", "١٢٣ ٤.٥", "x:y:z 1:2", "a'b'c d''e",
    # emoji are tokens, and a run is cut every 255 characters: both count against the budget
    " ".join(chr(0x1F300 + i) for i in range(1100)), "a" * 1000 + " b " + "c" * 255,
]
TERM_ALPHABET = ("abcXYZ019 .,;:'’‘ʼ`´\"“”„«»!?()[]{}<>+-&|^~*\\/_\t\n\u00a0\u2003東タ字ＡＢ３"
                 "．ﬁİΣée\u0301😀𐐀١_")


def random_terms(count: int) -> list[tuple[str, int]]:
    """Seeded strings of characters the rules treat specially, with small and large budgets."""
    rng = random.Random(11)
    return [("".join(rng.choice(TERM_ALPHABET) for _ in range(rng.randint(0, 40))),
             rng.choice([1000, 1000, 0, 1, 3, 7])) for _ in range(count)]


def test_lucene_queries_are_the_same_text(java: Runner) -> None:
    terms = [(t, m) for t in QUERY_TERMS for m in (1000, 2, 5)] + random_terms(600)
    cases = [{"fn": "terms_query", "args": {"term": t, "max_terms": m}} for t, m in terms]
    cases += [{"fn": "phrase_query", "args": {"term": t}} for t, _ in terms]
    expected = ([terms_query(t, max_terms=m) for t, m in terms]
                + [phrase_query(t) for t, _ in terms])
    answers = java(cases)
    for case, python, answer in zip(cases, expected, answers, strict=True):
        assert answer == python, case


# --- convex, max, rrf and the phrase's fusion -----------------------------------------------


def hand_pairs() -> list[tuple[list[Fragment], list[Fragment]]]:
    """Semantic and text lists with the hard spots: empty sides, ties, a fragment twice in one
    list, fragments both searches found, text-only hits."""
    sem = [frag("a-1", 0.9, text="x"), frag("b-1", 0.8), frag("c-1", 0.8), frag("a-2", 0.7)]
    txt = [tfrag("c-1", 1.0, "x"), tfrag("d-1", 0.5, "y"), tfrag("a-1", 0.5, "x"),
           tfrag("e-1", 0.5, None, "keywords")]
    twice = [frag("a-1", 0.9), frag("a-1", 0.95, "paragraphs"), frag("b-1", 0.85)]
    twice_text = [tfrag("a-1", 1.0, "t"), tfrag("a-1", 0.3, "t", "keywords")]
    ties = [frag("t-2", 0.8), frag("t-1", 0.8), frag("s-1", 0.8)]
    tie_text = [tfrag("t-1", 1.0, "x"), tfrag("u-1", 1.0, "x"), tfrag("s-1", 1.0, "x")]
    return [(sem, txt), ([], []), (sem, []), ([], txt), (twice, twice_text), (ties, tie_text),
            ([frag("z-1", 0.5)], [tfrag("z-1", 1.0, "z")])]


def test_convex_max_and_rrf_fuse_as_python_does(java: Runner) -> None:
    pairs = hand_pairs()
    for seed in range(20):
        rng = random.Random(100 + seed)
        semantic, text = phrase_hits(rng)
        pairs.append((semantic, text))
        pairs.append((restricted(rng, semantic, 0.3), restricted(rng, text, 0.3)))
    cases: list[Case] = []
    expected: list[list[Fragment]] = []
    for semantic, text in pairs:
        wired = {"semantic": wire(semantic), "text": wire(text)}
        scores = [f.score for f in semantic]
        ranges = [(min(scores, default=0.0), max(scores, default=0.0)), (0.8, 0.8), (0.9, 0.7),
                  (0.5, 1.0)]
        for lo, hi in ranges:
            for weight in (0.45, 0.0, 1.0):
                cases.append({"fn": "convex", "args": {**wired, "lo": lo, "hi": hi,
                                                       "text_weight": weight}})
                expected.append(fuse_convex(semantic, text, semantic_range=(lo, hi),
                                            text_weight=weight))
            cases.append({"fn": "max", "args": {**wired, "lo": lo, "hi": hi}})
            expected.append(fuse_max(semantic, text, semantic_range=(lo, hi)))
        for k in (60, 1, 0):
            fused = fuse_rrf(semantic, text, k)
            cases.append({"fn": "rrf", "args": {**wired, "k": k}})
            expected.append(fused)
            cases.append({"fn": "ranked_onto", "args": {"fused": wire(fused),
                                                        "semantic": wire(semantic)}})
            expected.append(ranked_onto(fused, semantic))
        cases.append({"fn": "ranked_onto", "args": {"fused": wire(text), "semantic": wired[
            "semantic"][:3]}})
        expected.append(ranked_onto(text, semantic[:3]))
    for case, python, answer in zip(cases, expected, java(cases), strict=True):
        assert "error" not in answer, answer
        assert_same_fragments(python, answer, case["fn"])
    assert len(cases) == 47 * 23


def phrase_fusion_case(settings: Settings, semantic_scale: bool,
                       languages: dict[str, str | None], lows: dict[str, float],
                       unrestricted: dict[str, tuple[list[Fragment], list[Fragment]]],
                       ranges_from: dict[str, list[Fragment]],
                       calls: list[dict[str, Any]]) -> tuple[Case, list[list[Fragment]]]:
    """A ``PhraseFusion`` with this remembered state (every document's language known, so no
    graph is read), fusing each call in turn; the Python answers."""
    fusion = PhraseFusion(None, settings)  # type: ignore[arg-type]  # no read: languages known
    fusion.semantic_scale = semantic_scale
    fusion.languages.update(languages)
    fusion.lows.update(lows)
    fusion.unrestricted.update(unrestricted)
    for phrase, fragments in ranges_from.items():
        fusion.remember_range(phrase, fragments)
    answers = [fusion.fuse(c["phrase"], c["semantic"], c["text"],
                           restricted=c.get("restricted", False), fit=c.get("fit"))
               for c in calls]
    case = {"fn": "phrase_fusion", "args": {
        "settings": wire_settings(settings), "semantic_scale": semantic_scale,
        "languages": languages, "lows": lows,
        "unrestricted": {p: {"semantic": wire(s), "text": wire(t)}
                         for p, (s, t) in unrestricted.items()},
        "ranges_from": {p: wire(f) for p, f in ranges_from.items()},
        "calls": [{"phrase": c["phrase"], "semantic": wire(c["semantic"]),
                   "text": wire(c["text"]), "restricted": c.get("restricted", False),
                   "fit": None if c.get("fit") is None else {
                       "semantic": wire(c["fit"][0]), "text": wire(c["fit"][1])}}
                  for c in calls]}}
    return case, answers


def test_phrase_fusion_reads_the_settings_as_python_does(java: Runner) -> None:
    built = []
    for seed in range(8):
        rng = random.Random(200 + seed)
        semantic, text = phrase_hits(rng)
        other_sem, other_text = phrase_hits(rng, 120, 30, 60)
        every = semantic + text + other_sem + other_text
        languages = {d: lang for d, lang in languages_of(rng, every, 1 + seed % 3).items()}
        languages.update({f.documentid: None for f in every if f.documentid not in languages})
        phrase, other = sentence(rng, 1, 5), "zweite Phrase " + sentence(rng, 1, 3)
        lows = {phrase: 0.75} if seed % 2 else {}
        part_sem, part_text = restricted(rng, semantic, 0.3), restricted(rng, text, 0.3)
        calls = [
            {"phrase": phrase, "semantic": part_sem, "text": part_text, "restricted": True},
            {"phrase": phrase, "semantic": semantic, "text": text},
            {"phrase": other, "semantic": restricted(rng, other_sem, 0.4),
             "text": restricted(rng, other_text, 0.4), "restricted": True,
             "fit": (other_sem, other_text)},
            {"phrase": other, "semantic": other_sem, "text": other_text},
        ]
        for rule in ("language-slots", "convex", "max", "rrf"):
            settings = Settings(fusion=rule, fusion_text_weight=rng.choice([0.45, 0.3]),
                                fusion_full_coverage=rng.choice([0.5, 0.0]),
                                rrf_k=rng.choice([60, 10]))
            for scale in (False, True):
                built.append(phrase_fusion_case(
                    settings, scale, languages, lows, {phrase: (semantic, text)},
                    {phrase: semantic, other: other_sem}, calls))
        # a phrase fitted on the hits it fuses: no unrestricted sample, no fit searched
        built.append(phrase_fusion_case(Settings(), True, languages, {}, {}, {},
                                        [{"phrase": phrase, "semantic": semantic,
                                          "text": text}]))
    answers = java([case for case, _ in built])
    for (case, expected), answer in zip(built, answers, strict=True):
        assert "error" not in answer, answer
        for python, fused in zip(expected, answer, strict=True):
            assert_same_fragments(python, fused, case["args"]["settings"]["fusion"])
    assert len(built) == 8 * 9
