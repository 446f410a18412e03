"""Where a conjunction of category literals starts: its positive literals ordered by their known
document counts, smallest first (``ordered``), so a filter pattern's seeds are its smallest.

A filter pattern (``steps.FilterPattern``) is found from its seeds, the first positive literal
of each conjunction (``FilterPattern.seeds``): the exact search and a pure filter's streamed
statement walk the seed values' documents and check the other literals on each, and the
pattern's count is the seed values' documents summed (``category_vocabulary``). In written
order, ``"p" AND SKEW=v50`` held to ``SKEW=v10`` (``"p" AND (SKEW=v50 AND SKEW=v10)``) walked
the 100,000 documents of the 50% category to find none, where the 10% one has 20,000.

The query's vocabulary read returns how many documents have each (name, value) pair the query
names (``pair_counts``: its Category nodes' degrees, from the count store). A positive
literal's count is the sum over its values (an upper bound: a document may have two of them).
In each conjunction, positive literals with a count come first, smallest first, ties in written
order; positive literals without one (a graph-defined category has no Category node) follow
in written order; negated literals come last, in written order. A conjunction with a positive
literal counted 0 matches no document and is dropped (a filter left with no conjunction
matches nothing). A conjunction's order never changes what it matches, and a dropped one
matched nothing, so the answer is the same; the work is bounded by the smallest literal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TypeAlias

from thalabus_graph.plan.steps import CategoryPattern, FilterPattern

PairCounts: TypeAlias = Mapping[tuple[str, str], int]
"""Documents having each (name, value) pair, as the vocabulary read counted them."""
Conjunction: TypeAlias = tuple[CategoryPattern, ...]

_COUNTED, _UNCOUNTED, _NEGATED = 0, 1, 2


def literal_count(literal: CategoryPattern, counts: PairCounts) -> int | None:
    """Documents having one of ``literal``'s values (the values' counts summed, an upper
    bound), None when a value has no count."""
    found = [counts.get((literal.name, value)) for value in literal.values]
    if any(n is None for n in found):
        return None
    return sum(n for n in found if n is not None)


def ordered_conjunction(conjunction: Conjunction, counts: PairCounts) -> Conjunction | None:
    """``conjunction``'s literals in the order it is walked (see the module), or None when a
    positive literal is counted 0: the conjunction matches no document."""
    keyed: list[tuple[tuple[int, int, int], CategoryPattern]] = []
    for at, literal in enumerate(conjunction):
        n = None if literal.negated else literal_count(literal, counts)
        if n == 0:
            return None
        rank = _NEGATED if literal.negated else _UNCOUNTED if n is None else _COUNTED
        keyed.append(((rank, n or 0, at), literal))
    return tuple(literal for _, literal in sorted(keyed, key=lambda pair: pair[0]))


def ordered(pattern: FilterPattern, counts: PairCounts) -> FilterPattern:
    """``pattern`` with each conjunction's literals ordered by ``counts`` and the conjunctions
    known to be empty dropped (``pattern`` itself when nothing is counted)."""
    if not counts:
        return pattern
    kept = (ordered_conjunction(conjunction, counts) for conjunction in pattern.conjunctions)
    conjunctions = tuple(c for c in kept if c is not None)
    return pattern if conjunctions == pattern.conjunctions else replace(
        pattern, conjunctions=conjunctions)


def seed_count(pattern: FilterPattern, counts: PairCounts) -> int | None:
    """The documents of ``pattern``'s seeds summed from ``counts`` (an upper bound of its
    matches, the count ``category_vocabulary`` gives a filter with seeds), or None when a
    conjunction has no positive literal or its first one has no count."""
    total = 0
    for conjunction in pattern.conjunctions:
        seed = next((literal for literal in conjunction if not literal.negated), None)
        n = None if seed is None else literal_count(seed, counts)
        if n is None:
            return None
        total += n
    return total
