"""Selection policies: which reranked fragments survive a round, plus clause-combination rules.

Every policy is an object with one method, ``select(scored) -> list``; its output is a subset of
its input sorted by score descending, then fragment id (plain string order).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from thalabus_graph.errors import ConfigurationError
from thalabus_graph.fragments import document_id_of
from thalabus_graph.settings import Settings


@dataclass(frozen=True)
class ScoredFragment:
    """A fragment with its reranker score; ``documentid`` defaults to the fragment id's head.

    Attributes:
        score: the reranker's score.
        original_score: the retrieval score it arrived with, kept for inspection only.

    Example:
        >>> f = ScoredFragment("docid-7-c2", "text", 0.04, original_score=0.71)
        >>> f.documentid, f.score
        ('docid-7', 0.04)
    """

    fragmentid: str
    text: str
    score: float
    original_score: float | None = None
    documentid: str = field(default="")

    def __post_init__(self) -> None:
        if not self.documentid:
            object.__setattr__(self, "documentid", document_id_of(self.fragmentid))

    def to_dict(self) -> dict[str, Any]:
        """A plain dict: fragmentid, documentid, text, score, ranking, original_score.

        ``ranking`` repeats ``score`` under the name the reranking service's JSON carries; it
        exists only in this JSON form, so the CLI's output keeps its shape.
        """
        return {
            "fragmentid": self.fragmentid,
            "documentid": self.documentid,
            "text": self.text,
            "score": self.score,
            "ranking": self.score,
            "original_score": self.original_score,
        }


def order_key(fragment: ScoredFragment) -> tuple[float, str]:
    """Sort key: score descending, then fragment id."""
    return (-fragment.score, fragment.fragmentid)


def ranked(scored: Sequence[ScoredFragment]) -> list[ScoredFragment]:
    """``scored`` sorted by score descending, then fragment id."""
    return sorted(scored, key=order_key)


@runtime_checkable
class SelectionPolicy(Protocol):
    """Chooses which scored fragments survive; returns them sorted (score desc, id)."""

    def select(self, scored: Sequence[ScoredFragment]) -> list[ScoredFragment]:
        """The surviving fragments, best first."""
        ...


@dataclass(frozen=True)
class Selection:
    """A policy's answer with the tier that produced it (1 threshold, 2 diversity)."""

    fragments: list[ScoredFragment]
    tier: int
    safety_net_added: int = 0


@dataclass(frozen=True)
class ThresholdWithTiers:
    """The default: an absolute threshold with the three diversity tiers.

    1. Keep every fragment scoring at least ``min_score``.
    2. If none passes: the best ``min_output_frag`` fragments; when they cover fewer than
       ``min_output_doc`` documents, the best fragment of each further document (by score)
       joins until they do; at most ``max_output_frag`` fragments, dropping the lowest-scoring
       fragments of already covered documents first.
    3. Safety net, after either tier: the result covers at least ``min_output_doc`` documents
       (or every document of the input, if it has fewer), adding the best fragment of each
       missing document in score order.

    Example:
        >>> policy = ThresholdWithTiers(min_score=0.2, min_output_frag=2, min_output_doc=2)
        >>> [f.fragmentid for f in policy.select([ScoredFragment("a-1", "", 0.05),
        ...  ScoredFragment("a-2", "", 0.04), ScoredFragment("b-1", "", 0.01)])]
        ['a-1', 'a-2', 'b-1']
    """

    min_score: float = 0.02
    min_output_frag: int = 50
    max_output_frag: int = 100
    min_output_doc: int = 5

    def __post_init__(self) -> None:
        if self.min_output_frag < 0 or self.min_output_doc < 0:
            raise ConfigurationError("min_output_frag and min_output_doc must not be negative")
        if self.max_output_frag < 1:
            raise ConfigurationError("max_output_frag must be at least 1")

    @classmethod
    def from_settings(cls, settings: Settings) -> ThresholdWithTiers:
        """The policy with the ``*_reranking_*`` values of a `Settings`."""
        return cls(
            min_score=settings.min_reranking_score_frag,
            min_output_frag=settings.min_reranking_output_frag,
            max_output_frag=settings.max_reranking_output_frag,
            min_output_doc=settings.min_reranking_output_doc,
        )

    def select(self, scored: Sequence[ScoredFragment]) -> list[ScoredFragment]:
        """The surviving fragments, best first."""
        return self.select_explained(scored).fragments

    def select_explained(self, scored: Sequence[ScoredFragment]) -> Selection:
        """Like `select`, saying which tier ran and how many fragments the safety net added."""
        order = ranked(scored)
        passing = [f for f in order if f.score >= self.min_score]
        if passing:
            chosen, tier = passing, 1
        else:
            chosen, tier = self._diversity_tier(order), 2
        result, added = self._safety_net(order, chosen)
        return Selection(ranked(result), tier, added)

    def _diversity_tier(self, order: list[ScoredFragment]) -> list[ScoredFragment]:
        top = order[: self.min_output_frag]
        covered = {f.documentid for f in top}
        extra: list[ScoredFragment] = []
        for f in order[self.min_output_frag :]:
            if len(covered) >= self.min_output_doc:
                break
            if f.documentid not in covered:
                covered.add(f.documentid)
                extra.append(f)
        chosen = top + extra
        if len(chosen) <= self.max_output_frag:
            return chosen
        return _cap_keeping_documents(ranked(chosen), self.max_output_frag)

    def _safety_net(
        self, order: list[ScoredFragment], chosen: list[ScoredFragment]
    ) -> tuple[list[ScoredFragment], int]:
        all_docs = {f.documentid for f in order}
        target = min(self.min_output_doc, len(all_docs))
        covered = {f.documentid for f in chosen}
        if len(covered) >= target:
            return chosen, 0
        added: list[ScoredFragment] = []
        for f in order:
            if len(covered) >= target:
                break
            if f.documentid not in covered:
                covered.add(f.documentid)
                added.append(f)
        return chosen + added, len(added)


