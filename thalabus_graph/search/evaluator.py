"""Executes a compiled plan (``plan.compile``): the compiled plan with pushdown, or the
reference evaluator (the oracle) when compiled without pushdown.

The walk is trampolined (no Python recursion, so deep queries are safe). The reference
evaluates every subtree on its own and combines with the rules of ``fragments``. With pushdown
an AND evaluates the side the compiler chose first and restricts the other side to the
documents found, and NOT evaluates its operand only inside its universe. An AND of a category
and a phrase never lists the category's documents: the compiler pushed the filter into the
phrase's searches as a Cypher pattern. Every decision (which side first, pattern or ids, the
pure-filter rule, each search's path and ``k``) was made once by the compiler; the documents
of the query's categories were read there in one round trip. Restricting never changes a
fragment's score, and a side is judged a pure filter on its whole result (``_is_filter``), so
the two agree wherever the reference's top-N is not truncated, and the
plan finds the best fragments among the filtered documents instead of the filtered survivors
of a global top-N.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from thalabus_graph.embeddings import Embedder
from thalabus_graph.fragments import Fragment, all_stubs, combine_and, combine_not, combine_or
from thalabus_graph.graph.database import Database
from thalabus_graph.plan.compile import CompiledPlan, Compiler, NodeRun, PlanNode, Profile
from thalabus_graph.plan.cost import limit_sizes_pools
from thalabus_graph.plan.rewrite import Prepared, Rewritten, prepare
from thalabus_graph.plan.searches import PhraseState, phrase_plan, render
from thalabus_graph.plan.seeds import PairCounts
from thalabus_graph.plan.steps import FilterPattern, Restriction, Step
from thalabus_graph.query import Category, Node, Not, Or, Semantic, Text, TrueNode, rerank_query
from thalabus_graph.request import QueryRequest
from thalabus_graph.rerank import Reranker
from thalabus_graph.rerank.branches import BranchRerank
from thalabus_graph.rerank.outcome import BranchOutcomes
from thalabus_graph.search.executor import SearchExecutor
from thalabus_graph.search.filter_stream import stream_stubs
from thalabus_graph.search.hits import stubs
from thalabus_graph.search.languages import TextLanguageState
from thalabus_graph.search.procedure import ProcedureState
from thalabus_graph.search.scope import InIndexState
from thalabus_graph.search.vocabulary import Vocabularies
from thalabus_graph.settings import Settings

Result: TypeAlias = list[Fragment] | None
"""Fragments, or None for TRUE (no constraint)."""
BranchReranker: TypeAlias = Callable[[Node, list[Fragment]], list[Fragment]]
"""Reranks one branch's fragments with that branch's own query (automatically_rerank)."""
_Frame: TypeAlias = Generator[tuple[PlanNode, Restriction | None], Result, Result]

UNIVERSE = "universe"


@dataclass(frozen=True)
class Shared:
    """What a graph object's query evaluations share: the connection and its settings, the
    embedder and reranker (read through callables: the embedder is loaded by a search that
    embeds, a reranker set on the graph object later is the one used), the vocabulary
    protocol, and the state of the filtered indexes and of the text languages (each re-read
    at most once a minute)."""

    db: Database
    settings: Settings
    embedder: Callable[[], Embedder]
    reranker: Callable[[], Reranker]
    vocabularies: Vocabularies
    in_index: InIndexState
    text_languages: TextLanguageState
    procedures: ProcedureState | None = None


def pool_limit(request: QueryRequest, node: Node) -> int | None:
    """The limit that sizes ``request``'s pools (``cost.sized``), None for the configured
    ones: a scoped request and a query whose answer smaller pools would change keep them
    (``evaluator_for``, ``cost.limit_sizes_pools``)."""
    scoped = request.ontology_id is not None or request.subset_of_datasetids is not None
    return None if scoped or not limit_sizes_pools(node) else request.limit


def evaluator_for(shared: Shared, request: QueryRequest, node: Node,
                  stale_row: Mapping[str, Any] | None = None,
                  prepared: Prepared | None = None) -> Evaluator:
    """The evaluator of one attempt at ``request`` (``node``: its parsed query; ``prepared``:
    the query as an earlier attempt prepared it). Its counts come from the query's vocabulary
    attempt (planned with ``stale_row`` after a stale one). With a limit the searches read no
    details: the few documents returned are read afterwards (an exact search still does, as
    its hits are few). A pure filter's stubs come in document-id order, the order the cut
    keeps: its statement returns only the first ``limit`` unless a dataset takes every
    one. A scoped request (an ontology, parent datasets) keeps the configured pools: its
    phrases' candidates are its scope's searches, whose pools their fusion is fitted on and
    their calibrated background read from, so pools sized to its limit would move every
    score (an unscoped phrase's search returns a fixed sample beyond its pool instead,
    ``PhraseSearches.sampled``); so does a query whose answer smaller pools would change
    (``cost.limit_sizes_pools``: two scored sides of an AND, a scored side under a NOT)."""
    limit = request.limit
    settings = (shared.settings if request.min_score is None
                else shared.settings.replace(min_score=request.min_score))
    ex = SearchExecutor(
        shared.db, settings, shared.embedder(), limit=pool_limit(request, node),
        profile=request.profile, document_details=request.return_documents and limit is None,
        exact_details=request.return_documents, in_index_state=shared.in_index,
        language=request.language, text_languages=shared.text_languages,
        vocabularies=shared.vocabularies, fresh_vocabulary=request.profile,
        stale_row=stale_row,
        stream_limit=limit if request.cut and not request.create_dataset else None,
        procedures=shared.procedures)
    ex.scale.viewed = request.viewed
    if not request.automatically_rerank:
        return Evaluator(ex, record=request.profile, request=request, prepared=prepared)
    outcomes = BranchOutcomes(semantic=bool(rerank_query(node)))
    return Evaluator(ex, rerank_branch=BranchRerank(shared.reranker(), shared.settings,
                                                    outcomes),
                     record=request.profile, outcomes=outcomes, request=request,
                     prepared=prepared)


def prepared_for(ex: SearchExecutor, request: QueryRequest, node: Node,
                 prepared: Prepared | None, *, grouped: bool) -> Prepared:
    """``node`` prepared for ``request`` (``plan.rewrite.prepare``, unless an earlier attempt
    did: ``prepared``), the executor taking its scope from it, then rewritten once more
    knowing what the query's vocabulary read returned: the graph-defined category names
    (never pushed as patterns) and the category values' counts (which order a filter
    pattern's literals, ``plan.seeds``)."""
    if prepared is None:
        prepared = prepare(node, ex.settings, ontology_id=request.ontology_id,
                           datasetids=request.subset_of_datasetids, limit=request.limit,
                           grouped=grouped, strict=request.strict_categories,
                           quiet=request.viewed)
    ex.prepared = prepared
    defined = ex.defined  # decides the vocabulary attempt, as the plan's first count would
    counts = {} if ex.vocabulary is None else ex.vocabulary.attempt.reads.pair_counts
    ex.prepared = prepared.knowing(defined, counts)
    return ex.prepared


