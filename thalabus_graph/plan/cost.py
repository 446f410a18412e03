"""The cost model: the path and ``k`` of every search, chosen over one ``Scope`` value.

A ``Scope`` is what an evaluation knows about where it searches: the ontology and parent
datasets every statement checks as patterns, an id scope, the node counts, how many documents
the scope keeps, the pushed patterns' counts and whether the ontology-filtered vector indexes
serve. It is small and immutable: the searches (``search.scope.ScopeReads``) read what is
missing and hand on a new value, and these functions only compute. The same functions choose
for explain and for the run, so both show one decision.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from thalabus_graph.errors import ConfigurationError
from thalabus_graph.plan.steps import (
    IN_INDEX_UNKNOWN,
    CategoryPattern,
    FilterPattern,
    InIndexFilter,
    PathChoice,
    Restriction,
    TextPath,
    VectorSource,
)
from thalabus_graph.query.ast import And, Node, Not, Semantic, Text, fold
from thalabus_graph.settings import Settings


@dataclass(frozen=True)
class Scope:
    """Where one evaluation searches, and the counts that size its searches.

    Attributes:
        ontologyid: the ontology every search checks (``$ontologyid``), or None.
        datasetids: the parent datasets every search checks (``$datasetids``), sorted, or None.
        ids: an id scope (every search within these documents), or None.
        counts: node counts per label (documents, chapters, ...); None until read.
        documents: how many documents the ontology / dataset patterns keep; None until read
            (and without those patterns).
        in_index: whether the ontology-filtered vector indexes can serve, and why not.
        pattern_counts: documents of the scope having each pushed pattern (negations
            resolved), as read.
    """

    ontologyid: str | None = None
    datasetids: tuple[str, ...] | None = None
    ids: Restriction | None = None
    counts: Mapping[str, int] | None = None
    documents: int | None = None
    in_index: InIndexFilter = IN_INDEX_UNKNOWN
    pattern_counts: Mapping[CategoryPattern, int] = field(default_factory=dict)

    @property
    def patterned(self) -> bool:
        """Whether the scope has an ontology or parent datasets (checked as patterns)."""
        return self.ontologyid is not None or self.datasetids is not None

    def node_counts(self) -> Mapping[str, int]:
        """The node counts (read before any choice that needs them)."""
        assert self.counts is not None, "the node counts are read before they are used"
        return self.counts

    def scoped(self) -> bool:
        """Whether the scope patterns restrict anything: false without them and when they
        keep every document."""
        if not self.patterned:
            return False
        assert self.documents is not None, "the scope's size is read before it is used"
        return self.documents < self.node_counts()["documents"]

    def ontology_pattern(self) -> str | None:
        """The ontology every search checks: None without one, or when the scope holds every
        document (checking it would change nothing and cost a lookup per candidate)."""
        return self.ontologyid if self.scoped() else None

    def dataset_pattern(self) -> list[str] | None:
        """The parent datasets every search checks: None without them, or when the scope
        holds every document."""
        return None if self.datasetids is None or not self.scoped() else list(self.datasetids)

    def pattern_parameters(self) -> dict[str, Any]:
        """The scope parameters of every search statement (each null when not restricting)."""
        return {"ontologyid": self.ontology_pattern(), "datasetids": self.dataset_pattern()}

    def scope_documents(self) -> int:
        """How many documents the scope keeps (the id set's size, else the patterns', else
        every document): the denominator of a restriction's selectivity within the scope."""
        if self.ids is not None:
            return len(self.ids)
        if self.scoped():
            assert self.documents is not None
            return self.documents
        return self.node_counts()["documents"]

    def effective(self, restriction: Restriction | None) -> Restriction | None:
        """The restriction a search applies: the id scope intersected with ``restriction``.
        A restriction that keeps every document is none: searching unfiltered gives the same
        fragments without shipping every document id to the server."""
        if restriction is None:
            return self.ids
        if self.ids is None:
            return None if len(restriction) >= self.scope_documents() else restriction
        return restriction & self.ids

    def bounds_filter(self, category: CategoryPattern) -> bool:
        """Whether the count of ``category`` is an upper bound, not exact: a filter with seeds
        and no parent datasets is counted as the sum of its seed values' documents (degree
        lookups, whatever the ontology; ``restricted_documents`` caps it at the scope's size);
        every match has a seed value; unscoped, a filter without seeds as the documents less
        the largest degree among each conjunction's negated values. A search over-fetching
        from a too-high estimate asks again."""
        if not isinstance(category, FilterPattern) or self.dataset_pattern() is not None:
            return False
        return category.seeds() is not None or self.ontology_pattern() is None

    def restricted_documents(self, restriction: Restriction | None,
                             category: CategoryPattern | None = None) -> int:
        """The estimated number of documents a search restricted to ``restriction`` (None:
        the scope) and ``category`` covers: the smaller of the id set's size and the
        pattern's count (an upper bound of their intersection)."""
        n_docs = self.scope_documents() if restriction is None else len(restriction)
        if category is not None:
            n_docs = min(n_docs, self.pattern_counts[category])
        return n_docs

    def in_index_ontology(self) -> bool:
        """Whether a filtered search can apply the ontology inside the ontology-filtered
        index: the indexes are ONLINE and the scope is an ontology alone (no parent datasets,
        no id set) that does not hold every document."""
        return (self.in_index.available and self.ontology_pattern() is not None
                and self.dataset_pattern() is None and self.ids is None)


