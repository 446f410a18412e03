"""The path of a filtered vector search (``plan.cost.choose_vector_path``), on a ``Scope`` value
holding node counts as the query's vocabulary check reads them (no database is read).

Exact cosine reads each filtered fragment once; the vector index visits at least the ``k``
candidates it is asked for, each with its own distance computations. So the exact path is
taken whenever the estimated filtered set is no larger than that over-fetch, not only below
the fixed ``exact_search_max_candidates``: at 1,000,000 chapters a 1% filter asked the index
for 40,000 candidates (583 ms) where an exact scan reads 10,000.
"""

from __future__ import annotations

from typing import Any

import pytest

from thalabus_graph import Settings
from thalabus_graph.plan.cost import (
    Scope,
    choose_text_path,
    choose_vector_path,
    next_overfetch,
)
from thalabus_graph.plan.steps import VECTOR_SOURCES, PathChoice

CHAPTERS = next(src for src in VECTOR_SOURCES if src.source == "chapters")


class _Chooser:
    """The cost model over a graph of ``chapters`` chapters, one per document."""

    def __init__(self, chapters: int, **changes: Any) -> None:
        self.settings = Settings(**{"exact_search_max_candidates": 5000,
                                    "vector_overfetch_factor": 2.0, "vector_min_k": 1000,
                                    "index_max_k": 50_000, **changes})
        self.scope = Scope(counts={"documents": chapters, "chapters": chapters,
                                   "paragraphs": 0, "summaries": 0, "keywords": 0})

    def choose_vector_path(self, src: Any, top_n: int, documents: int) -> PathChoice:
        return choose_vector_path(self.scope, self.settings, src, top_n, documents)


def _executor(chapters: int, **changes: Any) -> _Chooser:
    return _Chooser(chapters, **changes)


@pytest.mark.parametrize(("chapters", "documents", "path", "k"), [
    (1_000_000, 10_000, "exact", 200),    # 1%: 10,000 fragments <= over-fetch 40,000
    (1_000_000, 100_000, "index", 4000),  # 10%: 100,000 fragments > over-fetch 4,000
    (200_000, 20_000, "index", 4000),     # 10%
    (200_000, 2_000, "exact", 200),       # 1%: below exact_search_max_candidates
    (1_000_000, 1_000, "exact", 200),     # 0.1%: the over-fetch 400,000 exceeds index_max_k
    (1_000_000, 500_000, "index", 1000),  # 50%: vector_min_k
])
def test_the_cheaper_path_is_chosen(chapters: int, documents: int, path: str, k: int) -> None:
    choice = _executor(chapters).choose_vector_path(CHAPTERS, 200, documents)
    assert (choice.path, choice.k) == (path, k), choice.reason


def test_exact_when_the_filtered_set_is_no_larger_than_the_over_fetch() -> None:
    ex = _executor(1_000_000, exact_search_max_candidates=0)
    for documents in (1_000, 10_000, 20_000):  # estimated <= 400 / selectivity
        choice = ex.choose_vector_path(CHAPTERS, 200, documents)
        assert choice.path == "exact", (documents, choice.reason)
    choice = ex.choose_vector_path(CHAPTERS, 200, 21_000)  # 21,000 > over-fetch 19,048
    assert choice.path == "index" and choice.k == 19_048, choice.reason


PARAGRAPHS = next(src for src in VECTOR_SOURCES if src.source == "paragraphs")


def test_a_sparse_source_is_not_walked_to_from_every_document() -> None:
    """Exact search reaches fragments from their documents: for a source only a few documents
    have, a scope of 50,000 documents would be walked whole to find 240 paragraphs, where
    the index asked for all 240 returns them with the scope checked on each."""
    chooser = _Chooser(50_000)
    chooser.scope = Scope(counts={"documents": 50_040, "chapters": 50_120, "paragraphs": 240,
                                  "summaries": 0, "keywords": 0})
    choice = chooser.choose_vector_path(PARAGRAPHS, 600, 50_000)
    assert (choice.path, choice.k) == ("index", 240), choice.reason
    small = chooser.choose_vector_path(PARAGRAPHS, 600, 30)  # 30 documents: walk them
    assert small.path == "exact", small.reason
    assert "documents walked" in small.reason
    chapters = chooser.choose_vector_path(CHAPTERS, 200, 3_000)  # one chapter a document
    assert chapters.path == "exact" and "documents walked" not in chapters.reason


