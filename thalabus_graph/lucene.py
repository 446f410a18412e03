"""Turns user text into an inert Lucene query string: normalise, lowercase, escape every special.

User text is never Lucene syntax: after normalisation (apostrophes to spaces, quotes and
punctuation that always separates words removed, spaces collapsed) every Lucene special
character left is escaped and the text is lowercased, so ``AND``/``OR``/``NOT`` become plain
words (the analyzers lowercase the indexed text anyway).

Punctuation the analyzer may keep inside a token (``.`` ``,`` ``;`` ``:`` between letters or
digits) is escaped, never split: the standard analyzers index ``3.5``, ``example.org``,
``u.s.a`` and ``a:b`` as single tokens, and Lucene's query parser runs the same analyzer on the
escaped query text, so a query token and an indexed token agree. Splitting them (as an earlier
version did) turned ``'3.5'`` into the phrase "3 5", which matches nothing.

Unicode: a term is searched in its NFC form (the form ingest stores text in) and, when it
differs, in its NFKC form too (compatibility folding: full-width digits U+FF13 U+FF0E U+FF15
also find ``3.5``, the ligature U+FB01 finds ``fi``). Both are alternatives of one query, so a
document written in full-width characters is still found by the same full-width term.
"""

from __future__ import annotations

import re
import unicodedata

MAX_QUERY_TERMS = 1000
"""Most analyzed terms a bag-of-words query (:func:`terms_query`) may carry.

Lucene refuses a boolean query of more than 1,024 clauses (``TooManyClauses``); a long semantic
phrase fused with the text search would otherwise fail the whole query. The first distinct
words are kept (reading order) until their estimated token count reaches this cap; the phrase's
semantic side is not affected. Phrase queries (:func:`phrase_query`) are one clause each and
need no cap.
"""

MAX_TOKEN_LENGTH = 255
"""The longest token Lucene's standard tokenizer makes; it cuts a longer run into pieces."""

# Apostrophes of every kind become spaces: "Jane's" -> "Jane s".
_APOSTROPHES = re.compile(r"['\u2018\u2019\u02bc\u0060\u00b4]")
# Quotes and punctuation that always separate words for the analyzer are removed.
_QUOTES_AND_PUNCT = re.compile(r"[\"\u201c\u201d\u201e\u00ab\u00bb!?()\[\]{}<>]")
# Mid-word punctuation (UAX #29 MidNum / MidLetter / MidNumLet) survives only between two word
# characters, as in the analyzer: "3.5" and "a:b" stay whole, a sentence's final "." goes.
_LOOSE_MID_PUNCT = re.compile(r"(?<!\w)[.,;:]+|[.,;:]+(?!\w)")
_SPACES = re.compile(r"\s+")
# Every character of Lucene's classic query syntax; escaped with a backslash.
_LUCENE_SPECIAL = re.compile(r'([+\-&|!(){}\[\]^"~*?:\\/])')
# Ideographs and kana: the standard tokenizer makes one token of each such character.
_IDEOGRAPHIC = re.compile(
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003ffff]")
_WORD_RUN = re.compile(r"[^\W\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
                       "\U00020000-\U0003ffff]+")


def normalise(term: str, *, keep_apostrophes: bool = False) -> str:
    """Apostrophes to spaces, quotes and word-separating punctuation removed, spaces collapsed.

    ``.``, ``,``, ``;`` and ``:`` stay where they join two word characters (``3.5``,
    ``example.org``); elsewhere (a sentence's full stop) they go, as the analyzer drops them.
    With ``keep_apostrophes`` an apostrophe inside a word stays (as ``'``): analyzers index
    "Jane's" as one token (standard) or as "jane" (english), which "jane s" cannot match.
    """
    text = _APOSTROPHES.sub("'" if keep_apostrophes else " ", term)
    if keep_apostrophes:
        text = re.sub(r"(?<!\w)'|'(?!\w)", " ", text)
    text = _QUOTES_AND_PUNCT.sub(" ", text)
    text = _LOOSE_MID_PUNCT.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


def escape(text: str) -> str:
    """Backslash-escape every Lucene special character."""
    return _LUCENE_SPECIAL.sub(r"\\\1", text)


def words(term: str, *, keep_apostrophes: bool = False) -> list[str]:
    """The normalised words of a term, lowercased (the analyzers lowercase the index too)."""
    text = normalise(term, keep_apostrophes=keep_apostrophes).lower()
    return [w for w in text.split(" ") if w]


def token_cost(word: str) -> int:
    """An upper bound of the tokens the standard analyzer makes of one normalised word: one per
    ``MAX_TOKEN_LENGTH`` characters of each run of letters and digits (the tokenizer cuts a
    longer token), one per any other character (an ideograph, a kana, an emoji or another
    symbol can each be a token of its own)."""
    runs = _WORD_RUN.findall(word)
    in_runs = sum(len(run) for run in runs)
    return sum(-(-len(run) // MAX_TOKEN_LENGTH) for run in runs) + len(word) - in_runs


def _variants(term: str) -> list[list[str]]:
    """The word lists a term is searched as: its NFC and NFKC forms (full-width digits
    also as ASCII ones, ligatures split), each with apostrophes split and, when it differs, kept."""
    forms: list[list[str]] = []
    for text in dict.fromkeys((unicodedata.normalize("NFC", term),
                               unicodedata.normalize("NFKC", term))):
        for found in (words(text), words(text, keep_apostrophes=True)):
            if found and found not in forms:
                forms.append(found)
    return forms


def phrase_query(term: str) -> str:
    """A Lucene phrase query matching the words of ``term`` in order ('' when nothing is
    left); a term with an apostrophe also matches its unsplit form ("jane s" OR "jane's")."""
    phrases = ['"' + " ".join(escape(w) for w in found) + '"'
               for found in _variants(term) if found]
    return " OR ".join(phrases)


def terms_query(term: str, *, max_terms: int = MAX_QUERY_TERMS) -> str:
    """A Lucene query matching any word of ``term`` (BM25 ranks documents with more of them).

    The first distinct words are kept while their :func:`token_cost` fits in ``max_terms``
    (a word that alone would overflow the budget is skipped), so the query never exceeds
    Lucene's clause limit whatever the length of the phrase.
    """
    seen: dict[str, None] = {}
    budget = max_terms
    for found in _variants(term):
        for w in found:
            for part in _split_ideographs(w):
                cost = token_cost(part)
                if part in seen or cost > budget:
                    continue
                seen[part] = None
                budget -= cost
    return " ".join(escape(w) for w in seen)


def _split_ideographs(word: str) -> list[str]:
    """A word with ideographs as separate words (the analyzer splits them the same way), so a
    long run of Chinese or Japanese text is capped character by character, not dropped whole."""
    if not _IDEOGRAPHIC.search(word):
        return [word]
    spaced = _IDEOGRAPHIC.sub(lambda m: f" {m.group(0)} ", word)
    return [p for p in spaced.split(" ") if p]
