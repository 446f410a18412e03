"""The parser of the Thalabus query language: tokens -> immutable AST, in linear time.

Algorithm: Dijkstra's shunting-yard over the lexer's token stream, with two explicit stacks
(operands: finished subtrees; operators: pending ``NOT``, ``AND``, ``OR`` and ``(``) and a
two-state machine that says whether a term or an operator comes next. The grammar::

    query   := <empty> | or
    or      := and ( OR and )*
    and     := unary ( AND unary )*
    unary   := NOT unary | primary
    primary := "(" or ")" | SEMANTIC | TEXT | CATEGORY

- *Expecting a term*: a term goes to the operand stack (then an operator is expected);
  ``NOT`` and ``(`` are pushed; anything else is an error ("expected a term").
- *Expecting an operator*: ``AND``/``OR`` first reduce every pending operator of higher or
  equal precedence (``NOT`` 3 > ``AND`` 2 > ``OR`` 1; "equal" makes them left-associative),
  then are pushed; ``)`` reduces down to the matching ``(``; the end reduces everything.

Each token is pushed and popped at most once, so parsing is O(n) in the length of the text,
and nothing recurses: a 10,000-term chain or 5,000 nested parentheses parse like any query.
The first error in reading order is reported as a :class:`ThalabusSyntaxError` whose
``position`` is the offending token's offset (``len(text)`` when the text ended too early).

Decisions the grammar leaves open (pinned by ``tests/query_cases.json``):

- An unterminated quote or an unclosed ``(`` is reported at ``len(text)``, where the closing
  character was due; the message names the offset of the opening one.
- A phrase, text or quoted category value that is empty *or only whitespace* is an error at
  its opening quote (``@`` for ``@'...'``); ``@`` without ``'`` is an error just after the ``@``.
- A word followed by ``=`` is always a category name, even after ``AND`` (``"a" AND =x`` reads
  the category ``AND=x``); after ``=`` or ``,`` a bare word is a value even if it spells a
  keyword (``X=AND``).
"""

from __future__ import annotations

from thalabus_graph.errors import QueryNodeTypeError, ThalabusSyntaxError
from thalabus_graph.query.ast import TRUE, And, Node, Not, Or
from thalabus_graph.query.lexer import (
    TERM_HINT,
    TERM_KINDS,
    Token,
    TokenKind,
    reject_lone_surrogates,
    tokenize,
)
from thalabus_graph.query.limits import QueryLimits, check_query_text

PRECEDENCE = {TokenKind.OR: 1, TokenKind.AND: 2, TokenKind.NOT: 3}
"""Binding strength of the operators; higher binds tighter."""


def parse(text: str, *, limits: QueryLimits | None = None) -> Node:
    """Parse a query into its AST; an empty or blank query is ``TrueNode()``. With ``limits``,
    a text over a size limit is refused first, before any parsing (``query.limits``).

    Example:
        >>> parse('"asylum seeker" AND NOT COUNTRY_OF_ORIGIN=SY').to_dict()["type"]
        'AND'

    Raises:
        ThalabusSyntaxError: the text does not follow the grammar; ``.position`` says where.
        TypeError: ``text`` is not a ``str``.
    """
    if not isinstance(text, str):
        raise QueryNodeTypeError(f"a query must be a str, not {type(text).__name__}")
    if limits is None:
        reject_lone_surrogates(text)
    else:
        check_query_text(text, limits)
    return _Parser(text).run()


class _Parser:
    """One parse: the two stacks and the token-by-token state machine."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.operands: list[Node] = []
        self.operators: list[Token] = []
        self.previous: Token | None = None

    def run(self) -> Node:
        """Consume every token and return the finished tree."""
        expect_term = True
        for token in tokenize(self.text):
            if expect_term:
                expect_term = self.on_term_expected(token)
            else:
                expect_term = self.on_operator_expected(token)
            if token.kind is TokenKind.END:
                break
            self.previous = token
        if not self.operands:
            return TRUE
        assert len(self.operands) == 1 and not self.operators
        return self.operands[0]

    def on_term_expected(self, token: Token) -> bool:
        """Handle a token where a term must come; returns whether a term is still expected."""
        kind = token.kind
        if kind in TERM_KINDS:
            assert token.node is not None
            self.operands.append(token.node)
            return False
        if kind is TokenKind.NOT or kind is TokenKind.LPAREN:
            self.operators.append(token)
            return True
        if kind is TokenKind.END and self.previous is None:
            return True  # empty or blank query: TRUE
        raise self.error(f"expected {TERM_HINT}{self.after()}, found {self.found(token)}", token)

    def on_operator_expected(self, token: Token) -> bool:
        """Handle a token after a complete term; returns whether a term is expected next."""
        kind = token.kind
        if kind is TokenKind.AND or kind is TokenKind.OR:
            precedence = PRECEDENCE[kind]
            while (
                self.operators
                and self.operators[-1].kind is not TokenKind.LPAREN
                and PRECEDENCE[self.operators[-1].kind] >= precedence
            ):
                self.reduce(self.operators.pop())
            self.operators.append(token)
            return True
        if kind is TokenKind.RPAREN:
            while self.operators and self.operators[-1].kind is not TokenKind.LPAREN:
                self.reduce(self.operators.pop())
            if not self.operators:
                raise self.error("unbalanced ')': no '(' is open here", token)
            self.operators.pop()
            return False
        if kind is TokenKind.END:
            while self.operators:
                operator = self.operators.pop()
                if operator.kind is TokenKind.LPAREN:
                    raise self.error(
                        f"expected ')' to close the '(' at position {operator.start}, "
                        "found end of query",
                        token,
                    )
                self.reduce(operator)
            return False
        hint = " (did you mean AND NOT?)" if kind is TokenKind.NOT else ""
        raise self.error(
            f"expected AND, OR or ')' between terms, found {self.found(token)}{hint}", token
        )

    def reduce(self, operator: Token) -> None:
        """Apply one operator to the top of the operand stack."""
        if operator.kind is TokenKind.NOT:
            self.operands[-1] = Not(self.operands[-1])
            return
        right = self.operands.pop()
        left = self.operands.pop()
        combined = And(left, right) if operator.kind is TokenKind.AND else Or(left, right)
        self.operands.append(combined)

    def after(self) -> str:
        """`` after 'AND'`` naming the previous token, for messages."""
        if self.previous is None:
            return ""
        return f" after {self.text[self.previous.start : self.previous.end]!r}"

    def found(self, token: Token) -> str:
        """How a token is named in a message."""
        if token.kind is TokenKind.END:
            return "end of query"
        if token.kind in TERM_KINDS:
            source = self.text[token.start : token.end]
            shown = source if len(source) <= 24 else source[:21] + "..."
            return f"another term {shown}"
        return repr(self.text[token.start : token.end])

    def error(self, message: str, token: Token) -> ThalabusSyntaxError:
        """A syntax error at a token's start."""
        return ThalabusSyntaxError(message, token.start, self.text)
