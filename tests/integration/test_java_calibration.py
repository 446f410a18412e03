# ruff: noqa: RUF001  (look-alike characters are what the word tests are about)
"""The plugin's Java calibration rules (``thalabus.procedures.scoring``) answer as the Python ones.

Each test builds many cases (hand-written hard ones, seeded random ones and realistic ones: e5
cosine lists between 0.6 and 0.95), asks the Python function and the Java class
(``thalabus.procedures.scoring.Check``, one JVM per test) and compares: floats within 1e-9
absolute (the quantile and erfc within a few units in the last place), word lists, booleans
and errors exactly. No database: the plugin's sources are compiled against the jars of the
session's Neo4j line (``tests/support/java_rules.py``).
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import sys
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.support import java_rules
from thalabus_graph.errors import ConfigurationError
from thalabus_graph.fragments import Fragment
from thalabus_graph.graph.launcher.install import default_version
from thalabus_graph.scoring import calibration_file, lexical, tokens
from thalabus_graph.scoring.calibration import (
    Background,
    Calibration,
    background,
    evidence,
    shipped,
)
from thalabus_graph.scoring.scale import (
    Candidate,
    DroppedWarning,
    PhraseScale,
    other_language_best,
    sample,
)
from thalabus_graph.settings import Settings

MAIN = "thalabus.procedures.scoring.Check"
RESOURCES = Path(calibration_file.__file__).resolve().parents[1] / "resources"
TOLERANCE = 1e-9
E5 = "intfloat/multilingual-e5-small"
SHIPPED = json.loads((RESOURCES / "calibration" / "multilingual-e5-small.json").read_text())

Answer = Callable[[Mapping[str, Any]], Any]


@pytest.fixture(scope="session")
def java(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The Java executable and a class path with the compiled plugin and the shipped
    calibrations (as the jar holds them, ``/calibration/<model>.json``)."""
    executable, classpath = java_rules.compiled(default_version(),
                                                tmp_path_factory.mktemp("java-rules"))
    return executable, os.pathsep.join([classpath, str(RESOURCES)])


def _both(java: tuple[Path, str], answer: Answer, fn: str,
          cases: Sequence[Mapping[str, Any]]) -> list[tuple[Any, Any, Mapping[str, Any]]]:
    """(Python's answer, Java's answer, args) of every case."""
    mine = [_python(answer, args) for args in cases]
    theirs = java_rules.run(*java, MAIN, [{"fn": fn, "args": args} for args in cases])
    assert len(theirs) == len(cases)
    return list(zip(mine, theirs, cases, strict=True))


def _python(answer: Answer, args: Mapping[str, Any]) -> dict[str, Any]:
    try:
        return {"ok": answer(args)}
    except ConfigurationError as exc:
        found = re.search(r"field '([^']*)'", str(exc))
        return {"error": str(exc), "field": found.group(1) if found else None}
    except (ValueError, ArithmeticError) as exc:  # StatisticsError is a ValueError
        return {"error": str(exc), "field": None}


def _same(mine: Any, theirs: Any, tolerance: float = TOLERANCE, relative: bool = False) -> bool:
    """Equal, floats within ``tolerance`` (absolute, or relative to Python's value)."""
    if isinstance(mine, float) or (isinstance(mine, int) and isinstance(theirs, float)):
        if not isinstance(theirs, int | float) or isinstance(theirs, bool):
            return False
        if math.isnan(mine) or math.isinf(mine):
            return repr(float(mine)) == repr(float(theirs))
        bound = tolerance * abs(mine) if relative else tolerance
        return abs(mine - theirs) <= bound
    if isinstance(mine, Mapping):
        return (isinstance(theirs, Mapping) and set(mine) == set(theirs)
                and all(_same(mine[k], theirs[k], tolerance, relative) for k in mine))
    if isinstance(mine, list | tuple):
        return (isinstance(theirs, list) and len(mine) == len(theirs)
                and all(_same(a, b, tolerance, relative) for a, b in zip(mine, theirs,
                                                                          strict=True)))
    return mine == theirs and type(mine) is type(theirs)


def _check(java: tuple[Path, str], answer: Answer, fn: str, cases: Sequence[Mapping[str, Any]],
           tolerance: float = TOLERANCE, relative: bool = False) -> None:
    """Every case answered the same (errors: both fail, naming the same field)."""
    wrong = []
    for mine, theirs, args in _both(java, answer, fn, cases):
        if "error" in mine:
            if "error" not in theirs or mine["field"] != theirs.get("field"):
                wrong.append((args, mine, theirs))
        elif "ok" not in theirs or not _same(mine["ok"], theirs["ok"], tolerance, relative):
            wrong.append((args, mine, theirs))
    assert not wrong, f"{len(wrong)} of {len(cases)} {fn} cases differ, first: {wrong[:3]}"


