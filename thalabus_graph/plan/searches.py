"""The one place a phrase's searches are chosen: ``phrase_plan``.

For a SEMANTIC or TEXT node, its restriction and its pushed pattern, ``phrase_plan`` decides
every search the node makes, in order: whether a fused phrase first reads its unrestricted
statistics in one round trip, whether the phrase is one unfiltered ``search_phrase`` call or a
search per source, each search's path and ``k`` (the cost model, ``plan.cost``), the text
searches fused in, the searches a fusion needs (its fit, its semantic range) and the fusion.
The compiler calls it to show the plan (``render``), the evaluator calls it to run the node
(``SearchExecutor.run`` executes the searches it returns, deciding nothing), so explain and
the profiled run show one decision. The choice reads the graph only through the executor's
runner (the node counts, the scope's size, a pattern's count), each once per evaluation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from thalabus_graph import lucene
from thalabus_graph.plan import cost
from thalabus_graph.plan.batches import BATCH, batched
from thalabus_graph.plan.statistics import Statistics
from thalabus_graph.plan.steps import (
    TEXT_SOURCES,
    VECTOR_SOURCES,
    CategoryPattern,
    Fusion,
    PhraseCall,
    PhrasePlan,
    Restriction,
    Role,
    Search,
    TextPath,
    TextSearch,
    VectorSearch,
    in_index_params,
)
from thalabus_graph.query import Node, Semantic, Text
from thalabus_graph.settings import Settings

PlannedStep = dict[str, Any]
"""One planned search in the JSON form of ``Step.to_dict`` (without rows and ms)."""

RUNTIME_PATH = "decided at run time"
PROCEDURE = "search_phrase_procedure"
"""The statement that runs a phrase through the procedure plugin (``search.procedure``)."""
_STATEMENTS = {"none": "", "exact": "search_vector_exact", "index": "search_vector",
               "in-index": "search_vector_in_index"}
_TEXT_STATEMENTS = {"index": "search_fulltext", "candidates": "search_fulltext_candidates"}


@dataclass
class PhraseState:
    """What the executor knows about phrases when a phrase node runs: which phrases' ranges
    are remembered, whose unrestricted hits were read before a restricted search, and whose
    fusion rule is fitted. It decides which extra searches a phrase adds; ``phrase_plan``
    updates it as the run will."""

    ranges: set[str] = field(default_factory=set)
    primed: set[str] = field(default_factory=set)
    fusions: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, ex: Statistics) -> PhraseState:
        """The executor's state now (a copy: choosing never changes the executor)."""
        return cls(*ex.remembered_phrases())


def planned(ex: Statistics, state: PhraseState, node: Semantic | Text,
            restriction: Restriction | str | None,
            category: CategoryPattern | None) -> list[PlannedStep]:
    """What explain shows for a phrase node: its chosen searches (``phrase_plan``), or, when
    it is restricted to the other AND side's documents (``restriction`` is a string: known
    only at run time), the placeholder ``runtime_steps``. ``state`` is updated as the run
    will update it."""
    query = lucene_query(node)
    if isinstance(restriction, str):
        return runtime_steps(ex, state, node, query)
    return render(ex, phrase_plan(ex, state, node, restriction, category, query=query))


def lucene_query(node: Semantic | Text) -> str:
    """The full-text query of a phrase node: a TEXT term in phrase mode, a phrase's bag of
    words (what its fused text searches ask)."""
    if isinstance(node, Text):
        return lucene.phrase_query(node.text)
    return lucene.terms_query(node.text)


def uses_text(settings: Settings, phrase: str) -> bool:
    """Whether a SEMANTIC phrase also runs the text search (short, or hybrid for all)."""
    if settings.hybrid_all_queries:
        return True
    return len(phrase.split()) <= settings.short_query_max_words


