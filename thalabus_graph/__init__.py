"""thalabus-graph: a Neo4j-native retrieval layer with a boolean query language.

Public API (stable names)::

    from thalabus_graph import (parse, serialize, semantic_clauses, ThalabusSyntaxError,
                                Fragment, ThalabusGraph, Settings)
    from thalabus_graph.fragments import combine_and, combine_or, combine_not
"""

from __future__ import annotations

import logging

from thalabus_graph.engine import DocumentHit, QueryResult, RerankResult, ThalabusGraph
from thalabus_graph.errors import ThalabusError, ThalabusSyntaxError
from thalabus_graph.fragments import Fragment
from thalabus_graph.query import parse, rerank_query, semantic_clauses, serialize
from thalabus_graph.settings import Settings

__all__ = [
    "DocumentHit",
    "Fragment",
    "QueryResult",
    "RerankResult",
    "Settings",
    "ThalabusError",
    "ThalabusGraph",
    "ThalabusSyntaxError",
    "parse",
    "rerank_query",
    "semantic_clauses",
    "serialize",
]

# Library modules log to logging.getLogger(__name__); the application decides where records go
# (the CLI: -v / --log-level). Without a configured handler, nothing is printed.
logging.getLogger(__name__).addHandler(logging.NullHandler())