def _cap_keeping_documents(order: list[ScoredFragment], cap: int) -> list[ScoredFragment]:
    """At most ``cap`` fragments of ``order``: each document's best first, then by rank."""
    firsts: list[ScoredFragment] = []
    seen: set[str] = set()
    for f in order:
        if f.documentid not in seen:
            seen.add(f.documentid)
            firsts.append(f)
    keep = {f.fragmentid for f in firsts[:cap]}
    for f in order:
        if len(keep) >= cap:
            break
        keep.add(f.fragmentid)
    return [f for f in order if f.fragmentid in keep]


@dataclass(frozen=True)
class TopK:
    """The ``k`` best fragments.

    Example:
        >>> [f.fragmentid for f in TopK(1).select([ScoredFragment("a-1", "", 0.1),
        ...                                         ScoredFragment("b-1", "", 0.3)])]
        ['b-1']
    """

    k: int = 10

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ConfigurationError("TopK needs k >= 1")

    def select(self, scored: Sequence[ScoredFragment]) -> list[ScoredFragment]:
        """The ``k`` best fragments, best first."""
        return ranked(scored)[: self.k]


@dataclass(frozen=True)
class Percentile:
    """Fragments scoring at or above the ``percentile``-th percentile of this query's scores.

    ``Percentile(90)`` keeps roughly the best tenth (nearest-rank percentile; ties at the cut
    all stay). A non-empty input keeps at least one fragment.

    Example:
        >>> frags = [ScoredFragment(f"d-{i}", "", i / 10) for i in range(10)]
        >>> [f.fragmentid for f in Percentile(80).select(frags)]
        ['d-9', 'd-8', 'd-7']
    """

    percentile: float = 90.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.percentile <= 100.0:
            raise ConfigurationError("percentile must lie in [0, 100]")

    def select(self, scored: Sequence[ScoredFragment]) -> list[ScoredFragment]:
        """Fragments at or above the cut, best first."""
        if not scored:
            return []
        values = sorted(f.score for f in scored)
        rank = max(1, math.ceil(self.percentile / 100.0 * len(values)))
        cut = values[rank - 1]
        return [f for f in ranked(scored) if f.score >= cut]


@dataclass(frozen=True)
class ScoreGap:
    """Cut where the score drops most between neighbours, within ``[min_keep, max_keep]``.

    Example:
        >>> frags = [ScoredFragment("a-1", "", 0.9), ScoredFragment("a-2", "", 0.85),
        ...          ScoredFragment("b-1", "", 0.2)]
        >>> [f.fragmentid for f in ScoreGap().select(frags)]
        ['a-1', 'a-2']
    """

    min_keep: int = 1
    max_keep: int | None = None

    def __post_init__(self) -> None:
        if self.min_keep < 1:
            raise ConfigurationError("ScoreGap needs min_keep >= 1")
        if self.max_keep is not None and self.max_keep < self.min_keep:
            raise ConfigurationError("ScoreGap needs max_keep >= min_keep")

    def select(self, scored: Sequence[ScoredFragment]) -> list[ScoredFragment]:
        """The fragments before the largest gap, best first."""
        order = ranked(scored)
        limit = len(order) if self.max_keep is None else min(self.max_keep, len(order))
        if limit <= self.min_keep:
            return order[:limit]
        best_cut, best_gap = limit, -1.0
        # cutting after position i (keeping i + 1 fragments) for i + 1 in [min_keep, limit)
        for i in range(self.min_keep - 1, limit - 1):
            gap = order[i].score - order[i + 1].score
            if gap > best_gap:
                best_cut, best_gap = i + 1, gap
        return order[:best_cut]


