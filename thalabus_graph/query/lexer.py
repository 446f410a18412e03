"""The lexer of the Thalabus query language: text -> tokens with start/end offsets.

Terms (phrases, texts, whole ``NAME=VALUE,VALUE`` categories) come out as single tokens that
already carry their AST leaf, so the parser only deals with operators and parentheses.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum

from thalabus_graph.errors import ThalabusSyntaxError
from thalabus_graph.query.ast import (
    LONE_SURROGATE,
    NAME_PATTERN,
    Category,
    Semantic,
    Text,
    blank,
)


class TokenKind(Enum):
    """What a token is."""

    LPAREN = "("
    RPAREN = ")"
    AND = "AND"
    OR = "OR"
    NOT = "NOT"
    SEMANTIC = "SEMANTIC"
    TEXT = "TEXT"
    CATEGORY = "CATEGORY"
    END = "END"


TERM_KINDS = frozenset({TokenKind.SEMANTIC, TokenKind.TEXT, TokenKind.CATEGORY})
KEYWORDS = {"AND": TokenKind.AND, "OR": TokenKind.OR, "NOT": TokenKind.NOT}


@dataclass(frozen=True, slots=True)
class Token:
    """One token: its kind, ``text[start:end]`` it spans, and the leaf node of a term."""

    kind: TokenKind
    start: int
    end: int
    node: Semantic | Text | Category | None = None


_WHITESPACE = re.compile(r"\s*")
_BARE_VALUE = re.compile(r"""[^\s,()"'=]+""")
# Quoted bodies, written as "unrolled loops" so matching is linear and never backtracks.
_DOUBLE_BODY = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*', re.DOTALL)
_SINGLE_BODY = re.compile(r"[^'\\]*(?:\\.[^'\\]*)*", re.DOTALL)
_DOUBLE_ESCAPE = re.compile(r'\\(["\\])')
_SINGLE_ESCAPE = re.compile(r"\\(['\\])")
_WORD = re.compile(r"""[^\s,()"'=@]+""")

TERM_HINT = "a term (\"phrase\", 'text', @'text', NAME=VALUE, NOT or '(')"


def _snippet(text: str, start: int, limit: int = 24) -> str:
    """A short quotation of the source from ``start`` (for messages)."""
    word = text[start : start + limit]
    return word if len(text) - start <= limit else word + "..."


def _read_quoted(text: str, start: int, body_start: int, what: str) -> tuple[str, int]:
    """Read a quoted body whose opening quote is ``text[body_start - 1]``.

    ``start`` is where the term begins (the ``@`` of ``@'...'``), ``what`` names it in errors.
    Returns the unescaped body and the offset just past the closing quote.
    """
    quote = text[body_start - 1]
    body_re, escape_re = (
        (_DOUBLE_BODY, _DOUBLE_ESCAPE) if quote == '"' else (_SINGLE_BODY, _SINGLE_ESCAPE)
    )
    match = body_re.match(text, body_start)
    assert match is not None  # the pattern matches the empty string
    end = match.end()
    if end >= len(text) or text[end] != quote:
        raise ThalabusSyntaxError(
            f"unterminated quote: expected {quote} to close the {quote} opened at "
            f"position {body_start - 1}",
            len(text),
            text,
        )
    body = escape_re.sub(r"\1", match.group())
    if blank(body):
        raise ThalabusSyntaxError(f"empty {what}: expected text between the quotes", start, text)
    return body, end + 1


def _read_value(text: str, pos: int, after: str) -> tuple[str, int]:
    """Read one category value at ``pos`` (already past whitespace); ``after`` is ``=`` or ``,``."""
    if pos >= len(text):
        raise ThalabusSyntaxError(
            f"expected a category value after '{after}', found end of query", pos, text
        )
    char = text[pos]
    if char == "'":
        return _read_quoted(text, pos, pos + 1, "category value")
    if char == "@" and text.startswith("'", pos + 1):
        raise ThalabusSyntaxError(
            "a category value cannot be @-quoted: write NAME='value' (values match exactly)",
            pos,
            text,
        )
    match = _BARE_VALUE.match(text, pos)
    if match is None:
        found = "'" + char + "'" if not char.isspace() else "whitespace"
        raise ThalabusSyntaxError(
            f"expected a category value after '{after}', found {found}", pos, text
        )
    return match.group(), match.end()


