"""Bounds on the work one query may ask for, checked on its text before anything runs.

A query's cost grows with its searched terms (each phrase or text term is an embedding and
index searches; a category filter is a set operation or part of one pattern statement, and
does not count), its nesting (each level a combination step) and the length of its phrases
(the embedder and the full-text query). :func:`check_query_text` walks the lexer's tokens once, in
linear time, and refuses the first term beyond a limit as a :class:`ThalabusSyntaxError` at
that term's position; :func:`check_query_node` applies the same limits to a tree built in
Python or from JSON, as a :class:`QueryNodeError`. The limits are ``Settings`` fields
(``max_query_chars``, ``max_query_terms``, ``max_query_depth``, ``max_phrase_chars``).
"""

from __future__ import annotations

from dataclasses import dataclass

from thalabus_graph.errors import QueryNodeError, ThalabusSyntaxError
from thalabus_graph.query.ast import And, Category, Node, Not, Or, Semantic, Text, children
from thalabus_graph.query.lexer import TERM_KINDS, TokenKind, reject_lone_surrogates, tokenize
from thalabus_graph.settings import Settings


@dataclass(frozen=True)
class QueryLimits:
    """The bounds one query is held to (see ``Settings``)."""

    max_chars: int = 1_000_000
    max_terms: int = 512
    max_depth: int = 10_000
    max_phrase_chars: int = 32_000

    @classmethod
    def from_settings(cls, settings: Settings) -> QueryLimits:
        """The limits ``settings`` set."""
        return cls(settings.max_query_chars, settings.max_query_terms,
                   settings.max_query_depth, settings.max_phrase_chars)


def check_query_text(text: str, limits: QueryLimits) -> None:
    """Refuse a query text over a limit, at the position where it went over.

    Depth counts open parentheses and NOT prefixes on the way to a term; a phrase's length is
    that of its unquoted text (a category counts its values).
    """
    reject_lone_surrogates(text)
    if len(text) > limits.max_chars:
        raise ThalabusSyntaxError(f"the query is {len(text):,} characters long; the limit is "
                                  f"{limits.max_chars:,} (max_query_chars)",
                                  limits.max_chars, text)
    terms = 0
    parens: list[int] = []  # NOT prefixes pending before each open parenthesis
    nots = 0
    for token in tokenize(text):
        if token.kind is TokenKind.LPAREN:
            parens.append(nots)
            nots = 0
        elif token.kind is TokenKind.RPAREN and parens:
            nots = 0
            parens.pop()
        elif token.kind is TokenKind.NOT:
            nots += 1
        elif token.kind in TERM_KINDS:
            terms += token.kind is not TokenKind.CATEGORY
            depth = len(parens) + sum(parens) + nots
            nots = 0
            if terms > limits.max_terms:
                raise ThalabusSyntaxError(f"more than {limits.max_terms} phrases and text terms "
                                          "in one query (max_query_terms)", token.start, text)
            if depth > limits.max_depth:
                raise ThalabusSyntaxError(f"nested deeper than {limits.max_depth} levels "
                                          "(max_query_depth)", token.start, text)
            size = _term_chars(token.node)
            if size > limits.max_phrase_chars:
                raise ThalabusSyntaxError(f"a term of {size:,} characters; the limit is "
                                          f"{limits.max_phrase_chars:,} (max_phrase_chars)",
                                          token.start, text)


def check_query_node(node: Node, limits: QueryLimits) -> None:
    """The limits of :func:`check_query_text` for a tree built in Python or from JSON."""
    terms = 0
    stack: list[tuple[Node, int]] = [(node, 0)]
    while stack:
        current, depth = stack.pop()
        kids = children(current)
        if isinstance(current, Semantic | Text | Category):
            terms += not isinstance(current, Category)
            if terms > limits.max_terms:
                raise QueryNodeError(f"more than {limits.max_terms} phrases and text terms in "
                                     "one query (max_query_terms)")
            if _term_chars(current) > limits.max_phrase_chars:
                raise QueryNodeError(f"a term longer than {limits.max_phrase_chars:,} "
                                     "characters (max_phrase_chars)")
        if depth > limits.max_depth:
            raise QueryNodeError(f"nested deeper than {limits.max_depth} levels "
                                 "(max_query_depth)")
        stack.extend((kid, depth + _level(current, kid)) for kid in kids)


def _level(parent: Node, kid: Node) -> int:
    """1 where the text needs a parenthesis or a NOT to write ``kid`` under ``parent``: a chain
    of one operator (``a OR b OR c``) is one level, as in the text."""
    if isinstance(parent, Not):
        return 1
    return int(isinstance(kid, And | Or) and type(kid) is not type(parent))


def _term_chars(node: object) -> int:
    if isinstance(node, Semantic | Text):
        return len(node.text)
    if isinstance(node, Category):
        return sum(len(v) for v in node.values)
    return 0


__all__ = ["QueryLimits", "check_query_node", "check_query_text"]
