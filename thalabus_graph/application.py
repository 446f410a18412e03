"""The application's graph in a query: what ``ThalabusGraph`` offers an application whose own
nodes (users, groups, courts, citations) sit beside the ingested documents.

- **Graph-defined categories** (``define_category``): a category name defined by a read-only
  Cypher pattern over ``document`` with ``$value`` its one parameter, written in queries like
  a stored category (``READABLE_BY=alice,bob``) under AND, OR and NOT
  (``graph.category_definitions``).
- **A required filter** (``connect(required_filter=...)``, ``query(required_filter=...)``):
  categories, stored or graph-defined, that every query of the connection or call is held
  to, as ``(query) AND (filter)`` parsed apart, so no query text (an OR, a NOT, an empty
  query) widens it (``query.required``). Explain, stream, the fast path and the datasets
  and goal contexts made from them are held to it too.
- **Graph context per result** (``query(context=...)``): a read-only Cypher fragment that
  sees each returned ``document`` (and ``fragment``) and returns columns; its rows arrive on
  each result as ``.context`` (``results.context``), checked before anything runs.
"""

from __future__ import annotations

from thalabus_graph.graph import category_definitions
from thalabus_graph.graph.category_definitions import CategoryDefinition
from thalabus_graph.graph.database import Database


class ApplicationGraph:
    """The graph-defined categories of one database (a base of ``ThalabusGraph``)."""

    db: Database

    def define_category(self, name: str, pattern: str) -> CategoryDefinition:
        """Define (or redefine) category ``name`` by a read-only Cypher ``pattern`` over
        ``document`` with ``$value`` its one parameter, e.g. ``define_category("READABLE_BY",
        "(document)<-[:CAN_READ]-(:User {name: $value})")``; queries then write it like a
        stored category (``READABLE_BY=alice,bob``). Stored in the graph: every process sees
        it.

        Raises:
            CategoryDefinitionError: a bad name, a stored category's name, or a pattern that
                writes, calls a procedure, takes another parameter or does not compile.
        """
        return category_definitions.define(self.db, name, pattern)

    def drop_category(self, name: str) -> bool:
        """Remove the definition of category ``name``; whether there was one."""
        return category_definitions.drop(self.db, name)

    def defined_categories(self) -> list[CategoryDefinition]:
        """The graph-defined categories, by name."""
        return list(category_definitions.definitions(self.db).values())
