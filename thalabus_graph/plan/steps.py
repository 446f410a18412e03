"""The plan's types: what a search is restricted by, the patterns pushed into it, the fragment
sources it reads, and the ``Step`` every reader shows.

These are values, with no I/O: the compiler and the cost model (``plan.cost``) make them, the
searches (``search``) run them, explain and profile render them. They sit below the searches
in the layers (docs/architecture.md, "Layers") so that data flows down: a plan is handed to
the code that runs it, never asked back for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Restriction = frozenset[str]
"""The documents a search or a plan node is restricted to (their ids); ``None`` in its place
means no restriction. The one word for it in the code: a parameter, attribute or local holding
one is called ``restriction``."""


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


@dataclass(frozen=True)
class VectorSource:
    """One embedded fragment kind: its label, vector index and tunables' names."""

    source: str
    label: str
    index: str
    filtered_index: str
    """The index filtering on the fragments' ``ontologyid`` inside it (migration V0007;
    V0010 for questions)."""


VECTOR_SOURCES = (
    VectorSource("chapters", "Chapter", "typical_rag", "typical_rag_ontology"),
    VectorSource("paragraphs", "Paragraph", "paragraphs", "paragraphs_ontology"),
    VectorSource("summaries", "Summary", "summaries", "summaries_ontology"),
    VectorSource("questions", "Question", "questions", "questions_ontology"),
)
VECTOR_BY_SOURCE = {src.source: src for src in VECTOR_SOURCES}
TEXT_SOURCES = (("chapters", "chapters_fulltext"), ("keywords", "keywords_fulltext"))
TEXT_INDEX = dict(TEXT_SOURCES)
TEXT_LABELS = {"chapters": "Chapter", "keywords": "Keyword"}
"""The label of each full-text source's fragments."""
TextPath = Literal["index", "candidates"]
"""How a restricted full-text search keeps its hits: each checked against the restrictions'
patterns (``index``), or looked up among the restricted documents' fragments, collected
first (``candidates``). The same hits either way."""
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


Role = Literal["results", "fit", "range"]
"""What a search's fragments are for: the phrase's results, the fit of its language-slots
fusion on its unrestricted candidates, or its semantic range (convex / max fusion)."""


@dataclass(frozen=True)
class PhraseCall:
    """One ``search_phrase`` round trip: a phrase's unfiltered vector searches and, with
    ``with_text``, its bag-of-words text searches. ``statistics``: kept as the phrase's
    unrestricted hits (its semantic range and fusion fit) before a restricted search;
    ``results``: its fragments are the phrase's results."""

    phrase: str
    with_text: bool
    query: str
    """The Lucene query of its text searches ("" without them)."""
    results: bool = True
    statistics: bool = False


@dataclass(frozen=True)
class VectorSearch:
    """One vector search of one source, its path and ``k`` chosen (``detail`` holds what
    explain and profile show: path, k, reason, selectivity, patterns)."""

    phrase: str
    source: VectorSource
    top_n: int
    restriction: Restriction | None
    category: CategoryPattern | None
    path: str
    k: int
    detail: dict[str, Any]
    statement: str
    role: Role = "results"
    filtered: bool = False


@dataclass(frozen=True)
class TextSearch:
    """One full-text search of one index, its ``k`` chosen (None when skipped: the source
    holds nothing). ``own_best``: the search is unrestricted, so its own best hit is the
    normalisation divisor."""

    term: str
    source: str
    index: str
    query: str
    case_sensitive: bool
    restriction: Restriction | None
    category: CategoryPattern | None
    k: int | None
    detail: dict[str, Any]
    own_best: bool
    role: Role = "results"
    path: TextPath = "index"
    """How its hits are restricted (``plan.cost.choose_text_path``)."""


@dataclass(frozen=True)
class Fusion:
    """The fusion of a phrase's semantic and text fragments by ``rule``; ``restricted``: the
    hits are a filtered search."""

    phrase: str
    rule: str
    restricted: bool


Search = PhraseCall | VectorSearch | TextSearch | Fusion
"""One step of a phrase's plan, as the chooser (``plan.searches``) makes it."""


@dataclass(frozen=True)
class PhrasePlan:
    """The searches of one phrase node, in the order they run.

    Attributes:
        text: the phrase or TEXT term.
        semantic: a SEMANTIC phrase (else a TEXT term).
        searches: the steps, as ``phrase_plan`` chose them.
        unrestricted: the results are the phrase's unrestricted (scoped) search, so they
            give its semantic range.
    """

    text: str
    semantic: bool
    searches: tuple[Search, ...]
    unrestricted: bool = False
