"""Lexical features of a phrase among its candidates: what the phrase gate reads besides cosines.

The gate of a calibration (``scoring.calibration``, ``Gate``) judges whether the corpus holds
anything on a phrase. Cosines alone cannot tell a hard relevant passage from an absent topic's
nearest fragment, as similar by cosine; the words they share can. This module computes those
word features from the candidates' texts, with the words of ``scoring.tokens.lexical_words``
(the reading the gate was fitted on):

- ``lexical_share``: the largest share of the phrase's words (``phrase_words``) found in one
  candidate, the gate's second input.
- ``covers``: whether one candidate holds every word of a short phrase (``is_short``: a keyword,
  a title, a name), which lets the phrase through the gate whole.
- ``share_of``: the same share on word sets already read, for fitting and benchmarks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

from thalabus_graph.scoring.tokens import fold, holds_word, lexical_words, word_count

EXACT_MAX_WORDS = 4
"""Longest phrase (in words) whose words all found in one fragment count as lexical evidence
(``covers``): a keyword, a title, a name; a longer phrase rarely has every word in one
fragment, and its embedding carries its meaning well."""


def phrase_words(phrase: str) -> frozenset[str]:
    """The words of a phrase the lexical share looks for: ``lexical_words``, or, for a phrase
    without a word of ``tokens.SHARE_MIN_LETTERS`` letters (``"Zug"``, ``"wine"``, ``"EU"``), every
    word it has: a short phrase's words are all it says.

    Example:
        >>> sorted(phrase_words("Zug"))
        ['zug']
    """
    return lexical_words(phrase) or lexical_words(phrase, 1)


@lru_cache(maxsize=1024)
def is_short(phrase: str) -> bool:
    """Whether a phrase has at least one and at most ``EXACT_MAX_WORDS`` words (``covers``
    reads only such a phrase)."""
    return 0 < word_count(phrase) <= EXACT_MAX_WORDS


def covers(phrase: str, texts: Iterable[str | None]) -> bool:
    """Whether one of ``texts`` holds every word of a short phrase (at most
    ``EXACT_MAX_WORDS`` words, each of any length, as a whole word; a spaceless script's
    bigrams as substrings): lexical evidence that the corpus holds what the phrase names,
    whatever the embedding says. False for a longer phrase or one without words."""
    if not is_short(phrase):
        return False
    wanted = lexical_words(phrase, 1)
    for text in texts:
        if text is not None:
            folded = fold(text)
            if all(holds_word(folded, w) for w in wanted):
                return True
    return False


def share_of(phrase: frozenset[str], candidates: Iterable[frozenset[str]]) -> float:
    """The largest share of the phrase's words (``lexical_words``) found in one candidate's
    words, in [0, 1]; 0.0 for a phrase without such words (nothing to find) or no candidate."""
    if not phrase:
        return 0.0
    return max((len(phrase & found) / len(phrase) for found in candidates), default=0.0)


def lexical_share(phrase: str, texts: Iterable[str | None]) -> float | None:
    """The phrase's lexical share among its candidates' texts:
    ``share_of(phrase_words(phrase), [lexical_words(t, 1) for t in texts])``, read without
    tokenising the texts (each phrase word is looked up as a whole word of the folded text,
    ``holds_word``: a few substring searches per text instead of a tokeniser pass over every
    word; a text whose words could not beat the best share so far, even as substrings, is not
    read word by word). None when no candidate text was read (every text None): the share is
    then not known."""
    wanted = sorted(phrase_words(phrase), key=lambda w: (-len(w), w))  # rarer first
    best, read = 0, False
    for text in texts:
        if text is None:
            continue
        read = True
        if best == len(wanted):
            break
        folded = fold(text)
        present = _present(folded, wanted, best)
        if len(present) > best:
            best = max(best, sum(holds_word(folded, w) for w in present))
    if not read:
        return None
    return best / len(wanted) if wanted else 0.0


def _present(folded: str, wanted: Sequence[str], best: int) -> list[str]:
    """The wanted words found in ``folded`` as substrings (a whole token is a substring too),
    or a list no longer than ``best`` as soon as the words left cannot make it longer: each
    missing word is a scan of the whole text, and most candidates cannot beat the best."""
    present: list[str] = []
    missing_allowed = len(wanted) - best - 1
    for w in wanted:
        if w in folded:
            present.append(w)
        else:
            missing_allowed -= 1
            if missing_allowed < 0:
                return present
    return present
