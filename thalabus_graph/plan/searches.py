"""The searches one phrase node will run, decided before it runs.

The compiler calls ``phrase_steps`` for every SEMANTIC and TEXT node whose restriction is known
when the plan is compiled, and the evaluator calls it again, with the documents it found, for
a node restricted by the other side of an AND (known only at run time). The decisions come
from the executor's own functions (``choose_vector_path``, ``restricted_documents``,
``text_k``, ``unfiltered_k``), so explain shows the path and ``k`` the run uses; the order and
kinds of the steps follow ``SearchExecutor.semantic`` / ``text``, which a test checks on every
query of the sample-corpus suite (explain's steps equal the profiled run's).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from thalabus_graph import lucene
from thalabus_graph.query import Node, Semantic, Text
from thalabus_graph.search import (
    TEXT_SOURCES,
    VECTOR_SOURCES,
    CategoryPattern,
    DocSet,
    SearchExecutor,
    VectorSource,
    in_index_params,
)

PlannedStep = dict[str, Any]
"""One planned search in the JSON form of ``Step.to_dict`` (without rows and ms)."""

RUNTIME_PATH = "decided at run time"


@dataclass
class PhraseState:
    """What the executor knows about phrases when a phrase node runs: which phrases' ranges
    are remembered, whose unrestricted hits were read before a restricted search, and whose
    fusion rule is fitted. It decides which extra searches a phrase adds."""

    ranges: set[str] = field(default_factory=set)
    primed: set[str] = field(default_factory=set)
    fusions: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, ex: SearchExecutor) -> PhraseState:
        """The executor's state now (at run time, before a phrase restricted at run time)."""
        return cls(*ex.remembered_phrases())


def phrase_steps(ex: SearchExecutor, state: PhraseState, node: Semantic | Text,
                 restrict: DocSet | None, category: CategoryPattern | None) -> list[PlannedStep]:
    """The searches of ``node`` restricted to ``restrict`` (None: none) and ``category``, in
    the executor's order; ``state`` is updated as the run will update it."""
    if isinstance(node, Text):
        return _text_steps(ex, node.text, ex.restriction(restrict), phrase_mode=True,
                           case_sensitive=node.case_sensitive, category=category)
    phrase = node.text
    fuse = ex.uses_text(phrase)
    restricted = restrict is not None or category is not None
    scoped = ex.scoped()
    out: list[PlannedStep] = []
    primed = (fuse and restricted and ex.scope is None and not scoped
              and phrase not in state.ranges)
    if primed:
        out += _unfiltered_steps(ex, phrase, with_text=True)
        state.ranges.add(phrase)
        state.primed.add(phrase)
    docs = ex.restriction(restrict)
    filtered = docs is not None or scoped or category is not None
    if not filtered and not primed:
        out += _unfiltered_steps(ex, phrase, with_text=fuse)
    elif filtered:
        out += _vector_steps(ex, phrase, docs, category)
    unrestricted = docs == ex.scope and category is None
    if unrestricted:
        state.ranges.add(phrase)
    if not fuse:
        return out
    if filtered:
        out += _text_steps(ex, phrase, docs, phrase_mode=False, case_sensitive=False,
                           category=category)
    return out + _fusion_steps(ex, state, phrase, restricted=not unrestricted)


def runtime_steps(ex: SearchExecutor, state: PhraseState, node: Node) -> list[PlannedStep]:
    """The placeholder plan of a phrase restricted to the other AND side's documents (the
    evaluator plans it again when they are known); ``state`` is updated as the run will."""
    if isinstance(node, Text):
        return [_runtime_text(index) for _, index in TEXT_SOURCES]
    assert isinstance(node, Semantic)
    phrase = node.text
    fuse = ex.uses_text(phrase)
    out: list[PlannedStep] = []
    if fuse and ex.scope is None and not ex.scoped() and phrase not in state.ranges:
        out += _unfiltered_steps(ex, phrase, with_text=True)
        state.ranges.add(phrase)
        state.primed.add(phrase)
    out += [{"kind": "semantic", "phrase": phrase, "source": src.source,
             "path": RUNTIME_PATH,
             "cypher": ("search_vector_in_index | search_vector_exact" if ex.in_index_ontology()
                        else "search_vector | search_vector_exact"),
             "reason": "restricted to the documents of the other AND side"}
            for src in VECTOR_SOURCES]
    if fuse:
        out += [_runtime_text(index) for _, index in TEXT_SOURCES]
        out.append({"kind": "fusion", "rule": ex.settings.fusion, "path": RUNTIME_PATH})
        state.fusions.add(phrase)
    return out


def _runtime_text(index: str) -> PlannedStep:
    return {"kind": "text", "index": index, "path": RUNTIME_PATH, "cypher": "search_fulltext",
            "reason": "k over-fetched by the selectivity of the other AND side's documents"}


