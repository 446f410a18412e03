"""A filtered query's vocabulary read, carried by its first statement.

A query with a category or a scope reads its vocabulary first (``category_vocabulary``: the
category names and values it uses, the node counts, the scope's size and the count of each
pattern the plan pushes). The counts decide each search's path and pool, so the read came
before the plan, a round trip of its own. The graph object keeps the row each read returned
(``SeenVocabularies``, by ``plan.categories.VocabularyCheck.key``). A query that asks the same
read again plans with that row, and its first statement carries the read
(``PlannedVocabulary``): one statement reads the vocabulary again, compares the node counts, the
scope's size and the pattern counts with those the plan was made with, and runs the search
only when they are the same. When they differ (the graph changed), the search does not run:
``StaleVocabulary`` carries the fresh row, and the query plans again from it, one more round
trip, as a first query makes. The plan is always made with the counts the search runs
under; the warnings come from the row read with the search.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from thalabus_graph.errors import StaleVocabulary
from thalabus_graph.graph import cypher_library
from thalabus_graph.graph.database import Database, Record

SEEN_VOCABULARIES = 1024
"""Vocabulary rows a graph object keeps (the least recently used go first)."""
PREFIX = "vocabulary_"
"""The carrying statement's parameters of the vocabulary read, so they cannot meet the
search's own (``$ontologyid`` becomes ``$vocabulary_ontologyid``)."""
ROW, PLANNED, RAN = "thalabus_vocabulary", "thalabus_planned", "thalabus_ran"
"""The carrying statement's own columns (``cypher/with_vocabulary``): the vocabulary row,
whether the counts were those planned with, and (null on the row an empty search leaves)
that the search returned it."""


def planned_counts(row: Mapping[str, Any]) -> tuple[Any, Any]:
    """What a plan is made with, of a vocabulary row: the node counts with the scope's size,
    and the pattern counts."""
    return row.get("sizes"), row.get("counts")


@dataclass
class PlannedVocabulary:
    """The vocabulary read a query's first statement carries (``run``), or that is read on
    its own when the query makes no statement it can ride on (``settle``).

    Attributes:
        params: ``category_vocabulary``'s parameters for the query.
        seen: the row the plan was made with.
        row: the row read with the query (None until read).
    """

    params: dict[str, Any]
    seen: Mapping[str, Any]
    row: Mapping[str, Any] | None = field(default=None)

    @property
    def pending(self) -> bool:
        """Whether no statement has carried the read yet."""
        return self.row is None

    def run(self, db: Database, name: str, params: dict[str, Any], *,
            plain: bool) -> list[Record]:
        """Run ``name`` with the vocabulary read in one statement; its rows as ``name``
        alone returns them.

        Raises:
            StaleVocabulary: the counts differ from ``seen`` (``name`` did not run).
        """
        text = carried(cypher_library.load(name, params),
                       cypher_library.load("category_vocabulary", self.params))
        sizes, counts = planned_counts(self.seen)
        rows = db.read_text(text, {**params, **{PREFIX + k: v for k, v in self.params.items()},
                                   f"{PREFIX}planned_sizes": sizes,
                                   f"{PREFIX}planned_counts": counts},
                            plain=plain, what=f"{name} (with category_vocabulary)")
        self.row = rows[0][ROW]
        if not rows[0][PLANNED]:
            raise StaleVocabulary(self.row)
        return [{k: v for k, v in row.items() if k not in (ROW, PLANNED, RAN)}
                for row in rows if row[RAN]]

    def settle(self, db: Database) -> Mapping[str, Any]:
        """The row read with the query; read now when no statement carried it.

        Raises:
            StaleVocabulary: the counts read now differ from ``seen``.
        """
        if self.row is None:
            rows = db.read_plain("category_vocabulary", **self.params)
            self.row = rows[0] if rows else {}
            if planned_counts(self.row) != planned_counts(self.seen):
                raise StaleVocabulary(self.row)
        return self.row


@cache
def carried(statement: str, vocabulary: str) -> str:
    """``statement`` carrying the vocabulary read ``vocabulary`` (``cypher/with_vocabulary``):
    one statement that runs ``statement`` only when the counts are those planned with."""
    read = cypher_library.PARAMETER.sub(lambda m: f"${PREFIX}{m.group(1)}", vocabulary)
    return cypher_library.fill("with_vocabulary", vocabulary=read, statement=statement)


class SeenVocabularies:
    """The vocabulary rows a graph object's queries read, by ``VocabularyCheck.key`` (at
    most ``size``, least recently used first out); shared by the threads that query."""

    def __init__(self, size: int = SEEN_VOCABULARIES) -> None:
        self.size = size
        self._rows: OrderedDict[str, Mapping[str, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> Mapping[str, Any] | None:
        """The row last read for ``key`` (None: never, or forgotten)."""
        with self._lock:
            row = self._rows.get(key)
            if row is not None:
                self._rows.move_to_end(key)
            return row

    def put(self, key: str, row: Mapping[str, Any]) -> None:
        """Keep ``row`` as the latest read for ``key``."""
        with self._lock:
            self._rows[key] = row
            self._rows.move_to_end(key)
            while len(self._rows) > self.size:
                self._rows.popitem(last=False)

    def clear(self) -> None:
        """Forget every row."""
        with self._lock:
            self._rows.clear()
