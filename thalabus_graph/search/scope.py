"""The reads behind an evaluation's ``Scope`` value (``plan.cost``): the node counts, the
scope's size and the pushed patterns' counts, each read once, when a choice first needs it,
or taken from the query's vocabulary read (``preload``), which makes no round trip for them.

``ScopeReads`` holds the current ``Scope``; every read hands on a new value (``value``), so a
choice made over it sees exactly what was known when it was made.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from thalabus_graph.graph.database import Database
from thalabus_graph.plan.cost import Scope
from thalabus_graph.plan.steps import (
    IN_INDEX_UNKNOWN,
    VECTOR_SOURCES,
    CategoryPattern,
    FilterPattern,
    InIndexFilter,
    Restriction,
    pattern_params,
)
from thalabus_graph.search.runner import Runner
from thalabus_graph.settings import Settings


class ScopeReads:
    """The scope of one evaluation and the reads that complete it.

    Args:
        runner: runs the reads (a pattern's count is a step; the sizes are not).
        ontologyid / datasetids / ids: the scope as the caller gave it.
        in_index: whether the ontology-filtered vector indexes serve.
    """

    def __init__(self, runner: Runner, *, ontologyid: str | None = None,
                 datasetids: Sequence[str] | None = None, ids: Restriction | None = None,
                 in_index: InIndexFilter = IN_INDEX_UNKNOWN) -> None:
        self.runner = runner
        self.value = Scope(ontologyid, None if datasetids is None
                           else tuple(sorted(set(datasetids))), ids, in_index=in_index)
        self._preloaded: dict[CategoryPattern, int] = {}

    def sized(self) -> Scope:
        """The scope with its size known when it has patterns (one read with the node
        counts, ``search_scope_sizes``); nothing is read without patterns."""
        scope = self.value
        if scope.patterned and scope.documents is None:
            row = self.runner.quiet("search_scope_sizes", ontologyid=scope.ontologyid,
                                    datasetids=self.datasetids())[0]
            documents = int(row.pop("scope"))
            self.learn({k: int(v) for k, v in row.items()}, documents)
        return self.value

    def ready(self) -> Scope:
        """The scope with its size and the node counts known (``search_counts`` when no
        other read brought them)."""
        scope = self.sized()
        if scope.counts is None:
            rows = self.runner.quiet("search_counts")
            self.learn({k: int(v) for k, v in rows[0].items()})
        return self.value

    def datasetids(self) -> list[str] | None:
        """The parent datasets as the statements take them (sorted), or None."""
        datasetids = self.value.datasetids
        return None if datasetids is None else list(datasetids)

    def learn(self, counts: Mapping[str, int] | None, documents: int | None = None) -> None:
        """Take node counts and the scope's size another read returned (what is known
        already is kept)."""
        scope = self.value
        if scope.counts is None and counts:
            scope = replace(scope, counts=dict(counts))
        if scope.documents is None and documents is not None and scope.patterned:
            scope = replace(scope, documents=documents)
        self.value = scope

    def preload(self, sizes: dict[str, int] | None,
                counts: Mapping[CategoryPattern, int] | None = None) -> None:
        """Take the node counts, the scope's size and the pushed patterns' counts read with
        the query's vocabulary (``plan.categories.check_query``), so the plan makes no round
        trip for them."""
        self._preloaded.update(counts or {})
        if sizes is not None:
            sizes = dict(sizes)
            documents = sizes.pop("scope")
            self.learn(sizes, documents)

    def without_in_index(self, why: str) -> Scope:
        """The scope once the ontology-filtered index failed: the plain paths from now on."""
        self.value = replace(self.value, in_index=InIndexFilter(False, why))
        return self.value

    def restricted(self, restriction: Restriction | None,
                   category: CategoryPattern | None) -> int:
        """The estimated documents of a search restricted to ``restriction`` (None: the
        scope) and ``category`` (``Scope.restricted_documents``, the counts read first)."""
        scope = self.ready() if restriction is None else self.value
        if category is not None:
            scope = self.count(category)
        return scope.restricted_documents(restriction, category)

    def for_text(self, restriction: Restriction | None,
                 category: CategoryPattern | None) -> Scope:
        """The scope with what a full-text search's ``k`` needs (``plan.cost.text_k``):
        the counts behind its selectivity when it is restricted."""
        if restriction is not None or self.sized().scoped() or category is not None:
            self.restricted(restriction, category)
            self.ready()
        return self.value

    def count(self, category: CategoryPattern) -> Scope:
        """The scope with the count of ``category`` known: documents of the scope's ontology
        having the pattern (or, negated, not having it), one read per evaluation (or taken
        from the vocabulary read), shown as a ``category_count`` step."""
        if category in self.value.pattern_counts:
            return self.value
        step = self.runner.step("category_count", {**category.to_dict(),
                                                   "pushed_as": "pattern"})
        if category in self._preloaded:  # read with the vocabulary
            having = self._preloaded[category]
            step.cypher = "category_vocabulary"
            step.detail["read"] = "with the query's vocabulary, in its round trip"
        else:  # the same statement, asked for this pattern's count alone
            rows = self.runner.read(step, "category_vocabulary", names=[], values=[],
                                    exact_names=[], exact_pairs=[],
                                    ontologyid=self.value.ontologyid,
                                    datasetids=self.datasetids(),
                                    patterns=[pattern_params(category)])
            having = int(rows[0]["counts"][0])
            self.preload({k: int(v) for k, v in rows[0]["sizes"].items()})
        # NOT: the scope's documents without the category's; with an id scope the count is
        # not within it, so the scope's size stays the (upper-bound) estimate.
        if category.negated and not isinstance(category, FilterPattern):
            scope = self.value if self.value.ids is not None else self.ready()
            having = (scope.scope_documents() if scope.ids is not None
                      else max(scope.scope_documents() - having, 0))
        self.value = replace(self.value,
                             pattern_counts={**self.value.pattern_counts, category: having})
        step.rows = 0
        step.detail["documents"] = having
        if self.sized().bounds_filter(category):
            step.detail["estimate"] = (
                "upper bound: the seed values' documents" if isinstance(category, FilterPattern)
                and category.seeds() is not None
                else "upper bound: the documents less each conjunction's largest excluded value")
        return self.value


def restriction_params(scope: Scope, restriction: Restriction | None,
                       category: CategoryPattern | None, *, details: bool) -> dict[str, Any]:
    """The restriction parameters of the search statements: the id list (or null), the scope
    patterns, the category pattern (or nulls) and whether rows carry their documents'
    details."""
    return {"documentids": None if restriction is None else sorted(restriction),
            **scope.pattern_parameters(), **pattern_params(category), "details": details}


class InIndexState:
    """Whether the ontology-filtered vector indexes (migrations V0007 and V0010, Neo4j
    2026.01+) can serve: all of them ONLINE (``search_vector_in_index`` names each) and the
    setting ``vector_in_index_filter`` on. Read at most once per ``recheck_seconds`` (an
    index dropped or built meanwhile is seen at the next read); not read without an
    ontology, which never uses them."""

    def __init__(self, db: Database, settings: Settings, recheck_seconds: float) -> None:
        self.db = db
        self.settings = settings
        self.recheck_seconds = recheck_seconds
        self._read: tuple[float, InIndexFilter] | None = None

    def forget(self) -> None:
        """Read the indexes' state again at the next search (a migration may build them)."""
        self._read = None

    def state(self, ontologyid: str | None) -> InIndexFilter:
        """Whether searches scoped to ``ontologyid`` can use the filtered indexes, and if not,
        why."""
        if ontologyid is None:
            return IN_INDEX_UNKNOWN
        if not self.settings.vector_in_index_filter:
            return InIndexFilter(False, "switched off (vector_in_index_filter)")
        now = time.monotonic()
        if self._read is None or now - self._read[0] > self.recheck_seconds:
            names = [src.filtered_index for src in VECTOR_SOURCES]
            online = {r["name"] for r in Runner(self.db).alone("search_filtered_indexes",
                                                               {"names": names})}
            missing = [name for name in names if name not in online]
            found = (InIndexFilter(True) if not missing else InIndexFilter(
                False, f"{', '.join(missing)} not ONLINE (migration V0007 builds them on "
                "Neo4j 2026.01 or newer, V0010 questions_ontology)"))
            self._read = (now, found)
        return self._read[1]
