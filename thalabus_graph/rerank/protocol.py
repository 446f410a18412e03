"""The `Reranker` protocol: what every reranking backend takes and returns.

A reranker reads a query and passages together and answers with a score per passage id; ids it
could not score are simply missing from the reply, and failures are reported, never raised.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol, runtime_checkable

from thalabus_graph.errors import ServiceError, ServiceReplyError, ServiceTimeout


class Passage(NamedTuple):
    """One passage to score: its fragment id, its text and the score retrieval gave it.

    ``documentid`` is the document it belongs to, when the caller read it: a reranker never
    looks at it, but the results built from the passage carry it, and a category stub's id
    (its document's id) has no fragment suffix to derive it from. None: derived from the id.

    Example:
        >>> Passage("docid-1-c1", "Bob the cat sleeps.", 0.71).fragmentid
        'docid-1-c1'
    """

    fragmentid: str
    text: str
    score: float | None = None
    documentid: str | None = None


@dataclass(frozen=True)
class RerankFailure:
    """A batch that yielded no scores: which passage ids it held and why.

    Example:
        >>> RerankFailure(("a",), ServiceTimeout("slow")).passage_ids
        ('a',)
    """

    passage_ids: tuple[str, ...]
    error: ServiceError


@dataclass(frozen=True)
class RerankReply:
    """What a reranker answered: a score per passage id it could score (others missing).

    Attributes:
        scores: passage id -> reranker score (uncalibrated; only the order within one reply
            is meaningful).
        failures: batches that gave no scores, with the error of each; never raised.
        usage: counters the backend reported (``requests``, ``total_tokens`` ...).
        passthrough: the backend kept the given order on purpose (`NoReranking`); its scores
            are the passages' own scores.

    Example:
        >>> reply = RerankReply({"a": 0.3})
        >>> reply.ok
        True
    """

    scores: Mapping[str, float] = field(default_factory=dict)
    failures: tuple[RerankFailure, ...] = ()
    usage: Mapping[str, int] = field(default_factory=dict)
    passthrough: bool = False

    @property
    def ok(self) -> bool:
        """True when no batch failed."""
        return not self.failures

    @property
    def errors(self) -> tuple[ServiceError, ...]:
        """The error of each failed batch."""
        return tuple(f.error for f in self.failures)

    def raise_for_failures(self) -> None:
        """Raise the first failure's error, for callers that want strictness."""
        if self.failures:
            raise self.failures[0].error

    def failure_kind(self) -> str | None:
        """``timeout`` when every failure timed out, ``invalid`` when every failure was a bad
        reply, ``failed`` otherwise; None when nothing failed."""
        if not self.failures:
            return None
        if all(isinstance(e, ServiceTimeout) for e in self.errors):
            return "timeout"
        if all(isinstance(e, ServiceReplyError) for e in self.errors):
            return "invalid"
        return "failed"


@runtime_checkable
class Reranker(Protocol):
    """Anything that scores passages against a query.

    ``available`` is False for a backend that knows it cannot serve (the reranking stage then
    refuses it at construction). ``score`` never raises for a service failure: it reports it in
    ``RerankReply.failures`` and leaves the affected ids unscored.
    """

    @property
    def available(self) -> bool:
        """Whether this backend can serve calls at all."""
        ...

    async def score(self, query: str, passages: Sequence[Passage]) -> RerankReply:
        """Score ``passages`` against ``query``."""
        ...


class NoReranking:
    """The identity reranker: keeps the given order, costs nothing.

    Its reply is a passthrough whose scores are the passages' own scores (passages without a
    score are left unscored), so a policy can still select on them.

    Example:
        >>> import asyncio
        >>> reply = asyncio.run(NoReranking().score("q", [Passage("a", "t", 0.5)]))
        >>> reply.passthrough, dict(reply.scores)
        (True, {'a': 0.5})
    """

    billable = False
    """Costs nothing: the reranking stage does not charge it to a budget."""

    @property
    def available(self) -> bool:
        """Always True."""
        return True

    async def score(self, query: str, passages: Sequence[Passage]) -> RerankReply:
        """Return the passages' own scores, marked as a passthrough."""
        scores = {
            p.fragmentid: float(p.score)
            for p in passages
            if p.score is not None and math.isfinite(p.score)
        }
        return RerankReply(scores=scores, passthrough=True)


def clip(text: str, max_chars: int) -> str:
    """``text`` cut to at most ``max_chars`` characters (no cut when ``max_chars`` < 1)."""
    return text if max_chars < 1 or len(text) <= max_chars else text[:max_chars]


def is_score(value: object) -> bool:
    """True for a finite real number (int, float, numpy scalar) that is not a bool."""
    return (
        isinstance(value, numbers.Real)
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    )
