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


def normalise(term: str) -> str:
    """Apostrophes to spaces, quotes and special punctuation removed, spaces collapsed."""
    text = _APOSTROPHES.sub(" ", term)
    text = _QUOTES_AND_PUNCT.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


def escape(text: str) -> str:
    """Backslash-escape every Lucene special character."""
    return _LUCENE_SPECIAL.sub(r"\\\1", text)


def words(term: str) -> list[str]:
    """The normalised words of a term, lowercased (the analyzers lowercase the index too)."""
    return [w for w in normalise(term).lower().split(" ") if w]


def phrase_query(term: str) -> str:
    """A Lucene phrase query matching the words of ``term`` in order; '' when nothing is left."""
    found = words(term)
    if not found:
        return ""
    return '"' + " ".join(escape(w) for w in found) + '"'


def terms_query(term: str) -> str:
    """A Lucene query matching any word of ``term`` (BM25 ranks documents with more of them)."""
    return " ".join(escape(w) for w in words(term))