def _unfiltered_steps(ex: SearchExecutor, phrase: str, *, with_text: bool
                      ) -> list[PlannedStep]:
    """The steps of one ``search_phrase`` round trip. When the node counts are not known yet
    (they come back with this very call) a source's search is shown on the index path and
    marked as skipped at run time if the source holds no fragments."""
    known = ex.known_counts()
    out: list[PlannedStep] = []
    for src in VECTOR_SOURCES:
        top_n = _top_n(ex, src)
        step: PlannedStep = {"kind": "semantic", "phrase": phrase, "source": src.source,
                             "top_n": top_n, "path": "index", "reason": "no filter",
                             "k": ex.unfiltered_k(src, top_n), "cypher": "search_phrase"}
        out.append(_skipping(step, known, src.source))
    query = lucene.terms_query(phrase) if with_text else ""
    for source, index in TEXT_SOURCES if query else ():
        step = {"kind": "text", "term": phrase, "index": index, "lucene": query,
                "case_sensitive": False, "k": ex.settings.top_n_text, "cypher": "search_phrase"}
        out.append(_skipping(step, known, source))
    return out


def _skipping(step: PlannedStep, known: dict[str, int] | None, source: str) -> PlannedStep:
    if known is None:
        step["if_empty"] = "skipped"
    elif not known.get(source, 0):
        step.update(path="skipped", reason=f"no {source} in the graph")
    return step


def _vector_steps(ex: SearchExecutor, phrase: str, docs: DocSet | None,
                  category: CategoryPattern | None) -> list[PlannedStep]:
    """One search per vector source (``SearchExecutor._vector_search``)."""
    scope = ex.scope_pattern()
    out: list[PlannedStep] = []
    for src in VECTOR_SOURCES:
        top_n = _top_n(ex, src)
        step: PlannedStep = {"kind": "semantic", "phrase": phrase, "source": src.source,
                             "top_n": top_n}
        if docs is None and not ex.scoped() and category is None:
            if not ex.counts().get(src.source, 0):
                step.update(path="skipped", reason=f"no {src.source} in the graph")
            else:
                step.update(path="index", reason="no filter", k=ex.unfiltered_k(src, top_n),
                            cypher="search_vector")
            out.append(step)
            continue
        n_docs = ex.restricted_documents(docs, category)
        choice = ex.choose_vector_path(src, top_n, n_docs)
        step.update(choice.to_dict(), filtered_documents=n_docs)
        if scope["ontologyid"] is not None:
            step["ontology_pattern"] = scope["ontologyid"]
        if scope["datasetids"] is not None:
            step["dataset_pattern"] = scope["datasetids"]
        if category is not None:
            step["category_pattern"] = category.to_dict()
        step["cypher"] = {"none": "", "exact": "search_vector_exact", "index": "search_vector",
                          "in-index": "search_vector_in_index"}[choice.path]
        params = {"vector": f"<{ex.settings.embedding_dimensions} floats elided>",
                  "k": choice.k, "top_n": top_n, **scope,
                  "documentids": None if docs is None else f"<{len(docs)} ids>",
                  **({} if category is None else category.to_dict())}
        if choice.path == "in-index":
            params = {**in_index_params(params), "index": src.filtered_index}
        step["params"] = params
        out.append(step)
    return out


def _text_steps(ex: SearchExecutor, term: str, docs: DocSet | None, *, phrase_mode: bool,
                case_sensitive: bool, category: CategoryPattern | None) -> list[PlannedStep]:
    """One search per full-text index (``SearchExecutor._text_hits``)."""
    query = lucene.phrase_query(term) if phrase_mode else lucene.terms_query(term)
    if not query or (docs is not None and not docs):
        return []
    out: list[PlannedStep] = []
    for source, index in TEXT_SOURCES:
        step: PlannedStep = {"kind": "text", "term": term, "index": index, "lucene": query,
                             "case_sensitive": case_sensitive}
        if not ex.counts().get(source, 0):
            step.update(path="skipped", reason=f"no {source} in the graph")
        else:
            step["k"] = ex.text_k(docs, category, case_sensitive=case_sensitive)
            if category is not None:
                step["category_pattern"] = category.to_dict()
            step["cypher"] = "search_fulltext"
        out.append(step)
    return out


def _fusion_steps(ex: SearchExecutor, state: PhraseState, phrase: str, *,
                  restricted: bool) -> list[PlannedStep]:
    """The fusion: language-slots is fitted once per phrase on its unrestricted (scoped)
    candidates, searched again when this search is restricted and they were not read yet;
    the documents' languages not yet seen are read at run time."""
    rule = ex.settings.fusion
    out: list[PlannedStep] = []
    if rule == "language-slots" and phrase not in state.fusions:
        if restricted and phrase not in state.primed:
            out += _vector_steps(ex, phrase, ex.scope, None)
            out += _text_steps(ex, phrase, ex.scope, phrase_mode=False, case_sensitive=False,
                               category=None)
        state.fusions.add(phrase)
    out.append({"kind": "fusion", "rule": rule,
                "text_weight": ex.settings.fusion_text_weight})
    return out


def _top_n(ex: SearchExecutor, src: VectorSource) -> int:
    return int(getattr(ex.settings, f"top_n_{src.source}"))
