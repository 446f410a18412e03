"""How scoring splits text into words: the one tokeniser module of the package's scores.

Two scores count words a phrase shares with its candidates, and each reads words its own way on
purpose, so this module holds two differently named functions rather than one:

- ``lexical_words`` is the reading of the phrase gate's lexical share (``scoring.lexical``):
  ``\\w+`` tokens of the NFC, lowercased text with at least ``min_letters`` letters, and the
  character bigrams of scripts written without spaces. The shipped gates were fitted on exactly
  these words (``scoring.fitting.candidates``), so the search must read them the same way for
  a fitted gate to apply as fitted.
- ``plain_words`` is the reading of hybrid fusion's text evidence (``scoring.fusion``): every
  lowercased ``\\w+`` token, no normalisation, no shortest length, no bigrams, close to how
  Lucene's standard tokenizer splits the text the full-text search matched. Fusion weighs each
  query word by its rarity among the candidates, so short common words need no floor.

Making one read like the other would change calibrated or fused scores. ``holds_word`` tests a
``lexical_words`` token against a text without tokenising the text.
"""

from __future__ import annotations

import re
import unicodedata

SHARE_MIN_LETTERS = 4
"""Shortest word the lexical share counts (shorter ones are mostly function words)."""
_SPACELESS = re.compile(r"[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff"
                        r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"\w+")


def fold(text: str) -> str:
    """The form ``lexical_words`` reads a text in: NFC, lowercased."""
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return text.lower()


def word_count(text: str) -> int:
    """How many ``\\w+`` tokens ``text`` holds, as written (no folding, any length)."""
    return len(_WORD.findall(text))


def is_spaceless(token: str) -> bool:
    """Whether a token holds characters of a script written without spaces between words
    (Chinese, Japanese kana, Thai, Lao, Khmer, Myanmar): its ``\\w+`` run is a whole clause."""
    return _SPACELESS.search(token) is not None


def _bigrams(token: str) -> list[str]:
    """A spaceless token's character bigrams holding a character of such a script (a
    one-character token itself): words of such a script cannot be split without a dictionary,
    and two characters are a word or part of one often enough to count shared vocabulary."""
    if len(token) < 2:
        return [token]
    pairs = (token[i:i + 2] for i in range(len(token) - 1))
    return [pair for pair in pairs if is_spaceless(pair)]


def lexical_words(text: str, min_letters: int = SHARE_MIN_LETTERS) -> frozenset[str]:
    """The words the lexical share reads: ``\\w+`` tokens of the NFC, lowercased text with
    ``min_letters`` letters or more (no stemming, no stop list), and the character bigrams of
    every token in a script written without spaces (``_bigrams``, whatever its length). The
    one reading of the gate's fit, its benchmarks and the search, so a fitted gate applies
    as fitted.

    Example:
        >>> sorted(lexical_words("When did the first direct elections take place?"))
        ['direct', 'elections', 'first', 'place', 'take', 'when']
        >>> sorted(lexical_words("冰川融化"))
        ['冰川', '川融', '融化']
    """
    out: set[str] = set()
    for w in _WORD.findall(fold(text)):
        if is_spaceless(w):
            out.update(_bigrams(w))
        elif len(w) >= min_letters:
            out.add(w)
    return frozenset(out)


def plain_words(text: str | None) -> frozenset[str]:
    """The distinct lowercased word tokens of ``text`` (runs of letters and digits, split as
    Lucene's standard tokenizer splits them, closely enough for counting shared words): the
    query words hybrid fusion weighs.

    Example:
        >>> sorted(plain_words("Brot mit Butter, mit Salz"))
        ['brot', 'butter', 'mit', 'salz']
    """
    return frozenset(_WORD.findall(text.lower())) if text else frozenset()


def _is_word_char(ch: str) -> bool:
    """Whether ``\\w`` matches the character (Unicode alphanumeric or underscore)."""
    return ch.isalnum() or ch == "_"


def holds_word(text: str, word: str) -> bool:
    """Whether ``word`` (a ``\\w+`` token) is a whole token of ``text`` (already ``fold``-ed):
    an occurrence not preceded or followed by a word character, so exactly ``word in
    lexical_words(text, 1)``; a spaceless script's bigram (``_bigrams``) wherever it occurs (it
    lies within one token, whose bigrams hold it)."""
    if len(word) > 1 and is_spaceless(word):
        return word in text
    start = text.find(word)
    while start >= 0:
        end = start + len(word)
        if ((start == 0 or not _is_word_char(text[start - 1]))
                and (end == len(text) or not _is_word_char(text[end]))):
            return True
        start = text.find(word, start + 1)
    return False
