"""Semantic scores on a scale that reads as relevance: a calibration per embedding model.

A vector index answers with ``(1 + cosine) / 2``. With multilingual-e5 every pair of texts has a
cosine between about 0.6 and 0.95, and where relevant passages lie depends on the query and the
corpus: on SciFact (5,183 abstracts of one field) the median non-relevant passage among a
query's top 200 has cosine 0.84, on xquad-r (360 paragraphs in three languages) relevant
passages start at 0.76. No single cosine threshold separates relevant from non-relevant on
both (``benchmarks/calibration.py`` measures it), so a calibration of the cosine alone
cannot make one ``MIN_SCORE`` mean the same on both corpora.

What does carry over is how far a hit stands out from the query's own background. The
calibration reads it from the phrase's unrestricted candidate list of one source (its
cosines, best first) and the number of fragments that source holds:

1. **Background.** The candidates below the first ``skip`` ranks are taken as the upper tail
   of a normal background: a least-squares line of cosine against the normal quantile of the
   rank, ``cos_r ~ mu + sigma * z((r - 0.5) / size)``, gives the query's ``mu`` and
   ``sigma`` (``background``).
2. **Tail evidence.** A hit of cosine ``c`` is as surprising as ``-log10(size * P(Z >= (c -
   mu) / sigma))``: the (negative log of the) number of background fragments expected to
   score at least as high in a source of this size (``evidence``). 0 means one such fragment
   is expected by chance; 2 means one in a hundred such searches.
3. **Probability.** A logistic map of the evidence, ``1 / (1 + exp(-(intercept + slope *
   evidence)))``, fitted per source family on labelled queries with both classes given equal
   weight: the probability that the hit is relevant at even prior odds, so the score does not
   depend on how many relevant passages a corpus happens to hold.

4. **Phrase gate.** Tail evidence is relative: the best of any candidate list stands out from
   its own background about as much as chance allows (its evidence is about 0 whatever the
   phrase), so on a small corpus the nearest fragment of a phrase about an absent topic scores
   like a relevant one. A second logistic, ``Gate``, reads the cosine of the phrase's best
   candidate and the lexical share (``lexical_share``: the largest share of the phrase's words
   found in one of its candidates, ``words`` being the one tokeniser) as the probability that
   the corpus holds anything relevant to it at all, and every hit's probability is multiplied
   by it. A hard relevant passage shares the phrase's words; an absent topic's nearest
   fragment, as similar by cosine, does not. It is fitted on labelled queries (they have a
   relevant passage) against absent topics built from the same data (the queries with every
   passage of their subject removed from the corpus), both weighing the same: how similar an
   unrelated best hit is, is a property of the embedding model, so ``thalabus-graph
   calibrate`` keeps the model's shipped gate. A gate without a share slope reads the cosine
   alone. Two signals that need no shared word lift it (``gate_of``): the cosine-only
   ``foreign_gate`` of the best candidate in another language than the best one's
   (``Background.other``: a topic the corpus holds only in other languages), and a short
   phrase one candidate holds whole (``Background.lexical``, ``covers``), which passes. A
   phrase without a word of ``SHARE_MIN_LETTERS`` letters reads all its words
   (``phrase_words``), a script written without spaces its character bigrams (``words``).

5. **Order kept exactly.** The logistic saturates (a hit far above its background gets 1.0 in
   floating point), so the score is ``(1 - RAW_WEIGHT) x P + RAW_WEIGHT x (1 + cosine) / 2``:
   a thousandth of the index score keeps saturated hits in the index's order, and moves a
   threshold by at most 0.001.

For one phrase and one background the score is strictly increasing in the cosine
(``slope > 0`` and ``sigma > 0``; the gate is one factor per phrase), so it never changes the
order of the hits read against it;
scores of different phrases become comparable. A calibration is stored as JSON
(``thalabus_graph.calibration_file``); the package ships one per embedding model
(``resources/calibration/<model>.json``) and ``thalabus-graph calibrate`` fits one on a user's
own labelled data. The search reads a phrase through one background and the ``default`` map
(``thalabus_graph.scale``); maps of other source families are kept for callers of ``score``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np
import numpy.typing as npt

from thalabus_graph.errors import ConfigurationError

DEFAULT_SOURCE = "default"
"""The source-family key used for a source without its own map."""
DEFAULT_SKIP = 20
"""Best ranks left out of the background fit (they are where relevant hits sit)."""
MIN_SIGMA = 1e-3
"""Smallest background spread (cosine units): a flat candidate list is not infinitely sure."""
RAW_WEIGHT = 1e-3
"""Share of the index score in a calibrated score (keeps saturated hits in order)."""
LANGUAGE_MATTERS = 0.01
"""How much more lenient the foreign gate must be before a phrase's language is read: a gate
that moves by less changes a calibrated score by less than that (scores near 1.0 stay there)."""
SHARE_MIN_LETTERS = 4
"""Shortest word the lexical share counts (shorter ones are mostly function words)."""
EXACT_MAX_WORDS = 4
"""Longest phrase (in words) whose words all found in one fragment count as lexical evidence
(``covers``): a keyword, a title, a name; a longer phrase rarely has every word in one
fragment, and its embedding carries its meaning well."""
_SPACELESS = re.compile(r"[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff"
                        r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_NORMAL = NormalDist()
_TAIL_FLOOR = 1e-300
_WORD = re.compile(r"\w+")


def _folded(text: str) -> str:
    """The form words are read in: NFC, lowercased."""
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return text.lower()


def _spaceless(token: str) -> bool:
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
    return [pair for pair in pairs if _spaceless(pair)]


def words(text: str, min_letters: int = SHARE_MIN_LETTERS) -> frozenset[str]:
    """The words the lexical share reads: ``\\w+`` tokens of the NFC, lowercased text with
    ``min_letters`` letters or more (no stemming, no stop list), and the character bigrams of
    every token in a script written without spaces (``_bigrams``, whatever its length). The
    one tokeniser of the gate's fit, its benchmarks and the search, so a fitted gate applies
    as fitted.

    Example:
        >>> sorted(words("When did the first direct elections take place?"))
        ['direct', 'elections', 'first', 'place', 'take', 'when']
        >>> sorted(words("冰川融化"))
        ['冰川', '川融', '融化']
    """
    out: set[str] = set()
    for w in _WORD.findall(_folded(text)):
        if _spaceless(w):
            out.update(_bigrams(w))
        elif len(w) >= min_letters:
            out.add(w)
    return frozenset(out)


def phrase_words(phrase: str) -> frozenset[str]:
    """The words of a phrase the lexical share looks for: ``words``, or, for a phrase without
    a word of ``SHARE_MIN_LETTERS`` letters (``"Zug"``, ``"wine"``, ``"EU"``), every word it
    has: a short phrase's words are all it says.

    Example:
        >>> sorted(phrase_words("Zug"))
        ['zug']
    """
    return words(phrase) or words(phrase, 1)


@lru_cache(maxsize=1024)
def is_short(phrase: str) -> bool:
    """Whether a phrase has at least one and at most ``EXACT_MAX_WORDS`` words (``covers``
    reads only such a phrase)."""
    return 0 < len(_WORD.findall(phrase)) <= EXACT_MAX_WORDS


def covers(phrase: str, texts: Iterable[str | None]) -> bool:
    """Whether one of ``texts`` holds every word of a short phrase (at most
    ``EXACT_MAX_WORDS`` words, each of any length, as a whole word; a spaceless script's
    bigrams as substrings): lexical evidence that the corpus holds what the phrase names,
    whatever the embedding says. False for a longer phrase or one without words."""
    if not is_short(phrase):
        return False
    wanted = words(phrase, 1)
    for text in texts:
        if text is not None:
            folded = _folded(text)
            if all(_holds(folded, w) for w in wanted):
                return True
    return False


def share_of(phrase: frozenset[str], candidates: Iterable[frozenset[str]]) -> float:
    """The largest share of the phrase's words (``words``) found in one candidate's words, in
    [0, 1]; 0.0 for a phrase without such words (nothing to find) or no candidate."""
    if not phrase:
        return 0.0
    return max((len(phrase & found) / len(phrase) for found in candidates), default=0.0)


def lexical_share(phrase: str, texts: Iterable[str | None]) -> float | None:
    """The phrase's lexical share among its candidates' texts: ``share_of(words(phrase),
    [words(t) for t in texts])``, read without tokenising the texts (each phrase word is
    looked up as a whole word of the folded text, ``_holds``: a few substring searches per
    text instead of a tokeniser pass over every word; a text whose words could not beat the
    best share so far, even as substrings, is not read word by word). None when no candidate
    text was read (every text None): the share is then not known."""
    wanted = sorted(phrase_words(phrase), key=lambda w: (-len(w), w))  # rarer first
    best, read = 0, False
    for text in texts:
        if text is None:
            continue
        read = True
        if best == len(wanted):
            break
        folded = _folded(text)
        present = _present(folded, wanted, best)
        if len(present) > best:
            best = max(best, sum(_holds(folded, w) for w in present))
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


def _is_word_char(ch: str) -> bool:
    """Whether ``\\w`` matches the character (Unicode alphanumeric or underscore)."""
    return ch.isalnum() or ch == "_"


def _holds(folded: str, word: str) -> bool:
    """Whether ``word`` (a ``\\w+`` token) is a whole token of ``folded``: an occurrence not
    preceded or followed by a word character, so exactly ``word in words(text, 1)``; a
    spaceless script's bigram (``_bigrams``) wherever it occurs (it lies within one token,
    whose bigrams hold it)."""
    if len(word) > 1 and _spaceless(word):
        return word in folded
    start = folded.find(word)
    while start >= 0:
        end = start + len(word)
        if ((start == 0 or not _is_word_char(folded[start - 1]))
                and (end == len(folded) or not _is_word_char(folded[end]))):
            return True
        start = folded.find(word, start + 1)
    return False


@dataclass(frozen=True)
class SourceMap:
    """The logistic map of one source family: ``p = 1 / (1 + exp(-(intercept + slope * e)))``
    of the tail evidence ``e``."""

    intercept: float
    slope: float

    def probability(self, evidence: float) -> float:
        """The calibrated score of a hit with this tail evidence, in (0, 1)."""
        x = self.intercept + self.slope * evidence
        if x >= 0:
            return 1.0 / (1.0 + math.exp(-x))
        e = math.exp(x)
        return e / (1.0 + e)


@dataclass(frozen=True)
class Gate:
    """P(the corpus holds a fragment relevant to a phrase) from the cosine of the phrase's
    best candidate and its lexical share: ``1 / (1 + exp(-(intercept + slope x best +
    share_slope x share)))``; without ``share_slope`` the cosine alone."""

    intercept: float
    slope: float
    share_slope: float | None = None

    @property
    def midpoint(self) -> float:
        """The best cosine at which the gate is 0.5 (with no shared word)."""
        return self.midpoint_at(0.0)

    def midpoint_at(self, share: float) -> float:
        """The best cosine at which the gate is 0.5 for a phrase with this lexical share."""
        return -(self.intercept + (self.share_slope or 0.0) * share) / self.slope

    def probability(self, best: float, share: float | None = None) -> float:
        """The gate of a phrase whose best candidate has this cosine and whose lexical share
        is ``share`` (None, not known: read as 0.0, no shared word found)."""
        logit = self.slope * best + (self.share_slope or 0.0) * (share or 0.0)
        return SourceMap(self.intercept, 1.0).probability(logit)

    def shifted(self, logit: float) -> Gate:
        """The same gate moved along its logit (positive: more lenient): an operating point."""
        return Gate(self.intercept + logit, self.slope, self.share_slope)

    def to_dict(self) -> dict[str, float]:
        """The JSON form (``share_slope`` only when the gate reads the share)."""
        return {"intercept": self.intercept, "slope": self.slope,
                **({"share_slope": self.share_slope} if self.share_slope is not None else {})}


@dataclass(frozen=True)
class Background:
    """A query's background in one source: cosines ``~ Normal(mu, sigma)`` over ``size``
    fragments; ``best`` is the highest candidate cosine (None: not known), ``share`` the
    phrase's lexical share among the candidates (``lexical_share``; None: not known);
    ``foreign``: the phrase is in a language the graph's text lacks, so its words cannot be
    found there and ``Calibration.foreign_gate`` judges it too; ``other``: the best cosine
    among candidates in another language than the best candidate's (None: none, or languages
    not known), which ``foreign_gate`` judges too (a phrase whose relevant fragments are in
    other languages shares no words with them); ``lexical``: a candidate holds every word of
    the short phrase (``covers``), so the gate lets it through whole."""

    mu: float
    sigma: float
    size: int
    best: float | None = None
    share: float | None = None
    foreign: bool = False
    other: float | None = None
    lexical: bool = False


def background(cosines: Sequence[float], size: int, skip: int = DEFAULT_SKIP,
               share: float | None = None) -> Background:
    """The background of a phrase in one source from its unrestricted candidates' cosines
    (best first) and the number of fragments the source holds (at least the candidates);
    ``share`` is kept for the gate.

    The first ``min(skip, k // 4)`` ranks are left out; with fewer than two points left the
    background is the mean of what there is with ``MIN_SIGMA``.

    Example:
        >>> b = background([0.9, 0.8, 0.7, 0.6, 0.5], 5, skip=0)
        >>> round(b.mu, 3), b.size
        (0.7, 5)
    """
    ranked = sorted((float(c) for c in cosines), reverse=True)
    k = len(ranked)
    size = max(size, k, 1)
    if k == 0:
        return Background(0.0, MIN_SIGMA, size, None, share)
    first = min(skip, k // 4)
    ys = ranked[first:]
    if len(ys) < 2:
        return Background(sum(ranked) / k, MIN_SIGMA, size, ranked[0], share)
    xs, mx, sxx = _quantiles(first, k, size)
    my = sum(ys) / len(ys)
    sigma = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx if sxx else 0.0
    sigma = max(sigma, MIN_SIGMA)
    return Background(my - sigma * mx, sigma, size, ranked[0], share)


@lru_cache(maxsize=256)
def _quantiles(first: int, k: int, size: int) -> tuple[tuple[float, ...], float, float]:
    """The normal quantiles of ranks ``first + 1 .. k`` among ``size``, their mean and their
    sum of squared deviations (the same for every phrase of a source: cached)."""
    xs = tuple(_NORMAL.inv_cdf(1.0 - (r - 0.5) / size) for r in range(first + 1, k + 1))
    mx = sum(xs) / len(xs)
    return xs, mx, sum((x - mx) ** 2 for x in xs)


def evidence(cosine: float, bg: Background) -> float:
    """``-log10(size * P(Z >= (cosine - mu) / sigma))``: how far the hit stands out from the
    background, in orders of magnitude of the chance matches expected (increasing in
    ``cosine``)."""
    z = (cosine - bg.mu) / bg.sigma
    tail = max(0.5 * math.erfc(z / math.sqrt(2.0)), _TAIL_FLOOR)
    return -math.log10(bg.size * tail)


@dataclass(frozen=True)
class Calibration:
    """The calibration of one embedding model.

    Attributes:
        model: the embedding model's name (``Settings.embedder_model``).
        sources: source family (``chapters``, ``paragraphs``, ``summaries`` or ``default``)
            -> its logistic map.
        skip: best ranks left out of the background fit.
        fitted_on: what it was fitted on, for people (data sets and their splits).
        measured: what was measured when it was fitted (drop rates at the thresholds), for
            people.
        gate: the phrase gate (None: every phrase is taken to have a relevant fragment).
        foreign_gate: the gate of a phrase in a language the graph's text lacks, on its best
            cosine alone (such a phrase shares no words with the graph, whatever it is
            about); such a phrase gets the more lenient of the two gates. None: ``gate``
            judges every phrase.
    """

    model: str
    sources: Mapping[str, SourceMap]
    skip: int = DEFAULT_SKIP
    fitted_on: tuple[str, ...] = ()
    measured: Mapping[str, Any] = field(default_factory=dict)
    gate: Gate | None = None
    foreign_gate: Gate | None = None

    def map_for(self, source: str) -> SourceMap:
        """The map of ``source``, or the ``default`` one."""
        found = self.sources.get(source) or self.sources.get(DEFAULT_SOURCE)
        if found is None:
            raise ConfigurationError(f"calibration of {self.model!r} has no map for "
                                     f"{source!r} and no {DEFAULT_SOURCE!r} map")
        return found

    def background(self, cosines: Sequence[float], size: int,
                   share: float | None = None) -> Background:
        """``background`` with this calibration's ``skip``."""
        return background(cosines, size, self.skip, share)

    def score(self, source: str, cosine: float, bg: Background) -> float:
        """The calibrated score of a hit of ``source`` with this cosine against ``bg``, in
        [0, 1] and strictly increasing in ``cosine``."""
        return self.scorer(source, bg)(cosine)

    def scorer(self, source: str, bg: Background) -> Callable[[float], float]:
        """``score`` of every hit of ``source`` against ``bg``: the map and the phrase's gate
        read once (a phrase calibrates hundreds of hits)."""
        mapped, gate = self.map_for(source), self.gate_of(bg)

        def scored(cosine: float) -> float:
            p = mapped.probability(evidence(cosine, bg)) * gate
            return (1.0 - RAW_WEIGHT) * p + RAW_WEIGHT * (1.0 + cosine) / 2.0
        return scored

    def gate_of(self, bg: Background) -> float:
        """The phrase gate of a background (1.0 without a gate or a known best hit, or when
        a candidate holds every word of the short phrase, ``lexical``; a share not known reads
        as 0.0, ``Gate.probability``): the larger of ``gate`` and ``foreign_gate`` of the best
        cosine for a ``foreign`` phrase, and of ``foreign_gate`` of the best cosine in another
        language (``other``), so a topic the corpus holds only in other languages is judged
        by the gate fitted for phrases that share no words with their relevant fragments."""
        if self.gate is None or bg.best is None or bg.lexical:
            return 1.0
        own = self.gate.probability(bg.best, bg.share)
        if self.foreign_gate is not None:
            if bg.foreign:
                own = max(own, self.foreign_gate.probability(bg.best))
            if bg.other is not None:
                own = max(own, self.foreign_gate.probability(bg.other))
        return own

    def language_matters(self, bg: Background) -> bool:
        """Whether the phrase's language can change its gate: a ``foreign_gate`` more lenient
        than ``gate`` by ``LANGUAGE_MATTERS`` or more at this background. Only then is the
        phrase's language worth reading (a difference below it moves no score across a
        threshold that matters)."""
        return (self.gate_of(dataclasses.replace(bg, foreign=True)) - self.gate_of(bg)
                >= LANGUAGE_MATTERS)

    def scores(self, source: str, cosines: Sequence[float], size: int,
               share: float | None = None) -> list[float]:
        """Calibrated scores of one source's unrestricted candidates (any order), their
        background read from themselves and the phrase's lexical ``share``."""
        scored = self.scorer(source, self.background(cosines, size, share))
        return [scored(c) for c in cosines]

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``calibration_file.to_dict``)."""
        from thalabus_graph.scoring import calibration_file

        return calibration_file.to_dict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Calibration:
        """Read the JSON form (``calibration_file.from_dict``)."""
        from thalabus_graph.scoring import calibration_file

        return calibration_file.from_dict(data)

    def save(self, path: Path) -> None:
        """Write the JSON form to ``path`` (``calibration_file.save``)."""
        from thalabus_graph.scoring import calibration_file

        calibration_file.save(self, path)

    @classmethod
    def load(cls, path: Path) -> Calibration:
        """Read a calibration file (``calibration_file.load``)."""
        from thalabus_graph.scoring import calibration_file

        return calibration_file.load(path)


def shipped(model: str) -> Calibration | None:
    """The calibration the package ships for an embedding model (None when there is none).

    Files are ``resources/calibration/<model>.json``; the name is the model's last path part
    (``intfloat/multilingual-e5-small`` reads ``multilingual-e5-small.json``)."""
    name = model.rsplit("/", 1)[-1]
    if not name or name.startswith("."):
        return None
    folder = resources.files("thalabus_graph.resources").joinpath("calibration")
    entry = folder.joinpath(f"{name}.json")
    if not entry.is_file():
        return None
    return Calibration.from_dict(json.loads(entry.read_text(encoding="utf-8")))


OFF = "none"
"""The ``CALIBRATION_FILE`` value that keeps scores on the vector index's scale."""


