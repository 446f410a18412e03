"""The reranking stage: `RerankingRetriever` wraps any `Retriever` and reorders its hits.

The candidate set is bounded at construction; budget exhaustion, timeouts, failures and empty
or invalid replies degrade to the retrieved order (``reranked=False``) with a trace event.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field, replace
from typing import Any, Literal, Protocol, get_args, runtime_checkable

from thalabus_graph.errors import CapabilityError, ConfigurationError
from thalabus_graph.fragments import document_id_of
from thalabus_graph.rerank.budget import BudgetPolicy
from thalabus_graph.rerank.clauses import PerClauseReranker, check_mode, clause_reranker
from thalabus_graph.rerank.protocol import NoReranking, Passage, Reranker, RerankReply, is_score
from thalabus_graph.rerank.tracing import DEGRADED, RERANK_SPAN, RERANKED, Span, Tracer

DegradeReason = Literal["budget", "timeout", "failed", "empty", "no-semantic-query"]
"""Why the stage kept the retrieved order (see `DEGRADE_REASONS`)."""
DEGRADE_REASONS: tuple[DegradeReason, ...] = get_args(DegradeReason)
"""The ``reason`` values of a ``thalabus.rerank.degraded`` event (``no-semantic-query``: the
inner retriever said the query has nothing to rerank against, so the reranker is not called)."""

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk.

    ``chunk_id`` / ``document_id`` are the reranking stage's public names (its behavioural
    spec fixes them); everywhere else the same ids are ``fragmentid`` / ``documentid``
    (docs/architecture.md, "Vocabulary"). The names change only at this boundary.

    Attributes:
        score: what retrieval (fusion) said; never overwritten.
        rerank_score: what the reranker said; None when this hit was not reranked.
        contributions: the branches that found it.
        document: what the retriever knows of the hit's document (``title``, ``language``,
            ``categories``...); empty when it read nothing. Not compared: two hits of the same
            fragment are equal whatever details came with them.

    Example:
        >>> Hit("docid-1-c3", text="...", score=0.7).document_id
        'docid-1'
    """

    chunk_id: str
    document_id: str = ""
    text: str = ""
    score: float = 0.0
    rerank_score: float | None = None
    contributions: tuple[str, ...] = ()
    document: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if not self.document_id:
            object.__setattr__(self, "document_id", document_id_of(self.chunk_id))


@dataclass(frozen=True)
class RetrievalResult:
    """Hits, best first, and whether their order was computed by a reranker.

    Attributes:
        reranked: True when a reranker ordered the hits (also for `NoReranking`); False when
            the order is inherited from the inner retriever.
        degraded_reason: ``budget`` | ``timeout`` | ``failed`` | ``empty`` |
            ``no-semantic-query`` when the stage kept the retrieved order, else None.
        usage: what the reranker reported for this call.
        candidates: how many distinct candidates the stage considered (0 for an inner
            retriever's own result).
        clauses: how the reranker scored the query: ``joined`` or, per clause,
            ``geometric`` | ``minimum``.

    Example:
        >>> RetrievalResult((Hit("d-1", score=0.5),)).reranked
        False
    """

    hits: tuple[Hit, ...] = ()
    reranked: bool = False
    degraded_reason: DegradeReason | None = None
    usage: Mapping[str, int] = field(default_factory=dict)
    candidates: int = 0
    clauses: str = "joined"


@runtime_checkable
class Retriever(Protocol):
    """Anything that retrieves hits for a query."""

    async def retrieve(
        self, query: str, *, scope: Any = None, k: int = 10
    ) -> RetrievalResult:
        """At most ``k`` hits for ``query`` within ``scope``, best first."""
        ...


@runtime_checkable
class RerankQueryRetriever(Retriever, Protocol):
    """A `Retriever` that also says what its query asks the reranker.

    The stage sends ``rerank_query(query)`` to the reranker instead of the raw query text; an
    empty string or None means there is nothing to rerank against (the stage keeps the
    retrieved order, reason ``no-semantic-query``). Retrievers without the method have their
    query sent verbatim. `ThalabusRetriever` answers with the positive semantic clauses only,
    so category predicates and excluded phrases never reach the reranker.
    """

    def rerank_query(self, query: str) -> str | None:
        """The text the reranker scores passages against, or None/"" for none."""
        ...


@runtime_checkable
class ClauseRetriever(Retriever, Protocol):
    """A `Retriever` that also lists its query's clauses for per-clause reranking.

    With ``clauses="geometric"`` or ``"minimum"`` the stage scores every candidate against
    each of ``rerank_clauses(query)`` and combines by that AND rule (`PerClauseReranker`);
    with fewer than two clauses, or an inner retriever without the method, it asks one query.
    """

    def rerank_clauses(self, query: str) -> list[str]:
        """The texts the reranker scores passages against, one per clause."""
        ...


