"""The calibration of one embedding model: semantic scores on a scale that reads as relevance.

This module holds what a search computes with a calibration (``Calibration``, its maps, its
phrase gate and a phrase's ``Background``). The word features its gate reads are
``scoring.lexical``'s, its fitting on labelled data is ``scoring.fitting``'s and its stored form
``scoring.calibration_file``'s.

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
   weight: the probability at even prior odds, which does not depend on how many relevant
   passages the labelled corpora happen to hold and on which the gate and every threshold
   were chosen. The score a reader sees is that probability, gate applied, read at the
   labelled data's prior (``at_prior``): a second logistic of its logit, ``reading``, fitted
   with each set's relevant candidates weighing their share (about one in 111 for the shipped
   model). Read at even odds, a fragment that merely tops an unrelated background would score
   0.95; read at the prior, about 0.05, while a hit far above its background stays near 1.

4. **Phrase gate.** Tail evidence is relative: the best of any candidate list stands out from
   its own background about as much as chance allows (its evidence is about 0 whatever the
   phrase), so on a small corpus the nearest fragment of a phrase about an absent topic scores
   like a relevant one. A second logistic, ``Gate``, reads the cosine of the phrase's best
   candidate and the lexical share (``lexical.lexical_share``: the largest share of the phrase's
   words found in one of its candidates, read with ``tokens.lexical_words``) as the probability
   that the corpus holds anything relevant to it at all, and every hit's probability is
   multiplied by it. A hard relevant passage shares the phrase's words; an absent topic's
   nearest fragment, as similar by cosine, does not. It is fitted on labelled queries (they have
   a relevant passage) against absent topics built from the same data (the queries with every
   passage of their subject removed from the corpus), both weighing the same: how similar an
   unrelated best hit is, is a property of the embedding model, so ``thalabus-graph calibrate``
   keeps the model's shipped gate. A gate without a share slope reads the cosine alone. Two
   signals that need no shared word lift it (``gate_of``): the cosine-only ``foreign_gate`` of
   the best candidate in another language than the best one's (``Background.other``: a topic the
   corpus holds only in other languages), and a short phrase one candidate holds whole
   (``Background.lexical``, ``lexical.covers``), which passes. A phrase without a word of
   ``tokens.SHARE_MIN_LETTERS`` letters reads all its words (``lexical.phrase_words``), a script
   written without spaces its character bigrams (``tokens.lexical_words``).

5. **Order kept exactly.** The logistic saturates (a hit far above its background gets 1.0 in
   floating point), so the score is ``(1 - RAW_WEIGHT) x P + RAW_WEIGHT x (1 + cosine) / 2``:
   a millionth of the index score keeps saturated hits in the index's order, and moves a
   threshold by at most 1e-6 (well under ``MIN_SCORE``, 0.0026).

For one phrase and one background the score is strictly increasing in the cosine
(``slope > 0`` and ``sigma > 0``; the gate is one factor per phrase), so it never changes the
order of the hits read against it;
scores of different phrases become comparable. A calibration is stored as JSON
(``scoring.calibration_file``); the package ships one per embedding model
(``resources/calibration/<model>.json``) and ``thalabus-graph calibrate`` fits one on a user's
own labelled data (``scoring.fitting``). The search reads a phrase through one background and
the ``default`` map (``scoring.scale``); maps of other source families are kept for callers
of ``score``.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from statistics import NormalDist
from typing import Any

from thalabus_graph.errors import ConfigurationError

DEFAULT_SOURCE = "default"
"""The source-family key used for a source without its own map."""
DEFAULT_SKIP = 20
"""Best ranks left out of the background fit (they are where relevant hits sit)."""
MIN_SIGMA = 1e-3
"""Smallest background spread (cosine units): a flat candidate list is not infinitely sure."""
RAW_WEIGHT = 1e-6
"""Share of the index score in a calibrated score (keeps saturated hits in order; far below
the smallest threshold a calibrated score is read against)."""
LANGUAGE_MATTERS = 0.01
"""How much more lenient the foreign gate must be before a phrase's language is read: a gate
that moves by less changes a calibrated score by less than that (scores near 1.0 stay there)."""
_NORMAL = NormalDist()
_TAIL_FLOOR = 1e-300


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
    phrase's lexical share among the candidates (``lexical.lexical_share``; None: not known);
    ``foreign``: the phrase is in a language the graph's text lacks, so its words cannot be
    found there and ``Calibration.foreign_gate`` judges it too; ``other``: the best cosine
    among candidates in another language than the best candidate's (None: none, or languages
    not known), which ``foreign_gate`` judges too (a phrase whose relevant fragments are in
    other languages shares no words with them); ``lexical``: a candidate holds every word of
    the short phrase (``lexical.covers``), so the gate lets it through whole."""

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


def at_prior(p: float, reading: SourceMap | None) -> float:
    """A probability at even prior odds read at the labelled data's prior: ``reading`` of its
    logit (None: as it is); increasing in ``p``, 0 and 1 kept.

    Example:
        >>> round(at_prior(0.5, SourceMap(-4.7, 0.58)), 4), at_prior(0.3, None)
        (0.009, 0.3)
    """
    if reading is None or not 0.0 < p < 1.0:
        return p
    return reading.probability(math.log(p) - math.log1p(-p))


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
        reading: how a probability at even odds reads at the labelled data's prior
            (``at_prior``, ``scoring.fitting.fit_reading``); None reads the maps as fitted.
    """

    model: str
    sources: Mapping[str, SourceMap]
    skip: int = DEFAULT_SKIP
    fitted_on: tuple[str, ...] = ()
    measured: Mapping[str, Any] = field(default_factory=dict)
    gate: Gate | None = None
    foreign_gate: Gate | None = None
    reading: SourceMap | None = None

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
        read once (a phrase calibrates hundreds of hits), the gated probability read at the
        labelled data's prior (``reading``)."""
        mapped, gate, reading = self.map_for(source), self.gate_of(bg), self.reading

        def scored(cosine: float) -> float:
            p = at_prior(mapped.probability(evidence(cosine, bg)) * gate, reading)
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

