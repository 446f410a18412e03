"""Checks a query's category filters and ontology against the stored vocabulary before it runs.

A misspelt category name or value matches no document, and under NOT it then matches every
document: ``"pizza" AND NOT difficulty=easy`` would return the ``DIFFICULTY=easy`` documents it
meant to exclude. One read (``category_vocabulary``), restricted to the names and values the
query uses and compared without letter case, turns each such silent miss into a warning, with
a "did you mean": the stored spelling when only the case differs, else the closest stored
name, value of that name or ontology id, by edit distance (``difflib``; a typo such as
``COUNTRYY`` or ``asylun``). The read returns the spellings a suggestion is chosen from only
when a pair or the ontology is not stored as written, so a query without a miss reads nothing
more.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from thalabus_graph.errors import UnknownCategoryError
from thalabus_graph.plan.seeds import PairCounts, ordered, seed_count
from thalabus_graph.plan.steps import CategoryPattern, FilterPattern, pattern_params
from thalabus_graph.query import Category, Node, category_predicates
from thalabus_graph.query.ast import id_form, id_list
from thalabus_graph.query_warning import QueryWarning

UNKNOWN_NAME = "unknown_category_name"
UNKNOWN_VALUE = "unknown_category_value"
UNKNOWN_ONTOLOGY = "unknown_ontology"
CASE_MISMATCH = "case_mismatch"
DATASETS_FOUND = "datasets_found"
"""The key of the read's sizes counting the scope's parent datasets that exist."""


@dataclass(frozen=True)
class _Vocabulary:
    names: frozenset[str]
    pairs: frozenset[tuple[str, str]]
    ontologies: tuple[str, ...]
    sizes: dict[str, int] | None = None
    counts: tuple[int, ...] = ()
    defined: dict[str, str] = field(default_factory=dict)
    known_names: tuple[str, ...] = ()
    known_pairs: frozenset[tuple[str, str]] = frozenset()
    known_ontologies: tuple[str, ...] = ()
    pair_counts: dict[tuple[str, str], int] = field(default_factory=dict)


@dataclass(frozen=True)
class QueryReads:
    """What the plan needs that the vocabulary read returned in the same round trip:
    ``sizes`` the node counts and the scope's size (``scope``), ``counts`` how many documents
    of the scope have each pattern the plan pushes (``SearchExecutor.preload``; a filter
    pattern also in the order ``pair_counts`` gives it, ``seeds.ordered``),
    ``definitions`` the pattern of each graph-defined category name of the query,
    ``pair_counts`` how many documents have each (name, value) pair the query names, as
    written (0: none; graph-defined names have no count), which order a filter pattern's
    literals."""

    sizes: dict[str, int] | None = None
    counts: dict[CategoryPattern, int] = field(default_factory=dict)
    definitions: dict[str, str] = field(default_factory=dict)
    pair_counts: PairCounts = field(default_factory=dict)


@dataclass(frozen=True)
class VocabularyCheck:
    """One query's vocabulary read: its parameters (the category names, values and patterns
    the query uses, and its scope) and what to make of the row it returns. ``key`` names the
    read, so a query asking the same can plan with the counts the read last returned
    (``search.vocabulary``)."""

    predicates: tuple[Category, ...]
    ontology_id: str | None
    datasetids: tuple[str, ...] | None
    patterns: tuple[CategoryPattern, ...]
    strict: bool = False
    quiet: bool = False
    """Judge nothing: no warning, no error (a query held to a required filter's view)."""

    @classmethod
    def of(cls, node: Node, ontology_id: str | None = None,
           datasetids: Sequence[str] | None = None,
           patterns: Sequence[CategoryPattern] = (), *, strict: bool = False,
           quiet: bool = False) -> VocabularyCheck | None:
        """The check of ``node`` in its scope (None: the query has no category and no scope,
        and nothing is read). The read also says which names are graph-defined (``defined``):
        their values are whatever the pattern matches, so they get no warning."""
        predicates = tuple(category_predicates(node))
        ontology_id = id_form(ontology_id)
        datasetids = id_list(datasetids, "subset_of_datasetids")
        if not predicates and ontology_id is None and datasetids is None:
            return None
        return cls(predicates, ontology_id, None if datasetids is None else tuple(datasetids),
                   tuple(patterns), strict and not quiet, quiet)

    @cached_property
    def params(self) -> dict[str, Any]:
        """The parameters of ``category_vocabulary`` for this query."""
        predicates = self.predicates
        return {"names": sorted({p.name.lower() for p in predicates}),
                "values": sorted({v.lower() for p in predicates for v in p.values}),
                "exact_names": sorted({p.name for p in predicates}),
                "exact_pairs": [list(pair) for pair in
                                sorted({(p.name, v) for p in predicates for v in p.values})],
                "ontologyid": self.ontology_id,
                "datasetids": None if self.datasetids is None else list(self.datasetids),
                "patterns": [pattern_params(pattern) for pattern in self.patterns]}

    @cached_property
    def key(self) -> str:
        """The read's parameters as one string: two queries with the same key read the same."""
        return json.dumps(self.params, sort_keys=True)

    def judge(self, row: Mapping[str, Any]) -> tuple[list[QueryWarning], QueryReads]:
        """The warnings and the plan's reads from the row the read returned.

        Raises:
            UnknownCategoryError: ``strict`` and there are warnings.
        """
        vocabulary = _vocabulary(row)
        predicates = [p for p in self.predicates if p.name not in vocabulary.defined]
        warnings = [] if self.quiet else _warnings(vocabulary, predicates, self.ontology_id)
        if self.strict and warnings:
            raise UnknownCategoryError(warnings)
        return warnings, self._reads(vocabulary)

    def reads(self, row: Mapping[str, Any]) -> QueryReads:
        """What the plan reads of the row: the node counts with the scope's size, and each
        pushed pattern's count."""
        return self._reads(_vocabulary(row))

    def _reads(self, vocabulary: _Vocabulary) -> QueryReads:
        sizes = vocabulary.sizes
        if sizes is not None:
            sizes = {k: v for k, v in sizes.items() if k != DATASETS_FOUND}
        pair_counts = {pair: n for pair, n in vocabulary.pair_counts.items()
                       if pair[0] not in vocabulary.defined}
        counts = dict(zip(self.patterns, vocabulary.counts, strict=True))
        for pattern, n in list(counts.items()):
            if isinstance(pattern, FilterPattern):
                counts.setdefault(*_ordered_count(pattern, n, pair_counts))
        return QueryReads(sizes, counts, dict(vocabulary.defined), pair_counts)

    def names_unknown_datasets(self, row: Mapping[str, Any]) -> bool:
        """Whether a parent dataset of the scope does not exist, by the row's count of
        those found (the read checks them, so the scope needs no round trip of its own)."""
        if self.datasetids is None:
            return False
        found = (row.get("sizes") or {}).get(DATASETS_FOUND)
        return found is None or int(found) < len(set(self.datasetids))


def _ordered_count(pattern: FilterPattern, n: int, pair_counts: PairCounts
                   ) -> tuple[FilterPattern, int]:
    """``pattern`` as the plan pushes it, its literals ordered by ``pair_counts``
    (``seeds.ordered``), and its count: what the read gives it, from its seeds' counts when
    that is lower (both count the same documents: the read's exact count, or the seed values'
    documents summed, an upper bound, which the smaller seeds bring down)."""
    best = ordered(pattern, pair_counts)
    bound = seed_count(best, pair_counts)
    return best, n if bound is None else min(n, bound)


def _warnings(vocabulary: _Vocabulary, predicates: list[Category],
              ontology_id: str | None) -> list[QueryWarning]:
    warnings: list[QueryWarning] = []
    if ontology_id is not None and ontology_id not in vocabulary.ontologies:
        warnings.append(_ontology_warning(ontology_id, vocabulary.ontologies,
                                          vocabulary.known_ontologies))
    seen: set[tuple[str, str | None]] = set()
    for predicate in predicates:
        for finding in _predicate_warnings(predicate, vocabulary):
            key = (finding.kind, finding.subject)
            if key not in seen:
                seen.add(key)
                warnings.append(finding)
    return warnings


def _vocabulary(row: Mapping[str, Any]) -> _Vocabulary:
    sizes = row.get("sizes")
    return _Vocabulary(frozenset(row.get("names") or ()),
                       frozenset((n, v) for n, v in row.get("pairs") or ()),
                       tuple(row.get("ontologies") or ()),
                       None if sizes is None else {k: int(v) for k, v in sizes.items()},
                       tuple(int(n) for n in row.get("counts") or ()),
                       {name: pattern for name, pattern in row.get("defined") or ()},
                       tuple(row.get("known_names") or ()),
                       frozenset((n, v) for n, v in row.get("known_pairs") or ()),
                       tuple(row.get("known_ontologies") or ()),
                       {(name, value): int(n)
                        for name, value, n in row.get("pair_counts") or ()})


def _case_matches(asked: str, stored: frozenset[str] | tuple[str, ...]) -> list[str]:
    return sorted(s for s in stored if s.lower() == asked.lower())


SIMILAR = 0.7
"""How alike (``difflib``'s ratio, without letter case) a stored spelling must be to be
suggested for a typo: ``COUNTRYY`` -> ``COUNTRY`` (0.93), ``IQ`` -> ``IR`` not (0.5)."""


def _closest(asked: str, stored: Iterable[str]) -> str | None:
    """The stored spelling most like ``asked`` by edit distance, without letter case, or None
    when none is alike enough (``SIMILAR``)."""
    by_lower: dict[str, str] = {}
    for spelling in sorted(stored):
        by_lower.setdefault(spelling.lower(), spelling)
    found = difflib.get_close_matches(asked.lower(), list(by_lower), n=1, cutoff=SIMILAR)
    return by_lower[found[0]] if found else None


def _ontology_warning(ontology_id: str, stored: tuple[str, ...],
                     known: tuple[str, ...] = ()) -> QueryWarning:
    matches = _case_matches(ontology_id, stored)
    if matches:
        return QueryWarning(CASE_MISMATCH, ontology_id, matches[0],
                            f"ontology {ontology_id!r} does not exist (the scope is empty); "
                            f"did you mean {matches[0]!r}?")
    closest = _closest(ontology_id, known)
    hint = "" if closest is None else f"; did you mean {closest!r}?"
    return QueryWarning(UNKNOWN_ONTOLOGY, ontology_id, closest,
                        f"unknown ontology {ontology_id!r}: no document is in it "
                        f"(the scope is empty){hint}")


def _predicate_warnings(predicate: Category, vocabulary: _Vocabulary) -> list[QueryWarning]:
    name = predicate.name
    if name not in vocabulary.names:
        matches = _case_matches(name, vocabulary.names)
        if matches:
            return [QueryWarning(CASE_MISMATCH, name, matches[0],
                                 f"category name {name!r} matches no document (and under "
                                 f"NOT every document); did you mean {matches[0]!r}?")]
        closest = _closest(name, vocabulary.known_names)
        hint = "" if closest is None else f"; did you mean {closest!r}?"
        return [QueryWarning(UNKNOWN_NAME, name, closest,
                             f"unknown category name {name!r}: it matches no document "
                             f"(and under NOT every document){hint}")]
    out: list[QueryWarning] = []
    stored_values = frozenset(v for n, v in vocabulary.pairs if n == name)
    for value in predicate.values:
        if value in stored_values:
            continue
        subject = f"{name}={value}"
        matches = _case_matches(value, stored_values)
        if matches:
            out.append(QueryWarning(CASE_MISMATCH, subject, f"{name}={matches[0]}",
                                    f"category value {subject} matches no document; "
                                    f"did you mean {name}={matches[0]}?"))
        else:
            closest = _closest(value, (v for n, v in vocabulary.known_pairs if n == name))
            suggestion = None if closest is None else f"{name}={closest}"
            hint = "" if suggestion is None else f"; did you mean {suggestion}?"
            out.append(QueryWarning(UNKNOWN_VALUE, subject, suggestion,
                                    f"unknown category value {subject}: no document has "
                                    f"it{hint}"))
    return out
