"""thalabus-graph: a Neo4j-native retrieval layer with a boolean query language.

Public API (stable names)::

    from thalabus_graph import (parse, serialize, semantic_clauses, ThalabusSyntaxError,
                                Fragment, ThalabusGraph, Settings)
"""

from __future__ import annotations

from thalabus_graph.errors import ThalabusSyntaxError
from thalabus_graph.settings import Settings

__all__ = [
    "Settings",
    "ThalabusSyntaxError",
]
