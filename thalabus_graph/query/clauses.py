"""Questions an evaluator or reranker asks about a parsed query (all iterative).

Semantic clauses (what the reranker rewards), category predicates, polarity under NOT and the
pure-filter rule (docs/architecture.md, "Evaluation rules").
"""

from __future__ import annotations

from collections.abc import Iterator

from thalabus_graph.query.ast import And, Category, Node, Not, Or, Semantic, Text, walk


def walk_with_polarity(node: Node) -> Iterator[tuple[Node, bool]]:
    """Every node in pre-order with ``positive``: False under an odd number of NOTs."""
    stack: list[tuple[Node, bool]] = [(node, True)]
    while stack:
        current, positive = stack.pop()
        yield current, positive
        if isinstance(current, And | Or):
            stack.append((current.right, positive))
            stack.append((current.left, positive))
        elif isinstance(current, Not):
            stack.append((current.operand, not positive))


def semantic_clauses(node: Node) -> list[str]:
    """The positive double-quoted phrases in reading order, each once.

    A phrase under an odd number of NOTs was excluded by the user and is left out.

    Example:
        >>> semantic_clauses(And(Semantic("a"), Not(Semantic("b"))))
        ['a']
    """
    seen: set[str] = set()
    clauses: list[str] = []
    for current, positive in walk_with_polarity(node):
        if positive and isinstance(current, Semantic) and current.text not in seen:
            seen.add(current.text)
            clauses.append(current.text)
    return clauses


def rerank_query(node: Node) -> str:
    """The semantic clauses joined by ``" AND "``; ``""`` when there are none (keep the order)."""
    return " AND ".join(semantic_clauses(node))


def text_clauses(node: Node) -> list[Text]:
    """Every TEXT term in reading order (with duplicates), whatever its polarity."""
    return [current for current in walk(node) if isinstance(current, Text)]


def category_predicates(node: Node) -> list[Category]:
    """Every CATEGORY term in reading order (with duplicates), whatever its polarity."""
    return [current for current in walk(node) if isinstance(current, Category)]


def is_pure_filter(node: Node) -> bool:
    """Whether the node evaluates to stubs only, so AND treats it as a filter.

    The rule (docs/architecture.md, "Evaluation rules"): CATEGORY and TRUE yield stubs;
    ``NOT x`` yields the universe's stubs whatever ``x`` is, so every NOT subtree is a filter;
    AND and OR of two filters are filters. A SEMANTIC or TEXT term outside any NOT makes the
    node scored.

    Example:
        >>> is_pure_filter(And(Category("X", ("1",)), Not(Semantic("b"))))
        True
    """
    stack: list[Node] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, Semantic | Text):
            return False
        if isinstance(current, And | Or):
            stack.append(current.right)
            stack.append(current.left)
        # Category, TrueNode and Not (whatever its operand) are filters: nothing to check.
    return True


def has_scored_terms(node: Node) -> bool:
    """Whether any SEMANTIC or TEXT term sits outside every NOT (the opposite of a filter)."""
    return not is_pure_filter(node)


__all__ = [
    "category_predicates",
    "has_scored_terms",
    "is_pure_filter",
    "rerank_query",
    "semantic_clauses",
    "text_clauses",
    "walk_with_polarity",
]
