"""A query's vocabulary read, in one place: read on its own or carried by the query's first
statement, the rows kept per graph object, and the parent datasets checked with it
(``Vocabularies``).

A query with a category or a scope reads its vocabulary first (``category_vocabulary``: the
category names and values it uses, the node counts, the scope's size, the count of each
pattern the plan pushes and of each category value it names). The counts decide each
search's path and pool, and the order of a filter's literals, so the read came before the
plan, a round trip of its own. The graph object keeps the row each read returned
(``SeenVocabularies``, by ``plan.categories.VocabularyCheck.key``). A query that asks the same
read again plans with that row, and its first statement carries the read
(``PlannedVocabulary``): one statement reads the vocabulary again, compares the node counts, the
scope's size, the pattern counts and the values' counts with those the plan was made with,
and runs the search
only when they are the same. When they differ (the graph changed), the search does not run:
``StaleVocabulary`` carries the fresh row, and the query plans again from it, one more round
trip, as a first query makes. The plan is always made with the counts the search runs
under; the warnings come from the row read with the search.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import Any

from thalabus_graph.errors import StaleVocabulary
from thalabus_graph.graph import cypher_library
from thalabus_graph.graph.database import Database, Record
from thalabus_graph.plan.categories import QueryReads, VocabularyCheck
from thalabus_graph.plan.steps import CategoryPattern
from thalabus_graph.query import Node
from thalabus_graph.query_warning import QueryWarning
from thalabus_graph.search.runner import Runner

SEEN_VOCABULARIES = 1024
"""Vocabulary rows a graph object keeps (the least recently used go first)."""
PREFIX = "vocabulary_"
"""The carrying statement's parameters of the vocabulary read, so they cannot meet the
search's own (``$ontologyid`` becomes ``$vocabulary_ontologyid``)."""
ROW, PLANNED, RAN = "thalabus_vocabulary", "thalabus_planned", "thalabus_ran"
"""The carrying statement's own columns (``cypher/with_vocabulary``): the vocabulary row,
whether the counts were those planned with, and (null on the row an empty search leaves)
that the search returned it."""