def check_limit(limit: object, settings: Settings) -> int | None:
    """``limit`` as the number of results a caller wants (None: no limit, the seed's pools):
    a whole number from 1 to ``index_max_k`` (no index is asked for more).

    Raises:
        ConfigurationError: anything else (zero, negative, too large, not an integer).
    """
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise ConfigurationError(f"limit must be a whole number, not {limit!r}")
    if not 1 <= limit <= settings.index_max_k:
        raise ConfigurationError(f"limit must be between 1 and {settings.index_max_k} "
                                 f"(index_max_k), got {limit}")
    return limit


def pool_fields(settings: Settings) -> list[str]:
    """The settings that size a candidate pool: every ``top_n_*`` (the vector sources' and
    the text indexes')."""
    return [f.name for f in fields(settings) if f.name.startswith("top_n_")]


def sized(settings: Settings, limit: int | None) -> Settings:
    """The settings of a query that wants ``limit`` results: every pool (``pool_fields``)
    is ``ceil(limit x limit_pool_factor)``, never more than configured, and a vector index is
    asked for at least ``limit_min_k`` candidates instead of ``vector_min_k`` and for
    ``limit_k_factor`` times the pool instead of ``vector_k_factor`` times (never more).
    The over-fetch of a filtered search, the unfiltered ``k`` and the text ``k`` follow from
    these, by the rules below (``unfiltered_k``, ``text_k``, ``choose_vector_path``). Without
    a limit the settings are returned unchanged: the seed's pools.

    Raises:
        ConfigurationError: a bad ``limit`` (``check_limit``).
    """
    limit = check_limit(limit, settings)
    if limit is None:
        return settings
    pool = math.ceil(limit * settings.limit_pool_factor)
    changes: dict[str, Any] = {name: min(int(getattr(settings, name)), pool)
                               for name in pool_fields(settings)}
    changes["vector_min_k"] = min(settings.vector_min_k, settings.limit_min_k)
    changes["vector_k_factor"] = min(settings.vector_k_factor, settings.limit_k_factor)
    return settings.replace(**changes)


def limit_sizes_pools(root: Node) -> bool:
    """Whether a limit may size ``root``'s pools (``cost.sized``) without changing its
    answer: only where each scored side's best results are the query's, a phrase or TEXT
    term alone, under ORs (the higher score wins, so the best of the union are among the best
    of each side) and beside filters. Two scored sides under an AND keep the documents both
    pools hold, so smaller pools would drop those deep in one of them; a scored side under a
    NOT excludes what its pool holds, so a smaller pool would exclude less."""
    def step(node: Node, kids: tuple[tuple[bool, bool], ...]) -> tuple[bool, bool]:
        # (scored, safe) of each subtree
        if isinstance(node, Semantic | Text):
            return True, True
        if isinstance(node, Not):
            return kids[0][0], not kids[0][0]
        if not kids:
            return False, True
        scored = [k[0] for k in kids]
        safe = all(k[1] for k in kids) and not (isinstance(node, And) and all(scored))
        return any(scored), safe

    return fold(root, step)[1]


