"""Search executors over the graph: semantic, text and category searches, and the universe.

Each search returns fragments on its own score scale (see ``settings``) and may be restricted
to a set of document ids, which is how the compiled plan pushes filters down. The scope is not
a set: every statement checks it as a Cypher pattern on the hit's document (the ontology,
``$ontologyid``, and the parent datasets, ``$datasetids``), and a scope holding every document
is no restriction at all. Filtered vector
search chooses between exact cosine over the filtered fragments and the vector index with
over-fetch by the estimated selectivity, or, on Neo4j 2026.01+ with an ontology scope, the
ontology-filtered index that applies the ontology inside the index (``in-index``); every choice
is recorded as a ``Step`` for explain.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal, assert_never

from neo4j import READ_ACCESS

from thalabus_graph import lucene
from thalabus_graph.embeddings import Embedder
from thalabus_graph.errors import GraphError
from thalabus_graph.fragments import CATEGORY_SOURCE, Fragment, sort_fragments, stub
from thalabus_graph.fusion import LanguageSlots, fuse_convex, fuse_max, fuse_rrf
from thalabus_graph.graph.database import Database, Record, mapped_errors
from thalabus_graph.scale import PhraseScale, calibration_of, semantic_scale
from thalabus_graph.settings import Settings

DocSet = frozenset[str]
"""A set of document ids; ``None`` in its place means "no restriction"."""


@dataclass(frozen=True)
class CategoryPattern:
    """A category filter pushed into a search as a Cypher pattern (``$name`` / ``$values``):
    the hit's document must have one of ``values`` for category ``name`` (exact match, as
    ``search_category``), or with ``negated`` none of them (a NOT pushed as
    ``NOT EXISTS {...}``). Its documents are counted for the path choice, never listed."""

    name: str
    values: tuple[str, ...]
    negated: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        out: dict[str, Any] = {"name": self.name, "values": list(self.values)}
        if self.negated:
            out["negated"] = True
        return out


CATEGORY_KEY_SEPARATOR = "\u001f"
"""Joins a category's name and value into one key (the unit separator: in neither)."""


def category_key(name: str, value: str) -> str:
    """One (name, value) pair as the string the statements build from a Category node."""
    return f"{name}{CATEGORY_KEY_SEPARATOR}{value}"