# --- calibration -------------------------------------------------------------------------

def _cosines(rng: random.Random, k: int, mu: float | None = None) -> list[float]:
    """A candidate list as e5 draws it: a normal background between 0.6 and 0.95 and a few hits
    above it, in any order."""
    mu = rng.uniform(0.72, 0.86) if mu is None else mu
    sigma = rng.uniform(0.005, 0.04)
    out = [min(0.95, max(0.6, rng.gauss(mu, sigma))) for _ in range(k)]
    for i in range(min(k, rng.randrange(0, 4))):
        out[i] = min(0.95, out[i] + rng.uniform(0.0, 0.1))
    rng.shuffle(out)
    return out


def test_normal_quantiles_are_cpythons(java: tuple[Path, str]) -> None:
    rng = random.Random(1)
    ps = [0.5, 0.075, 0.925, 0.07499999999999, 0.0750000001, 1e-300, 5e-324, 1 - 1e-16,
          1e-10, 1 - 1e-10, math.exp(-25), math.exp(-25.000001), 0.3, 0.7]
    ps += [rng.random() for _ in range(300)] + [rng.random() ** 12 for _ in range(200)]
    ps += [1.0 - (r - 0.5) / n for n in (5, 37, 200, 5183, 10**6) for r in range(1, 60)]
    ps = [p for p in ps if 0.0 < p < 1.0]
    from statistics import NormalDist
    _check(java, lambda a: NormalDist().inv_cdf(a["p"]), "inv_cdf", [{"p": p} for p in ps],
           1e-15, relative=True)
    _check(java, lambda a: NormalDist().inv_cdf(a["p"]), "inv_cdf",
           [{"p": 0.0}, {"p": 1.0}, {"p": -0.5}], 0.0)


def test_erfc_is_pythons_to_the_last_bits(java: tuple[Path, str]) -> None:
    rng = random.Random(2)
    xs = [0.0, -0.0, 1e-300, 2.0 ** -57, 2.0 ** -55, 0.25, 0.84375, 0.8437499999, 1.25,
          1.2499999999, 1 / 0.35, 2.857142857, 6.0, -6.0, -5.99999, 27.9999, 28.0, 30.0, -30.0,
          26.5, 26.6, 27.2, math.inf, -math.inf]
    xs += [rng.uniform(-8, 30) for _ in range(500)] + [rng.uniform(-1.5, 1.5) for _ in range(200)]
    xs += [z / math.sqrt(2.0) for z in (rng.gauss(0, 6) for _ in range(200))]
    # relative 1e-14 allows a few units in the last place (Python's erfc is the C library's)
    _check(java, lambda a: math.erfc(a["x"]), "erfc", [{"x": x} for x in xs], 1e-14,
           relative=True)


def _bg(b: Background) -> dict[str, Any]:
    return {"mu": b.mu, "sigma": b.sigma, "size": b.size, "best": b.best, "share": b.share,
            "foreign": b.foreign, "other": b.other, "lexical": b.lexical}


def test_background_and_evidence(java: tuple[Path, str]) -> None:
    rng = random.Random(3)
    cases: list[dict[str, Any]] = [
        {"cosines": [], "size": 0, "skip": 20, "share": None},
        {"cosines": [], "size": 100, "skip": 20, "share": 0.5},
        {"cosines": [0.8], "size": 10, "skip": 20, "share": None},
        {"cosines": [0.8, 0.7], "size": 1, "skip": 0, "share": None},
        {"cosines": [0.8, 0.7, 0.6], "size": 3, "skip": 20, "share": 1.0},
        {"cosines": [0.9, 0.8, 0.7, 0.6, 0.5], "size": 5, "skip": 0, "share": None},
        {"cosines": [0.75] * 50, "size": 5000, "skip": 20, "share": None},
        {"cosines": [0.9, 0.9, 0.8, 0.8, 0.8, 0.7, 0.7], "size": 7, "skip": 1, "share": 0.0},
        {"cosines": [0.8, 0.8, 0.8, 0.81], "size": 4, "skip": 20, "share": None},
    ]
    for _ in range(150):
        k = rng.choice([2, 3, 5, 8, 21, 80, 199, 200, 400])
        size = rng.choice([k, k + 1, 2 * k, 5183, 100_000, 0])
        cases.append({"cosines": _cosines(rng, k), "size": size,
                      "skip": rng.choice([0, 1, 5, 20, 20, 50]),
                      "share": rng.choice([None, 0.0, 0.25, rng.random(), 1.0])})
    _check(java, lambda a: _bg(background(a["cosines"], a["size"], a["skip"], a["share"])),
           "background", cases)

    probes = []
    for case in cases[:60]:
        b = background(case["cosines"], case["size"], case["skip"])
        for c in [*case["cosines"][:5], 0.95, 0.99, 1.0, 0.6, 0.0, -1.0, b.mu, b.mu + 40 * b.sigma]:
            probes.append({"cosine": c, "bg": _bg(b)})
    _check(java, lambda a: evidence(a["cosine"], Background(**a["bg"])), "evidence", probes)


