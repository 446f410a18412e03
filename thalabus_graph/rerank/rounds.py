"""Dataset reranking in rounds: rerank each round, select per round, merge rounds by fragment id.

Rounds bound what one reranking call carries (``MAX_RERANKING_INPUT_FRAG``); they are not a
relevance limit. `rerank_in_rounds_sync` serves callers without an event loop.
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, runtime_checkable

from thalabus_graph._http import as_service_error
from thalabus_graph.errors import ConfigurationError
from thalabus_graph.rerank._sync import blocking
from thalabus_graph.rerank.policies import (
    ScoredFragment,
    SelectionPolicy,
    ThresholdWithTiers,
    ranked,
)
from thalabus_graph.rerank.protocol import Passage, Reranker, RerankFailure, is_score

T = TypeVar("T")
logger = logging.getLogger(__name__)


@runtime_checkable
class FragmentLike(Protocol):
    """Anything with ``fragmentid``, ``text`` and ``score`` attributes (e.g. a `Fragment`)."""

    @property
    def fragmentid(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def score(self) -> float: ...


CandidateLike = Passage | tuple[str, str, float] | tuple[str, str, None] | FragmentLike
"""A round member: a `Passage`, a ``(fragmentid, text, score)`` tuple or a fragment object
(whose ``documentid``, when it has one, the results keep)."""


@dataclass(frozen=True)
class RoundsResult:
    """The merged outcome of all rounds.

    Attributes:
        fragments: survivors of every round, merged by fragment id (higher score kept), sorted
            by score descending then fragment id, ``score`` being the reranker's; then, after
            a partial failure, the unscored candidates in their retrieved order with their
            retrieval scores (``original_score`` equal to ``score``). At most ``max_output``
            scored fragments; the unscored ones are all kept (nothing judged them).
        reranked: False when the order was inherited (empty query, or no round got a single
            score), True otherwise.
        rounds: how many rounds ran.
        failures: failed batches (and reranker exceptions) of every round.
        unscored_ids: candidates the reranker could not score; they take no part in selection
            and follow every scored fragment.
        tiers: per round, the `ThresholdWithTiers` tier that selected (None for other policies).
        reason: ``no-semantic-query`` | ``failed`` | ``empty`` when ``reranked`` is False;
            ``partial`` when some candidates went unscored; None for a complete rerank.
        scored: how many fragments of ``fragments`` carry a reranker score (the first ones).
        capped: how many selected fragments the ``max_output`` cap removed.

    Example:
        >>> RoundsResult((), reranked=False, reason="no-semantic-query").degraded
        False
    """

    fragments: tuple[ScoredFragment, ...]
    reranked: bool
    rounds: int = 0
    failures: tuple[RerankFailure, ...] = ()
    unscored_ids: tuple[str, ...] = ()
    tiers: tuple[int | None, ...] = ()
    reason: str | None = None
    scored: int = 0
    capped: int = 0

    @property
    def degraded(self) -> bool:
        """True when some candidate went unscored or the reranker failed."""
        return bool(self.failures or self.unscored_ids)

    def to_dicts(self) -> list[dict[str, Any]]:
        """The fragments as plain dicts (see `ScoredFragment.to_dict`)."""
        return [f.to_dict() for f in self.fragments]


def as_passage(candidate: CandidateLike) -> Passage:
    """A `Passage` from a tuple, a `Passage` or an object with fragment attributes (its
    ``documentid`` kept when it has one: a stub's cannot be derived from its id)."""
    if isinstance(candidate, Passage):
        return candidate
    if isinstance(candidate, tuple):
        if len(candidate) != 3:
            raise ConfigurationError(
                f"a candidate tuple is (fragmentid, text, score): {candidate!r}"
            )
        fragmentid, text, score = candidate
        return Passage(str(fragmentid), str(text), None if score is None else float(score))
    documentid = getattr(candidate, "documentid", None)
    return Passage(candidate.fragmentid, candidate.text, candidate.score,
                   documentid if isinstance(documentid, str) and documentid else None)


def rounds_of(candidates: Iterable[T], size: int) -> Iterator[list[T]]:
    """``candidates`` in consecutive rounds of at most ``size``.

    Example:
        >>> [len(r) for r in rounds_of(range(16), 7)]
        [7, 7, 2]
    """
    if size < 1:
        raise ConfigurationError("round size must be at least 1")
    current: list[T] = []
    for c in candidates:
        current.append(c)
        if len(current) == size:
            yield current
            current = []
    if current:
        yield current


async def _iterate(
    rounds: Iterable[Sequence[CandidateLike]] | AsyncIterable[Sequence[CandidateLike]],
) -> AsyncIterable[Sequence[CandidateLike]]:
    if isinstance(rounds, AsyncIterable):
        async for r in rounds:
            yield r
    else:
        for r in rounds:
            yield r


async def rerank_in_rounds(
    rounds: Iterable[Sequence[CandidateLike]] | AsyncIterable[Sequence[CandidateLike]],
    query: str,
    reranker: Reranker,
    policy: SelectionPolicy | None = None,
    *,
    max_output: int | None = None,
    min_output_doc: int = 0,
) -> RoundsResult:
    """Rerank each round with ``reranker``, select with ``policy``, merge rounds, cap.

    ``query`` is the semantic part of the query only. An empty ``query`` keeps the input order
    (first occurrence of each fragment id, retrieval scores) with ``reranked=False``. When no
    candidate of any round gets a score, the input order is kept likewise (``reason`` says
    ``failed`` or ``empty``). Candidates left unscored by a partly failed round are listed in
    ``unscored_ids``, take no part in selection (an unscored fragment is not evidence of
    relevance) and follow every scored fragment in their retrieved order (``reason``
    ``partial``), as the reranking stage orders them.

    ``max_output`` (``MAX_RERANKING_OUTPUT_FRAG``) caps the merged result: the best fragment
    of each of the ``min_output_doc`` best documents is kept first (the diversity the tiers
    guaranteed), then the rest by rank. The cap bounds what the reranker judged: unscored
    candidates are all kept after it, as an inherited order (``reranked=False``) is kept
    whole, since nothing judged them.

    Raises:
        ConfigurationError: raised by the reranker (a misconfiguration, never a degraded
            round) or a bad ``max_output``.

    Example:
        ``result = await rerank_in_rounds(rounds_of(candidates, 5000), '"bob" AND "cat"',
        reranker, ThresholdWithTiers())``
    """
    chosen_policy: SelectionPolicy = policy if policy is not None else ThresholdWithTiers()
    if max_output is not None and max_output < 1:
        raise ConfigurationError("max_output must be at least 1")
    if not query.strip():
        return await _keep_order(rounds, "no-semantic-query")
    merge = _Merge()
    async for members in _iterate(rounds):
        await merge.add_round(members, query, reranker, chosen_policy)
    return merge.result(max_output, min_output_doc)


class _Merge:
    """The rounds of one ``rerank_in_rounds`` call as they are scored: every candidate's
    passage, each fragment's best selected score, the failures, the candidates left unscored
    and each round's tier."""

    def __init__(self) -> None:
        self.merged: dict[str, ScoredFragment] = {}
        self.inputs: dict[str, Passage] = {}
        self.failures: list[RerankFailure] = []
        self.unscored: dict[str, None] = {}
        self.tiers: list[int | None] = []
        self.count = 0
        self.any_scored = False

    async def add_round(self, members: Sequence[CandidateLike], query: str, reranker: Reranker,
                        policy: SelectionPolicy) -> None:
        """Score one round, select with ``policy`` and merge the selection. A round that
        fails leaves its candidates unscored; a ``ConfigurationError`` ends the run."""
        self.count += 1
        passages = _dedupe(as_passage(c) for c in members)
        for p in passages:
            self.inputs.setdefault(p.fragmentid, p)
        if not passages:
            self.tiers.append(None)
            return
        try:
            reply = await reranker.score(query, passages)
        except ConfigurationError:  # misconfiguration: fix the call, do not degrade
            raise
        except Exception as exc:  # one failing round degrades, it does not end the run
            ids = tuple(p.fragmentid for p in passages)
            self.failures.append(RerankFailure(ids, as_service_error(exc)))
            self.unscored.update(dict.fromkeys(ids))
            self.tiers.append(None)
            return
        self.failures.extend(reply.failures)
        scored: list[ScoredFragment] = []
        for p in passages:
            value = reply.scores.get(p.fragmentid)
            if value is None or not is_score(value):
                self.unscored[p.fragmentid] = None
                continue
            scored.append(ScoredFragment(p.fragmentid, p.text, float(value),
                                         original_score=p.score,
                                         documentid=p.documentid or ""))
        self.any_scored = self.any_scored or bool(scored)
        self._select(scored, policy)

    def _select(self, scored: list[ScoredFragment], policy: SelectionPolicy) -> None:
        """Select among a round's scored fragments (with the tier when the policy names one)
        and keep each fragment's best score over the rounds."""
        explain = getattr(policy, "select_explained", None)
        if explain is not None:
            selection = explain(scored)
            selected, tier = selection.fragments, selection.tier
        else:
            selected, tier = policy.select(scored), None
        self.tiers.append(tier)
        for f in selected:
            old = self.merged.get(f.fragmentid)
            if old is None or f.score > old.score:
                self.merged[f.fragmentid] = f

    def result(self, max_output: int | None, min_output_doc: int) -> RoundsResult:
        """The merged ranking capped to ``max_output``, unscored candidates after it; the
        input order when no candidate got a score."""
        scored_anywhere = set(self.merged)
        unscored_ids = tuple(i for i in self.unscored if i not in scored_anywhere)
        if not self.any_scored and self.inputs:
            reason = "failed" if self.failures else "empty"
            logger.warning("rerank: no candidate of %d rounds got a score (%s); order kept",
                           self.count, reason)
            return RoundsResult(
                tuple(_original(p) for p in self.inputs.values()),
                reranked=False,
                rounds=self.count,
                failures=tuple(self.failures),
                unscored_ids=unscored_ids,
                tiers=tuple(self.tiers),
                reason=reason,
            )
        selected = ranked(list(self.merged.values()))
        kept = _cap(selected, max_output, min_output_doc)
        tail = [_original(self.inputs[i]) for i in unscored_ids]
        if unscored_ids:
            logger.warning("rerank: %d of %d candidates unscored (%d failed batches); they "
                           "follow the scored ones", len(unscored_ids), len(self.inputs),
                           len(self.failures))
        logger.info("rerank: %d rounds, %d candidates, %d selected, %d kept after the cap",
                    self.count, len(self.inputs), len(selected), len(kept))
        return RoundsResult(
            tuple(kept + tail),
            reranked=True,
            rounds=self.count,
            failures=tuple(self.failures),
            unscored_ids=unscored_ids,
            tiers=tuple(self.tiers),
            reason="partial" if unscored_ids else None,
            scored=len(kept),
            capped=len(selected) - len(kept),
        )


def _cap(order: list[ScoredFragment], cap: int | None, min_docs: int) -> list[ScoredFragment]:
    """At most ``cap`` of ``order`` (ranked): the best fragment of each of the ``min_docs``
    best documents first, then the rest by rank; the result stays ranked."""
    if cap is None or len(order) <= cap:
        return order
    keep: list[str] = []
    seen: set[str] = set()
    for f in order:
        if len(seen) >= min(min_docs, cap):
            break
        if f.documentid not in seen:
            seen.add(f.documentid)
            keep.append(f.fragmentid)
    chosen = set(keep)
    for f in order:
        if len(chosen) >= cap:
            break
        chosen.add(f.fragmentid)
    return [f for f in order if f.fragmentid in chosen]


async def _keep_order(
    rounds: Iterable[Sequence[CandidateLike]] | AsyncIterable[Sequence[CandidateLike]],
    reason: str,
) -> RoundsResult:
    seen: dict[str, Passage] = {}
    count = 0
    async for members in _iterate(rounds):
        count += 1
        for c in members:
            p = as_passage(c)
            seen.setdefault(p.fragmentid, p)
    return RoundsResult(
        tuple(_original(p) for p in seen.values()), reranked=False, rounds=count, reason=reason
    )


def _original(p: Passage) -> ScoredFragment:
    score = p.score if p.score is not None and math.isfinite(p.score) else 0.0
    return ScoredFragment(p.fragmentid, p.text, score, original_score=p.score,
                          documentid=p.documentid or "")


def _dedupe(passages: Iterable[Passage]) -> list[Passage]:
    out: dict[str, Passage] = {}
    for p in passages:
        out.setdefault(p.fragmentid, p)
    return list(out.values())


rerank_in_rounds_sync = blocking(rerank_in_rounds, """`rerank_in_rounds` for synchronous callers.

Runs its own event loop; called from a thread that already runs one, it uses a worker
thread instead of failing.

Example:
    >>> from thalabus_graph.rerank import NoReranking, TopK
    >>> result = rerank_in_rounds_sync([[("d-1-c1", "text", 0.4)]], "cat", NoReranking(),
    ...                                TopK(5))
    >>> [(f.fragmentid, f.score) for f in result.fragments]
    [('d-1-c1', 0.4)]
""")


def rerank_fragments(
    candidates: Iterable[CandidateLike],
    query: str,
    reranker: Reranker,
    policy: SelectionPolicy | None = None,
    *,
    round_size: int = 5000,
) -> RoundsResult:
    """Synchronously rerank a flat list of ``(fragmentid, text, score)`` in rounds.

    Example:
        >>> from thalabus_graph.rerank import NoReranking, TopK
        >>> rerank_fragments([("d-1-c1", "a", 0.1), ("d-2-c1", "b", 0.3)], "q",
        ...                  NoReranking(), TopK(1)).fragments[0].fragmentid
        'd-2-c1'
    """
    return rerank_in_rounds_sync(rounds_of(candidates, round_size), query, reranker, policy)

__all__ = [
    "CandidateLike",
    "FragmentLike",
    "RoundsResult",
    "as_passage",
    "rerank_fragments",
    "rerank_in_rounds",
    "rerank_in_rounds_sync",
    "rounds_of",
]