@dataclass(eq=False, repr=False)
class RerankingRetriever:
    """A `Retriever` that asks ``inner`` for ``candidates`` hits and reranks them to ``top_n``.

    Degrades, never fails, on reranker trouble: budget exhausted (the reranker is not called),
    timeout, an exception, or a reply with no usable scores keep the retrieved order with
    ``reranked=False`` and a ``thalabus.rerank.degraded`` trace event naming the reason. A
    `ConfigurationError` from the reranker is a misconfiguration, not a runtime fault: it is
    raised. The reranker is asked the inner retriever's rerank query (`RerankQueryRetriever`);
    a query with nothing to rerank against keeps the order (reason ``no-semantic-query``).
    Cancellation and the inner retriever's errors propagate. A reranker with ``billable =
    False`` (`NoReranking`) is never charged to the budget.

    Order: scored hits by rerank score descending, ties by chunk id; then unscored candidates
    in their retrieved order. Scores for ids that were not candidates are ignored.

    ``clauses`` (``joined`` | ``geometric`` | ``minimum``): with an inner `ClauseRetriever`
    whose query has several clauses, ``geometric`` / ``minimum`` score each candidate against
    every clause (concurrently, within the one timeout and the one budget call) and combine by
    that AND rule; a candidate some clause could not score stays unscored, a clause call that
    fails entirely degrades the whole call (``failed``), as a failing joined call does.

    ``reranker`` defaults to `NoReranking`: ``RerankingRetriever(inner)`` keeps the fused order
    and still reports ``reranked=True`` (each hit's ``rerank_score`` is its fused score), so
    the stage's own overhead can be measured before a reranker is paid for.

    Example:
        >>> stage = RerankingRetriever(inner_retriever, candidates=50, top_n=8)  # doctest: +SKIP
        >>> found = await stage.retrieve("how do I get my money back", k=8)  # doctest: +SKIP
        >>> found.hits[0].rerank_score, found.hits[0].score, found.reranked  # doctest: +SKIP

    Raises:
        ConfigurationError: unless ``candidates >= top_n >= 1`` and ``timeout_seconds > 0``,
            or an unknown ``clauses``.
        CapabilityError: the reranker declares itself unavailable.
    """

    inner: Retriever
    reranker: Reranker = field(default_factory=NoReranking)
    _: KW_ONLY
    candidates: int = 50
    top_n: int = 8
    timeout_seconds: float = 5.0
    budget: BudgetPolicy | None = None
    tracer: Tracer | None = None
    clauses: str = "joined"

    def __post_init__(self) -> None:
        check_mode(self.clauses)
        if not self.candidates >= self.top_n >= 1:
            raise ConfigurationError(
                f"need candidates >= top_n >= 1, got candidates={self.candidates}, "
                f"top_n={self.top_n}"
            )
        if not self.timeout_seconds > 0:
            raise ConfigurationError("timeout_seconds must be positive")
        if not self.reranker.available:
            raise CapabilityError(f"reranker {type(self.reranker).__name__} is not available")

    async def retrieve(self, query: str, *, scope: Any = None, k: int = 10) -> RetrievalResult:
        """At most ``min(k, top_n)`` hits, reranked when possible.

        The reranker sees the inner retriever's `RerankQueryRetriever.rerank_query` when it
        has one (else ``query``). A tracer with spans gets one ``thalabus.rerank`` span per
        call with the attributes ``candidates``, ``kept``, ``reranked``, ``degraded_reason``
        and ``usage.*``.

        Raises:
            ConfigurationError: ``k < 1``, or raised by the reranker (a misconfiguration is
                not a runtime fault: it is never turned into a degraded result).
        """
        if k < 1:
            raise ConfigurationError("k must be at least 1")
        with self._span() as span:
            result = await self._retrieve(query, scope, k)
            if span is not None:
                span.set_attributes(_span_attributes(result))
        return result

    async def _retrieve(self, query: str, scope: Any, k: int) -> RetrievalResult:
        limit = min(k, self.top_n)
        found = await self.inner.retrieve(query, scope=scope, k=self.candidates)
        hits = _unique(found.hits)[: self.candidates]
        if not hits:
            return RetrievalResult((), reranked=False)
        asked = self._rerank_query(query)
        if not asked:
            return self._degrade(hits, limit, "no-semantic-query")
        budget = self.budget if getattr(self.reranker, "billable", True) else None
        if budget is not None and not budget.try_acquire():
            return self._degrade(hits, limit, "budget")
        passages = [Passage(h.chunk_id, h.text, h.score) for h in hits]
        scorer = self._scorer(query)
        reply: RerankReply | None = None
        try:
            async with asyncio.timeout(self.timeout_seconds):
                reply = await scorer.score(asked, passages)
        except TimeoutError:
            return self._degrade(hits, limit, "timeout")
        except ConfigurationError:  # misconfiguration: fix the call, do not degrade
            raise
        except Exception as exc:  # a failing reranker degrades; cancellation propagates
            return self._degrade(hits, limit, "failed", error=repr(exc))
        finally:
            if budget is not None:  # the reserved call is recorded, with what it reported
                budget.record(reply.usage if reply is not None else {})
        mode = scorer.rule if isinstance(scorer, PerClauseReranker) else "joined"
        return replace(self._apply(hits, limit, reply), clauses=mode)

    def _scorer(self, query: str) -> Reranker:
        """The reranker itself, or a `PerClauseReranker` over the inner retriever's clauses."""
        if self.clauses == "joined" or not isinstance(self.inner, ClauseRetriever):
            return self.reranker
        return clause_reranker(self.reranker, self.inner.rerank_clauses(query), self.clauses)

    def _rerank_query(self, query: str) -> str | None:
        """What the reranker is asked: the inner retriever's rerank query when it has one."""
        if isinstance(self.inner, RerankQueryRetriever):
            return self.inner.rerank_query(query)
        return query

    @contextlib.contextmanager
    def _span(self) -> Iterator[Span | None]:
        opener = getattr(self.tracer, "span", None)
        if opener is None:
            yield None
            return
        with opener(RERANK_SPAN) as span:
            yield span

    def _apply(self, hits: list[Hit], limit: int, reply: RerankReply) -> RetrievalResult:
        wanted = {h.chunk_id for h in hits}
        scores = {
            i: float(s) for i, s in reply.scores.items() if i in wanted and is_score(s)
        }
        usage = dict(reply.usage)
        if not scores:
            kind = reply.failure_kind()
            reason: DegradeReason = (
                "timeout" if kind == "timeout" else "failed" if kind == "failed" else "empty")
            errors = "; ".join(str(e) for e in reply.errors)
            return self._degrade(hits, limit, reason, error=errors or None, usage=usage)
        if reply.passthrough:
            ordered = [replace(h, rerank_score=scores.get(h.chunk_id)) for h in hits]
        else:
            scored = sorted(
                (h for h in hits if h.chunk_id in scores),
                key=lambda h: (-scores[h.chunk_id], h.chunk_id),
            )
            ordered = [replace(h, rerank_score=scores[h.chunk_id]) for h in scored]
            ordered += [h for h in hits if h.chunk_id not in scores]
        self._trace(
            RERANKED,
            {
                "candidates": len(hits),
                "scored": len(scores),
                "unscored": len(hits) - len(scores),
                "failures": len(reply.failures),
                "returned": min(limit, len(ordered)),
            },
        )
        return RetrievalResult(tuple(ordered[:limit]), reranked=True, usage=usage,
                               candidates=len(hits))

    def _degrade(
        self,
        hits: list[Hit],
        limit: int,
        reason: DegradeReason,
        *,
        error: str | None = None,
        usage: Mapping[str, int] | None = None,
    ) -> RetrievalResult:
        attributes: dict[str, object] = {"reason": reason, "candidates": len(hits)}
        if error:
            attributes["error"] = error
        self._trace(DEGRADED, attributes)
        logger.info("rerank kept the retrieved order of %d candidates: %s", len(hits), reason)
        kept = tuple(replace(h, rerank_score=None) for h in hits[:limit])
        return RetrievalResult(kept, reranked=False, degraded_reason=reason, usage=usage or {},
                               candidates=len(hits))

    def _trace(self, name: str, attributes: Mapping[str, object]) -> None:
        if self.tracer is not None:
            self.tracer.event(name, attributes)


def _span_attributes(result: RetrievalResult) -> dict[str, object]:
    """The attributes of a ``thalabus.rerank`` span (flat; a None reason is left out)."""
    out: dict[str, object] = {
        "candidates": result.candidates,
        "kept": len(result.hits),
        "reranked": result.reranked,
    }
    if result.degraded_reason is not None:
        out["degraded_reason"] = result.degraded_reason
    for key, value in result.usage.items():
        out[f"usage.{key}"] = value
    return out


def _unique(hits: Sequence[Hit]) -> list[Hit]:
    seen: set[str] = set()
    out: list[Hit] = []
    for h in hits:
        if h.chunk_id not in seen:
            seen.add(h.chunk_id)
            out.append(h)
    return out