def _file(**changes: Any) -> str:
    """The shipped calibration file's JSON text with fields changed (None: removed)."""
    data = json.loads(json.dumps(SHIPPED))
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return json.dumps(data)


def _summary(c: Calibration) -> dict[str, Any]:
    def gate(g: Any) -> Any:
        return None if g is None else [g.intercept, g.slope, g.share_slope]
    return {"model": c.model, "skip": c.skip, "fitted_on": list(c.fitted_on),
            "sources": {k: [m.intercept, m.slope] for k, m in c.sources.items()},
            "gate": gate(c.gate), "foreign_gate": gate(c.foreign_gate),
            "reading": None if c.reading is None else [c.reading.intercept, c.reading.slope],
            "measured": dict(c.measured)}


def _read_file(args: Mapping[str, Any]) -> dict[str, Any]:
    try:
        data = json.loads(args["json"])
    except ValueError as exc:
        raise ConfigurationError(f"not valid JSON: {exc}") from exc
    return _summary(calibration_file.from_dict(data))


def test_calibration_file_reads_and_refuses_as_python(java: tuple[Path, str]) -> None:
    gate = SHIPPED["gate"]
    long_name = "\U0001d400" * 256  # 256 code points, 512 UTF-16 units: allowed
    texts = [
        _file(), _file(feature=None, skip=None, fitted_on=None, measured=None, gate=None,
                       foreign_gate=None),
        _file(skip=0), _file(skip=10_000), _file(skip=10_001), _file(skip=-1), _file(skip=20.0),
        _file(skip=True), _file(skip="20"), _file(skip=10**30),
        _file(format="thalabus-calibration/2"), _file(format=None), _file(model=""),
        _file(model=long_name), _file(model=long_name + "x"), _file(model=7),
        _file(feature="cosine"), _file(fitted_on="scifact"), _file(fitted_on=[""]),
        _file(fitted_on=["a"] * 64), _file(fitted_on=["a"] * 65), _file(fitted_on=[1]),
        _file(sources={}), _file(sources=[]), _file(sources={"": {"intercept": 1, "slope": 1}}),
        _file(sources={f"s{i}": {"intercept": 0, "slope": 1} for i in range(65)}),
        _file(sources={"default": {"intercept": 1}}),
        _file(sources={"default": {"intercept": 1, "slope": 1, "bias": 2}}),
        _file(sources={"default": {"intercept": 1, "slope": 0.09}}),
        _file(sources={"default": {"intercept": 1, "slope": 0.1}}),
        _file(sources={"default": {"intercept": 1, "slope": 10_000}}),
        _file(sources={"default": {"intercept": 1, "slope": 10_000.000001}}),
        _file(sources={"default": {"intercept": -10_001, "slope": 1}}),
        _file(sources={"default": {"intercept": True, "slope": 1}}),
        _file(sources={"default": {"intercept": "1", "slope": 1}}),
        _file(sources={"default": {"intercept": 10**40, "slope": 1}}),
        _file(sources={"paragraphs": {"intercept": 1, "slope": 2},
                       "chapters": {"intercept": 0.5, "slope": 3}}),
        _file(sources={"default": [1, 2]}),
        _file(gate={"intercept": -100, "slope": 0}), _file(gate={"intercept": -100, "slope": -1}),
        _file(gate={"intercept": -100, "slope": 120, "share_slope": 0}),
        _file(gate={"intercept": -100, "slope": 120, "other": 1}),
        _file(gate={"slope": 120}), _file(gate={"intercept": -100, "slope": 120}),
        _file(gate=None), _file(foreign_gate={**gate}),
        _file(foreign_gate={"intercept": -100, "slope": 120, "share_slope": 1}),
        _file(measured=[]), _file(measured={"a": [1, {"b": None}]}), _file(extra=1),
        _file(aaa=1, zzz=2),
        _file(reading=None), _file(reading={"intercept": 0, "slope": 1}),
        _file(reading={"intercept": -4.7, "slope": 0.0}),
        _file(reading={"intercept": -4.7, "slope": -0.5}), _file(reading={"slope": 0.5}),
        _file(reading={"intercept": -4.7, "slope": 0.5, "odds": 0.01}),
        _file(reading={"intercept": "-4.7", "slope": 0.5}), _file(reading=[-4.7, 0.5]),
        _file(reading=0.01), _file(reading={"intercept": 10_001, "slope": 0.5}),
        '{"format": "thalabus-calibration/1", "model": "m", "sources": '
        '{"default": {"intercept": 1, "slope": 1}}, "reading": {"intercept": NaN, "slope": 1}}',
        '{"format": "thalabus-calibration/1", "model": "m", "sources": '
        '{"default": {"intercept": NaN, "slope": 1}}}',
        '{"format": "thalabus-calibration/1", "model": "m", "sources": '
        '{"default": {"intercept": 1e400, "slope": 1}}}',
        '{"format": "thalabus-calibration/1", "model": "m", "sources": '
        '{"default": {"intercept": -Infinity, "slope": 1}}}',
        '{"format": "thalabus-calibration/1", "model": "m", "model": "n", "sources": '
        '{"default": {"intercept": 1, "slope": 1, "slope": 2}}}',
        '{"format": "thalabus-calibration/1", "model": "m", "sources": '
        '{"default": {"intercept": 1, "slope": 1}}} x',
        "[]", "null", '"thalabus-calibration/1"', "{}",
    ]
    rng = random.Random(4)
    for _ in range(60):
        texts.append(_file(
            skip=rng.randrange(0, 200),
            sources={rng.choice(["default", "chapters", "paragraphs", "summaries"]):
                     {"intercept": rng.uniform(-10, 10), "slope": rng.uniform(0.05, 20)}
                     for _ in range(rng.randrange(1, 4))},
            gate={"intercept": rng.uniform(-300, 0), "slope": rng.uniform(-5, 300),
                  **({"share_slope": rng.uniform(-1, 30)} if rng.random() < 0.7 else {})},
            foreign_gate=None if rng.random() < 0.3 else {"intercept": rng.uniform(-300, 0),
                                                          "slope": rng.uniform(1, 300)},
            reading=None if rng.random() < 0.3 else {"intercept": rng.uniform(-10, 2),
                                                     "slope": rng.uniform(-0.5, 3)}))
    _check(java, _read_file, "calibration", [{"json": t} for t in texts], 0.0)


