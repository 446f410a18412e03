"""The document lookups of a plan: a category's documents, many categories' in one round
trip, the categories of a few hits' documents, and the universe (every document of the
scope) that NOT and TRUE need as a set."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from thalabus_graph.graph.category_definitions import CategoryDefinition
from thalabus_graph.plan.categories import UNKNOWN_VALUE
from thalabus_graph.plan.steps import Restriction, Step
from thalabus_graph.query_warning import QueryWarning
from thalabus_graph.search.hits import id_set
from thalabus_graph.search.runner import Runner
from thalabus_graph.search.scope import ScopeReads


class Lookups:
    """Document lookups within one evaluation's scope (the universe read once)."""

    def __init__(self, runner: Runner, reads: ScopeReads,
                 definitions: Mapping[str, CategoryDefinition] | None = None) -> None:
        self.runner = runner
        self.reads = reads
        self.definitions = dict(definitions or {})
        """The graph-defined categories the query uses, by name."""
        self.unselected: dict[tuple[str, str], None] = {}
        """The graph-defined (name, value) pairs whose pattern selected no document of the
        scope, in the order read (``defined_warnings``)."""
        self._universe: Restriction | None = None

    def category_documents(self, name: str, values: Sequence[str]) -> Restriction:
        """Documents having any of ``values`` for category ``name`` (within the scope)."""
        step = self.runner.step("category", {"name": name, "values": list(values)})
        rows = self.runner.read(step, "search_category", name=name, values=list(values),
                                **self.reads.sized().pattern_parameters())
        docs = id_set(rows)
        step.rows = len(docs)
        ids = self.reads.value.ids
        return docs if ids is None else docs & ids

    def pair_documents(self, pairs: Sequence[tuple[str, str]]
                       ) -> dict[tuple[str, str], Restriction]:
        """The documents of many category (name, value) pairs in one round trip, within the
        scope patterns (not the id scope): a query's categories are read once, however many
        it has. Pairs no document has map to the empty set."""
        out: dict[tuple[str, str], Restriction] = {pair: frozenset() for pair in pairs}
        out.update(self._defined_documents([p for p in pairs if p[0] in self.definitions]))
        pairs = [pair for pair in pairs if pair[0] not in self.definitions]
        if pairs:
            step = self.runner.step("category", {"pairs": len(pairs)})
            rows = self.runner.read(step, "explain_category_documents",
                                    pairs=[list(p) for p in pairs],
                                    **self.reads.sized().pattern_parameters())
            for row in rows:
                out[(row["name"], row["value"])] = frozenset(row["documentids"])
        return out

    def _defined_documents(self, pairs: Sequence[tuple[str, str]]
                           ) -> dict[tuple[str, str], Restriction]:
        """The documents of graph-defined category pairs: one read per defined name, its
        values a parameter, within the scope patterns."""
        out: dict[tuple[str, str], Restriction] = {}
        for name in sorted({name for name, _ in pairs}):
            values = sorted({value for n, value in pairs if n == name})
            step = self.runner.step("category", {"name": name, "values": values,
                                                 "defined_by": "a graph pattern"})
            params = {"values": values, **self.reads.sized().pattern_parameters()}
            rows = self.runner.read_composed(step, self.definitions[name].statement(params),
                                             "defined_category_documents", **params)
            for row in rows:
                out[(name, row["value"])] = frozenset(row["documentids"])
            self.unselected.update(dict.fromkeys((name, v) for v in values
                                                 if (name, v) not in out))
        return out

    def defined_warnings(self) -> list[QueryWarning]:
        """A warning for each graph-defined value whose pattern selected no document of the
        scope, as a stored value no document has gets one (``unknown_category_value``):
        a misspelt principal's filter says so instead of answering nothing in silence."""
        return [QueryWarning(UNKNOWN_VALUE, f"{name}={value}", None,
                             f"no document of the query's scope has {name}={value}: the "
                             f"pattern defining {name} selects none for {value!r}")
                for name, value in self.unselected]

    def document_categories(self, documentids: Iterable[str]
                            ) -> dict[tuple[str, str], set[str]]:
        """(name, value) -> which of ``documentids`` have it: one read for a few documents
        (the hits of a phrase whose filter was pushed as a pattern)."""
        step = self.runner.step("category", {"hits": 0, "pushed_as": "pattern"})
        ids = sorted(documentids)
        step.detail["hits"] = len(ids)
        having: dict[tuple[str, str], set[str]] = {}
        for row in self.runner.read(step, "document_category_keys", documentids=ids):
            for name, value in row["categories"]:
                having.setdefault((name, value), set()).add(row["documentid"])
        return having

    def universe(self) -> Restriction:
        """Every document of the scope (all documents when there is no scope), read once per
        evaluation: only NOT and TRUE need the scope as a set."""
        ids = self.reads.value.ids
        if ids is not None:
            return ids
        if self._universe is None:
            params = self.reads.sized().pattern_parameters()
            scope = {k: v for k, v in params.items() if v is not None}
            step = Step("universe", dict(scope))
            self.runner.steps.append(step)
            rows = (self.runner.read(step, "universe_scope_documents", **params)
                    if scope else self.runner.read(step, "universe_all_documents"))
            self._universe = id_set(rows)
            step.rows = len(self._universe)
        return self._universe
