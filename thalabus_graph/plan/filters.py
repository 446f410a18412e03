"""A pure filter of categories as one pushed pattern: its disjunctive normal form.

An AND of a phrase and a filter made of category terms under AND / OR / NOT (``"p" AND
(A=x OR (B=y AND NOT A=z))``) is pushed into the phrase's searches as one ``FilterPattern``:
the statements check the DNF, passed as a list parameter, with list predicates, so neither
the filter's documents nor a NOT universe is listed. The DNF is computed bottom-up without
recursion, for each node and its negation at once (NOT swaps them); a filter whose DNF would
exceed ``MAX_CONJUNCTIONS`` conjunctions or ``MAX_LITERALS`` literals in one is not pushed
(the plan then ships the filter's document ids as before).
"""

from __future__ import annotations

from thalabus_graph.plan.steps import CategoryPattern, FilterPattern
from thalabus_graph.query import And, Category, Node, Not, Or, TrueNode, fold

MAX_CONJUNCTIONS = 32
MAX_LITERALS = 16

Dnf = tuple[tuple[CategoryPattern, ...], ...]
"""Conjunctions of literals; () is FALSE, ((),) is TRUE."""
_Both = tuple[Dnf | None, Dnf | None] | None
"""A node's DNF and its negation's (each None when too large), or None when the subtree is
not made of category terms only."""


def filter_pattern(node: Node) -> FilterPattern | None:
    """``node`` as one pushed filter pattern, or None when it is not made of category terms
    only, is TRUE, or is too large in normal form."""
    both = fold(node, _step)
    if both is None or both[0] is None or both[0] == ((),):
        return None
    return FilterPattern("", (), False, both[0])


def _step(node: Node, kids: tuple[_Both, ...]) -> _Both:
    parts = [kid for kid in kids if kid is not None]
    if len(parts) < len(kids):
        return None
    if isinstance(node, Category):
        values = tuple(node.values)
        return (((CategoryPattern(node.name, values),),),
                ((CategoryPattern(node.name, values, True),),))
    if isinstance(node, TrueNode):
        return ((),), ()
    if isinstance(node, Not):
        return parts[0][1], parts[0][0]
    if isinstance(node, And):
        (a_pos, a_neg), (b_pos, b_neg) = parts
        return _product(a_pos, b_pos), _sum(a_neg, b_neg)
    if isinstance(node, Or):
        (a_pos, a_neg), (b_pos, b_neg) = parts
        return _sum(a_pos, b_pos), _product(a_neg, b_neg)
    return None  # a phrase: not a category filter


def _product(a: Dnf | None, b: Dnf | None) -> Dnf | None:
    if a is None or b is None or len(a) * len(b) > MAX_CONJUNCTIONS:
        return None
    out = tuple(x + y for x in a for y in b)
    return None if any(len(c) > MAX_LITERALS for c in out) else out


def _sum(a: Dnf | None, b: Dnf | None) -> Dnf | None:
    if a is None or b is None or len(a) + len(b) > MAX_CONJUNCTIONS:
        return None
    return a + b