def test_shipped_calibration_is_found_by_the_models_last_path_part(
        java: tuple[Path, str]) -> None:
    models = [E5, "multilingual-e5-small", "a/b/multilingual-e5-small", "nomodel", "x/",
              ".hidden", "intfloat/.multilingual-e5-small", ""]

    def answer(a: Mapping[str, Any]) -> Any:
        found = shipped(a["model"])
        return None if found is None else _summary(found)
    _check(java, answer, "shipped", [{"model": m} for m in models], 0.0)


CALIBRATIONS = [
    _file(),
    _file(gate={"intercept": -120.0, "slope": 150.0}, foreign_gate=None),
    _file(gate=None, foreign_gate=None),
    _file(sources={"chapters": {"intercept": 1.5, "slope": 2.0},
                   "default": {"intercept": 3.0, "slope": 2.5}}),
    _file(sources={"chapters": {"intercept": 1.5, "slope": 2.0}}, skip=5),
    _file(foreign_gate={"intercept": -40.0, "slope": 50.0}),
    _file(reading=None), _file(reading={"intercept": -2.0, "slope": 1.0}),
    _file(reading={"intercept": -9.0, "slope": 0.3}),
]


def _score(a: Mapping[str, Any]) -> dict[str, Any]:
    c = (shipped(a["shipped"]) if "shipped" in a
         else calibration_file.from_dict(json.loads(a["calibration"])))
    assert c is not None
    bg = replace(c.background(a["cosines"], a["size"], a["share"]), other=a["other"],
                 lexical=a["lexical"], foreign=a["foreign"])
    m = c.map_for(a["source"])
    return {"bg": _bg(bg), "gate": c.gate_of(bg), "language_matters": c.language_matters(bg),
            "map": [m.intercept, m.slope],
            "scores": [c.score(a["source"], x, bg) for x in a["probe"]],
            "evidence": [evidence(x, bg) for x in a["probe"]]}


def test_calibrated_scores_gate_and_language(java: tuple[Path, str]) -> None:
    rng = random.Random(5)
    cases = []
    for i in range(400):
        k = rng.choice([0, 1, 3, 30, 200, 200, 400])
        cosines = _cosines(rng, k, mu=rng.choice([None, 0.7, 0.88]))
        case: dict[str, Any] = {
            "source": rng.choice(["default", "chapters", "paragraphs", "unknown"]),
            "cosines": cosines, "size": rng.choice([k, 5183, 360, 2_000_000]),
            "share": rng.choice([None, 0.0, 0.5, 1.0, rng.random()]),
            "other": rng.choice([None, None, rng.uniform(0.6, 0.95)]),
            "lexical": rng.random() < 0.15, "foreign": rng.random() < 0.3,
            "probe": [*sorted(cosines, reverse=True)[:8], 0.6, 0.8, 0.9, 0.95, 1.0]}
        if i % 10 == 0:
            case["shipped"] = E5
        else:
            case["calibration"] = rng.choice(CALIBRATIONS)
        cases.append(case)
    _check(java, _score, "score", cases)