def load_for(model: str, path: str = "") -> Calibration | None:
    """The calibration a setting points at (``path``), else the shipped one of ``model``;
    ``OFF`` ("none"): no calibration."""
    if path == OFF:
        return None
    return Calibration.load(Path(path)) if path else shipped(model)


# --- fitting ----------------------------------------------------------------------------

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Labelled:
    """One labelled set's candidates of one source family: for every query, its candidates'
    cosines (best first) and whether each is relevant, and the source's size; ``shares``
    (when the texts were read) holds every query's lexical share among its candidates."""

    name: str
    cosines: Sequence[FloatArray]
    relevant: Sequence[npt.NDArray[np.bool_]]
    size: int
    shares: Sequence[float] | None = None


def evidences(data: Labelled, skip: int = DEFAULT_SKIP) -> tuple[FloatArray,
                                                                   npt.NDArray[np.bool_]]:
    """The tail evidence of every candidate of ``data`` and its label, flattened."""
    feats: list[float] = []
    for cos in data.cosines:
        bg = background(list(cos), data.size, skip)
        feats.extend(evidence(float(c), bg) for c in cos)
    labels = (np.concatenate(list(data.relevant)) if data.relevant
              else np.zeros(0, dtype=bool))
    return np.asarray(feats, dtype=np.float64), labels.astype(bool)