def planned_counts(row: Mapping[str, Any]) -> tuple[Any, Any, Any, Any]:
    """What a plan is made with, of a vocabulary row: the node counts with the scope's size,
    the pattern counts, the query's graph-defined categories and its pairs' counts (which
    order a filter pattern's literals, and empty a conjunction)."""
    return row.get("sizes"), row.get("counts"), row.get("defined"), row.get("pair_counts")


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

    def carry(self, name: str, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The statement ``name`` carrying the vocabulary read (``carried``) and its
        parameters: the read's renamed, and the counts the plan was made with."""
        text = carried(cypher_library.load(name, params),
                       cypher_library.load("category_vocabulary", self.params))
        sizes, counts, defined, pair_counts = planned_counts(self.seen)
        return text, {**params, **{PREFIX + k: v for k, v in self.params.items()},
                      f"{PREFIX}planned_sizes": sizes, f"{PREFIX}planned_counts": counts,
                      f"{PREFIX}planned_defined": defined,
                      f"{PREFIX}planned_pair_counts": pair_counts}

    def taken(self, rows: list[Record]) -> list[Record]:
        """The carrying statement's rows as the statement alone returns them, the read's
        row kept.

        Raises:
            StaleVocabulary: the counts differ from ``seen`` (the statement did not run).
        """
        self.row = rows[0][ROW]
        if not rows[0][PLANNED]:
            raise StaleVocabulary(self.row)
        return [{k: v for k, v in row.items() if k not in (ROW, PLANNED, RAN)}
                for row in rows if row[RAN]]

    def settle(self, runner: Runner) -> Mapping[str, Any]:
        """The row read with the query; read now when no statement carried it.

        Raises:
            StaleVocabulary: the counts read now differ from ``seen``.
        """
        if self.row is None:
            self.row = read_row(runner, self.params, plain=True)
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

    def forget(self, key: str) -> None:
        """Forget the row kept for ``key`` (its next query reads afresh)."""
        with self._lock:
            self._rows.pop(key, None)

    def clear(self) -> None:
        """Forget every row."""
        with self._lock:
            self._rows.clear()


@dataclass(frozen=True)
class Attempt:
    """What one evaluation of a query plans with: the counts (``reads``), the read its first
    statement carries when the counts came from a row seen before (``planned``), and the
    warnings of a row read already (None: they come when ``planned`` settles)."""

    reads: QueryReads
    planned: PlannedVocabulary | None = None
    warnings: tuple[QueryWarning, ...] = ()


NOTHING_READ = Attempt(QueryReads())
"""The attempt of a query with no category and no scope: nothing is read."""


class VocabularyAttempt:
    """One evaluation's side of the vocabulary protocol, decided when the plan first asks
    for a count (``attempt``): planned with a row seen before, its first statement carrying
    the read again, or read now on its own; or, after a stale attempt, planned with the fresh
    row (``row``). ``warnings`` settles it once the evaluation ran.

    Args:
        vocabularies: the graph object's vocabulary protocol.
        check: the query's vocabulary check (None: nothing to read).
        fresh: read on its own even when a row was seen (a profiled query: each step's time
            and db hits are then its own).
        row: the fresh row a stale attempt brought back.
    """

    def __init__(self, vocabularies: Vocabularies, check: VocabularyCheck | None, *,
                 fresh: bool, row: Mapping[str, Any] | None = None) -> None:
        self.vocabularies = vocabularies
        self.check = check
        self.fresh = fresh
        self.row = row

    @cached_property
    def attempt(self) -> Attempt:
        """The attempt, decided (and, when it reads on its own, read) on first use.

        Raises:
            DatasetInputError: a parent dataset of the scope does not exist.
            UnknownCategoryError: the check is strict and the row read has warnings.
        """
        if self.check is not None and self.row is not None:
            return self.vocabularies.read(self.check, self.row)
        return self.vocabularies.first(self.check, fresh=self.fresh)

    @property
    def strict(self) -> bool:
        """Whether the query's findings are errors (``strict_categories``)."""
        return self.check is not None and self.check.strict

    @property
    def quiet(self) -> bool:
        """Whether the query's findings are not told (``VocabularyCheck.quiet``)."""
        return self.check is not None and self.check.quiet

    def forget(self) -> None:
        """Forget the row kept for this query's read, after its evaluation failed: a plan
        made with a row seen before runs lookups before the statement that would find the
        row stale (a graph-defined category's documents by the pattern planned with), so a
        failure one of them raised (a definition since replaced) must not outlive it."""
        if self.check is not None:
            self.vocabularies.seen.forget(self.check.key)

    def warnings(self) -> list[QueryWarning]:
        """The warnings of the evaluated attempt (``Vocabularies.settle``).

        Raises:
            StaleVocabulary: the counts read with the query differ from those planned with.
        """
        return self.vocabularies.settle(self.check, self.attempt)


class Vocabularies:
    """The vocabulary protocol of one graph object: the rows its queries read (``seen``),
    each query's read (alone, or carried by its first statement) and the check that its
    parent datasets exist (``datasets``: raises for an unknown one; the read counts them, so
    only a scope naming an unknown one calls it)."""

    def __init__(self, db: Database, datasets: Callable[[Sequence[str]], object]) -> None:
        self.db = db
        self.seen = SeenVocabularies()
        self._datasets = datasets

    def first(self, check: VocabularyCheck | None, *, fresh: bool) -> Attempt:
        """The first attempt of a query: planned with the row a query asking the same read
        before, its first statement carrying the read again, or (never asked, or ``fresh``:
        a profiled query, whose steps then time their own work) read now on its own."""
        if check is None:
            return NOTHING_READ
        seen = None if fresh else self.seen.get(check.key)
        if seen is None:
            return self.read(check)
        return Attempt(check.reads(seen), PlannedVocabulary(check.params, seen))

    def read(self, check: VocabularyCheck, row: Mapping[str, Any] | None = None) -> Attempt:
        """An attempt planned with ``row`` (read now on its own when None), kept for the next
        query asking the same.

        Raises:
            DatasetInputError: a parent dataset of the scope does not exist.
            UnknownCategoryError: the check is strict and the row has warnings.
        """
        if row is None:
            row = read_row(Runner(self.db), check.params)
        self.seen.put(check.key, row)
        warnings, reads = self.judge(check, row)
        return Attempt(reads, None, tuple(warnings))

    def settle(self, check: VocabularyCheck | None, attempt: Attempt) -> list[QueryWarning]:
        """The warnings of an evaluated attempt, from the row its query read.

        Raises:
            StaleVocabulary: the counts read with the query differ from those planned with.
        """
        if check is None or attempt.planned is None:
            return list(attempt.warnings)
        return self.judge(check, attempt.planned.settle(Runner(self.db)))[0]

    def judge(self, check: VocabularyCheck, row: Mapping[str, Any]
              ) -> tuple[list[QueryWarning], QueryReads]:
        """``check.judge`` once the parent datasets the row counted are known to exist."""
        if check.names_unknown_datasets(row) and check.datasetids is not None:
            self._datasets(check.datasetids)
        return check.judge(row)


def check_query(db: Database, node: Node, ontology_id: str | None = None,
                datasetids: Sequence[str] | None = None,
                patterns: Sequence[CategoryPattern] = (), *, strict: bool = False,
                quiet: bool = False) -> tuple[list[QueryWarning], QueryReads]:
    """Warnings for every category name, value and ontology of the query that no stored
    document has (in reading order, each once) and, from the same round trip, what the plan
    would read next: the node counts, the scope's size and the count of every pushed
    pattern; no read when the query has no category and no scope.

    Raises:
        UnknownCategoryError: ``strict`` and there are warnings (before anything runs).
    """
    check = VocabularyCheck.of(node, ontology_id, datasetids, patterns, strict=strict,
                               quiet=quiet)
    if check is None:
        return [], QueryReads()
    return check.judge(read_row(Runner(db), check.params))


def read_row(runner: Runner, params: dict[str, Any], *, plain: bool = False
             ) -> Mapping[str, Any]:
    """The vocabulary read made on its own (``category_vocabulary`` with ``params``): its one
    row, empty when it returns none. ``plain``: the records skip the driver's conversion."""
    rows = runner.alone("category_vocabulary", params, plain=plain)
    return rows[0] if rows else {}
