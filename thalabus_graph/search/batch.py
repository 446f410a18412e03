"""A restricted phrase's searches in one round trip (``search_phrase_filtered``).

A filtered phrase makes a search per source and per text index, each on the path and with the
``k`` the plan chose (``plan.searches.phrase_plan``), and, fused, first reads its unrestricted
statistics. Run one by one that is up to seven round trips after the query's vocabulary read;
``batched`` picks the searches one call can run (the restricted ones sharing the phrase's
restriction, on the exact or index path, the full-text ones, the unrestricted statistics),
and ``PhraseBatch`` runs them in one statement. Each search still books its own step and
takes its rows from the call (``Runner.take``), so the paths, ``k`` and rows are the same as
run one by one; only an over-fetch that fell short asks again on its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from thalabus_graph.errors import GraphError
from thalabus_graph.graph.database import Record
from thalabus_graph.plan.steps import (
    TEXT_LABELS,
    PhraseCall,
    PhrasePlan,
    TextSearch,
    VectorSearch,
)
from thalabus_graph.search.phrase import PhraseSearches
from thalabus_graph.search.runner import EXACT, PHRASE_KEY, BatchKey, Runner, batch_key
from thalabus_graph.search.scope import ScopeReads, restriction_params
from thalabus_graph.search.vector import recovered_by_retry
from thalabus_graph.settings import Settings


class PhraseBatch:
    """Runs the batched searches of a phrase's plan in one call, keeping the rows for the
    searches to take."""

    def __init__(self, runner: Runner, reads: ScopeReads, settings: Settings,
                 vector: Callable[[str], list[float]], phrases: PhraseSearches, *,
                 details: bool, exact_details: bool) -> None:
        self.runner = runner
        self.reads = reads
        self.settings = settings
        self.vector = vector
        self.phrases = phrases
        self.details = details
        self.exact_details = exact_details

    def run(self, plan: PhrasePlan, positions: tuple[int, ...]) -> None:
        """Run the searches at ``positions`` (a group of ``batched``) in one call. When a stored
        vector the cosine cannot compare fails it outside a query's one transaction, nothing
        is kept and the searches run one by one (each recovers as it does alone)."""
        statistics: dict[str, Any] = {"vector_searches": [], "text_searches": []}
        exact: list[dict[str, Any]] = []
        index: list[dict[str, Any]] = []
        texts: list[dict[str, Any]] = []
        candidates: list[dict[str, Any]] = []
        rows_of: dict[BatchKey, list[Record]] = {}
        shared: VectorSearch | TextSearch | None = None
        counts = self.reads.ready().node_counts()
        for i in positions:
            search = plan.searches[i]
            if isinstance(search, PhraseCall):
                params = self.phrases.params(search.phrase, with_text=search.with_text)
                # the statistics are unrestricted: their ontology is null, as the
                # restriction's is (a phrase primes its statistics only without a scope)
                assert params["ontologyid"] is None
                statistics = {key: params[key] for key in statistics}
                rows_of[PHRASE_KEY] = []
                continue
            assert isinstance(search, VectorSearch | TextSearch)
            shared = search
            rows_of[batch_key(search)] = []
            if isinstance(search, TextSearch):
                text = {"source": search.source, "index": search.index, "query": search.query,
                        "k": search.k}
                if search.path == "candidates":
                    candidates.append({**text, "label": TEXT_LABELS[search.source]})
                else:
                    texts.append(text)
            elif search.path == EXACT:
                exact.append({"source": search.source.source, "label": search.source.label,
                              "k": search.top_n})
            else:
                index.append({"source": search.source.source, "index": search.source.index,
                              "k": min(search.k, counts.get(search.source.source, 0)),
                              "top_n": search.top_n})
        assert shared is not None, "a batch has a restricted search"
        vectors = exact or index or statistics["vector_searches"]
        params = {**restriction_params(self.reads.sized(), shared.restriction,
                                       shared.category, details=self.details),
                  **statistics, "exact_searches": exact, "index_searches": index,
                  "filtered_texts": texts, "candidate_texts": candidates,
                  "exact_details": self.exact_details,
                  "rescore": self.settings.vector_quantization,
                  "vector": self.vector(plan.text) if vectors else None}
        try:
            self.runner.run_batch("search_phrase_filtered", rows_of, shared.role, **params)
        except GraphError as exc:
            if self.runner.db.in_one_read() or not recovered_by_retry(exc):
                raise