def fit_map(sets: Sequence[tuple[FloatArray, npt.NDArray[np.bool_]]],
            iterations: int = 100) -> SourceMap:
    """A logistic map from evidence to P(relevant) at even prior odds: within each set the two
    classes weigh the same, and each set weighs the same (``_logistic``)."""
    xs: list[FloatArray] = []
    ys: list[FloatArray] = []
    ws: list[FloatArray] = []
    used = [(f, y) for f, y in sets if y.any() and (~y).any()]
    if not used:
        raise ConfigurationError("calibration needs relevant and non-relevant candidates")
    for feats, labels in used:
        n_rel, n_non = int(labels.sum()), int((~labels).sum())
        xs.append(feats)
        ys.append(labels.astype(np.float64))
        ws.append(np.where(labels, 0.5 / n_rel, 0.5 / n_non) / len(used))
    x = np.concatenate(xs)
    design = np.vstack([np.ones_like(x), x]).T
    theta = _logistic(design, np.concatenate(ys), np.concatenate(ws), iterations)
    intercept, slope = float(theta[0]), float(theta[1])
    if not slope > 0:
        raise ConfigurationError("the labelled data gives no increasing map (relevant "
                                 "candidates do not stand out from the others)")
    return SourceMap(intercept, slope)


def _logistic(design: FloatArray, y: FloatArray, w: FloatArray, iterations: int) -> FloatArray:
    """Weighted logistic regression by Newton's method (a tiny ridge keeps it defined when
    the classes separate)."""
    theta = np.zeros(design.shape[1])
    ridge = 1e-6 * np.eye(design.shape[1])
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(design @ theta, -500, 500)))
        grad = design.T @ (w * (p - y)) + 1e-6 * theta
        hess = (design * (w * p * (1 - p))[:, None]).T @ design + ridge
        step = np.linalg.solve(hess, grad)
        theta -= step
        if float(np.abs(step).max()) < 1e-10:
            break
    return theta


