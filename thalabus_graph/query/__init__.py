"""The Thalabus boolean query language: parse text to an immutable AST and write it back.

``lexer`` (text -> tokens), ``parser`` (tokens -> AST, iterative shunting-yard), ``ast`` (node
types and tree walks), ``serialize`` (AST -> canonical text / JSON), ``clauses`` (questions an
evaluator or reranker asks). Every function here is iterative, so very deep queries are safe.

Example:
    >>> node = parse('"asylum seeker" AND NOT COUNTRY_OF_ORIGIN=SY')
    >>> serialize(node), semantic_clauses(node)
    ('"asylum seeker" AND NOT COUNTRY_OF_ORIGIN=SY', ['asylum seeker'])
"""

from __future__ import annotations

from thalabus_graph.errors import ThalabusSyntaxError
from thalabus_graph.query.ast import (
    TRUE,
    And,
    Category,
    Leaf,
    Node,
    Not,
    Or,
    Semantic,
    Text,
    TrueNode,
    children,
    depth,
    fold,
    from_dict,
    walk,
    walk_postorder,
)
from thalabus_graph.query.clauses import (
    category_predicates,
    has_scored_terms,
    is_pure_filter,
    rerank_query,
    semantic_clauses,
    text_clauses,
    walk_with_polarity,
)
from thalabus_graph.query.parser import parse
from thalabus_graph.query.serialize import serialize, to_json

__all__ = [
    "TRUE",
    "And",
    "Category",
    "Leaf",
    "Node",
    "Not",
    "Or",
    "Semantic",
    "Text",
    "ThalabusSyntaxError",
    "TrueNode",
    "category_predicates",
    "children",
    "depth",
    "fold",
    "from_dict",
    "has_scored_terms",
    "is_pure_filter",
    "parse",
    "rerank_query",
    "semantic_clauses",
    "serialize",
    "text_clauses",
    "to_dict",
    "to_json",
    "walk",
    "walk_postorder",
    "walk_with_polarity",
]


def to_dict(node: Node) -> dict[str, object]:
    """The JSON form of a node (same as ``node.to_dict()``)."""
    return node.to_dict()
