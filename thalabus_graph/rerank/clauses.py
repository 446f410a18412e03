"""Per-clause reranking: each positive semantic clause scored on its own, combined by an AND rule.

A query with several semantic clauses (``"religious conversion" AND "interview
contradictions"``) is by default reranked with its clauses joined into one text. Per clause,
the reranker scores every passage against every clause and the scores are combined with an AND
rule, the geometric mean or the minimum of the clause scores (``policies.combine_clause_scores``,
min-max normalised per clause), never their maximum: an AND asks for joint evidence, and a
maximum would reward a passage that matches one clause only.

`PerClauseReranker` is itself a `Reranker`, so dataset reranking (in rounds) and the reranking
stage use it without knowing it is there, and degrade the same way: a passage some clause could
not score has no joint evidence and stays unscored (``partial``); a clause whose call fails
entirely leaves every passage unscored (``failed``, the retrieved order kept). Nothing raises
but a `ConfigurationError`, which is a misconfiguration.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Final

from thalabus_graph._http import as_service_error
from thalabus_graph.errors import ConfigurationError
from thalabus_graph.rerank.policies import combine_clause_scores
from thalabus_graph.rerank.protocol import (
    NoReranking,
    Passage,
    Reranker,
    RerankFailure,
    RerankReply,
    is_score,
)
from thalabus_graph.settings import RERANK_CLAUSES
from thalabus_graph.settings import RerankClauses as ClauseMode

CLAUSE_MODES: Final[tuple[ClauseMode, ...]] = RERANK_CLAUSES
"""How a multi-clause query is reranked: ``joined`` (the clauses joined by " AND " into one
reranker query), ``geometric`` or ``minimum`` (per clause, combined by that AND rule); the
values of ``Settings.rerank_clauses`` and of the ``rerank --clauses`` option."""


def check_mode(mode: str) -> ClauseMode:
    """``mode`` as a `ClauseMode`, or a `ConfigurationError` naming the choices.

    Example:
        >>> check_mode("minimum")
        'minimum'
    """
    for known in CLAUSE_MODES:
        if mode == known:
            return known
    raise ConfigurationError(f"rerank clauses must be one of {', '.join(CLAUSE_MODES)}, "
                             f"not {mode!r}")


def clause_reranker(reranker: Reranker, clauses: Sequence[str], mode: str) -> Reranker:
    """The reranker to use for ``clauses`` under ``mode``: ``reranker`` itself for ``joined``,
    fewer than two clauses (nothing to combine) or `NoReranking` (nothing scores a clause);
    else a `PerClauseReranker`.

    Example:
        >>> type(clause_reranker(NoReranking(), ["a", "b"], "geometric")).__name__
        'NoReranking'

    Raises:
        ConfigurationError: an unknown mode.
    """
    rule = check_mode(mode)
    if rule == "joined" or len(clauses) < 2 or isinstance(reranker, NoReranking):
        return reranker
    return PerClauseReranker(reranker, tuple(clauses), rule)


class PerClauseReranker:
    """A `Reranker` that scores passages against each clause and combines by an AND rule.

    The ``query`` it is called with (the joined clauses, for logs and traces) is not sent: each
    clause is, concurrently. Per clause the scores are min-max normalised over the passages
    of the call, combined (``geometric`` mean or ``minimum``) for the passages every clause
    scored, and put back on the reranker's scale (the lowest to the highest score any clause
    gave in the call), so thresholds such as ``MIN_RERANKING_SCORE_FRAG`` still read a reranker
    score. Usage counters are summed over the clauses; failures of every clause are reported.

    Example:
        >>> import asyncio
        >>> class Overlap:
        ...     available = True
        ...     async def score(self, query, passages):
        ...         words = set(query.split())
        ...         return RerankReply({p.fragmentid: len(words & set(p.text.split())) / 2
        ...                             for p in passages})
        >>> both = PerClauseReranker(Overlap(), ("red cat", "big dog"), "minimum")
        >>> reply = asyncio.run(both.score("red cat AND big dog", [
        ...     Passage("a", "red cat big dog"), Passage("b", "red cat"),
        ...     Passage("c", "big dog")]))
        >>> sorted(reply.scores.items())
        [('a', 1.0), ('b', 0.0), ('c', 0.0)]

    Raises:
        ConfigurationError: fewer than two clauses, or an unknown rule (``joined`` is no
            per-clause rule).
    """

    def __init__(self, inner: Reranker, clauses: Sequence[str], rule: str) -> None:
        if len(clauses) < 2:
            raise ConfigurationError("per-clause reranking needs at least two clauses")
        if check_mode(rule) == "joined":
            raise ConfigurationError("per-clause reranking combines by 'geometric' or "
                                     "'minimum', not 'joined'")
        self.inner = inner
        self.clauses = tuple(clauses)
        self.rule = rule
        self.billable: bool = getattr(inner, "billable", True)

    @property
    def available(self) -> bool:
        """Whether the wrapped reranker can serve calls."""
        return self.inner.available

    async def score(self, query: str, passages: Sequence[Passage]) -> RerankReply:
        """Score ``passages`` against every clause and combine (``query`` is not sent)."""
        if not passages:
            return RerankReply()
        replies = await asyncio.gather(
            *(self.inner.score(c, passages) for c in self.clauses), return_exceptions=True)
        tables: list[dict[str, float]] = []
        failures: list[RerankFailure] = []
        usage: dict[str, int] = {}
        ids = tuple(p.fragmentid for p in passages)
        for reply in replies:
            if isinstance(reply, ConfigurationError):  # misconfiguration: never degrade
                raise reply
            if isinstance(reply, BaseException):
                if not isinstance(reply, Exception):  # cancellation and the like propagate
                    raise reply
                failures.append(RerankFailure(ids, as_service_error(reply)))
                tables.append({})
                continue
            failures.extend(reply.failures)
            for key, value in reply.usage.items():
                usage[key] = usage.get(key, 0) + int(value)
            tables.append({i: float(s) for i, s in reply.scores.items()
                           if i in ids and is_score(s)})
        return RerankReply(scores=combined_on_scale(tables, self.rule),
                           failures=tuple(failures), usage=usage)


def combined_on_scale(tables: Sequence[Mapping[str, float]], rule: str) -> dict[str, float]:
    """Per-clause score tables combined by ``rule`` (normalised per clause) and mapped back onto
    the span of every score given, ``low + combined * (high - low)``; ids some clause lacks get
    no score.

    Example:
        >>> combined_on_scale([{"a": 0.02, "b": 0.06}, {"a": 0.05, "b": 0.04}], "minimum")
        {'a': 0.02, 'b': 0.02}
    """
    combined = combine_clause_scores(tables, rule=rule)
    if not combined:
        return {}
    values = [v for t in tables for v in t.values()]
    low, high = min(values), max(values)
    return {i: low + c * (high - low) for i, c in combined.items()}


__all__ = [
    "CLAUSE_MODES",
    "ClauseMode",
    "PerClauseReranker",
    "check_mode",
    "clause_reranker",
    "combined_on_scale",
]
