"""The bounds of one query call: its size limits, checked before any work, and its time budget.

``parse_within_limits`` parses a query text held to its limits (``parse(text, limits=...)``,
which runs ``query.limits.check_query_text`` first) and checks a prebuilt tree with
``check_query_node``, ``parse_for_explain`` holds explain to the length
limit only; ``within_budget`` runs a ``ThalabusGraph`` method
in one of ``max_concurrent_queries`` turns and under
``graph.database.deadline(settings.query_timeout_seconds)``, so every read of the query
is bounded by Neo4j's transaction timeout and by a deadline checked before it starts.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Concatenate, ParamSpec, Protocol, TypeVar

from thalabus_graph.errors import QueryTimeout
from thalabus_graph.graph.database import deadline
from thalabus_graph.query import Node, parse
from thalabus_graph.query.limits import QueryLimits, check_query_node
from thalabus_graph.settings import Settings

P = ParamSpec("P")
R = TypeVar("R")


class HasSettings(Protocol):
    """Anything with the settings that hold its bounds and the turns its queries take
    (``ThalabusGraph``: ``in_flight`` holds ``max_concurrent_queries`` turns)."""

    settings: Settings
    in_flight: threading.BoundedSemaphore


S = TypeVar("S", bound=HasSettings)


def parse_within_limits(query: str | Node, settings: Settings) -> Node:
    """The query's tree, once its size is within ``settings``' limits (else
    ``ThalabusSyntaxError`` at the first term over a limit, or ``QueryNodeError`` for a tree)."""
    limits = QueryLimits.from_settings(settings)
    if isinstance(query, str):
        return parse(query, limits=limits)
    check_query_node(query, limits)
    return query


def parse_for_explain(text: str, settings: Settings) -> Node:
    """The query's tree for ``explain``, held to ``max_query_chars`` only: explain runs no
    search and no embedding, and renders a plan of any number of terms in linear time."""
    return parse(text, limits=QueryLimits(max_chars=settings.max_query_chars,
                                          max_terms=len(text), max_depth=len(text),
                                          max_phrase_chars=len(text)))


def within_budget(method: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
    """Run ``method`` in one of its object's query turns (``in_flight``), waited for at most
    ``settings.query_timeout_seconds``, then under that budget (``QueryTimeout`` past
    either). The turns bound what one process asks of the server at once: every query holds
    a transaction whose rows (texts among them) Neo4j keeps in its transaction memory, and a
    burst of agents on one MCP server otherwise exhausted it for everyone."""

    @functools.wraps(method)
    def bounded(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        budget = self.settings.query_timeout_seconds
        if not self.in_flight.acquire(timeout=budget):
            raise QueryTimeout(
                f"{method.__name__}: no query turn came free within {budget:g} s "
                f"({self.settings.max_concurrent_queries} queries of this connection run at "
                "once: max_concurrent_queries, THALABUS_MAX_CONCURRENT_QUERIES)")
        try:
            with deadline(budget):
                return method(self, *args, **kwargs)
        finally:
            self.in_flight.release()

    return bounded


__all__ = ["parse_for_explain", "parse_within_limits", "within_budget"]