def phrase_plan(ex: Statistics, state: PhraseState, node: Semantic | Text,
                restriction: Restriction | None, category: CategoryPattern | None, *,
                with_text: bool | None = None, query: str | None = None) -> PhrasePlan:
    """The searches of ``node`` restricted to ``restriction`` (None: none) and ``category``;
    ``state`` is updated as the run will update it. ``with_text`` overrides whether a phrase
    fuses its text search (``uses_text``); ``query``: the node's ``lucene_query``."""
    query = lucene_query(node) if query is None else query
    if isinstance(node, Text):
        effective = ex.effective(restriction)
        return PhrasePlan(node.text, False, tuple(_text_searches(
            ex, node.text, effective, query, case_sensitive=node.case_sensitive,
            category=category)))
    phrase = node.text
    fuse = uses_text(ex.settings, phrase) if with_text is None else with_text
    restricted = restriction is not None or category is not None
    out: list[Search] = []
    primed = fuse and restricted and _primes(ex, state, phrase)
    effective = ex.effective(restriction)
    filtered = effective is not None or ex.reads.sized().scoped() or category is not None
    if primed:
        out.append(PhraseCall(phrase, True, query, results=not filtered, statistics=True))
        state.ranges.add(phrase)
        state.primed.add(phrase)
    if not filtered and not primed:
        out.append(PhraseCall(phrase, fuse, query if fuse else ""))
    elif filtered:
        out += _vector_searches(ex, phrase, effective, category)
    unrestricted = effective == ex.ids and category is None
    if unrestricted:
        state.ranges.add(phrase)
    if fuse:
        if filtered:
            out += _text_searches(ex, phrase, effective, query, case_sensitive=False,
                                  category=category, fused=True)
        out += _fusion(ex, state, phrase, query, restricted=not unrestricted)
    out += _background(ex, state, phrase, out, unrestricted, query if fuse else "")
    return PhrasePlan(phrase, True, tuple(out), unrestricted)


def _background(ex: Statistics, state: PhraseState, phrase: str,
                chosen: Sequence[Search], unrestricted: bool, query: str) -> list[Search]:
    """The unrestricted searches a calibrated restricted phrase needs for its background
    (``scale.PhraseScale``) when no chosen search reads them and no earlier node of the
    evaluation did: its vector searches and, fused (``query``: its bag of words, "" when
    not), its text searches, whose hits the phrase gate reads as the unrestricted phrase's.
    A pushed filter must never change a calibrated score."""
    if (not ex.scale.calibrated or unrestricted or phrase in state.ranges
            or phrase in state.fusions
            or any(getattr(s, "role", "results") in ("fit", "range") for s in chosen)):
        return []
    state.ranges.add(phrase)
    return [*_vector_searches(ex, phrase, ex.ids, None, "range"),
            *_text_searches(ex, phrase, ex.ids, query, case_sensitive=False, category=None,
                            role="range", fused=True)]


def bag_of_words_plan(ex: Statistics, phrase: str) -> PhrasePlan:
    """The bag-of-words full-text search a SEMANTIC phrase fuses in (any word, BM25-ranked,
    unrestricted), planned on its own: the query language offers only the phrase form of
    TEXT, so evaluation (``search.executor.bag_of_words``) runs it directly."""
    searches = _text_searches(ex, phrase, ex.effective(None), lucene.terms_query(phrase),
                              case_sensitive=False, category=None, fused=True)
    return PhrasePlan(phrase, False, tuple(searches))


def _primes(ex: Statistics, state: PhraseState, phrase: str) -> bool:
    """Whether a restricted fused phrase first reads its unrestricted searches in one round
    trip (its fusion's statistics, and the node counts): without a scope, once per phrase."""
    return (ex.ids is None and not ex.reads.sized().scoped()
            and phrase not in state.ranges)


def _vector_searches(ex: Statistics, phrase: str, restriction: Restriction | None,
                     category: CategoryPattern | None,
                     role: Role = "results") -> list[Search]:
    """One search per vector source, each on the path the cost model chooses."""
    settings = ex.settings
    out: list[Search] = []
    for src in VECTOR_SOURCES:
        top_n = cost.top_n(settings, src)
        detail: dict[str, Any] = {"phrase": phrase, "source": src.source, "top_n": top_n}
        if restriction is None and not ex.reads.sized().scoped() and category is None:
            if not ex.reads.ready().node_counts().get(src.source, 0):
                detail.update(path="skipped", reason=f"no {src.source} in the graph")
                out.append(VectorSearch(phrase, src, top_n, None, None, "skipped", 0, detail,
                                        "", role))
                continue
            k = cost.unfiltered_k(settings, top_n)
            detail.update(path="index", reason="no filter", k=k)
            out.append(VectorSearch(phrase, src, top_n, None, None, "index", k, detail,
                                    "search_vector", role))
            continue
        n_docs = ex.reads.restricted(restriction, category)
        choice = cost.choose_vector_path(ex.reads.ready(), settings, src, top_n, n_docs)
        detail.update(choice.to_dict(), filtered_documents=n_docs)
        scope = ex.reads.sized().pattern_parameters()
        if scope["ontologyid"] is not None:
            detail["ontology_pattern"] = scope["ontologyid"]
        if scope["datasetids"] is not None:
            detail["dataset_pattern"] = scope["datasetids"]
        if category is not None:
            detail["category_pattern"] = category.to_dict()
        out.append(VectorSearch(phrase, src, top_n, restriction, category, choice.path, choice.k,
                                detail, _STATEMENTS[choice.path], role, filtered=True))
    return out


