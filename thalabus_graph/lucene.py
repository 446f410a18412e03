"""Turns user text into an inert Lucene query string: normalise, lowercase, escape every special.

User text is never Lucene syntax: after normalisation (apostrophes to spaces, quotes and special
punctuation removed, spaces collapsed) every Lucene special character left is escaped and the
text is lowercased, so ``AND``/``OR``/``NOT`` become plain words (the analyzers lowercase the
indexed text anyway).
"""

from __future__ import annotations

import re

# Apostrophes of every kind become spaces: "Jane's" -> "Jane s".
_APOSTROPHES = re.compile(r"['\u2018\u2019\u02bc\u0060\u00b4]")
# Quotes and punctuation that carry no meaning for a full-text match are removed.
_QUOTES_AND_PUNCT = re.compile(r"[\"\u201c\u201d\u201e\u00ab\u00bb.,;:!?()\[\]{}<>]")
_SPACES = re.compile(r"\s+")
# Every character of Lucene's classic query syntax; escaped with a backslash.
_LUCENE_SPECIAL = re.compile(r'([+\-&|!(){}\[\]^"~*?:\\/])')


def normalise(term: str, *, keep_apostrophes: bool = False) -> str:
    """Apostrophes to spaces, quotes and special punctuation removed, spaces collapsed.

    With ``keep_apostrophes`` an apostrophe inside a word stays (as ``'``): analyzers index
    "Jane's" as one token (standard) or as "jane" (english), which "jane s" cannot match.
    """
    text = _APOSTROPHES.sub("'" if keep_apostrophes else " ", term)
    if keep_apostrophes:
        text = re.sub(r"(?<!\w)'|'(?!\w)", " ", text)
    text = _QUOTES_AND_PUNCT.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


def escape(text: str) -> str:
    """Backslash-escape every Lucene special character."""
    return _LUCENE_SPECIAL.sub(r"\\\1", text)


def words(term: str, *, keep_apostrophes: bool = False) -> list[str]:
    """The normalised words of a term, lowercased (the analyzers lowercase the index too)."""
    text = normalise(term, keep_apostrophes=keep_apostrophes).lower()
    return [w for w in text.split(" ") if w]


def _variants(term: str) -> list[list[str]]:
    split, kept = words(term), words(term, keep_apostrophes=True)
    return [split] if kept == split or not kept else [split, kept]


def phrase_query(term: str) -> str:
    """A Lucene phrase query matching the words of ``term`` in order ('' when nothing is
    left); a term with an apostrophe also matches its unsplit form ("jane s" OR "jane's")."""
    phrases = ['"' + " ".join(escape(w) for w in found) + '"'
               for found in _variants(term) if found]
    return " OR ".join(phrases)


def terms_query(term: str) -> str:
    """A Lucene query matching any word of ``term`` (BM25 ranks documents with more of them)."""
    seen: dict[str, None] = {}
    for found in _variants(term):
        for w in found:
            seen.setdefault(w)
    return " ".join(escape(w) for w in seen)
