"""A filter over an OR of phrases, distributed so that it is pushed into each phrase.

``("p" OR "q") AND F``, with ``F`` a pure filter, keeps the fragments of either phrase whose
document ``F`` holds, with their scores; so does ``("p" AND F) OR ("q" AND F)``: an AND with a
pure filter keeps its scored side's fragments of the common documents unchanged, and an OR
unions fragments by id (the higher score wins) whether it runs before or after that
restriction. Each phrase is searched within ``F`` either way (the plan restricts an AND's
scored side to its filter side's documents), so the pools, and the answer, are the same. Only
the way differs: written as the first form, ``F``'s documents are listed and shipped to every
phrase as ids (a 10% filter at 200,000 chapters: 20,000 ids to each phrase; a NOT: the
universe less the excluded); in the second ``F`` is one pattern each phrase's search checks
(``rewrite.push_decision``), as for a single phrase. A required filter is such an ``F`` over
whatever the query is.

Distributed only where that is what runs better and the same: every operand of the OR tree
(through nested ORs) is a phrase, so each becomes the phrase-and-filter AND the plan pushes;
``F`` can be pushed as a pattern (``pushable``: not a filter with a graph-defined category or
too large a normal form, whose documents would then be listed once per phrase). Each copy of
``F`` is a tree of its own (the compiler keeps one plan per node). Not under branch reranking,
which reranks each AND and OR operand with its own clauses (the compiler's ``group``).
Iterative, as the other rewrites.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from thalabus_graph.query import And, Node, Not, Or, Semantic, Text, children, fold


def distribute_filters(root: Node, pushable: Callable[[Node], bool]) -> Node:
    """``root`` with each AND of an OR tree of phrases and a pushable filter (``pushable``:
    a pure filter the plan pushes as one pattern) rewritten as the OR of each phrase AND a
    copy of the filter, the filter on the side it was written on; ``root`` itself when there
    is none."""
    def step(node: Node, kids: tuple[Node, ...]) -> Node:
        rebuilt = node if all(a is b for a, b in zip(kids, children(node), strict=True)) \
            else _with_children(node, kids)
        if isinstance(rebuilt, And):
            if _phrases_only(rebuilt.left) and pushable(rebuilt.right):
                return _spread(rebuilt.left, rebuilt.right, filter_right=True)
            if _phrases_only(rebuilt.right) and pushable(rebuilt.left):
                return _spread(rebuilt.right, rebuilt.left, filter_right=False)
        return rebuilt

    return fold(root, step)


def _phrases_only(node: Node) -> bool:
    """Whether ``node`` is an OR whose operands, through nested ORs, are all phrases."""
    if not isinstance(node, Or):
        return False
    stack: list[Node] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, Or):
            stack.extend((current.left, current.right))
        elif not isinstance(current, Semantic | Text):
            return False
    return True


def _spread(tree: Node, filter_side: Node, *, filter_right: bool) -> Node:
    """The OR ``tree`` of phrases with each phrase ANDed with its own copy of
    ``filter_side``."""
    def step(node: Node, kids: tuple[Node, ...]) -> Node:
        if isinstance(node, Or):
            return Or(kids[0], kids[1])
        copy = _copy(filter_side)
        return And(node, copy) if filter_right else And(copy, node)

    return fold(tree, step)


def _copy(node: Node) -> Node:
    """A structurally equal tree of new node objects."""
    return fold(node, lambda n, kids: _with_children(n, kids) if kids
                else dataclasses.replace(n))


def _with_children(node: Node, kids: tuple[Node, ...]) -> Node:
    if isinstance(node, And):
        return And(kids[0], kids[1])
    if isinstance(node, Or):
        return Or(kids[0], kids[1])
    if isinstance(node, Not):
        return Not(kids[0])
    raise TypeError(f"a {type(node).__name__} has no children")