def pools(settings: Settings) -> dict[str, int]:
    """The pool sizes of ``settings`` (``top_n_*`` by source, and the vector index's least
    ``k``), as explain shows them."""
    out = {name.removeprefix("top_n_"): int(getattr(settings, name))
           for name in pool_fields(settings)}
    out["vector_min_k"] = settings.vector_min_k
    return out


def top_n(settings: Settings, src: VectorSource) -> int:
    """The hits a vector source keeps (``top_n_chapters`` ...)."""
    return int(getattr(settings, f"top_n_{src.source}"))


def unfiltered_k(settings: Settings, top_n: int) -> int:
    """Candidates asked of the index for an unfiltered search:
    ``max(top_n x vector_k_factor, vector_min_k)``, capped at ``index_max_k`` (an index
    holding fewer returns them all); the best ``top_n`` are kept."""
    s = settings
    return min(max(math.ceil(top_n * s.vector_k_factor), s.vector_min_k), s.index_max_k)


def text_k(scope: Scope, settings: Settings, restriction: Restriction | None,
           category: CategoryPattern | None = None, *, case_sensitive: bool = False) -> int:
    """Hits asked of a full-text index: ``top_n_text``, over-fetched by the restriction's
    estimated selectivity (``restriction``, the scope patterns, ``category``) and five times
    for a case-sensitive term (hits without the exact text are dropped afterwards); capped
    at ``index_max_k``."""
    k = settings.top_n_text
    if restriction is not None or scope.scoped() or category is not None:
        n_docs = scope.restricted_documents(restriction, category)
        documents = max(scope.node_counts()["documents"], 1)
        selectivity = max(n_docs / documents, 1e-9)
        k = min(max(math.ceil(k * 2 / selectivity), k), settings.index_max_k)
    if case_sensitive:
        k = min(k * 5, settings.index_max_k)
    return k


def choose_text_path(scope: Scope, settings: Settings, source: str,
                     n_docs: int) -> tuple[TextPath, str]:
    """How a full-text search of ``source`` restricted to ``n_docs`` documents keeps its
    hits, and why. Its ``k`` is over-fetched by the selectivity (``text_k``), up to
    ``index_max_k`` hits, and checking the restrictions' patterns on each hit costs about
    4 us (180 ms for 50,000 hits at 200,000 chapters); when the restricted documents'
    fragments are few (the larger of the estimated fragments and the documents walked, as
    for ``choose_vector_path``, at most ``text_lookup_max_fragments``), they are collected
    first and each hit is looked up among them (``candidates``: 33 ms for the same search).
    The hits are the same."""
    counts = scope.node_counts()
    documents = counts["documents"]
    estimated = counts.get(source, 0) * (n_docs / documents if documents else 0.0)
    walked = max(estimated, float(n_docs))
    most = settings.text_lookup_max_fragments
    if walked <= most:
        return "candidates", (f"{round(walked)} fragments or documents walked <= "
                              f"text_lookup_max_fragments {most}: hits looked up among "
                              "the restricted documents' fragments")
    return "index", (f"{round(walked)} fragments or documents walked > "
                     f"text_lookup_max_fragments {most}: "
                     "the restrictions checked on each hit")


