"""The lexer: token kinds, offsets, lazy error reporting."""

from __future__ import annotations

import pytest

from thalabus_graph.errors import ThalabusSyntaxError
from thalabus_graph.query import Category, Semantic, Text
from thalabus_graph.query.lexer import TokenKind, tokenize


def test_tokens_carry_offsets_and_leaves() -> None:
    tokens = list(tokenize("NOT(\"a b\")and @'C' OR X = 1, '2 3'"))
    kinds = [t.kind for t in tokens]
    assert kinds == [
        TokenKind.NOT, TokenKind.LPAREN, TokenKind.SEMANTIC, TokenKind.RPAREN, TokenKind.AND,
        TokenKind.TEXT, TokenKind.OR, TokenKind.CATEGORY, TokenKind.END,
    ]
    assert [(t.start, t.end) for t in tokens] == [
        (0, 3), (3, 4), (4, 9), (9, 10), (10, 13), (14, 18), (19, 21), (22, 34), (34, 34),
    ]
    assert tokens[2].node == Semantic("a b")
    assert tokens[5].node == Text("C", case_sensitive=True)
    assert tokens[7].node == Category("X", ("1", "2 3"))


def test_category_stops_before_whitespace_without_a_comma() -> None:
    tokens = list(tokenize("X=1 ,2 Y=3"))
    assert tokens[0].node == Category("X", ("1", "2"))
    assert tokens[1].node == Category("Y", ("3",))


def test_errors_are_raised_lazily_in_reading_order() -> None:
    stream = tokenize('"a" ) "unterminated')
    assert next(stream).kind is TokenKind.SEMANTIC
    assert next(stream).kind is TokenKind.RPAREN
    with pytest.raises(ThalabusSyntaxError):
        next(stream)


@pytest.mark.parametrize("space", [" ", "\t", "\n", "\u00a0", "\u2003", "\u3000"])
def test_unicode_whitespace_separates_tokens(space: str) -> None:
    kinds = [t.kind for t in tokenize(f'"a"{space}AND{space}X{space}={space}1')]
    assert kinds == [TokenKind.SEMANTIC, TokenKind.AND, TokenKind.CATEGORY, TokenKind.END]