# --- tokens and lexical --------------------------------------------------------------------

HARD_TEXTS = [
    "", " ", "When did the first direct elections take place?", "Straße STRASSE Maße Fußgänger",
    "Ärger über Öl: Übermäßig", "İstanbul ISTANBUL ıi Iİ", "ΣΊΣΥΦΟΣ ΟΔΟΣ. Σ ΑΣ'Σ AΣ1 Σa",
    "ὈΔΥΣΣΕΎΣ", "冰川融化", "東京タワーは333メートル", "ภาษาไทยเป็นภาษาที่", "ພາສາລາວ", "ភាសាខ្មែរ",
    "မြန်မာဘာသာ", "हिन्दी भाषा", "한국어 문장입니다", "Zug", "Züge fahren", "EU", "wine",
    "e5 2024 ٣٤ ²³ ½ Ⅻ",
    "don't l'état it’s O'Neil", "state-of-the-art well‐known", "snake_case __init__",
    "x\u0301y café cafe\u0301 CAFE\u0301", "ﬁnance Ǆemal ǅ ǆ", "𝐀𝐁𝐂 𝐚𝐛𝐜 𠀀𠀁 🙂word🙂",
    "ĲSSEL ĳssel",
    "tab\tnew\nline\r\x00nul", "the quick brown fox", "a b c d e", "a b c d", "‿join⁀",
    "ǰ ẞ ß ﬀ", "Ⓐⓑ ⅷ", "١٢٣ العربية", "עברית", "Ελληνικά", "русский ЁЖ", "ᏣᎳᎩ ꭰ", "Ꞌꞌ",
]


def _mixed(rng: random.Random, n: int) -> str:
    """Random text from pieces of many scripts, with marks, digits and punctuation."""
    pieces = ["a", "Z", "ß", "Ä", "ö", "İ", "ı", "Σ", "σ", "ς", "έ", "冰", "川", "タ", "ー", "ภ",
              "า", "ษ", "\u0e31", "ि", "न", "\u0301", "1", "٣", "½", "_", "-", "'", "’", ".",
              " ", " ", " ", "\t", ",", "𝐀", "🙂", "ﬁ", "ǅ", "ẞ", "ℌ", "Ⅻ", "\u200d", "ʰ", "Ꭰ"]
    return "".join(rng.choice(pieces) for _ in range(n))


def test_tokens_read_words_as_python(java: tuple[Path, str]) -> None:
    rng = random.Random(6)
    texts = HARD_TEXTS + [_mixed(rng, rng.randrange(1, 40)) for _ in range(400)]
    single = [{"text": t} for t in texts]
    _check(java, lambda a: a["text"].lower(), "lower", single)
    _check(java, lambda a: tokens.fold(a["text"]), "fold", single)
    _check(java, lambda a: re.findall(r"\w+", a["text"]), "words", single)
    _check(java, lambda a: tokens.word_count(a["text"]), "word_count", single)
    _check(java, lambda a: tokens.is_spaceless(a["text"]), "is_spaceless", single)
    _check(java, lambda a: sorted(tokens.plain_words(a["text"])), "plain_words", single)
    phrases = [{"phrase": t} for t in texts]
    _check(java, lambda a: sorted(lexical.phrase_words(a["phrase"])), "phrase_words", phrases)
    _check(java, lambda a: lexical.is_short(a["phrase"]), "is_short", phrases)
    _check(java, lambda a: sorted(tokens.lexical_words(a["text"], a["min_letters"])),
           "lexical_words", [{"text": t, "min_letters": n} for t in texts for n in (1, 2, 4, 5)])
    holds = []
    for t in texts:
        folded = tokens.fold(t)
        for w in [*sorted(tokens.lexical_words(t, 1))[:6], "a", "ss", "stra", "融化", "ภา"]:
            holds.append({"text": folded, "word": w})
    _check(java, lambda a: tokens.holds_word(a["text"], a["word"]), "holds_word", holds)


def test_ascii_texts_fold_as_python(java: tuple[Path, str]) -> None:
    """An ASCII text is lowered eight characters at a time: every ASCII character at every
    offset of the eight-character words and in the tail after them folds as Python's."""
    ascii_chars = "".join(chr(c) for c in range(128))
    rng = random.Random(8)
    texts = [ascii_chars[k:] + ascii_chars[:k] for k in range(16)]
    texts += ["".join(rng.choice(ascii_chars) for _ in range(n)) for n in range(40)]
    texts += ["@[`{AZaz" * 9, "Heavy-Metal CELL Line (HeLa) 2024: \"X\"\n\tZ"]
    _check(java, lambda a: tokens.fold(a["text"]), "fold", [{"text": t} for t in texts])


