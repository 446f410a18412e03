"""AST -> text: the canonical query text with the fewest parentheses, and the AST as JSON.

Both writers walk the tree with an explicit stack, so arbitrarily deep trees are fine (the
standard ``json`` module recurses and fails on a few thousand levels; :func:`to_json` does not).
"""

from __future__ import annotations

import json
import re

from thalabus_graph.errors import QueryNodeError
from thalabus_graph.query.ast import And, Category, Node, Not, Or, Semantic, Text, TrueNode

_BARE_VALUE = re.compile(r"""[^\s,()"'=]+""")

_PRECEDENCE: dict[type, int] = {Or: 1, And: 2, Not: 3}
_ATOM = 4


def _precedence(node: Node) -> int:
    return _PRECEDENCE.get(type(node), _ATOM)


def quote_double(text: str) -> str:
    """A semantic phrase in double quotes, with ``\\`` and ``"`` escaped."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def quote_single(text: str) -> str:
    """A text in single quotes, with ``\\`` and ``'`` escaped."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def category_value(value: str) -> str:
    """A category value as written: bare when the grammar allows it, else single-quoted."""
    return value if _BARE_VALUE.fullmatch(value) else quote_single(value)


def leaf_text(node: Semantic | Text | Category) -> str:
    """The canonical text of one term."""
    if isinstance(node, Semantic):
        return quote_double(node.text)
    if isinstance(node, Text):
        return ("@" if node.case_sensitive else "") + quote_single(node.text)
    return node.name + "=" + ",".join(category_value(value) for value in node.values)


def serialize(node: Node) -> str:
    """The canonical text of a query: ``parse(serialize(node)) == node``.

    Keywords are upper-case, binary operators have one space on each side, and parentheses
    appear only where precedence (NOT > AND > OR) or left-associativity needs them: a right
    operand of the same operator is parenthesised, a left one is not. ``TrueNode`` alone is
    the empty query ``""``.

    Example:
        >>> serialize(And(Or(Semantic("a"), Text("b")), Not(Category("x", ("1", "2 3")))))
        '("a" OR \\'b\\') AND NOT x=1,\\'2 3\\''

    Raises:
        ValueError: a ``TrueNode`` inside a larger tree (the language has no TRUE literal).
    """
    return serialize_spans(node)[0]


Spans = dict[int, tuple[int, int]]
"""``id(node)`` -> the [start, end) of that node's text inside the serialised query."""


def serialize_spans(node: Node) -> tuple[str, Spans]:
    """``serialize(node)`` and the span of every node inside it, from the same single walk.

    Plan output labels each node with a slice of this one string, which keeps labelling a
    long query linear (serialising every subtree on its own is quadratic on a long chain).
    A parenthesised node's span excludes its parentheses.
    """
    if isinstance(node, TrueNode):
        return "", {}
    out: list[str] = []
    spans: Spans = {}
    size = 0
    stack: list[str | Node | tuple[int]] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            size += len(item)
            continue
        if isinstance(item, tuple):  # end marker of a node: close its span
            spans[item[0]] = (spans[item[0]][0], size)
            continue
        spans[id(item)] = (size, size)
        stack.append((id(item),))
        if isinstance(item, And | Or):
            level = _PRECEDENCE[type(item)]
            keyword = " AND " if isinstance(item, And) else " OR "
            _push(stack, item.right, _precedence(item.right) <= level)
            stack.append(keyword)
            _push(stack, item.left, _precedence(item.left) < level)
        elif isinstance(item, Not):
            wrap = _precedence(item.operand) < _PRECEDENCE[Not]
            _push(stack, item.operand, wrap)
            stack.append("NOT ")
        elif isinstance(item, TrueNode):
            raise QueryNodeError("TRUE can only be a whole query; it has no text inside a query")
        else:
            stack.append(leaf_text(item))
    return "".join(out), spans


def _push(stack: list[str | Node | tuple[int]], node: Node, wrap: bool) -> None:
    """Schedule ``node`` (in parentheses when ``wrap``); the stack is popped from the end."""
    if wrap:
        stack.append(")")
        stack.append(node)
        stack.append("(")
    else:
        stack.append(node)


def to_json(node: Node, *, indent: int | None = None, ensure_ascii: bool = False) -> str:
    """``json.dumps(node.to_dict(), indent=indent, ensure_ascii=ensure_ascii)``, at any depth.

    The output is byte-for-byte what ``json.dumps`` writes for shallow trees.
    """

    def newline(level: int) -> str:
        return "" if indent is None else "\n" + " " * (indent * level)

    item_sep = ", " if indent is None else ","
    out: list[str] = []
    stack: list[str | tuple[Node, int]] = [(node, 0)]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        current, level = item
        inner = newline(level + 1)
        if isinstance(current, And | Or):
            stack.extend(
                [
                    newline(level) + "}",
                    (current.right, level + 1),
                    item_sep + inner + '"right": ',
                    (current.left, level + 1),
                    "{" + inner + f'"type": "{current.TYPE}"' + item_sep + inner + '"left": ',
                ]
            )
        elif isinstance(current, Not):
            stack.extend(
                [
                    newline(level) + "}",
                    (current.operand, level + 1),
                    "{" + inner + '"type": "NOT"' + item_sep + inner + '"operand": ',
                ]
            )
        else:
            text = json.dumps(current.to_dict(), indent=indent, ensure_ascii=ensure_ascii)
            if indent is not None and level:
                text = text.replace("\n", newline(level))
            out.append(text)
    return "".join(out)
