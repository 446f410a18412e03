"""Which full-text analyzer a language's text is indexed and searched with, and the language
of a text when nobody said it (docs/architecture.md, "Text search by language").

A Neo4j full-text index has one analyzer, so each language with an analyzer Neo4j ships has
its own pair of indexes (``chapters_fulltext_<analyzer>``, ``keywords_fulltext_<analyzer>``,
migration V0009) over the fragments carrying that language's labels (``<Name>Chapter``,
``<Name>Keyword``, written at ingest). Text in any other language, or in no known language,
stays in the language-neutral indexes only (``chapters_fulltext``, ``keywords_fulltext``,
which hold every fragment).

``LANGUAGES`` is the one table: ISO 639-1 code -> analyzer. A stated language is read by
``language_of`` (``"de"``, ``"de-CH"``, ``"pt_BR"``, ``"German"`` all give ``"de"``);
``detect`` guesses one with lingua, restricted to the candidate languages the caller names (the
languages the graph holds, at query time; every language with an analyzer, shortlisted first by
lingua's light models, when asking whether the graph holds a phrase's language), each candidate
set's detector built once, each language's models loaded once. Chinese, Japanese, Korean and
Thai are left to the neutral index: their analyzers segment words differently from the query
builder's term budget (``lucene``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from thalabus_graph.errors import UnknownLanguageError

if TYPE_CHECKING:
    from lingua import Language, LanguageDetector

LANGUAGES: dict[str, str] = {
    "ar": "arabic", "bg": "bulgarian", "ca": "catalan", "cs": "czech", "da": "danish",
    "de": "german", "el": "greek", "en": "english", "es": "spanish", "eu": "basque",
    "fa": "persian", "fi": "finnish", "fr": "french", "ga": "irish", "gl": "galician",
    "hi": "hindi", "hu": "hungarian", "hy": "armenian", "id": "indonesian", "it": "italian",
    "lt": "lithuanian", "lv": "latvian", "nl": "dutch", "no": "norwegian", "pt": "portuguese",
    "ro": "romanian", "ru": "russian", "sv": "swedish", "tr": "turkish",
}
"""ISO 639-1 code -> the Neo4j analyzer its text is indexed with (each has its own indexes)."""
EVERY: tuple[str, ...] = tuple(sorted(LANGUAGES))
"""Every code with an analyzer: the candidates when a text may be in any of them (a document
that states no language; a phrase whose language the graph may lack)."""

_ALIASES = {"nb": "no", "nn": "no"}
"""Codes that share another code's analyzer (Bokmål and Nynorsk: norwegian)."""

_NAMES = {analyzer: code for code, analyzer in LANGUAGES.items()}
_CODE = re.compile(r"^([A-Za-z]{2,3})(?:[-_][A-Za-z0-9]+)*$")
_LETTER = re.compile(r"[^\W\d_]")
DETECT_CHARACTERS = 1000
"""Characters of a text the detector reads: the first ones decide a long text's language."""
SHORTLIST = 3
"""How many of the likeliest languages lingua's light models (trigrams) shortlist among a
text's other possible languages (``detect(..., others=)``) for its full models to weigh with
the candidates. The full models of every language with an analyzer take seconds and about 750
MB to load, which the first phrase asked in a language the graph lacks paid
(``search.languages.TextLanguages.held`` asks whether a phrase is in one of the graph's
languages or in any other); a shortlist loads the full models of the languages it names. On
the queries of SciFact (809, English) and xquad-r (900: en, de, es), with the graph's
languages as the candidates and every language with an analyzer as the others, the answer is
the full models' for 99.5% and 99.7% of them (held or not: 99.75% and 99.7%), and right as
often (98.3% against 98.0%, 99.2% against 98.9%)."""


def language_of(stated: str | None) -> str | None:
    """The ISO 639-1 code of a stated language (``"de-CH"`` -> ``"de"``, ``"German"`` ->
    ``"de"``), None when it is empty or names no language with an analyzer."""
    if not stated:
        return None
    text = stated.strip().lower()
    if text in _NAMES:
        return _NAMES[text]
    match = _CODE.match(text)
    if match is None:
        return None
    code = _ALIASES.get(match.group(1), match.group(1))
    return code if code in LANGUAGES else None


def checked_language(stated: str | None) -> str | None:
    """``stated`` when it names a known language (``language_of``'s forms, or a language
    lingua knows without an analyzer, searched with the language-neutral index), None when
    nothing is stated.

    Raises:
        UnknownLanguageError: ``stated`` names no known language (``"klingon"``, ``"xx"``):
            searching it with the neutral index would answer another query than the one
            asked. The message lists the known codes. Also when ``stated`` is not text.
    """
    if stated is not None and not isinstance(stated, str):
        raise UnknownLanguageError(
            f"a language is a code or a name as text (\"de\", \"German\"), not "
            f"{type(stated).__name__} {stated!r}")
    if stated is None or not stated.strip():
        return None
    if language_of(stated) is not None:
        return stated
    text = stated.strip().lower()
    match = _CODE.match(text)
    others = _lingua_codes() - set(LANGUAGES)
    if text in _lingua_names() or (match is not None and (
            _ALIASES.get(match.group(1), match.group(1)) in others)):
        return stated
    raise UnknownLanguageError(
        f"unknown language {stated!r}: give an ISO 639-1 code or a language's English name; "
        f"searched with their own analyzer: {', '.join(EVERY)}; with the language-neutral "
        f"index: {', '.join(sorted(others))}; or leave the language out to detect it")


def analyzer_of(language: str | None) -> str | None:
    """The analyzer of a stated language, None for the language-neutral index."""
    code = language_of(language)
    return None if code is None else LANGUAGES[code]


