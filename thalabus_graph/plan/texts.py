"""The canonical text of every subtree of a query, for plan output, in linear time.

Explain and profile label each plan node with its query text. Serialising each subtree on its
own costs the square of the query's size on a long chain (a 100,000-term AND is 100,000
subtrees of average length 50,000 characters); here the whole query is serialised once while
the span of every node is recorded, and a node's label is a slice of at most ``width``
characters of that one string.
"""

from __future__ import annotations

from thalabus_graph.query import And, Node, Not, Or, TrueNode
from thalabus_graph.query.serialize import leaf_text

LABEL_WIDTH = 200
"""Longest node label in explain / profile output; a longer subtree text ends in "…"."""

_PRECEDENCE: dict[type, int] = {Or: 1, And: 2, Not: 3}
_ATOM = 4


class QueryTexts:
    """Spans of every node of one query inside its canonical text (``serialize(root)``).

    Example:
        >>> from thalabus_graph.query import parse
        >>> root = parse('"a" AND NOT (b=1 OR c=2)')
        >>> texts = QueryTexts(root)
        >>> texts.label(root.right)
        'NOT (b=1 OR c=2)'
    """

    def __init__(self, root: Node, *, width: int = LABEL_WIDTH) -> None:
        self.width = width
        self.spans: dict[int, tuple[int, int]] = {}
        self.text = "" if isinstance(root, TrueNode) else self._serialise(root)

    def _serialise(self, root: Node) -> str:
        """``serialize(root)``, recording each node's [start, end) on the way (same walk)."""
        out: list[str] = []
        size = 0
        stack: list[str | Node | tuple[int]] = [root]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                out.append(item)
                size += len(item)
                continue
            if isinstance(item, tuple):  # end marker of a node: close its span
                start = self.spans[item[0]][0]
                self.spans[item[0]] = (start, size)
                continue
            self.spans[id(item)] = (size, size)
            stack.append((id(item),))
            if isinstance(item, And | Or):
                level = _PRECEDENCE[type(item)]
                _push(stack, item.right, _level(item.right) <= level)
                stack.append(" AND " if isinstance(item, And) else " OR ")
                _push(stack, item.left, _level(item.left) < level)
            elif isinstance(item, Not):
                _push(stack, item.operand, _level(item.operand) < _PRECEDENCE[Not])
                stack.append("NOT ")
            elif isinstance(item, TrueNode):
                raise ValueError("TRUE can only be a whole query; it has no text inside a query")
            else:
                stack.append(leaf_text(item))
        return "".join(out)

    def label(self, node: Node) -> str:
        """The node's canonical text, cut to ``width`` characters (ending in "…" when cut)."""
        if isinstance(node, TrueNode):
            return ""
        start, end = self.spans[id(node)]
        if end - start <= self.width:
            return self.text[start:end]
        return self.text[start:start + self.width - 1] + "…"


def _level(node: Node) -> int:
    return _PRECEDENCE.get(type(node), _ATOM)


def _push(stack: list[str | Node | tuple[int]], node: Node, wrap: bool) -> None:
    if wrap:
        stack.extend((")", node, "("))
    else:
        stack.append(node)
