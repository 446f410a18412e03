"""A required filter: categories a connection or a call holds every query to.

An application (or the operator of an MCP server) gives ``required_filter="READABLE_BY=alice"``;
each query is then answered as ``(query) AND (required filter)``, the two parsed apart, so no
text of the query can widen it: an OR, a NOT or an empty query (TRUE) all sit inside the
left side of that AND. A filter side only removes documents (an AND keeps the scored side's
fragments with their scores), so a result inside the filter scores as it does without it.
The filter is categories only (stored or graph-defined), under AND, OR and NOT.
"""

from __future__ import annotations

from collections.abc import Iterable

from thalabus_graph.errors import ConfigurationError
from thalabus_graph.query.ast import And, Category, Node, Not, Or, TrueNode, walk
from thalabus_graph.query.limits import QueryLimits
from thalabus_graph.query.parser import parse


def required_filter(text: str, limits: QueryLimits | None = None) -> Node:
    """``text`` parsed as a required filter.

    Raises:
        ThalabusSyntaxError: it does not parse (with its position in ``text``).
        ConfigurationError: it is blank, or holds a phrase or a text search.
    """
    if not isinstance(text, str) or not text.strip():
        raise ConfigurationError("a required filter is a filter of categories, e.g. "
                                 "READABLE_BY=alice; it was empty")
    node = parse(text, limits=limits)
    for part in walk(node):
        if not isinstance(part, Category | And | Or | Not):
            raise ConfigurationError(
                f"a required filter holds categories only (NAME=VALUE under AND, OR, NOT); "
                f"{text!r} has a {part.TYPE.lower()} term")
    return node


def restricted(node: Node, filters: Iterable[Node | None]) -> Node:
    """``node`` held to every filter of ``filters`` (None: no filter): ``node AND f1 AND
    ...``, the query on the left. An empty query (TRUE) held to filters is the filters
    alone (``TRUE AND x`` is ``x``): TRUE is a whole query only, so no AND may hold it, and
    the held query is written out (explain, a dataset's query) as its filters."""
    for required in filters:
        if required is not None:
            node = required if isinstance(node, TrueNode) else And(node, required)
    return node