def best_hits(data: Labelled) -> FloatArray:
    """Every query's best candidate cosine in ``data`` (queries without a candidate left
    out): the gate's first feature."""
    return np.asarray([float(np.max(cos)) for cos in data.cosines if len(cos)],
                      dtype=np.float64)


def gate_features(data: Labelled) -> FloatArray:
    """What the gate reads of every query of ``data`` with a candidate: its best cosine, and
    (one row per query, two columns) its lexical share when ``data.shares`` is known."""
    if data.shares is None:
        return best_hits(data)
    rows = [(float(np.max(cos)), float(share))
            for cos, share in zip(data.cosines, data.shares, strict=True) if len(cos)]
    return np.asarray(rows, dtype=np.float64).reshape(len(rows), 2)


def fit_gate(present: Sequence[FloatArray], absent: Sequence[FloatArray],
             iterations: int = 100) -> Gate:
    """The phrase gate from what it reads (``gate_features``: best cosines, or rows of best
    cosine and lexical share, the same for every set) of phrases with a relevant fragment
    (``present``) and of phrases about topics the corpus lacks (``absent``): both classes
    weigh the same, and so does every set within its class. The features are standardised
    for the fit (Newton's steps stay well scaled) and the gate is given on the raw ones."""
    xs: list[FloatArray] = []
    ys: list[FloatArray] = []
    ws: list[FloatArray] = []
    for label, sets in ((1.0, [a for a in present if len(a)]),
                        (0.0, [a for a in absent if len(a)])):
        if not sets:
            raise ConfigurationError("the gate needs phrases with and without a relevant "
                                     "fragment")
        for rows in sets:
            xs.append(np.asarray(rows, dtype=np.float64).reshape(len(rows), -1))
            ys.append(np.full(len(rows), label))
            ws.append(np.full(len(rows), 0.5 / len(sets) / len(rows)))
    if len({x.shape[1] for x in xs}) != 1 or xs[0].shape[1] > 2:
        raise ConfigurationError("every gate set needs the same features (best cosine, "
                                 "optionally the lexical share)")
    x = np.vstack(xs)
    mean = x.mean(axis=0)
    scale = np.where(x.std(axis=0) > 0, x.std(axis=0), 1.0)
    design = np.column_stack([np.ones(len(x)), (x - mean) / scale])
    theta = _logistic(design, np.concatenate(ys), np.concatenate(ws), iterations)
    weights = theta[1:] / scale
    intercept = float(theta[0] - weights @ mean)
    if not all(w > 0 for w in weights):
        raise ConfigurationError("the gate data gives no increasing gate (absent topics' best "
                                 "hits are as similar as relevant ones)")
    return Gate(intercept, float(weights[0]),
                float(weights[1]) if len(weights) > 1 else None)