RECATEGORISED = frozenset({"\u1734", "\U0001171e"})
"""Characters whose Unicode category changed between the JDK's tables and Python 3.11's (14.0),
each a combining mark that became a spacing one, so no longer case-ignorable and a capital
sigma after it no longer final: HANUNOO SIGN PAMUDPOD (Mn in 13.0, JDK 17; Mc from 14.0) and
AHOM CONSONANT SIGN MEDIAL RA (Mn in 14.0; Mc from 15.0, JDK 25)."""


def _all_characters(java: tuple[Path, str]) -> list[str]:
    """Every code point both Python 3.11 (Unicode 14.0) and the JDK (Unicode 13.0 on JDK 17,
    16.0 on JDK 25) have assigned, but surrogates, private use and ``RECATEGORISED``: what the
    two runtimes' tables both speak of alike."""
    known = [chr(c) for c in range(sys.maxunicode + 1)
             if unicodedata.category(chr(c)) not in ("Cn", "Cs", "Co")
             and chr(c) not in RECATEGORISED]
    chunks = ["".join(known[i:i + 5000]) for i in range(0, len(known), 5000)]
    answers = java_rules.run(*java, MAIN, [{"fn": "assigned", "args": {"text": t}}
                                           for t in chunks])
    assigned = [flag for answer in answers for flag in answer["ok"]]
    return [c for c, flag in zip(known, assigned, strict=True) if flag]


def test_every_character_folds_and_splits_as_python(java: tuple[Path, str]) -> None:
    chars = _all_characters(java)
    chunks = ["".join(chars[i:i + 2000]) for i in range(0, len(chars), 2000)]
    spaced = [" ".join(chars[i:i + 2000]) for i in range(0, len(chars), 2000)]
    before = [" ".join(f"A{c}Σ" for c in chars[i:i + 1000]) for i in range(0, len(chars), 1000)]
    alone = [" ".join(f"{c}Σ" for c in chars[i:i + 1000]) for i in range(0, len(chars), 1000)]
    after = [" ".join(f"AΣ{c}" for c in chars[i:i + 1000]) for i in range(0, len(chars), 1000)]
    texts = [{"text": t} for t in chunks + spaced + before + alone + after]
    _check(java, lambda a: a["text"].lower(), "lower", texts)
    _check(java, lambda a: re.findall(r"\w+", a["text"]), "words",
           [{"text": t} for t in spaced])
    _check(java, lambda a: tokens.fold(a["text"]), "fold", [{"text": t} for t in chunks])


def _phrases(rng: random.Random) -> list[str]:
    return ["Zug", "EU", "wine", "Straße", "glacier melting", "冰川融化", "İstanbul", "the a of",
            "first direct elections", "a b c d e", "", "!!", "don't stop", "ภาษาไทย",
            *(_mixed(rng, rng.randrange(1, 25)) for _ in range(60))]


def _texts(rng: random.Random, phrase: str) -> list[str | None]:
    words = re.findall(r"\w+", phrase) or ["x"]
    out: list[str | None] = []
    for _ in range(rng.randrange(0, 8)):
        roll = rng.random()
        if roll < 0.1:
            out.append(None)
        elif roll < 0.5:
            picked = rng.sample(words, rng.randrange(0, len(words) + 1))
            out.append(" ".join(w.upper() if rng.random() < 0.3 else w for w in picked)
                       + rng.choice(["", "s", "ing", " end", "'s"]))
        else:
            out.append(_mixed(rng, rng.randrange(0, 60)))
    return out


def test_lexical_share_and_covers(java: tuple[Path, str]) -> None:
    rng = random.Random(7)
    cases: list[dict[str, Any]] = [
        {"phrase": "Zug", "texts": ["Die Züge", "Zugspitze", "der Zug fährt"]},
        {"phrase": "Zug", "texts": ["Die Züge", "Zugspitze"]},
        {"phrase": "Straße", "texts": ["STRASSE"]},
        {"phrase": "Straße", "texts": ["Hauptstraße", "straße"]},
        {"phrase": "İstanbul", "texts": ["istanbul", "i\u0307stanbul"]},
        {"phrase": "冰川融化", "texts": ["全球冰川正在融化", "冰川融化"]},
        {"phrase": "glacier melting", "texts": [None, None]},
        {"phrase": "glacier melting", "texts": []},
        {"phrase": "", "texts": ["x"]},
        {"phrase": "café", "texts": ["CAFE\u0301 au lait"]},
        {"phrase": "e5 model", "texts": ["the e5 model", "e55 models"]},
    ]
    for _ in range(12):
        for phrase in _phrases(rng):
            cases.append({"phrase": phrase, "texts": _texts(rng, phrase)})
    _check(java, lambda a: lexical.lexical_share(a["phrase"], a["texts"]), "lexical_share", cases)
    _check(java, lambda a: lexical.covers(a["phrase"], a["texts"]), "covers", cases)