PHRASE_CALLS = ("search_phrase", "search_phrase_procedure")
"""The statements that search a phrase unfiltered in one round trip."""


def phrase_calls(root: PlanNode) -> list[tuple[str, str, bool]]:
    """The phrase calls the plan makes, as (statement, phrase, with its text searches): one
    per phrase whose plan searches it unfiltered in one round trip (its results or its
    fusion's statistics), with ``search_phrase`` or, on the procedure plugin,
    ``search_phrase_procedure``, in plan order. The evaluator starts them together."""
    out: list[tuple[str, str, bool]] = []
    stack = [root]
    while stack:
        plan = stack.pop()
        stack.extend(reversed(plan.children))
        if plan.skipped is not None or not isinstance(plan.node, Semantic):
            continue
        for name in PHRASE_CALLS:
            # a call shared with a filtered phrase's restricted searches is not started early
            calls = [s for s in plan.planned
                     if s.get("cypher") == name and "round_trip" not in s]
            if any(s["kind"] == "semantic" for s in calls):
                out.append((name, plan.node.text, any(s["kind"] == "text" for s in calls)))
    return out


def _docs(fragments: list[Fragment]) -> Restriction:
    return frozenset(f.documentid for f in fragments)


def _narrow(restriction: Restriction | None, fragments: list[Fragment]) -> Restriction:
    """``restriction`` narrowed to the documents of ``fragments`` (all of them for none)."""
    found = _docs(fragments)
    return found if restriction is None else restriction & found