def fit(model: str, data: Mapping[str, Sequence[Labelled]], *, skip: int = DEFAULT_SKIP,
        measured: Mapping[str, Any] | None = None, gate: Gate | None = None,
        foreign_gate: Gate | None = None) -> Calibration:
    """Fit a calibration: ``data`` maps a source family (or ``default``) to its labelled
    sets; ``gate`` and ``foreign_gate`` are the phrase gates to keep (``fit_gate``)."""
    sources = {family: fit_map([evidences(d, skip) for d in sets])
               for family, sets in data.items()}
    names = tuple(sorted({d.name for sets in data.values() for d in sets}))
    return Calibration(model, sources, skip, names, dict(measured or {}), gate, foreign_gate)


def candidates(name: str, queries: FloatArray, corpus: FloatArray,
               relevant: Sequence[set[int]], top_n: int, *,
               phrases: Sequence[str] | None = None,
               texts: Sequence[str] | None = None) -> Labelled:
    """Each query's ``top_n`` candidates by cosine (rows L2-normalised) and their labels, as
    a ``Labelled`` set: what one source's unrestricted search returns for the query.
    ``relevant[i]`` holds the corpus rows relevant to query row ``i``. With the queries'
    ``phrases`` and the corpus rows' ``texts``, each query's lexical share among its
    candidates (``share_of`` of ``phrase_words``, as ``lexical_share`` reads it) is kept
    too."""
    cosines: list[FloatArray] = []
    labels: list[npt.NDArray[np.bool_]] = []
    shares: list[float] | None = [] if phrases is not None and texts is not None else None
    found: dict[int, frozenset[str]] = {}
    k = min(top_n, corpus.shape[0])
    for start in range(0, queries.shape[0], 256):
        sims = queries[start:start + 256] @ corpus.T
        for offset, row in enumerate(sims):
            top = np.argpartition(-row, k - 1)[:k] if k < row.shape[0] else np.arange(k)
            top = top[np.argsort(-row[top], kind="stable")]
            cosines.append(row[top].astype(np.float64))
            wanted = relevant[start + offset]
            labels.append(np.fromiter((int(j) in wanted for j in top), dtype=bool, count=k))
            if shares is not None and phrases is not None and texts is not None:
                for j in top:
                    if int(j) not in found:
                        found[int(j)] = words(texts[int(j)], 1)
                shares.append(share_of(phrase_words(phrases[start + offset]),
                                       (found[int(j)] for j in top)))
    return Labelled(name, cosines, labels, int(corpus.shape[0]), shares)