def _text_searches(ex: Statistics, term: str, restriction: Restriction | None, query: str, *,
                   case_sensitive: bool, category: CategoryPattern | None,
                   role: Role = "results", fused: bool = False) -> list[Search]:
    """One search per full-text index (``query``: the Lucene query), its ``k`` over-fetched
    by the restriction. A ``fused`` phrase's bag of words searches its language's indexes
    (``Statistics.text_language``); a TEXT term the language-neutral ones, literally."""
    if not query or (restriction is not None and not restriction):
        return []
    own_best = restriction == ex.ids and category is None
    out: list[Search] = []
    language = ex.text_language.choose(term) if fused else None
    for source, index in TEXT_SOURCES if language is None else language.indexes:
        detail: dict[str, Any] = {"term": term, "index": index, "lucene": query,
                                  "case_sensitive": case_sensitive,
                                  **({} if language is None else language.detail())}
        k: int | None = None
        path: TextPath = "index"
        if not ex.reads.ready().node_counts().get(source, 0):
            detail.update(path="skipped", reason=f"no {source} in the graph")
        else:
            scope = ex.reads.for_text(restriction, category)
            k = cost.text_k(scope, ex.settings, restriction, category,
                            case_sensitive=case_sensitive)
            detail["k"] = k
            if category is not None:
                detail["category_pattern"] = category.to_dict()
            if restriction is not None or scope.scoped() or category is not None:
                n_docs = ex.reads.restricted(restriction, category)
                path, why = cost.choose_text_path(ex.reads.value, ex.settings, source, n_docs)
                detail.update(path=path, reason=why, filtered_documents=n_docs)
        out.append(TextSearch(term, source, index, query, case_sensitive, restriction, category, k,
                              detail, own_best, role, path))
    return out


def _fusion(ex: Statistics, state: PhraseState, phrase: str, query: str, *,
            restricted: bool) -> list[Search]:
    """The fusion and the searches it needs first: language-slots is fitted once per phrase
    on its unrestricted (scoped) candidates, searched again when this search is restricted
    and they were not read yet; convex and max normalise by the phrase's unrestricted
    semantic range, searched when not known yet."""
    rule = ex.settings.fusion
    out: list[Search] = []
    if rule == "language-slots" and phrase not in state.fusions:
        if restricted and phrase not in state.primed:
            out += _vector_searches(ex, phrase, ex.ids, None, "fit")
            out += _text_searches(ex, phrase, ex.ids, query, case_sensitive=False,
                                  category=None, role="fit", fused=True)
        state.fusions.add(phrase)
    elif rule in ("max", "convex") and phrase not in state.ranges:
        out += _vector_searches(ex, phrase, ex.ids, None, "range")
        state.ranges.add(phrase)
    out.append(Fusion(phrase, rule, restricted))
    return out


# --- rendering -------------------------------------------------------------------------------
def render(ex: Statistics, plan: PhrasePlan) -> list[PlannedStep]:
    """The plan's searches as explain shows them (statements, paths, ``k``, parameters with
    vectors and id lists elided)."""
    out: list[PlannedStep] = []
    shared = {i for group in batched(plan) for i in group}
    procedure = ex.on_procedure(plan)
    for i, search in enumerate(plan.searches):
        if isinstance(search, PhraseCall):
            steps = phrase_call_steps(ex, search.phrase, search.query, procedure=procedure)
        elif isinstance(search, VectorSearch):
            steps = [_vector(ex, search)]
        elif isinstance(search, TextSearch):
            steps = [{"kind": "text", **search.detail,
                      **({} if search.k is None else {"cypher": _TEXT_STATEMENTS[search.path]})}]
        else:
            steps = [{"kind": "fusion", "rule": search.rule,
                      "text_weight": ex.settings.fusion_text_weight}]
        if procedure and not plan.unrestricted:  # one plugin call runs them all
            for step in steps:
                if step["kind"] != "fusion":
                    step.update(cypher=PROCEDURE, round_trip=f"{PROCEDURE}: one call for "
                                "the phrase's searches")
        elif i in shared:  # one search_phrase_filtered call runs them (search.batch)
            for step in steps:
                step.update(cypher=BATCH, round_trip=f"{BATCH}: one call for the phrase's "
                            "searches")
        out += steps
    return out


