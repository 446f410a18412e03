"""The canonical text of every subtree of a query, for plan output, in linear time.

Explain and profile label each plan node with its query text. Serialising each subtree on its
own costs the square of the query's size on a long chain (a 100,000-term AND is 100,000
subtrees of average length 50,000 characters); here the whole query is serialised once while
the span of every node is recorded, and a node's label is a slice of at most ``width``
characters of that one string.
"""

from __future__ import annotations

from thalabus_graph.query import Node, TrueNode
from thalabus_graph.query.serialize import serialize_spans

LABEL_WIDTH = 200
"""Longest node label in explain / profile output; a longer subtree text ends in "…"."""


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
        self.text, self.spans = serialize_spans(root)

    def label(self, node: Node) -> str:
        """The node's canonical text, cut to ``width`` characters (ending in "…" when cut)."""
        if isinstance(node, TrueNode):
            return ""
        start, end = self.spans[id(node)]
        if end - start <= self.width:
            return self.text[start:end]
        return self.text[start:start + self.width - 1] + "…"