def choose_vector_path(scope: Scope, settings: Settings, src: VectorSource, top_n: int,
                       n_docs: int) -> PathChoice:
    """How a semantic search of ``src`` restricted to ``n_docs`` documents (an id list's
    size or a pattern's count, never a materialised set) will run: exact cosine when the
    estimated filtered set is small, or no larger than the over-fetch (the index would visit
    at least that many nodes, each with its own distance, where exact search reads the
    filtered ones once), or the over-fetch would be too deep; else the vector index asked for
    ``top_n * factor / selectivity`` candidates. With the ontology applied inside the index
    (``Scope.in_index_ontology``) the selectivity that sizes the over-fetch is the share of
    the ontology's documents, not of all documents, and exact search is chosen only when it
    reads no more fragments than that over-fetch."""
    counts = scope.node_counts()
    total = counts.get(src.source, 0)
    selectivity = n_docs / counts["documents"] if counts["documents"] else 0.0
    estimated = total * selectivity
    s = settings
    if n_docs == 0 or total == 0:
        return PathChoice("none", 0, selectivity, estimated, "empty filter or no fragments")
    in_index = scope.in_index_ontology()
    within = (n_docs / scope.scope_documents() if in_index and scope.scope_documents()
              else selectivity)
    k = max(math.ceil(top_n * s.vector_overfetch_factor / max(within, 1e-9)),
            s.vector_min_k)
    asked = min(k, total)  # an index holding fewer than k returns them all
    # Exact search reaches its fragments from the restricted documents, so it walks every
    # one of them even where few have a fragment of this source: a source that only some
    # documents have (paragraphs, summaries, questions) would be walked to from every
    # document of a 50,000-document ontology (300 ms) to find a few hundred fragments the
    # index returns whole. Its work is the larger of the two counts.
    walked = max(estimated, float(n_docs))
    what = (f"estimated {round(estimated)} fragments" if walked == estimated else
            f"{n_docs} documents walked for an estimated {round(estimated)} fragments")
    # The in-index path's cost is bounded by its own k (every candidate passes the
    # ontology), so exact search only wins below that: an ontology of 4,000 chapters in a
    # 20,000-chapter graph took 94 ms exact and 35 ms in the index at k = 1,000.
    if walked <= s.exact_search_max_candidates and not (in_index and walked > k):
        return PathChoice("exact", top_n, selectivity, estimated,
                          f"{what} <= exact_search_max_candidates "
                          f"{s.exact_search_max_candidates}")
    if asked > s.index_max_k:
        return PathChoice("exact", top_n, selectivity, estimated,
                          f"over-fetch {k} would exceed index_max_k {s.index_max_k}")
    if walked <= asked:  # the index would visit at least that many nodes, exact these
        return PathChoice("exact", top_n, selectivity, estimated,
                          f"{what} <= the over-fetch {asked} the index would be "
                          "asked for")
    if in_index:
        return PathChoice("in-index", asked, selectivity, estimated,
                          f"estimated {round(estimated)} fragments: ontology "
                          f"{scope.ontologyid!r} filtered inside {src.filtered_index} "
                          f"(SEARCH), over-fetch max(top_n x {s.vector_overfetch_factor} "
                          f"/ share of the ontology's documents {within:.4g}, "
                          f"{s.vector_min_k})")
    return PathChoice("index", asked, selectivity, estimated,
                      f"estimated {round(estimated)} fragments: vector index with "
                      f"over-fetch max(top_n x {s.vector_overfetch_factor} / selectivity, "
                      f"{s.vector_min_k}){_why_not_in_index(scope)}")


def walked(detail: Mapping[str, Any]) -> float:
    """What exact search would walk for a chosen filtered search (its step ``detail``): the
    larger of the estimated fragments and the documents, as ``choose_vector_path`` weighs
    it; ``next_overfetch`` compares an over-fetch with it."""
    return max(float(detail.get("estimated_fragments", 0)),
               float(detail.get("filtered_documents", 0)))


def next_overfetch(settings: Settings, k: int, hits: int, top_n: int,
                   walked: float) -> int | None:
    """The ``k`` a filtered index search asks next when ``k`` candidates left ``hits`` <
    ``top_n`` hits, or None for exact search instead: twice ``k`` while that stays within
    ``index_max_k`` and the candidates the observed pass rate needs for ``top_n`` hits
    (``k x top_n / hits``, no hit counted as one) stay below what exact search walks
    (``walked``: the larger of the estimated fragments and the documents, as
    ``choose_vector_path`` weighs it). A filter whose count is an upper bound (a filter
    pattern's seeds) can match far fewer documents than estimated, none at all for an empty
    conjunction: the index would then be asked again up to ``index_max_k`` for nothing, where
    exact search walks the seeds' documents once."""
    if k * 2 > settings.index_max_k or k * top_n / max(hits, 1) >= walked:
        return None
    return k * 2


def _why_not_in_index(scope: Scope) -> str:
    """Why an ontology-scoped search on the index path does not filter inside the index
    ("" without an ontology)."""
    if scope.ontology_pattern() is None:
        return ""
    return ("; ontology not filtered inside the index: "
            + (scope.in_index.why_not if not scope.in_index.available
               else "the scope also has parent datasets"
               if scope.dataset_pattern() is not None else "the scope is an id set"))