def _vector(ex: Statistics, search: VectorSearch) -> PlannedStep:
    step: PlannedStep = {"kind": "semantic", **search.detail}
    if not search.filtered:
        if search.statement:
            step["cypher"] = search.statement
        return step
    step["cypher"] = search.statement
    scope = ex.reads.sized().pattern_parameters()
    params = {"vector": f"<{ex.settings.embedding_dimensions} floats elided>",
              "k": search.k, "top_n": search.top_n, **scope,
              "documentids": (None if search.restriction is None
                              else f"<{len(search.restriction)} ids>"),
              **({} if search.category is None else search.category.to_dict())}
    if search.path == "in-index":
        params = {**in_index_params(params), "index": search.source.filtered_index}
    step["params"] = params
    return step


def phrase_call_steps(ex: Statistics, phrase: str, query: str, *, procedure: bool = False
                      ) -> list[PlannedStep]:
    """The steps of one ``search_phrase`` round trip (``query``: its text searches' Lucene
    query, "" without them), or with ``procedure`` of the ``search_phrase_procedure`` call
    that runs the same searches inside the server (``search.procedure``). When the node
    counts are not known yet (they come back with this very call) a source's search is shown
    on the index path and marked as skipped at run time if the source holds no fragments."""
    known = ex.scope.counts
    path, cypher = ("procedure", PROCEDURE) if procedure else (
        "index", "search_phrase")
    out: list[PlannedStep] = []
    for src in VECTOR_SOURCES:
        top_n = cost.top_n(ex.settings, src)
        step: PlannedStep = {"kind": "semantic", "phrase": phrase, "source": src.source,
                             "top_n": top_n, "path": path, "reason": "no filter",
                             "k": cost.unfiltered_k(ex.settings, top_n), "cypher": cypher}
        out.append(_skipping(step, known, src.source))
    if not query:
        return out
    language = ex.text_language.choose(phrase)
    for source, index in language.indexes:
        step = {"kind": "text", "term": phrase, "index": index, "lucene": query,
                "case_sensitive": False, "k": ex.settings.top_n_text, "cypher": cypher,
                **({"path": path} if procedure else {}), **language.detail()}
        out.append(_skipping(step, known, source))
    return out


def _skipping(step: PlannedStep, known: Mapping[str, int] | None, source: str) -> PlannedStep:
    if known is None:
        step["if_empty"] = "skipped"
    elif not known.get(source, 0):
        step.update(path="skipped", reason=f"no {source} in the graph")
    return step


def runtime_steps(ex: Statistics, state: PhraseState, node: Node,
                  query: str) -> list[PlannedStep]:
    """The placeholder plan of a phrase restricted to the other AND side's documents (the
    evaluator chooses its searches when they are known); ``state`` is updated as the run
    will."""
    if isinstance(node, Text):
        return [_runtime_text(index) for _, index in TEXT_SOURCES]
    assert isinstance(node, Semantic)
    phrase = node.text
    fuse = uses_text(ex.settings, phrase)
    out: list[PlannedStep] = []
    if fuse and _primes(ex, state, phrase):
        out += phrase_call_steps(ex, phrase, query)
        state.ranges.add(phrase)
        state.primed.add(phrase)
    statements = ("search_vector_in_index | search_vector_exact"
                  if ex.reads.sized().in_index_ontology()
                  else "search_vector | search_vector_exact")
    out += [{"kind": "semantic", "phrase": phrase, "source": src.source,
             "path": RUNTIME_PATH, "cypher": statements,
             "reason": "restricted to the documents of the other AND side"}
            for src in VECTOR_SOURCES]
    if fuse:
        out += [_runtime_text(index) for _, index in ex.text_language.choose(phrase).indexes]
        out.append({"kind": "fusion", "rule": ex.settings.fusion, "path": RUNTIME_PATH})
        state.fusions.add(phrase)
    return out


def _runtime_text(index: str) -> PlannedStep:
    return {"kind": "text", "index": index, "path": RUNTIME_PATH,
            "cypher": "search_fulltext | search_fulltext_candidates",
            "reason": "k over-fetched by the selectivity of the other AND side's documents"}