class Evaluator:
    """Compiles a query and executes its plan with one ``SearchExecutor``.

    Args:
        executor: runs the searches (and carries the scope: ontology / parent datasets).
        pushdown: True for the compiled plan, False for the reference evaluator.
        rerank_branch: when given, each AND/OR operand is reranked before combining.
        record: keep the executed plan (``plan``) for profile output.
        outcomes: what the branch reranker did over the query (its flags and warning).
        request: the query's request: a node given to ``results`` is prepared for it first
            (``plan.rewrite.prepare``: rewritten once, its vocabulary check, its limit), and
            the executor takes its scope from the prepared query.
        prepared: the query as an earlier attempt at the request prepared it.
        pair_counts: the documents of the query's category values, which order a filter
            pattern's literals (``QueryReads.pair_counts``; a request's from its own read).
    """

    def __init__(self, executor: SearchExecutor, *, pushdown: bool = True,
                 rerank_branch: BranchReranker | None = None, record: bool = False,
                 outcomes: BranchOutcomes | None = None, request: QueryRequest | None = None,
                 prepared: Prepared | None = None, pair_counts: PairCounts | None = None
                 ) -> None:
        self.executor = executor
        self.outcomes = outcomes
        self.request = request
        self.prepared = prepared
        self.pair_counts = pair_counts
        self.rerank_flags: dict[str, Any] | None = None
        self.rerank_warning: str | None = None
        self.pushdown = pushdown
        self.rerank_branch = rerank_branch
        self.record = record
        self.plan: CompiledPlan | None = None
        self.profile: Profile = {}
        """What the run measured, node by node (the plan holds only decisions)."""

    def results(self, node: Node | Rewritten) -> list[Fragment]:
        """The query's fragments, best first; a query that is TRUE gives the universe's stubs.
        With branch reranking, what it did is then final (``rerank_flags``,
        ``rerank_warning``). A failed run forgets its vocabulary row (``forgetting``)."""
        with self.executor.forgetting():
            fragments = list(self.stream(node))
        if self.outcomes is not None:
            self.rerank_flags = self.outcomes.flags()
            self.rerank_warning = self.outcomes.warning()
        return fragments

    def stream(self, node: Node | Rewritten) -> Iterator[Fragment]:
        """The query's fragments, best first, as an iterator: a pure filter query's stubs
        come straight from the driver's result (one statement, constant memory); any other
        query is evaluated first."""
        request = self.request
        if request is not None and not isinstance(node, Rewritten):
            self.prepared = prepared_for(self.executor, request, node, self.prepared,
                                         grouped=self.rerank_branch is None)
            node, self.pair_counts = self.prepared.query, self.prepared.query.pair_counts
        compiled = Compiler(self.executor, pushdown=self.pushdown,
                            group=self.rerank_branch is None,
                            pair_counts=self.pair_counts).compile(node)
        self.plan = compiled
        root = compiled.root
        if root.streamed is not None:
            yield from self._streamed(root, root.streamed)
            return
        if self.pushdown and not self.record:
            self.executor.prefetch_phrases(phrase_calls(root))
        result = self._run(root)
        if result is None:
            result = stubs(self.executor.universe(), UNIVERSE)
        yield from result

    def _streamed(self, root: PlanNode, pattern: FilterPattern) -> Iterator[Fragment]:
        """The stubs of a pure filter from one streamed statement; its step records rows and
        time (the root's ``NodeRun`` when the stream ends)."""
        planned = dict(root.planned[0])  # the compiler's step: the run records the same
        planned.pop("kind"), planned.pop("cypher")
        step = Step("category", planned)
        run = self._measured(root)
        run.steps.append(step)
        rows = 0
        for fragment in stream_stubs(self.executor, root.node, pattern, step):
            rows += 1
            yield fragment
        run.rows, run.ms = rows, step.ms

    # --- the walk ------------------------------------------------------------------------
    def _run(self, root: PlanNode) -> Result:
        """Drive the frames with an explicit stack, timing each plan node."""
        plans: list[PlanNode] = [root]
        stack: list[_Frame] = [self._frame(root, None)]
        value: Result = None
        first = True
        while stack:
            plan = plans[-1]
            run = self._measured(plan)
            self.executor.steps = run.steps
            start = time.perf_counter()
            try:
                child, restriction = stack[-1].send(None) if first else stack[-1].send(value)
            except StopIteration as done:
                stack.pop()
                plans.pop()
                value = done.value
                first = False
                run.ms += (time.perf_counter() - start) * 1000
                run.rows = None if value is None else len(value)
                if plans:
                    self._measured(plans[-1]).ms += run.ms
                continue
            run.ms += (time.perf_counter() - start) * 1000
            stack.append(self._frame(child, restriction))
            plans.append(child)
            first = True
        return value

    def _measured(self, plan: PlanNode) -> NodeRun:
        """The run's measurements of ``plan`` (``profile``), made on first use."""
        run = self.profile.get(id(plan))
        if run is None:
            run = self.profile[id(plan)] = NodeRun()
        return run

    def _frame(self, plan: PlanNode, restriction: Restriction | None) -> _Frame:
        ex = self.executor
        node = plan.node
        if not self.pushdown:
            restriction = None
        if isinstance(plan.restriction, str) and restriction is not None:
            self._measured(plan).restricted_to = len(restriction)
        if isinstance(node, Semantic | Text):
            if isinstance(plan.restriction, str):  # chosen now: the documents are known
                saved, ex.steps = ex.steps, []
                chosen = phrase_plan(ex, PhraseState.of(ex), node, restriction, plan.pattern)
                self._measured(plan).planned = render(ex, chosen)
                ex.steps = saved
            else:
                chosen = phrase_plan(ex, PhraseState.of(ex), node, restriction, plan.pattern)
            return ex.run(chosen)
        if isinstance(node, Category):
            docs = plan.category_documents
            return stubs(docs if restriction is None else docs & restriction)
        if isinstance(node, TrueNode):
            return None
        if isinstance(node, Not):
            if plan.pushed_away and restriction is not None:  # a pushed filter, on the hits
                excluded = yield (plan.children[0], restriction)
                assert excluded is not None, "a pushed filter is never TRUE"
                return combine_not(stubs(restriction, UNIVERSE), excluded)
            narrowed = None if restriction is None else ex.effective(restriction)
            universe = ex.universe() if narrowed is None else narrowed
            excluded = yield (plan.children[0], universe)
            if excluded is None:
                return []
            return combine_not(stubs(universe, UNIVERSE), excluded)
        if isinstance(node, Or):
            left = yield (plan.children[0], restriction)
            right = yield (plan.children[1], restriction)
            if left is None or right is None:
                return None
            left = self._rerank(plan.children[0].node, left)
            right = self._rerank(plan.children[1].node, right)
            return combine_or(left, right)
        return (yield from self._and(plan, restriction))

    def _and(self, plan: PlanNode, restriction: Restriction | None) -> _Frame:
        left_plan, right_plan = plan.children
        first, second = (right_plan, left_plan) if plan.swap else (left_plan, right_plan)
        if plan.pushed:
            return (yield from self._and_pattern(plan, first, second, restriction))
        first_result = yield (first, restriction)
        if first_result is None:
            return (yield (second, restriction))
        if not first_result:
            return []
        narrowed = _narrow(restriction, first_result)
        second_result = yield (second, narrowed)
        if second_result is None:
            return first_result
        first_filter = self._is_filter(first, first_result, restriction)
        second_filter = self._is_filter(second, second_result, narrowed)
        if plan.swap:
            first_result, second_result = second_result, first_result
            first_filter, second_filter = second_filter, first_filter
        left = self._rerank(left_plan.node, first_result)
        right = self._rerank(right_plan.node, second_result)
        return combine_and(left, right, left_filter=first_filter, right_filter=second_filter)

    def _is_filter(self, side: PlanNode, result: list[Fragment],
                   restriction: Restriction | None) -> bool:
        """Whether an AND side counts as a pure filter, judged as the reference judges it: on
        the side's whole result. A side with a phrase that ran within some documents holds
        only stubs when its phrase's hits all fell outside them (``"x" AND ("y" OR C=v)``
        where no document of "x" has "y"); its whole result still has those hits, so the side
        is scored. Only then is the side evaluated once more, without the restriction (its
        searches are not shown in the profile; its time is the AND's)."""
        if not all_stubs(result):
            return False
        if not result or side.pure_filter or restriction is None or not self.pushdown:
            return True  # an empty side leaves no common document: nothing to judge
        steps = self.executor.steps
        try:
            whole = Evaluator(self.executor, pair_counts=self.pair_counts).results(side.node)
        finally:
            self.executor.steps = steps  # the nested run left it on its own plan's steps
        return all_stubs(whole)

    def _and_pattern(self, plan: PlanNode, pushed: PlanNode, phrase: PlanNode,
                     restriction: Restriction | None) -> _Frame:
        """``phrase AND filter`` with the filter pushed into the phrase's searches as a Cypher
        pattern: every hit passes it, so neither the filter's documents nor a NOT universe is
        ever listed. A category (or NOT a category) side is the stubs of the hits' own
        documents; another filter side runs on the hits' documents alone, its categories
        read for those documents, so each stub carries the contributions the reference gives
        it. Combined as usual (scores unchanged, the filter's contributions merged in)."""
        if phrase.skipped is not None:  # the pattern's count is 0: no document passes
            return []
        scored = yield (phrase, restriction)
        if not scored:
            return []
        scored = self._rerank(phrase.node, scored)
        hits = _docs(scored)
        if isinstance(plan.pushed_pattern, FilterPattern):
            self._hits_categories(pushed, hits)
            filtered = yield (pushed, hits)
            assert filtered is not None, "a pushed filter is never TRUE"
        elif isinstance(pushed.node, Not):
            filtered = stubs(hits, UNIVERSE)
        else:
            filtered = stubs(hits)
        return combine_and(scored, filtered) if plan.swap else combine_and(filtered, scored)

    def _hits_categories(self, pushed: PlanNode, restriction: Restriction) -> None:
        """Give each category of the pushed filter its documents among the phrase's hits'
        documents, the filter's ``restriction`` (one read of their categories)."""
        having = self.executor.document_categories(restriction)
        stack = [pushed]
        while stack:
            node = stack.pop()
            stack.extend(node.children)
            if isinstance(node.node, Category):
                category = node.node
                node.category_documents = frozenset().union(
                    *(having.get((category.name, v), set()) for v in category.values))

    def _rerank(self, node: Node, fragments: list[Fragment]) -> list[Fragment]:
        if self.rerank_branch is None or not fragments or all_stubs(fragments):
            return fragments
        return self.rerank_branch(node, fragments)