def label_suffix(code: str) -> str:
    """The label prefix of a language's fragments: ``en`` -> ``English`` (``EnglishChapter``)."""
    return LANGUAGES[code].capitalize()


def labels_of(code: str | None, kind: str) -> list[str]:
    """The language labels of a fragment of ``kind`` (``Chapter`` or ``Keyword``) in
    language ``code``: one label, or none for text indexed only language-neutrally."""
    return [] if code is None else [label_suffix(code) + kind]


def all_labels(kind: str) -> list[str]:
    """Every language label a fragment of ``kind`` can carry (removed before setting its
    own, so a re-ingest in another language moves the fragment)."""
    return [label_suffix(code) + kind for code in sorted(LANGUAGES)]


def index_of(code: str | None, source: str) -> str:
    """The full-text index of ``source`` (``chapters`` or ``keywords``) for language
    ``code``; the language-neutral one for None."""
    base = f"{source}_fulltext"
    return base if code is None else f"{base}_{LANGUAGES[code]}"


@dataclass(frozen=True)
class Detection:
    """A detected language: its ISO 639-1 code (None when the text has no letters or is
    too ambiguous) and lingua's confidence in it (0 without one)."""

    language: str | None
    confidence: float


NO_LANGUAGE = Detection(None, 0.0)


def detectable(codes: Iterable[str]) -> tuple[str, ...]:
    """The codes among ``codes`` that have an analyzer and that lingua can detect, sorted."""
    return tuple(sorted(c for c in set(codes) if c in LANGUAGES and c in _lingua_codes()))


def detect(text: str, candidates: Sequence[str], *, others: Iterable[str] = ()
           ) -> Detection:
    """The language of ``text`` among ``candidates`` (ISO 639-1 codes with an analyzer),
    or among ``others`` when lingua finds one of them likelier.

    One candidate and no others is the answer for any text with a letter (a graph holding one
    language is searched in it); none, or a text without letters, gives no language. Lingua
    reads the first ``DETECT_CHARACTERS`` characters; a mixed text gets its dominant language.
    Lingua's full models weigh every candidate, and of ``others`` only those its light models
    find among the ``SHORTLIST`` likeliest (``_weighed``); the confidence is the full models'
    among the languages they weighed."""
    codes = detectable(candidates)
    extra = tuple(c for c in detectable(others) if c not in codes)
    if not (codes or extra) or not _LETTER.search(text):
        return NO_LANGUAGE
    sample = text[:DETECT_CHARACTERS]
    if extra:
        codes = _weighed(sample, codes, extra)
    if not codes:
        return NO_LANGUAGE
    if len(codes) == 1:
        return Detection(codes[0], 1.0)
    values = _detector(codes).compute_language_confidence_values(sample)
    if not values or values[0].value <= 0:
        return NO_LANGUAGE
    return Detection(_code(values[0].language), float(values[0].value))


def _weighed(sample: str, codes: tuple[str, ...], others: tuple[str, ...]
             ) -> tuple[str, ...]:
    """``codes`` and those of ``others`` that lingua's low-accuracy mode (its trigram models
    alone) finds among the ``SHORTLIST`` likeliest languages of ``codes`` and ``others`` for
    ``sample``, sorted. A language the light models rule out (another script: confidence 0)
    is not shortlisted."""
    among = tuple(sorted(codes + others))
    values = _detector(among, light=True).compute_language_confidence_values(sample)
    likeliest = {_code(v.language) for v in values[:SHORTLIST] if v.value > 0}
    return tuple(sorted(set(codes) | likeliest))


def _code(language: Language) -> str:
    """The ISO 639-1 code of a lingua language, Bokmål and Nynorsk as ``no``."""
    code = language.iso_code_639_1.name.lower()
    return _ALIASES.get(code, code)


def detect_many(texts: Sequence[str], candidates: Sequence[str]) -> list[Detection]:
    """``detect`` of each text, in parallel threads of lingua (ingest's batches)."""
    codes = detectable(candidates)
    if len(codes) < 2:
        return [detect(t, codes) for t in texts]
    found = _detector(codes).detect_languages_in_parallel_of(
        [t[:DETECT_CHARACTERS] for t in texts])
    out: list[Detection] = []
    for text, language in zip(texts, found, strict=True):
        if language is None or not _LETTER.search(text):
            out.append(NO_LANGUAGE)
            continue
        out.append(Detection(_code(language), 1.0))
    return out


@lru_cache(maxsize=1)
def _lingua_names() -> frozenset[str]:
    """The English names of the languages lingua detects, in lower case (``chinese``)."""
    from lingua import Language

    return frozenset(lang.name.lower() for lang in Language.all())


@lru_cache(maxsize=1)
def _lingua_codes() -> frozenset[str]:
    """The ISO 639-1 codes lingua detects (Bokmål and Nynorsk as ``no``)."""
    from lingua import Language

    codes = {lang.iso_code_639_1.name.lower() for lang in Language.all()}
    return frozenset(_ALIASES.get(c, c) for c in codes)


@lru_cache(maxsize=64)
def _detector(codes: tuple[str, ...], *, light: bool = False) -> LanguageDetector:
    """A detector for these languages (built at first use). Lingua loads a language's models
    the first time a detector needs them and keeps them for every detector of the process, so
    a shortlist's detector costs only the models of its own languages. ``light``: the
    low-accuracy mode, trigram models only (0.14-0.16 s to load for every language with an
    analyzer, against 3-5 s for the full models)."""
    from lingua import Language, LanguageDetectorBuilder

    wanted = set(codes)
    builder = LanguageDetectorBuilder.from_languages(
        *(lang for lang in Language.all() if _code(lang) in wanted))
    return (builder.with_low_accuracy_mode() if light else builder).build()