# --- scale ---------------------------------------------------------------------------------

SOURCES = ("chapters", "paragraphs", "summaries")


def _wire(f: Fragment) -> list[Any]:
    return [f.fragmentid, f.documentid, f.text, f.score, f.source, list(f.contributions)]


def _unwire(w: Sequence[Any]) -> Fragment:
    return Fragment(w[0], w[1], w[2], w[3], w[4], tuple(w[5]))


def _warning(w: DroppedWarning | None) -> dict[str, Any] | None:
    if w is None:
        return None
    return {"kind": w.kind, "subject": w.subject, "dropped": w.dropped, "kept": w.kept,
            "best_cosine": w.best_cosine, "rule": w.rule, "message": w.message}


def _phrase_scale(a: Mapping[str, Any]) -> dict[str, Any]:
    """``PhraseScale.remember`` of the phrase, then ``apply`` of each list of fragments in turn
    (each call's own warning)."""
    c = (shipped(a["shipped"]) if "shipped" in a
         else calibration_file.from_dict(json.loads(a["calibration"])))
    foreign = a["foreign"]
    scale = PhraseScale(Settings(**a["settings"]), c, held=lambda _: not foreign)
    phrase = a["phrase"]
    scale.remember(phrase, [_unwire(f) for f in a["semantic"]], a["sizes"],
                   [Candidate(*c) for c in a["beyond"]], [_unwire(f) for f in a["text"]],
                   a["languages"])
    bg = scale.backgrounds.get(phrase)
    applied: list[dict[str, Any]] = []
    for call in a["apply"]:
        try:
            out = scale.apply(phrase, [_unwire(f) for f in call])
        except ZeroDivisionError as exc:
            applied.append({"error": str(exc)})
            continue
        applied.append({"fragments": [_wire(f) for f in out],
                        "warning": _warning(scale.warned.pop(phrase, None))})
    return {"bg": None if bg is None else _bg(bg), "applied": applied}


def _scale_case(rng: random.Random, phrase: str) -> dict[str, Any]:
    """A phrase's unrestricted candidates (realistic e5 cosines; sometimes an absent topic,
    sometimes more than ``BACKGROUND_TOP_N`` per source), the pool's text hits, settings and a
    few fused result lists to calibrate."""
    docs = [f"doc-{i}" for i in range(rng.randrange(1, 30))]
    languages = (None if rng.random() < 0.2 else
                 {d: rng.choice(["en", "en", "de", "fr", None]) for d in docs})
    absent = rng.random() < 0.4
    semantic: list[list[Any]] = []
    for source in rng.sample(SOURCES, rng.randrange(0, 4)):
        k = rng.choice([1, 3, 40, 120, 230])
        cosines = _cosines(rng, k, mu=rng.uniform(0.68, 0.76) if absent else None)
        texts = _texts(rng, phrase) + [None] * 3
        for i, cos in enumerate(cosines):
            d = rng.choice(docs)
            semantic.append([f"{d}-{source[0]}{i}", d, rng.choice(texts), (1 + cos) / 2, source,
                             [f"semantic:{source}"]])
    if semantic and rng.random() < 0.3:
        semantic.append(list(rng.choice(semantic)))  # found twice
    beyond = [[rng.choice(SOURCES), (1 + cos) / 2, rng.choice([None, phrase, "x y"]),
               rng.choice(["en", "de", None])] for cos in _cosines(rng, rng.randrange(0, 30))]
    text = [[f"t{i}", rng.choice(docs), t, 0.4, "chapters", ["text:chapters"]]
            for i, t in enumerate(_texts(rng, phrase)[:rng.randrange(0, 3)])]
    calls = []
    for _ in range(rng.randrange(1, 4)):
        call = [list(f) for f in rng.sample(semantic, min(len(semantic), rng.randrange(0, 40)))]
        for f in call:
            if rng.random() < 0.3:
                f[3] = max(0.0, f[3] - rng.uniform(0, 0.05))  # a lower fused slot
        call += [[f"only-{i}", rng.choice(docs), rng.choice([phrase, None, "nothing here"]),
                  rng.uniform(0.55, 0.8), rng.choice(["chapters", "questions", "keywords"]),
                  ["text:chapters"]] for i in range(rng.randrange(0, 4))]
        calls.append(call)
    settings: dict[str, float] = {"min_score": rng.choice([0.1, 0.1, 0.05, 0.3, 0.0, 0.6])}
    for source in (*SOURCES, "questions"):
        if rng.random() < 0.3:
            settings[f"score_factor_{source}"] = rng.choice([0.5, 0.9, 1.2, 2.0])
        if rng.random() < 0.3:
            settings[f"score_cap_{source}"] = rng.choice([0.3, 0.8, 0.95])
    return {"phrase": phrase, "semantic": semantic, "beyond": beyond, "text": text,
            "languages": languages, "foreign": rng.random() < 0.3,
            "sizes": {s: rng.choice([0, 200, 5183, 40_000]) for s in SOURCES
                      if rng.random() < 0.9},
            "settings": settings, "apply": calls}