def test_by_default_the_index_serves_a_filtered_set_larger_than_its_over_fetch() -> None:
    """With the shipped settings, a 10% filter at 50,000 chapters (5,000 fragments) asks the
    index for its over-fetch (1,500 at a pool of 100, 3,000 at the seed's 200) instead of
    scanning 5,000 fragments exactly (measured 52 against 205 ms at ``limit=10``); a 1%
    filter (500 fragments) is still scanned."""
    scope = Scope(counts={"documents": 50_000, "chapters": 50_000, "paragraphs": 0,
                          "summaries": 0, "keywords": 0})
    settings = Settings()
    for top_n, k in ((100, 1500), (200, 3000)):
        choice = choose_vector_path(scope, settings, CHAPTERS, top_n, 5_000)
        assert (choice.path, choice.k) == ("index", k), choice.reason
    assert choose_vector_path(scope, settings, CHAPTERS, 100, 500).path == "exact"


def test_the_text_lookup_has_its_own_bound() -> None:
    """A filtered full-text search over 2,500 chapters looks its hits up among them by
    default (143 against 165 ms checked on each hit at 50,000 chapters), whatever the
    vector path's bound; below ``text_lookup_max_fragments`` it checks each hit."""
    scope = Scope(counts={"documents": 50_000, "chapters": 50_000, "paragraphs": 0,
                          "summaries": 0, "keywords": 0})
    assert choose_text_path(scope, Settings(), "chapters", 2_500)[0] == "candidates"
    assert choose_text_path(scope, Settings(exact_search_max_candidates=50_000),
                            "chapters", 2_500)[0] == "candidates"
    path, why = choose_text_path(scope, Settings(text_lookup_max_fragments=2_000),
                                 "chapters", 2_500)
    assert path == "index" and "text_lookup_max_fragments 2000" in why


def test_an_over_fetch_that_finds_nothing_turns_to_exact_search_at_once() -> None:
    """A filter whose count is an upper bound (a filter pattern's seeds) may match nothing:
    ``"p" AND SKEW=v50`` held to ``SKEW=v10``, 20,000 seed documents of 200,000 chapters, one
    chapter each. No hit among 3,000 candidates says the index would need more than the
    20,000 fragments exact search walks: it walks them now instead of asking up to
    ``index_max_k``."""
    settings = _executor(200_000).settings
    assert next_overfetch(settings, 3000, 0, 200, 20_000) is None
    # a pass rate that reaches top_n within the walk asks again with twice k
    assert next_overfetch(settings, 3000, 150, 200, 20_000) == 6000
    assert next_overfetch(settings, 3000, 40, 200, 20_000) == 6000  # 15,000 needed
    assert next_overfetch(settings, 3000, 20, 200, 20_000) is None  # 30,000 needed
    # and never past index_max_k
    assert next_overfetch(settings, 32_000, 199, 200, 10_000_000) is None


def test_the_over_fetch_asks_no_more_candidates_than_exact_search_walks() -> None:
    """Whatever the hits, the candidates asked before exact search are bounded by what exact
    search walks (and the first k): the work stays bounded by the filter's count."""
    settings = _executor(1_000_000).settings
    for walked in (5_000, 20_000, 100_000):
        for rate in (0.0, 0.001, 0.01, 0.05):
            k, asked = 1000, 1000
            while (hits := int(k * rate)) < 200:
                nxt = next_overfetch(settings, k, hits, 200, walked)
                if nxt is None:
                    break
                k, asked = nxt, asked + nxt
            assert asked <= max(1000, 4 * walked), (walked, rate, asked)