def _read_category(text: str, name: str, start: int, equals: int) -> Token:
    """Read ``VALUE ( , VALUE )*`` after the ``=`` at offset ``equals``."""
    values: list[str] = []
    pos = _WHITESPACE.match(text, equals + 1).end()  # type: ignore[union-attr]
    value, end = _read_value(text, pos, "=")
    values.append(value)
    while True:
        pos = _WHITESPACE.match(text, end).end()  # type: ignore[union-attr]
        if pos >= len(text) or text[pos] != ",":
            break
        pos = _WHITESPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
        value, end = _read_value(text, pos, ",")
        values.append(value)
    return Token(TokenKind.CATEGORY, start, end, Category(name, tuple(values)))


def _read_case_sensitive(text: str, pos: int) -> Token:
    """The case-sensitive text term ``@'...'`` starting at ``pos`` (the ``@``)."""
    if not text.startswith("'", pos + 1):
        found = "end of query" if pos + 1 >= len(text) else repr(text[pos + 1])
        raise ThalabusSyntaxError(
            f"expected ' after '@' (case-sensitive text is written @'text'), "
            f"found {found}",
            pos + 1,
            text,
        )
    body, end = _read_quoted(text, pos, pos + 2, "text")
    return Token(TokenKind.TEXT, pos, end, Text(body, case_sensitive=True))


def _read_name(text: str, pos: int, match: re.Match[str]) -> Token:
    """The token of the name ``match`` found at ``pos``: a whole category when ``=`` follows
    it, else an operator keyword; any other bare word is a syntax error saying how to quote
    it."""
    name = match.group()
    after = _WHITESPACE.match(text, match.end()).end()  # type: ignore[union-attr]
    if after < len(text) and text[after] == "=":
        return _read_category(text, name, pos, after)
    if (kind := KEYWORDS.get(name.upper())) is not None:
        return Token(kind, pos, match.end())
    word = _WORD.match(text, pos)
    shown = _snippet(word.group() if word is not None else name, 0)
    raise ThalabusSyntaxError(
        f"unexpected bare word {shown!r}: quote it (\"{shown}\" searches by "
        f"meaning, '{shown}' by text) or write NAME=VALUE for a category",
        pos,
        text,
    )


def tokenize(text: str) -> Iterator[Token]:
    """Yield the tokens of ``text`` lazily, ending with one ``END`` token at ``len(text)``.

    Raises:
        ThalabusSyntaxError: at the first malformed token (as it is reached).
    """
    pos = 0
    size = len(text)
    while True:
        pos = _WHITESPACE.match(text, pos).end()  # type: ignore[union-attr]
        if pos >= size:
            yield Token(TokenKind.END, size, size)
            return
        char = text[pos]
        if char == "(":
            yield Token(TokenKind.LPAREN, pos, pos + 1)
            pos += 1
        elif char == ")":
            yield Token(TokenKind.RPAREN, pos, pos + 1)
            pos += 1
        elif char == '"':
            body, end = _read_quoted(text, pos, pos + 1, "phrase")
            yield Token(TokenKind.SEMANTIC, pos, end, Semantic(body))
            pos = end
        elif char == "'":
            body, end = _read_quoted(text, pos, pos + 1, "text")
            yield Token(TokenKind.TEXT, pos, end, Text(body, case_sensitive=False))
            pos = end
        elif char == "@":
            token = _read_case_sensitive(text, pos)
            yield token
            pos = token.end
        elif (match := NAME_PATTERN.match(text, pos)) is not None:
            token = _read_name(text, pos, match)
            yield token
            pos = token.end
        elif char == "=":
            raise ThalabusSyntaxError(
                "expected a category name before '=' (NAME=VALUE)", pos, text
            )
        else:
            raise ThalabusSyntaxError(
                f"unexpected character {char!r}: expected {TERM_HINT}, an operator or ')'",
                pos,
                text,
            )


def reject_lone_surrogates(text: str) -> None:
    """A ``ThalabusSyntaxError`` at the first lone surrogate of ``text`` (not valid Unicode)."""
    bad = LONE_SURROGATE.search(text)
    if bad is not None:
        raise ThalabusSyntaxError(f"a lone surrogate (U+{ord(bad.group()):04X}) is not valid "
                                  "Unicode text", bad.start(), text)