def test_phrase_scale_remember_and_apply(java: tuple[Path, str]) -> None:
    rng = random.Random(8)
    zero_gate = _file(gate={"intercept": -10_000.0, "slope": 1.0}, foreign_gate=None)
    cases = []
    for i in range(500):
        case = _scale_case(rng, rng.choice([*_phrases(rng)[:14], "glacier", "elections 2024"]))
        if i % 50 == 49:
            case["calibration"] = zero_gate
        elif i % 3:
            case["shipped"] = E5
        else:
            case["calibration"] = rng.choice(CALIBRATIONS)
        cases.append(case)
    _check(java, _phrase_scale, "phrase", cases)
    rules = {call["warning"]["rule"] if call.get("warning") else ("error" if "error" in call
                                                                  else None)
             for case in cases if "error" not in (answer := _python(_phrase_scale, case))
             for call in answer["ok"]["applied"]}
    assert rules >= {"gate", "min_score", "doubtful", "error", None}, rules


def test_sample_and_other_language_best(java: tuple[Path, str]) -> None:
    rng = random.Random(9)
    cases = []
    for _ in range(150):
        case = _scale_case(rng, "glacier melting")
        cases.append({"semantic": case["semantic"], "beyond": case["beyond"],
                      "languages": case["languages"]})
    cases.append({"semantic": [["b", "d", None, 0.9, "chapters", []],
                               ["a", "d", None, 0.9, "chapters", []]],
                  "beyond": [["chapters", 0.9, None, None]], "languages": None})

    def sample_of(a: Mapping[str, Any]) -> list[list[Any]]:
        drawn = sample([_unwire(f) for f in a["semantic"]], [Candidate(*c) for c in a["beyond"]],
                       a["languages"])
        return [list(c) for c in drawn]
    _check(java, sample_of, "sample", cases)
    drawn = [{"drawn": sample_of(c)} for c in cases]
    drawn += [{"drawn": []}, {"drawn": [["chapters", 0.9, None, "en"],
                                        ["paragraphs", 0.95, None, None]]},
              {"drawn": [["chapters", 0.9, None, "en"], ["paragraphs", 0.9, None, "de"]]}]
    _check(java, lambda a: other_language_best([Candidate(*c) for c in a["drawn"]]),
           "other_language_best", drawn)


def test_dropped_warning_words_as_python(java: tuple[Path, str]) -> None:
    phrases = ["Zug", "it's", 'say "hi"', "both ' and \"", "back\\slash", "tab\tnew\nline",
               "nul\x00 del\x7f", "nbsp\xa0 soft\xad", "line\u2028sep\x85", "zwj\u200d",
               "emoji 🙂", "冰川融化", "Straße", "\U000e0001tag", ""]
    floors = [0.1, 0.05, 0.0, -0.0, 1e-5, 0.0001, 123456.0, 1234567.0, 1e16, 1e-300,
              0.30000000000000004, 0.5, 2.5e-5, 999999.5, 0.1234565]
    rng = random.Random(10)
    cases = []
    for phrase in phrases:
        for rule in ("gate", "min_score", "doubtful"):
            cases.append({"phrase": phrase, "dropped": rng.randrange(0, 50),
                          "kept": rng.randrange(0, 5),
                          "best_cosine": rng.choice([None, 0.9995, -0.0004, 0.8125, 0.1235,
                                                     rng.uniform(0.6, 0.95)]),
                          "rule": rule, "gate": rng.choice([0.0005, 0.5, 0.0625, rng.random()]),
                          "floor": rng.choice(floors)})

    def warning(a: Mapping[str, Any]) -> dict[str, Any] | None:
        return _warning(DroppedWarning.of(a["phrase"], a["dropped"], a["kept"],
                                          a["best_cosine"], a["rule"], a["gate"], a["floor"]))
    _check(java, warning, "dropped_warning", cases, 0.0)