@dataclass(frozen=True)
class PerQueryNormalised:
    """Min-max normalise the scores within this query, then keep those at or above ``threshold``.

    Output fragments keep their raw scores. When every score is equal, all are kept.

    Example:
        >>> frags = [ScoredFragment("a-1", "", 0.02), ScoredFragment("b-1", "", 0.06),
        ...          ScoredFragment("c-1", "", 0.05)]
        >>> [f.fragmentid for f in PerQueryNormalised(0.5).select(frags)]
        ['b-1', 'c-1']
    """

    threshold: float = 0.5

    def __post_init__(self) -> None:
        if not 0.0 <= self.threshold <= 1.0:
            raise ConfigurationError("threshold must lie in [0, 1]")

    def select(self, scored: Sequence[ScoredFragment]) -> list[ScoredFragment]:
        """Fragments whose normalised score reaches the threshold, best first."""
        if not scored:
            return []
        low = min(f.score for f in scored)
        high = max(f.score for f in scored)
        if high == low:
            return ranked(scored)
        span = high - low
        return [f for f in ranked(scored) if (f.score - low) / span >= self.threshold]


# --- per-clause combination rules ------------------------------------------------------------


def normalise_min_max(scores: Mapping[str, float]) -> dict[str, float]:
    """Scores rescaled to [0, 1] within this mapping; all equal -> all 1.0.

    Example:
        >>> normalise_min_max({"a": 0.02, "b": 0.06})
        {'a': 0.0, 'b': 1.0}
    """
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    if high == low:
        return dict.fromkeys(scores, 1.0)
    return {k: (v - low) / (high - low) for k, v in scores.items()}


def geometric_mean(values: Sequence[float], weights: Sequence[float] | None = None) -> float:
    """Weighted geometric mean of values in [0, 1] (clamped); any 0 gives 0.

    Example:
        >>> round(geometric_mean([0.25, 1.0]), 3)
        0.5
    """
    if not values:
        raise ConfigurationError("geometric_mean needs at least one value")
    w = list(weights) if weights is not None else [1.0] * len(values)
    if len(w) != len(values) or any(x < 0 for x in w) or sum(w) <= 0:
        raise ConfigurationError("weights must match the values, be >= 0 and not all 0")
    total = 0.0
    for value, weight in zip(values, w, strict=True):
        v = min(max(value, 0.0), 1.0)
        if v == 0.0 and weight > 0:
            return 0.0
        if weight > 0:
            total += weight * math.log(v)
    return math.exp(total / sum(w))


def weighted_minimum(values: Sequence[float], weights: Sequence[float] | None = None) -> float:
    """Minimum of ``v + (1 - w) * (1 - v)`` over clauses (plain minimum with unit weights).

    A weight below 1 softens how much a weak clause drags the result down.

    Example:
        >>> weighted_minimum([0.2, 0.9])
        0.2
    """
    if not values:
        raise ConfigurationError("weighted_minimum needs at least one value")
    w = list(weights) if weights is not None else [1.0] * len(values)
    if len(w) != len(values) or any(not 0.0 <= x <= 1.0 for x in w):
        raise ConfigurationError("weights must match the values and lie in [0, 1]")
    return min(
        value + (1.0 - weight) * (1.0 - value) for value, weight in zip(values, w, strict=True)
    )


def combine_clause_scores(
    per_clause: Sequence[Mapping[str, float]],
    *,
    rule: str = "geometric",
    normalise: bool = True,
    weights: Sequence[float] | None = None,
) -> dict[str, float]:
    """Combine per-clause reranker scores with an AND rule: ``geometric`` or ``minimum``.

    Each clause's scores are min-max normalised first (``normalise=True``) so that clauses on
    different scales weigh alike. An id missing from any clause has no joint evidence and gets
    no combined score. There is deliberately no ``max`` rule: it would reward a fragment
    matching only one clause.

    Example:
        >>> combine_clause_scores([{"a": 0.1, "b": 0.3}, {"a": 0.9, "b": 0.1}], rule="minimum")
        {'a': 0.0, 'b': 0.0}
        >>> combine_clause_scores([{"a": 0.5}, {"a": 0.5}], normalise=False)
        {'a': 0.5}
    """
    if rule not in ("geometric", "minimum"):
        raise ConfigurationError(f"rule must be 'geometric' or 'minimum', not {rule!r}")
    if not per_clause:
        return {}
    tables = [normalise_min_max(c) if normalise else dict(c) for c in per_clause]
    common = set(tables[0]).intersection(*tables[1:])
    combine = geometric_mean if rule == "geometric" else weighted_minimum
    return {i: combine([t[i] for t in tables], weights) for i in sorted(common)}
