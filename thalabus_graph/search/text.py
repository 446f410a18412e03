"""Full-text searches on chapters and keywords, each with the ``k`` the plan chose: a TEXT term
(phrase mode, optionally case sensitive) or a phrase's bag of words (fused into semantic
phrases). Scores are divided by the best hit of each index's unrestricted (scoped) search,
read once per term."""

from __future__ import annotations

from typing import Any

from thalabus_graph.fragments import Fragment
from thalabus_graph.graph.database import Record
from thalabus_graph.plan import cost
from thalabus_graph.plan.steps import (
    TEXT_LABELS,
    CategoryPattern,
    Restriction,
    Step,
    TextSearch,
)
from thalabus_graph.search.hits import hits_of, text_fragments
from thalabus_graph.search.runner import Runner, batch_key
from thalabus_graph.search.scope import ScopeReads, restriction_params
from thalabus_graph.settings import Settings


class TextSearches:
    """Runs chosen full-text searches (one step each); ``best`` caches each normalisation
    divisor by (index, Lucene query, exact text)."""

    def __init__(self, runner: Runner, reads: ScopeReads, settings: Settings, *,
                 details: bool) -> None:
        self.runner = runner
        self.reads = reads
        self.settings = settings
        self.details = details
        self.best: dict[tuple[str, str, str | None], float] = {}

    def run(self, search: TextSearch) -> list[Fragment]:
        """The fragments of one chosen search, scores divided by the best hit of the index's
        unrestricted search; the case-sensitive form keeps hits containing the term."""
        step = self.runner.step("text", dict(search.detail))
        if search.k is None:
            return []
        exact = search.term if search.case_sensitive else None
        # a batched call ran it (search.batch)
        batched = self.runner.take(step, batch_key(search))
        if batched is not None:
            rows = self._ordered(batched, exact)
        else:
            rows = self._fulltext(step, search.index, search.query, search.restriction, exact,
                                  search.category, search.k,
                                  label=(TEXT_LABELS[search.source]
                                         if search.path == "candidates" else None))
        if search.own_best:
            best = rows[0]["score"] if rows else 0.0
        else:
            best = self._best(search.index, search.query, exact)
        return text_fragments(self.settings, search.source, hits_of(rows), float(best))

    def _fulltext(self, step: Step | None, index: str, query: str,
                  restriction: Restriction | None, exact: str | None,
                  category: CategoryPattern | None, k: int, *,
                  label: str | None = None) -> list[Record]:
        """Full-text rows best first, restricted with over-fetch ``k``, optionally kept only
        where the text contains ``exact``; with ``label``, the hits are looked up among the
        restricted documents' fragments of that label (the ``candidates`` path)."""
        patterns = restriction_params(self.reads.sized(), restriction, category,
                                      details=self.details)
        params: dict[str, Any] = {"index": index, "query": query, "k": k, **patterns}
        if step is None:
            rows = self.runner.quiet("search_fulltext", **params)
        elif label is not None:
            rows = self.runner.read(step, "search_fulltext_candidates", label=label, **params)
        else:
            rows = self.runner.read(step, "search_fulltext", **params)
        return self._ordered(rows, exact)

    def _ordered(self, rows: list[Record], exact: str | None) -> list[Record]:
        """Full-text rows best first, kept only where the text contains ``exact`` (if given).

        A text the statement cut to the result bound (``Runner.text_cap``) that lacks
        ``exact`` in its returned part is asked about whole on the server
        (``fragment_texts_contain``), so the bound never loses a case-sensitive hit."""
        rows = sorted(rows, key=lambda r: (-r["score"], r["fragmentid"]))
        if exact is None:
            return rows
        cap = self.runner.text_cap
        unsure = [r["fragmentid"] for r in rows
                  if len(r["text"] or "") >= cap and exact not in r["text"]]
        whole = ({r["fragmentid"] for r in self.runner.quiet(
            "fragment_texts_contain", fragmentids=unsure, term=exact)} if unsure else set())
        return [r for r in rows if exact in (r["text"] or "") or r["fragmentid"] in whole]

    def _best(self, index: str, query: str, exact: str | None) -> float:
        """The best score of the unrestricted (scoped) search: the normalisation divisor."""
        key = (index, query, exact)
        if key not in self.best:
            ids = self.reads.value.ids
            k = cost.text_k(self.reads.for_text(ids, None), self.settings, ids, None,
                            case_sensitive=exact is not None)
            rows = self._fulltext(None, index, query, ids, exact, None, k)
            self.best[key] = float(rows[0]["score"]) if rows else 0.0
        return self.best[key]