@dataclass(frozen=True)
class FilterPattern(CategoryPattern):
    """A filter of several categories (AND / OR / NOT of category terms) pushed into a
    search as one Cypher predicate: ``conjunctions`` is its disjunctive normal form, each
    conjunction a tuple of category literals (``negated``: the document has none of the
    values). The statements get it as the ``$filter`` list parameter and check it with list
    predicates over EXISTS subqueries, so no Cypher is built from it and no id is listed.
    ``name`` / ``values`` are unused (empty)."""

    conjunctions: tuple[tuple[CategoryPattern, ...], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON form: the conjunctions of literals."""
        return {"any_of": [[lit.to_dict() for lit in conj] for conj in self.conjunctions]}

    def param(self) -> list[list[dict[str, Any]]]:
        """The ``$filter`` parameter: a list of conjunctions of {name, values, negated, keys}
        (``keys``: ``category_key`` of each value, matched against a document's keys)."""
        return [[{"name": lit.name, "values": list(lit.values), "negated": lit.negated,
                  "keys": [category_key(lit.name, v) for v in lit.values]}
                 for lit in conj] for conj in self.conjunctions]

    def seeds(self) -> list[list[str]] | None:
        """[name, value] pairs whose documents cover every match (the first positive
        literal of each conjunction), where exact search starts; None when a conjunction
        has no positive literal (then every document of the scope is a candidate)."""
        out: list[list[str]] = []
        for conj in self.conjunctions:
            positive = next((lit for lit in conj if not lit.negated), None)
            if positive is None:
                return None
            out += [[positive.name, value] for value in positive.values]
        return out


STREAM_FETCH_SIZE = 500
"""Records the driver fetches at a time for a streamed result (``SearchExecutor.stream``): the
most a stream holds in memory, whatever its length."""


@dataclass(frozen=True)
class VectorSource:
    """One embedded fragment kind: its label, vector index and tunables' names."""

    source: str
    label: str
    index: str
    filtered_index: str
    """The index filtering on the fragments' ``ontologyid`` inside it (migration V0007)."""


VECTOR_SOURCES = (
    VectorSource("chapters", "Chapter", "typical_rag", "typical_rag_ontology"),
    VectorSource("paragraphs", "Paragraph", "paragraphs", "paragraphs_ontology"),
    VectorSource("summaries", "Summary", "summaries", "summaries_ontology"),
)
_VECTOR_BY_SOURCE = {src.source: src for src in VECTOR_SOURCES}
TEXT_SOURCES = (("chapters", "chapters_fulltext"), ("keywords", "keywords_fulltext"))
_TEXT_INDEX = dict(TEXT_SOURCES)
_DETAILED = frozenset({"search_vector", "search_vector_exact", "search_vector_in_index",
                       "search_fulltext"})
"""Statements whose rows carry their document's details with ``$details`` (``details``)."""
_PLAIN = _DETAILED | {"document_category_keys", "document_languages", "search_category"}
"""Statements that return plain values only (strings, numbers, lists and maps of them; no
node): their records skip the driver's recursive ``data()`` (~10 ms on 200 rows with
details)."""


StepKind = Literal["semantic", "text", "fusion", "category", "category_count", "universe"]
"""What one `Step` did: a vector search, a full-text search, a fusion, a category lookup, the
count that sizes a category pushed down as a pattern, or the all-documents universe of a pure
negation."""
VectorPath = Literal["none", "exact", "index", "in-index"]
"""How a filtered vector search runs: not at all (empty filter), exact scan, the index (every
restriction checked on its candidates), or the ontology-filtered index (``in-index``: the
ontology applied inside the index, the other restrictions on its candidates)."""


@dataclass(frozen=True)
class InIndexFilter:
    """Whether the ontology-filtered vector indexes can serve searches, and if not, why."""

    available: bool
    why_not: str = ""


IN_INDEX_UNKNOWN = InIndexFilter(False, "not checked")


@dataclass
class Step:
    """One executed (or planned) search call, for explain and profile output."""

    kind: StepKind
    detail: dict[str, Any]
    cypher: str = ""
    rows: int = 0
    ms: float = 0.0
    db_hits: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        out: dict[str, Any] = {"kind": self.kind, **self.detail}
        if self.cypher:
            out["cypher"] = self.cypher
        out["rows"] = self.rows
        out["ms"] = round(self.ms, 3)
        if self.db_hits:
            out["db_hits"] = self.db_hits
        return out


@dataclass(frozen=True)
class PathChoice:
    """The planner's choice for one filtered vector search, with its reason."""

    path: VectorPath
    k: int
    selectivity: float
    estimated_fragments: float
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``overfetch_k`` only for the index paths)."""
        out: dict[str, Any] = {"path": self.path, "selectivity": round(self.selectivity, 6),
                               "estimated_fragments": round(self.estimated_fragments),
                               "reason": self.reason}
        if self.path in ("index", "in-index"):
            out["overfetch_k"] = self.k
        return out


class SearchExecutor:
    """Runs the searches of one query evaluation (caches counts and phrase statistics).

    Example:
        >>> ex = SearchExecutor(db, settings, embedder, scope=None)  # doctest: +SKIP
        >>> ex.semantic("asylum seeker", restrict=None)[:1]          # doctest: +SKIP
    """

    def __init__(self, db: Database, settings: Settings, embedder: Embedder,
                 scope: DocSet | None = None, *, ontologyid: str | None = None,
                 datasetids: Sequence[str] | None = None,
                 profile: bool = False, document_details: bool = False,
                 in_index: InIndexFilter = IN_INDEX_UNKNOWN) -> None:
        self.db = db
        self.in_index = in_index
        self.profile = profile
        self.settings = settings
        self.embedder = embedder
        self.scope = scope
        self.ontologyid = ontologyid
        self.datasetids = None if datasetids is None else sorted(set(datasetids))
        self._ontology_documents: int | None = None  # documents the scope pattern keeps
        self._pattern_counts: dict[CategoryPattern, int] = {}
        self._preloaded_counts: dict[CategoryPattern, int] = {}
        self._universe: DocSet | None = None
        self.steps: list[Step] = []
        self.embed_ms = 0.0
        self._counts: dict[str, int] | None = None
        self._semantic_ranges: dict[str, tuple[float, float]] = {}
        # The calibrated scale of the phrases (``thalabus_graph.scale``): backgrounds per
        # phrase and source from their unrestricted searches.
        self.scale = PhraseScale(settings, calibration_of(settings))
        self._fusions: dict[str, LanguageSlots] = {}
        # Stored document languages learnt from search results (for language-slots fusion).
        self._languages: dict[str, str | None] = {}
        # A phrase's unrestricted semantic and text hits, once a restricted search read them
        # for its normalisation: the language-slots rule is fitted on them too.
        self._unrestricted_hits: dict[str, tuple[list[Fragment], list[Fragment]]] = {}
        self._text_best_cache: dict[tuple[str, str, str | None], float] = {}
        self._vectors: dict[str, list[float]] = {}
        # search_phrase calls started ahead, concurrently (``prefetch_phrases``), by phrase
        # and whether the text searches ride along; each is taken once.
        self._prefetched: dict[tuple[str, bool], Future[list[Record]]] = {}
        # With ``document_details`` (the caller returns documents), the unfiltered searches
        # also read their hits' documents: documentid -> [documentid, properties,
        # ontologyid, categories] as ``document_details`` rows are (``ThalabusGraph
        # .documents_of`` reads only the documents missing here).
        self.document_details = document_details
        self.details: dict[str, list[Any]] = {}

    # --- helpers ---------------------------------------------------------------------
    def restriction(self, restrict: DocSet | None) -> DocSet | None:
        """The effective document restriction: the scope intersected with ``restrict``.

        A restriction that keeps every document is no restriction: searching unfiltered gives
        the same fragments without shipping every document id to the server.
        """
        if restrict is None:
            return self.scope
        if self.scope is None:
            return None if len(restrict) >= self.scope_documents() else restrict
        return restrict & self.scope

    def ontology_pattern(self) -> str | None:
        """The ontology every search checks as a pattern (``$ontologyid``): None without an
        ontology scope, and None when the scope holds every document (checking it would
        change nothing and cost a lookup per candidate). The scope's size comes with the node
        counts in one call (``search_scope_sizes``)."""
        return self.ontologyid if self.scoped() else None

    def dataset_pattern(self) -> list[str] | None:
        """The parent datasets every search checks as a pattern (``$datasetids``): None
        without a dataset scope or when the scope holds every document."""
        return self.datasetids if self.scoped() else None

    def known_counts(self) -> dict[str, int] | None:
        """The node counts per source when already read (None before the first read)."""
        return self._counts

    def remembered_phrases(self) -> tuple[set[str], set[str], set[str]]:
        """The phrases whose semantic range is remembered, whose unrestricted hits were read
        and whose fusion rule is fitted: what decides the extra searches a phrase adds (the
        plan reads it to list the steps the run will take)."""
        return set(self._semantic_ranges), set(self._unrestricted_hits), set(self._fusions)

    def scoped(self) -> bool:
        """Whether the scope patterns (ontology, parent datasets) restrict anything: false
        without them and when they keep every document (read once, with the node counts)."""
        if self.ontologyid is None and self.datasetids is None:
            return False
        if self._ontology_documents is None:
            row = self.db.read("search_scope_sizes", ontologyid=self.ontologyid,
                               datasetids=self.datasetids)[0]
            self._ontology_documents = int(row.pop("scope"))
            if self._counts is None:
                self._counts = {k: int(v) for k, v in row.items()}
        return self._ontology_documents < self.counts()["documents"]

    def preload(self, sizes: dict[str, int] | None,
                counts: Mapping[CategoryPattern, int] | None = None) -> None:
        """Take the node counts, the scope's size and the pushed patterns' counts read with
        the query's vocabulary (``plan.categories.check_query``), so the plan makes no round
        trip for them."""
        self._preloaded_counts.update(counts or {})
        if sizes is None:
            return
        sizes = dict(sizes)
        scope = sizes.pop("scope")
        if self._counts is None:
            self._counts = sizes
        if self._ontology_documents is None and (self.ontologyid is not None
                                                 or self.datasetids is not None):
            self._ontology_documents = scope

    def scope_pattern(self) -> dict[str, Any]:
        """The scope parameters of every search statement (each null when not restricting)."""
        return {"ontologyid": self.ontology_pattern(), "datasetids": self.dataset_pattern()}

    def scope_documents(self) -> int:
        """How many documents the scope keeps (the id set's size, else the ontology's, else
        every document): the denominator of a restriction's selectivity within the scope."""
        if self.scope is not None:
            return len(self.scope)
        if self.scoped():
            assert self._ontology_documents is not None
            return self._ontology_documents
        return self.counts()["documents"]

    def _patterns(self, docs: DocSet | None,
                  category: CategoryPattern | None = None) -> dict[str, Any]:
        """The restriction parameters of the search statements: the id list (or null), the
        ontology pattern and the category pattern (or nulls)."""
        return {"documentids": None if docs is None else sorted(docs),
                **self.scope_pattern(), **pattern_params(category),
                "details": self.document_details}

    def category_count(self, category: CategoryPattern) -> int:
        """Documents of the scope's ontology having the category pattern (or, negated, not
        having it): one COUNT query (cached per evaluation), the selectivity estimate of a
        pushed category filter."""
        if category not in self._pattern_counts:
            step = self._new_step("category_count", {**category.to_dict(),
                                                     "pushed_as": "pattern"})
            if category in self._preloaded_counts:  # read with the vocabulary
                having = self._preloaded_counts[category]
                step.cypher = "category_vocabulary"
                step.detail["read"] = "with the query's vocabulary, in its round trip"
            else:  # the same statement, asked for this pattern's count alone
                rows = self._read(step, "category_vocabulary", names=[], values=[],
                                  exact_names=[], exact_pairs=[], ontologyid=self.ontologyid,
                                  datasetids=self.datasetids,
                                  patterns=[pattern_params(category)])
                having = int(rows[0]["counts"][0])
                self.preload({k: int(v) for k, v in rows[0]["sizes"].items()})
            # NOT: the scope's documents without the category's; with an id scope the count
            # is not within it, so the scope's size stays the (upper-bound) estimate.
            if category.negated and not isinstance(category, FilterPattern):
                having = (self.scope_documents() if self.scope is not None
                          else max(self.scope_documents() - having, 0))
            self._pattern_counts[category] = having
            step.rows = 0
            step.detail["documents"] = self._pattern_counts[category]
            if self.bounds_filter(category):
                step.detail["estimate"] = "upper bound: the seed values' documents"
        return self._pattern_counts[category]

    def bounds_filter(self, category: CategoryPattern) -> bool:
        """Whether the count of ``category`` is an upper bound, not exact: an unscoped filter
        with seeds is counted as the sum of its seed values' documents (degree lookups, where
        the exact count walked every seed document's categories); every match has a seed
        value, and a search over-fetching from a too-high estimate asks again."""
        return (isinstance(category, FilterPattern) and category.seeds() is not None
                and self.ontology_pattern() is None and self.dataset_pattern() is None)

    def restricted_documents(self, docs: DocSet | None,
                             category: CategoryPattern | None = None) -> int:
        """The estimated number of documents a search restricted to ``docs`` (None: the
        scope) and ``category`` covers: the smaller of the id set's size and the pattern's
        COUNT (an upper bound of their intersection)."""
        n_docs = self.scope_documents() if docs is None else len(docs)
        if category is not None:
            n_docs = min(n_docs, self.category_count(category))
        return n_docs

    def counts(self) -> dict[str, int]:
        """Node counts per label (documents, chapters, paragraphs, summaries)."""
        if self._counts is None:
            rows = self.db.read("search_counts")
            self._counts = {k: int(v) for k, v in rows[0].items()}
        return self._counts

    def query_vector(self, phrase: str) -> list[float]:
        """The phrase's query embedding (cached per evaluation; the embedder caches too)."""
        if phrase not in self._vectors:
            start = time.perf_counter()
            vec = self.embedder.embed_queries([phrase])[0]
            self.embed_ms += (time.perf_counter() - start) * 1000
            self._vectors[phrase] = [float(x) for x in vec]
        return self._vectors[phrase]

    def _read(self, step: Step, name: str, /, *, plain: bool = False,
              ahead: Future[list[Record]] | None = None, **params: Any) -> list[Record]:
        """Run a named read for ``step`` (timed, profiled when asked). ``plain``: the
        statement returns only plain values (strings, numbers, lists of them), so records
        skip the driver's recursive ``data()`` conversion (milliseconds on long lists).
        ``ahead``: the call already started (``prefetch_phrases``); its rows are waited for
        and booked on ``step`` like a call made here."""
        start = time.perf_counter()
        if ahead is not None:
            rows = ahead.result()
            step.detail["prefetched"] = "started with the query's other phrases"
        elif self.profile:
            rows, hits = self.db.read_profiled(name, **params)
            step.db_hits += hits
        elif plain or name in _PLAIN:
            rows = self.db.read_plain(name, **params)
        else:
            rows = self.db.read(name, **params)
        step.ms += (time.perf_counter() - start) * 1000
        step.rows += len(rows)
        step.cypher = name
        if name in _DETAILED:
            self.details.update((r["details"][0], r["details"]) for r in rows if r["details"])
        return rows

    def stream(self, step: Step, name: str, text: str, /,
               **params: Any) -> Iterator[tuple[Any, ...]]:
        """Run the read ``text`` (the statement ``name``, loaded by the caller) and yield its
        records' values one by one as the driver fetches them (in batches of its fetch size),
        so a result of any length is never held as a list; ``step`` gets the statement, rows
        and time (including the consumer's)."""
        step.cypher = name
        start = time.perf_counter()
        try:
            with mapped_errors(name), self.db.driver.session(
                    database=self.db.database, default_access_mode=READ_ACCESS,
                    fetch_size=STREAM_FETCH_SIZE) as session:
                for record in session.run(text, params):
                    step.rows += 1
                    yield tuple(record.values())
        finally:
            step.ms += (time.perf_counter() - start) * 1000

    # --- semantic ----------------------------------------------------------------------
    def uses_text(self, phrase: str) -> bool:
        """Whether a SEMANTIC phrase also runs the text search (short, or hybrid for all)."""
        if self.settings.hybrid_all_queries:
            return True
        return len(phrase.split()) <= self.settings.short_query_max_words

    def semantic(self, phrase: str, restrict: DocSet | None, *,
                 with_text: bool | None = None,
                 category: CategoryPattern | None = None) -> list[Fragment]:
        """Semantic search over chapters, paragraphs and summaries, fused with the text search
        when the phrase qualifies (``with_text`` overrides the rule).

        Unfiltered, every search of the phrase runs in one round trip (``search_phrase``);
        restricted, each source is its own call (the path is chosen per source). ``category``
        is a filter pushed into every search as a pattern."""
        fuse = self.uses_text(phrase) if with_text is None else with_text
        primed = probe = None
        restricted = restrict is not None or category is not None
        if (self.ontologyid is not None and self._ontology_documents is None
                and self.datasetids is None and self.scope is None
                and (fuse or not restricted)):
            # The ontology's size comes with the unscoped searches, which are the answer
            # (or the fusion's statistics) when it holds every document.
            probe = self._unfiltered_phrase(phrase, with_text=fuse)
        scoped = self.scoped()
        if scoped:
            probe = None
        if (fuse and restricted and self.scope is None and not scoped
                and phrase not in self._semantic_ranges):
            primed = self._unrestricted_statistics(phrase, probe)
        docs = self.restriction(restrict)
        filtered = docs is not None or scoped or category is not None
        if not filtered:
            semantic, text = (primed if primed is not None else probe if probe is not None
                              else self._unfiltered_phrase(phrase, with_text=fuse))
        else:
            semantic = self._semantic_only(phrase, docs, category)
            text = []
        unrestricted = docs == self.scope and category is None
        if unrestricted and phrase not in self._semantic_ranges:
            self._remember_range(phrase, semantic)
        if not fuse:
            return self._scaled(phrase, semantic)
        if filtered:
            text = self._text_hits(phrase, docs, phrase_mode=False, case_sensitive=False,
                                   category=category)
        return self._scaled(phrase, self._fuse(phrase, semantic, text,
                                               restricted=not unrestricted))

    def _scaled(self, phrase: str, fragments: list[Fragment]) -> list[Fragment]:
        """The phrase's fragments on its score scale (``PhraseScale.apply``); a restricted
        phrase whose unrestricted search was not read yet reads it for its backgrounds."""
        if self.scale.calibrated and phrase not in self.scale.remembered:
            self.scale.remember(phrase, self._semantic_only(phrase, self.scope),
                                self.counts())
        return self.scale.apply(phrase, fragments)

    def _unrestricted_statistics(
            self, phrase: str, found: tuple[list[Fragment], list[Fragment]] | None = None,
    ) -> tuple[list[Fragment], list[Fragment]]:
        """Before a restricted fused search (no scope): the phrase's unrestricted searches in
        one round trip, which give the fusion's normalisation (the semantic range, each
        index's best text score) instead of one call per source for each later, and the node
        counts that tell whether the restriction keeps every document (then these are the
        results). ``found``: those searches already run. Returns the semantic and text
        fragments."""
        if found is None:
            found = self._unfiltered_phrase(phrase, with_text=True)
        self._remember_range(phrase, found[0])
        self._unrestricted_hits[phrase] = found
        return found

    def _semantic_only(self, phrase: str, docs: DocSet | None,
                       category: CategoryPattern | None = None) -> list[Fragment]:
        vector = self.query_vector(phrase)
        out: list[Fragment] = []
        for src in VECTOR_SOURCES:
            top_n = int(getattr(self.settings, f"top_n_{src.source}"))
            rows = self._vector_search(src, vector, top_n, docs, phrase, category)
            out += self._semantic_fragments(src, _hits(rows))
        return sort_fragments(out)

    def _semantic_fragments(self, src: VectorSource, hits: Iterable[Hit]) -> list[Fragment]:
        """Hits of one vector source as fragments: on the index scale when calibrating (factor,
        cap and ``min_score`` act after fusion, ``scale.PhraseScale``), else per-source factor
        and cap, then ``min_score``."""
        contribution = (f"semantic:{src.source}",)
        calibrated = self.scale.calibrated
        out: list[Fragment] = []
        for fragmentid, documentid, text, raw in hits:
            score = semantic_scale(self.settings, calibrated, src.source, raw)
            if score is not None:
                out.append(Fragment(fragmentid, documentid, text, score, src.source,
                                    contribution))
        return out

    def _text_fragments(self, source: str, hits: Sequence[Hit], best: float) -> list[Fragment]:
        """The best ``top_n_text`` hits of one full-text source (sorted best first) as
        fragments, scores divided by ``best``."""
        if best <= 0:
            return []
        contribution = (f"text:{source}",)
        return [Fragment(fragmentid, documentid, text, float(score) / best, source,
                         contribution)
                for fragmentid, documentid, text, score in hits[: self.settings.top_n_text]]

    def _unfiltered_phrase(self, phrase: str, *,
                           with_text: bool) -> tuple[list[Fragment], list[Fragment]]:
        """The phrase's semantic fragments and (when ``with_text``) its bag-of-words text
        fragments, from one ``search_phrase`` call.

        The call also returns the node counts (cached for the rest of the evaluation), and
        skips the searches of sources that hold no fragments; those steps say so. Each source
        is still a ``Step`` with its own rows; the call's time (and db hits) are reported on
        its first step, the others name the call in ``round_trip``. Text scores are divided by
        each index's best hit, which this unrestricted search returns itself, so no
        normalisation query is needed.
        """
        covered: dict[tuple[str, str], Step] = {}
        for src in VECTOR_SOURCES:
            top_n = int(getattr(self.settings, f"top_n_{src.source}"))
            step = self._new_step("semantic", {"phrase": phrase, "source": src.source,
                                               "top_n": top_n})
            step.detail.update(path="index", reason="no filter",
                               k=self.unfiltered_k(src, top_n))
            covered["semantic", src.source] = step
        query = lucene.terms_query(phrase) if with_text else ""
        for source, index in TEXT_SOURCES if query else ():
            covered["text", source] = self._new_step(
                "text", {"term": phrase, "index": index, "lucene": query,
                         "case_sensitive": False, "k": self.settings.top_n_text})
        steps = list(covered.values())
        probing = self.ontologyid is not None and self._ontology_documents is None
        ahead = self._prefetched.pop((phrase, with_text), None)  # started concurrently
        params = {} if ahead is not None else self._phrase_params(phrase, with_text=with_text)
        rows = self._read(steps[0], "search_phrase", plain=True, ahead=ahead, **params)
        self._share_call(steps, "search_phrase")
        grouped: dict[tuple[str, str], list[Hit]] = {key: [] for key in covered}
        sizes: dict[str, int] = {}
        for row in rows:
            columns = (row["fragmentids"], row["documentids"], row["texts"], row["scores"])
            self._languages.update(zip(row["documentids"],
                                       map(_stored_language, row["languages"]), strict=True))
            self.details.update((entry[0], entry) for entry in row["details"])
            if row["kind"] == "size":
                sizes = {name: int(n) for name, n in zip(columns[0], columns[3], strict=True)}
                ontology_size = sizes.pop("ontology", 0)
                if probing:
                    self._ontology_documents = ontology_size
            else:
                grouped[row["kind"], row["source"]] = list(zip(*columns, strict=True))
        if self._counts is None and sizes:
            self._counts = sizes
        semantic: list[Fragment] = []
        text: list[Fragment] = []
        if probing and self.ontology_pattern() is not None:
            for step in steps:
                step.detail.update(path="skipped", reason="the ontology holds part of the "
                                   "documents: searched again with its pattern")
            return semantic, text
        for (kind, source), hits in grouped.items():
            step = covered[kind, source]
            step.rows = len(hits)
            if not sizes.get(source, 0):
                step.detail.update(path="skipped", reason=f"no {source} in the graph")
            elif kind == "semantic":
                semantic += self._semantic_fragments(_VECTOR_BY_SOURCE[source], hits)
            else:
                hits.sort(key=lambda h: (-h[3], h[0]))
                best = float(hits[0][3]) if hits else 0.0
                self._text_best_cache[_TEXT_INDEX[source], query, None] = best
                text += self._text_fragments(source, hits, best)
        return sort_fragments(semantic), text

    def _phrase_params(self, phrase: str, *, with_text: bool) -> dict[str, Any]:
        """The parameters of one phrase's ``search_phrase`` call: every vector index (and,
        ``with_text``, every full-text index) whose source is not known to be empty."""
        known = self._counts
        vector_searches: list[dict[str, Any]] = []
        for src in VECTOR_SOURCES:
            top_n = int(getattr(self.settings, f"top_n_{src.source}"))
            vector_searches.append({"source": src.source, "index": src.index,
                                    "k": self.unfiltered_k(src, top_n), "top_n": top_n})
        query = lucene.terms_query(phrase) if with_text else ""
        text_searches: list[dict[str, Any]] = [
            {"source": source, "index": index, "query": query, "k": self.settings.top_n_text}
            for source, index in (TEXT_SOURCES if query else ())]
        if known is not None:  # a later phrase of the query: leave out what is known empty
            vector_searches = [v for v in vector_searches if known.get(v["source"], 0)]
            text_searches = [t for t in text_searches if known.get(t["source"], 0)]
        probing = self.ontologyid is not None and self._ontology_documents is None
        return {"vector": self.query_vector(phrase), "vector_searches": vector_searches,
                "text_searches": text_searches, "rescore": self.settings.vector_quantization,
                "ontologyid": self.ontologyid if probing else None,
                "details": self.document_details}

    def prefetch_phrases(self, phrases: Sequence[tuple[str, bool]]) -> None:
        """Start the ``search_phrase`` calls of several unfiltered phrases at once, each in
        its own session (``(phrase, with_text)`` pairs, as ``_unfiltered_phrase`` will ask
        for them): an OR of two phrases waits for the slower index call instead of the sum of
        both. Each call's parameters are the ones the run would send, except that without
        known node counts every source is searched (an empty index answers at once, and
        each call returns the counts that mark its empty sources skipped). Not while an
        ontology's size is unknown (the first call then probes it). The query vectors are
        computed here, one by one, before any call starts."""
        wanted = list(dict.fromkeys(phrases))
        if len(wanted) < 2 or (self.ontologyid is not None
                               and self._ontology_documents is None):
            return
        calls = [(key, self._phrase_params(key[0], with_text=key[1])) for key in wanted]
        with ThreadPoolExecutor(max_workers=len(calls)) as pool:
            for key, params in calls:
                self._prefetched[key] = pool.submit(self.db.read_plain, "search_phrase",
                                                    **params)

    def _new_step(self, kind: StepKind, detail: dict[str, Any]) -> Step:
        step = Step(kind, detail)
        self.steps.append(step)
        return step

    @staticmethod
    def _share_call(steps: Sequence[Step], name: str) -> None:
        """Mark the steps one call of ``name`` served: its time and db hits stay on the first
        (``_read`` put them there), each step names the shared call, rows are set per step."""
        steps[0].rows = 0
        for step in steps:
            step.cypher = name
            step.detail["round_trip"] = (f"{name}: one call for {len(steps)} searches "
                                         f"(ms and db_hits on the first)")

    def _vector_search(self, src: VectorSource, vector: list[float], top_n: int,
                       docs: DocSet | None, phrase: str,
                       category: CategoryPattern | None = None) -> list[Record]:
        step = Step("semantic", {"phrase": phrase, "source": src.source, "top_n": top_n})
        self.steps.append(step)
        if docs is None and not self.scoped() and category is None:
            if self.counts().get(src.source, 0) == 0:
                step.detail.update(path="skipped", reason=f"no {src.source} in the graph")
                return []
            k = self.unfiltered_k(src, top_n)
            step.detail.update(path="index", reason="no filter", k=k)
            return self._read(step, "search_vector", index=src.index, k=k, top_n=top_n,
                              vector=vector, **self._patterns(None))
        return self._filtered_vector_search(step, src, vector, top_n, docs, category)

    def unfiltered_k(self, src: VectorSource, top_n: int) -> int:
        """Candidates asked of the index for an unfiltered search of ``src``:
        ``max(top_n x vector_k_factor, vector_min_k)``, capped at ``index_max_k`` (an index
        holding fewer returns them all); the best ``top_n`` are kept."""
        s = self.settings
        return min(max(math.ceil(top_n * s.vector_k_factor), s.vector_min_k), s.index_max_k)

    def in_index_ontology(self) -> bool:
        """Whether a filtered search can apply the ontology inside the ontology-filtered
        index: the indexes are ONLINE and the scope is an ontology alone (no parent datasets,
        no id set) that does not hold every document."""
        return (self.in_index.available and self.ontology_pattern() is not None
                and self.dataset_pattern() is None and self.scope is None)

    def choose_vector_path(self, src: VectorSource, top_n: int, n_docs: int) -> PathChoice:
        """How a semantic search of ``src`` restricted to ``n_docs`` documents (an id list's
        size or a pattern's COUNT, never a materialised set) will run: exact
        cosine when the estimated filtered set is small, or no larger than the over-fetch
        (the index would visit at least that many nodes, each with its own distance, where
        exact search reads the filtered ones once), or the over-fetch would be too deep; else
        the vector index asked for ``top_n * factor / selectivity`` candidates. With the
        ontology applied inside the index (``in_index_ontology``) the selectivity that sizes
        the over-fetch is the share of the ontology's documents, not of all documents, and
        exact search is chosen only when it reads no more fragments than that over-fetch."""
        counts = self.counts()
        total = counts.get(src.source, 0)
        selectivity = n_docs / counts["documents"] if counts["documents"] else 0.0
        estimated = total * selectivity
        s = self.settings
        if n_docs == 0 or total == 0:
            return PathChoice("none", 0, selectivity, estimated, "empty filter or no fragments")
        in_index = self.in_index_ontology()
        within = (n_docs / self.scope_documents() if in_index and self.scope_documents()
                  else selectivity)
        k = max(math.ceil(top_n * s.vector_overfetch_factor / max(within, 1e-9)),
                s.vector_min_k)
        # The in-index path's cost is bounded by its own k (every candidate passes the
        # ontology), so exact search only wins below that: an ontology of 4,000 chapters in a
        # 20,000-chapter graph took 94 ms exact and 35 ms in the index at k = 1,000.
        if estimated <= s.exact_search_max_candidates and not (in_index and estimated > k):
            return PathChoice("exact", top_n, selectivity, estimated,
                              f"estimated {round(estimated)} fragments <= "
                              f"exact_search_max_candidates {s.exact_search_max_candidates}")
        if k > s.index_max_k:
            return PathChoice("exact", top_n, selectivity, estimated,
                              f"over-fetch {k} would exceed index_max_k {s.index_max_k}")
        if estimated <= k:  # the index would visit at least k nodes, exact visits these
            return PathChoice("exact", top_n, selectivity, estimated,
                              f"estimated {round(estimated)} fragments <= the over-fetch {k} "
                              "the index would be asked for")
        if in_index:
            return PathChoice("in-index", min(k, total), selectivity, estimated,
                              f"estimated {round(estimated)} fragments: ontology "
                              f"{self.ontologyid!r} filtered inside {src.filtered_index} "
                              f"(SEARCH), over-fetch max(top_n x {s.vector_overfetch_factor} "
                              f"/ share of the ontology's documents {within:.4g}, "
                              f"{s.vector_min_k})")
        why_not = ""
        if self.ontology_pattern() is not None:
            why_not = ("; ontology not filtered inside the index: "
                       + (self.in_index.why_not if not self.in_index.available
                          else "the scope also has parent datasets"
                          if self.dataset_pattern() is not None else "the scope is an id set"))
        return PathChoice("index", min(k, total), selectivity, estimated,
                          f"estimated {round(estimated)} fragments: vector index with "
                          f"over-fetch max(top_n x {s.vector_overfetch_factor} / selectivity, "
                          f"{s.vector_min_k}){why_not}")

    def _filtered_vector_search(self, step: Step, src: VectorSource, vector: list[float],
                                top_n: int, docs: DocSet | None,
                                category: CategoryPattern | None = None) -> list[Record]:
        """A restricted search of ``src``: by the id set ``docs`` (None: none), the ontology
        pattern and the category pattern, on the path chosen by their estimated size."""
        n_docs = self.restricted_documents(docs, category)
        choice = self.choose_vector_path(src, top_n, n_docs)
        step.detail.update(choice.to_dict(), filtered_documents=n_docs)
        patterns = self._patterns(docs, category)
        if patterns["ontologyid"] is not None:
            step.detail["ontology_pattern"] = patterns["ontologyid"]
        if patterns["datasetids"] is not None:
            step.detail["dataset_pattern"] = patterns["datasetids"]
        if category is not None:
            step.detail["category_pattern"] = category.to_dict()
        if choice.path == "in-index":
            try:
                return self._index_search(step, src, vector, top_n, choice.k, patterns,
                                          in_index=True)
            except GraphError as exc:
                # The filtered index was dropped (or is rebuilding) since its state was read:
                # this evaluation takes the plain paths, and explain says why.
                self.in_index = InIndexFilter(False, f"the in-index search failed: {exc}")
                choice = self.choose_vector_path(src, top_n, n_docs)
                step.detail.pop("overfetch_k", None)
                step.detail.update(choice.to_dict())
        if choice.path == "none":
            return []
        if choice.path == "exact":
            return self._read(step, "search_vector_exact", label=src.label,
                              vector=vector, k=top_n, **patterns)
        return self._index_search(step, src, vector, top_n, choice.k, patterns, in_index=False)

    def _index_search(self, step: Step, src: VectorSource, vector: list[float], top_n: int,
                      k: int, patterns: dict[str, Any], *, in_index: bool) -> list[Record]:
        """An over-fetched index search (the ontology-filtered index with ``in_index``),
        asked again with twice the k while the restrictions leave fewer than ``top_n`` hits,
        exact search when that would pass ``index_max_k``."""
        total = self.counts().get(src.source, 0)
        while True:
            if in_index:
                rows = self._read(step, "search_vector_in_index", index=src.filtered_index,
                                  k=min(k, total), top_n=top_n, vector=vector,
                                  **in_index_params(patterns))
            else:
                rows = self._read(step, "search_vector", index=src.index, k=min(k, total),
                                  top_n=top_n, vector=vector, **patterns)
            if len(rows) >= top_n or k >= total:
                return sorted(rows, key=lambda r: (-r["score"], r["fragmentid"]))[:top_n]
            if k * 2 > self.settings.index_max_k:
                step.detail.update(path="exact", reason="over-fetch fell short; exact fallback")
                return self._read(step, "search_vector_exact", label=src.label,
                                  vector=vector, k=top_n, **patterns)
            k *= 2
            step.detail["overfetch_k"] = k

    # --- text --------------------------------------------------------------------------
    def text(self, term: str, restrict: DocSet | None, *, case_sensitive: bool,
             category: CategoryPattern | None = None) -> list[Fragment]:
        """Phrase search on chapters and keywords, scores divided by the best of each index's
        unrestricted search; the case-sensitive form keeps hits containing the term exactly.
        ``category`` is a filter pushed into the searches as a pattern."""
        docs = self.restriction(restrict)
        hits = self._text_hits(term, docs, phrase_mode=True, case_sensitive=case_sensitive,
                               category=category)
        return sort_fragments(hits)

    def text_terms(self, term: str, restrict: DocSet | None) -> list[Fragment]:
        """Bag-of-words full-text search (any word, BM25-ranked), as fused into semantic
        phrases; scores divided by each index's best unrestricted hit."""
        hits = self._text_hits(term, self.restriction(restrict), phrase_mode=False,
                               case_sensitive=False)
        return sort_fragments(hits)

    def _text_hits(self, term: str, docs: DocSet | None, *, phrase_mode: bool,
                   case_sensitive: bool,
                   category: CategoryPattern | None = None) -> list[Fragment]:
        query = lucene.phrase_query(term) if phrase_mode else lucene.terms_query(term)
        if not query or (docs is not None and not docs):
            return []
        out: list[Fragment] = []
        for source, index in TEXT_SOURCES:
            step = self._new_step("text", {"term": term, "index": index, "lucene": query,
                                           "case_sensitive": case_sensitive})
            if self.counts().get(source, 0) == 0:
                step.detail.update(path="skipped", reason=f"no {source} in the graph")
                continue
            rows = self._fulltext(step, index, query, docs, term if case_sensitive else None,
                                  category)
            if docs == self.scope and category is None:
                best = rows[0]["score"] if rows else 0.0
            else:
                best = self._text_best(index, query, term if case_sensitive else None)
            out += self._text_fragments(source, _hits(rows), float(best))
        return out

    def _fulltext(self, step: Step | None, index: str, query: str, docs: DocSet | None,
                  exact: str | None, category: CategoryPattern | None = None) -> list[Record]:
        """Full-text rows best first, restricted to ``docs`` and the patterns with over-fetch,
        optionally kept only where the text contains ``exact``."""
        patterns = self._patterns(docs, category)
        k = self.text_k(docs, category, case_sensitive=exact is not None)
        params: dict[str, Any] = {"index": index, "query": query, "k": k, **patterns}
        if step is None:
            rows = self.db.read("search_fulltext", **params)
        else:
            step.detail["k"] = k
            if category is not None:
                step.detail["category_pattern"] = category.to_dict()
            rows = self._read(step, "search_fulltext", **params)
        rows = sorted(rows, key=lambda r: (-r["score"], r["fragmentid"]))
        if exact is not None:
            rows = [r for r in rows if exact in (r["text"] or "")]
        return rows

    def text_k(self, docs: DocSet | None, category: CategoryPattern | None = None, *,
               case_sensitive: bool = False) -> int:
        """Hits asked of a full-text index: ``top_n_text``, over-fetched by the restriction's
        estimated selectivity (``docs``, the ontology pattern, ``category``) and five times
        for a case-sensitive term (hits without the exact text are dropped afterwards);
        capped at ``index_max_k``. The compiled plan shows this same ``k``."""
        k = self.settings.top_n_text
        if docs is not None or self.scoped() or category is not None:
            n_docs = self.restricted_documents(docs, category)
            documents = max(self.counts()["documents"], 1)
            selectivity = max(n_docs / documents, 1e-9)
            k = min(max(math.ceil(k * 2 / selectivity), k), self.settings.index_max_k)
        if case_sensitive:
            k = min(k * 5, self.settings.index_max_k)
        return k

    def _text_best(self, index: str, query: str, exact: str | None) -> float:
        """The best score of the unrestricted (scoped) search: the normalisation divisor."""
        key = (index, query, exact)
        if key not in self._text_best_cache:
            rows = self._fulltext(None, index, query, self.scope, exact)
            self._text_best_cache[key] = float(rows[0]["score"]) if rows else 0.0
        return self._text_best_cache[key]

    # --- fusion ------------------------------------------------------------------------
    def _semantic_range(self, phrase: str) -> tuple[float, float]:
        """(min, max) semantic score of the phrase's unrestricted (scoped) search."""
        if phrase not in self._semantic_ranges:
            self._remember_range(phrase, self._semantic_only(phrase, self.scope))
        return self._semantic_ranges[phrase]

    def _remember_range(self, phrase: str, fragments: Sequence[Fragment]) -> None:
        self.scale.remember(phrase, fragments, self.counts())
        lo = min((f.score for f in fragments), default=0.0)
        hi = max((f.score for f in fragments), default=0.0)
        self._semantic_ranges[phrase] = (lo, hi)

    def _fuse(self, phrase: str, semantic: Sequence[Fragment], text: Sequence[Fragment], *,
              restricted: bool = False) -> list[Fragment]:
        """Fuse a phrase's semantic and text fragments by ``settings.fusion`` (see
        ``thalabus_graph.fusion``).

        language-slots: fitted once per phrase on its unrestricted (scoped) candidates, then
        applied to these hits; convex: ``(1 - w) * semantic_minmax + w * text``; max: the larger
        of the two; rrf: reciprocal rank fusion. Semantic scores are min-max normalised over the
        phrase's unrestricted search, so a pushed-down filter never changes a fragment's fused
        score (rrf ranks do change). ``restricted`` says these hits are a filtered search.
        """
        rule = self.settings.fusion
        if rule == "rrf":
            return fuse_rrf(semantic, text, self.settings.rrf_k)
        if rule == "language-slots":
            return self._language_slots(phrase, semantic, text, restricted).fuse(semantic, text)
        if rule == "max":
            return fuse_max(semantic, text, semantic_range=self._semantic_range(phrase))
        if rule == "convex":
            return fuse_convex(semantic, text, semantic_range=self._semantic_range(phrase),
                               text_weight=self.settings.fusion_text_weight)
        assert_never(rule)  # mypy: every Fusion value is handled above

    def _language_slots(self, phrase: str, semantic: Sequence[Fragment],
                        text: Sequence[Fragment], restricted: bool) -> LanguageSlots:
        """The phrase's ``LanguageSlots`` rule, fitted on its unrestricted candidates (searched
        again when these hits are restricted) and their documents' languages."""
        if phrase not in self._fusions:
            if restricted and phrase in self._unrestricted_hits:
                semantic, text = self._unrestricted_hits[phrase]
            elif restricted:
                semantic = self._semantic_only(phrase, self.scope)
                self.scale.remember(phrase, semantic, self.counts())
                text = self._text_hits(phrase, self.scope, phrase_mode=False,
                                       case_sensitive=False)
            languages = self.document_languages({f.documentid for f in (*semantic, *text)})
            self._fusions[phrase] = LanguageSlots.fit(
                phrase, semantic, text, languages=languages,
                text_weight=self.settings.fusion_text_weight,
                full_coverage=self.settings.fusion_full_coverage)
        return self._fusions[phrase]

    def document_languages(self, documentids: Iterable[str]) -> dict[str, str | None]:
        """The stored ``language`` of each document (None when it has none or is unknown):
        those an unfiltered ``search_phrase`` already returned, the rest in one read
        returning a row per language."""
        wanted = set(documentids)
        ids = sorted(wanted - self._languages.keys())
        if ids:
            step = Step("fusion", {"rule": "language-slots", "documents": len(ids)})
            self.steps.append(step)
            rows = self._read(step, "document_languages", documentids=ids)
            self._languages.update({d: _stored_language(r["language"]) for r in rows
                                    for d in r["documentids"]})
            self._languages.update({d: None for d in ids if d not in self._languages})
        return {d: self._languages[d] for d in wanted}

    # --- categories and universe ---------------------------------------------------------
    def category_documents(self, name: str, values: Sequence[str]) -> DocSet:
        """Documents having any of ``values`` for category ``name`` (within the scope)."""
        step = Step("category", {"name": name, "values": list(values)})
        self.steps.append(step)
        rows = self._read(step, "search_category", name=name, values=list(values),
                          **self.scope_pattern())
        docs = id_set(rows)
        step.rows = len(docs)
        return docs if self.scope is None else docs & self.scope

    def pair_documents(self, pairs: Sequence[tuple[str, str]]
                       ) -> dict[tuple[str, str], DocSet]:
        """The documents of many category (name, value) pairs in one round trip, within the
        ontology pattern (not the id scope): a query's categories are read once, however many
        it has. Pairs no document has map to the empty set."""
        out: dict[tuple[str, str], DocSet] = {pair: frozenset() for pair in pairs}
        if pairs:
            step = self._new_step("category", {"pairs": len(pairs)})
            rows = self._read(step, "explain_category_documents",
                              pairs=[list(p) for p in pairs], **self.scope_pattern())
            for row in rows:
                out[(row["name"], row["value"])] = frozenset(row["documentids"])
        return out

    def document_categories(self, documentids: Iterable[str]
                            ) -> dict[tuple[str, str], set[str]]:
        """(name, value) -> which of ``documentids`` have it: one read for a few documents
        (the hits of a phrase whose filter was pushed as a pattern)."""
        step = self._new_step("category", {"hits": 0, "pushed_as": "pattern"})
        ids = sorted(documentids)
        step.detail["hits"] = len(ids)
        having: dict[tuple[str, str], set[str]] = {}
        for row in self._read(step, "document_category_keys", documentids=ids):
            for name, value in row["categories"]:
                having.setdefault((name, value), set()).add(row["documentid"])
        return having

    def universe(self) -> DocSet:
        """Every document of the scope (all documents when there is no scope), read once per
        evaluation: only NOT and TRUE need the scope as a set."""
        if self.scope is not None:
            return self.scope
        if self._universe is None:
            scope = {k: v for k, v in self.scope_pattern().items() if v is not None}
            step = Step("universe", dict(scope))
            self.steps.append(step)
            rows = (self._read(step, "universe_scope_documents", **self.scope_pattern())
                    if scope else self._read(step, "universe_all_documents"))
            self._universe = id_set(rows)
            step.rows = len(self._universe)
        return self._universe


Hit = tuple[str, str, str | None, float]
"""One search hit: fragment id, document id, text, score."""


def in_index_params(patterns: dict[str, Any]) -> dict[str, Any]:
    """The restriction parameters of ``search_vector_in_index``: the ontology moves from the
    per-candidate pattern (``$ontologyid``, null) into the index filter (``$index_ontologyid``)."""
    return {**patterns, "ontologyid": None, "index_ontologyid": patterns["ontologyid"]}


def pattern_params(category: CategoryPattern | None) -> dict[str, Any]:
    """The pattern parameters of the search statements: ``$name`` / ``$values`` /
    ``$negated`` for one category, ``$filter`` / ``$seeds`` for a filter pattern (the others
    null)."""
    single = category is not None and not isinstance(category, FilterPattern)
    return {"name": category.name if single and category else None,
            "values": list(category.values) if single and category else None,
            "negated": bool(single and category and category.negated),
            "filter": category.param() if isinstance(category, FilterPattern) else None,
            "seeds": category.seeds() if isinstance(category, FilterPattern) else None}


def _stored_language(value: Any) -> str | None:
    """A stored language as the fusion sees it: None when missing or empty."""
    return str(value) if value else None


def _hits(rows: Iterable[Record]) -> list[Hit]:
    """Records of the one-row-per-hit statements as hits, in their order."""
    return [(r["fragmentid"], r["documentid"], r["text"], r["score"]) for r in rows]


def id_set(rows: Sequence[Record]) -> DocSet:
    """The ``documentids`` list of a one-record id query, as a set."""
    return frozenset(rows[0]["documentids"]) if rows else frozenset()


def stubs(documentids: Iterable[str], contribution: str = CATEGORY_SOURCE) -> list[Fragment]:
    """Category stubs for the documents, sorted."""
    return sort_fragments(stub(d, (contribution,)) for d in documentids)
