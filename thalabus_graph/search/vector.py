"""Vector searches over chapters, paragraphs and summaries, each run on the path the plan chose
(``plan.searches.phrase_plan``, by ``plan.cost.choose_vector_path``): unfiltered on the index,
exact cosine, the index with over-fetch, or the ontology-filtered index (``in-index``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from thalabus_graph.errors import GraphError
from thalabus_graph.fragments import Fragment
from thalabus_graph.graph.database import Record
from thalabus_graph.plan import cost
from thalabus_graph.plan.steps import Step, VectorSearch, VectorSource, in_index_params
from thalabus_graph.search.hits import hits_of, semantic_fragments
from thalabus_graph.search.runner import Runner, batch_key
from thalabus_graph.search.scope import ScopeReads, restriction_params
from thalabus_graph.settings import Settings

INVALID_VECTOR = "not a valid vector"
"""What Neo4j's ``vector.similarity.cosine`` says of a zero or non-finite stored vector."""


def bad_stored_vector(exc: GraphError) -> bool:
    """Whether ``exc`` is Neo4j's cosine refusing a stored vector (zero or not finite)."""
    return INVALID_VECTOR in str(exc.__cause__ or exc)


def recovered_by_retry(exc: GraphError) -> bool:
    """Whether the vector searches recover from ``exc`` when each statement has its own
    transaction: a bad stored vector (exact search again without it) or an ontology-filtered
    index gone since its state was read (the plain paths). Inside a query's one transaction
    the failure ends the transaction, so the query runs again that way."""
    return bad_stored_vector(exc) or str(exc).startswith("search_vector_in_index")


class VectorSearches:
    """Runs chosen vector searches (one step each), deciding nothing but the over-fetch's
    retries and the fallback from a failed ontology-filtered index."""

    def __init__(self, runner: Runner, reads: ScopeReads, settings: Settings,
                 vector: Callable[[str], list[float]], *, details: bool,
                 exact_details: bool = False) -> None:
        self.runner = runner
        self.reads = reads
        self.settings = settings
        self.vector = vector
        self.details = details
        self.exact_details = exact_details or details

    def run(self, search: VectorSearch) -> list[Fragment]:
        """The fragments of one chosen search (its factor, cap and floor applied)."""
        step = self.runner.step("semantic", dict(search.detail))
        rows = self._rows(step, search)
        return semantic_fragments(self.settings, search.source, hits_of(rows))

    def _rows(self, step: Step, search: VectorSearch) -> list[Record]:
        src, top_n = search.source, search.top_n
        if search.path in ("skipped", "none"):
            return []
        batched = (self.runner.take(step, batch_key(search))
                   if search.filtered else None)  # a batched call ran it (search.batch)
        if batched is not None and search.path == "exact":
            return batched
        vector = self.vector(search.phrase)
        patterns = restriction_params(self.reads.sized(), search.restriction,
                                      search.category, details=self.details)
        if not search.filtered:
            return self.runner.read(step, "search_vector", index=src.index, k=search.k,
                                    top_n=top_n, vector=vector, **patterns)
        if search.path == "in-index":
            try:
                return self._index(step, src, vector, top_n, search.k, patterns,
                                   in_index=True)
            except GraphError as exc:
                if self.runner.db.in_one_read():
                    raise  # the failure ended the query's transaction: see recovered_by_retry
                # The filtered index was dropped (or is rebuilding) since its state was read:
                # this evaluation takes the plain paths, and explain says why.
                scope = self.reads.without_in_index(f"the in-index search failed: {exc}")
                choice = cost.choose_vector_path(scope, self.settings, src, top_n,
                                                 step.detail["filtered_documents"])
                step.detail.pop("overfetch_k", None)
                step.detail.update(choice.to_dict())
                if choice.path == "none":
                    return []
                if choice.path == "index":
                    return self._index(step, src, vector, top_n, choice.k, patterns,
                                       in_index=False)
        if search.path in ("exact", "in-index"):
            return self._exact(step, src, vector, top_n,
                               {**patterns, "details": self.exact_details})
        return self._index(step, src, vector, top_n, search.k, patterns, in_index=False,
                           first=batched)

    def _index(self, step: Step, src: VectorSource, vector: list[float], top_n: int,
               k: int, patterns: dict[str, Any], *, in_index: bool,
               first: list[Record] | None = None) -> list[Record]:
        """An over-fetched index search (the ontology-filtered index with ``in_index``),
        asked again with twice the k while the restrictions leave fewer than ``top_n`` hits,
        exact search when that would pass ``index_max_k`` or when exact search would walk
        no more than the hit rate seen needs (``plan.cost.next_overfetch``). ``first``: the
        rows of the first call, when a batched call made it."""
        total = self.reads.ready().node_counts().get(src.source, 0)
        walked = cost.walked(step.detail)
        while True:
            if first is not None:
                rows, first = first, None
            elif in_index:
                rows = self.runner.read(step, "search_vector_in_index",
                                        index=src.filtered_index, k=min(k, total),
                                        top_n=top_n, vector=vector,
                                        **in_index_params(patterns))
            else:
                rows = self.runner.read(step, "search_vector", index=src.index,
                                        k=min(k, total), top_n=top_n, vector=vector,
                                        **patterns)
            if len(rows) >= top_n or k >= total:
                return sorted(rows, key=lambda r: (-r["score"], r["fragmentid"]))[:top_n]
            again = cost.next_overfetch(self.settings, k, len(rows), top_n, walked)
            if again is None:
                step.detail.update(path="exact", reason="over-fetch fell short; exact fallback")
                return self._exact(step, src, vector, top_n, patterns)
            k = again
            step.detail["overfetch_k"] = k

    def _exact(self, step: Step, src: VectorSource, vector: list[float], top_n: int,
               patterns: dict[str, Any]) -> list[Record]:
        """Exact cosine over the restricted fragments; when a stored vector the cosine cannot
        compare (written before ingest checked vectors) makes the statement fail, the same
        search again skipping such vectors, and the step says so."""
        try:
            return self.runner.read(step, "search_vector_exact", label=src.label,
                                    vector=vector, k=top_n, **patterns)
        except GraphError as exc:
            # inside a query's one transaction the failure ended it: the query runs again
            # with a transaction a statement (``Queries.answer``), and this retry then works
            if not bad_stored_vector(exc) or self.runner.db.in_one_read():
                raise
        step.detail["skipped_bad_vectors"] = (
            "a stored vector the cosine cannot compare was skipped; "
            "`thalabus-graph migrations repair-vectors` removes it")
        return self.runner.read(step, "search_vector_exact_guarded", label=src.label,
                                vector=vector, k=top_n, **patterns)
