"""Compiles a parsed query once into the plan both readers use: the evaluator runs it, explain
renders it.

Each ``PlanNode`` holds what was decided for its query node before anything is searched:
whether the subtree is a pure filter (decided once, bottom-up), for an AND which side runs
first and whether its filter side is pushed into the phrase as a Cypher pattern, the
restriction pushed into the node (a document set known now, the other AND side's documents
known at run time, a category pattern, the ontology pattern), the documents of every pure
filter, and for every phrase the searches it will run with their statements, paths, ``k``
and the counts that chose them (``searches.phrase_plan``). The reads the decisions need
(every category of the query in one round trip, the pattern counts, the universe of a NOT,
the node counts) are made here and shown as the node's steps in both readers.

Compiling and rendering are iterative (explicit stacks), so a 10,000-deep query neither
recurses nor grows the Python stack.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from thalabus_graph.plan.rewrite import Rewritten, filter_pattern, push_decision, rewrite
from thalabus_graph.plan.searches import PhraseState, PlannedStep, planned
from thalabus_graph.plan.seeds import PairCounts, ordered
from thalabus_graph.plan.statistics import Statistics
from thalabus_graph.plan.steps import CategoryPattern, FilterPattern, Restriction, Step
from thalabus_graph.plan.texts import QueryTexts
from thalabus_graph.query import And, Category, Node, Not, Or, Semantic, Text, TrueNode, walk
from thalabus_graph.query import children as node_children

STREAM_STATEMENT = "search_filter_documents"
"""The statement a pure filter query with a normal form is streamed from
(``search.filter_stream``): it returns the matching documents of the scope, ordered, each
with its keys among the query's categories."""
RUNTIME = "runtime"
"""A document set known only at run time (it depends on a scored side's results)."""
Planned: TypeAlias = Restriction | str | None
"""A restriction as the compiler knows it: the documents, None (none: TRUE), or ``RUNTIME``
(known only when the other AND side has run)."""


@dataclass(slots=True)
class PlanNode:
    """One query node of the compiled plan: what was decided for it before anything runs
    (what a run measures is its ``NodeRun``).

    Attributes:
        node: the query node.
        pure_filter: the subtree has no phrase (decided once, at compile time).
        restriction: documents pushed into the node: a set, None (none) or ``RUNTIME``.
        pattern: the category pattern pushed into this phrase by its parent AND.
        swap: an AND whose right side runs first (the filter side of a scored AND).
        pushed: an AND whose filter side is pushed into its phrase as ``pattern``.
        pushed_pattern: the pattern a pushed AND passes to its phrase.
        pushed_away: the node is inside a filter side pushed into a phrase as a pattern.
        skipped: why the run does not evaluate this subtree (pushed as a pattern; the other
            AND side is empty), else None.
        documents: a pure filter's documents within its restriction (None: TRUE; RUNTIME).
        category_documents: a category's documents within the scope.
        reads: reads made at compile time for this node (categories, counts, universe).
        planned: the searches planned (explain shows them; a run records its own steps).
        streamed: the root of a pure filter query run as one streamed statement: its normal
            form (``rewrite.filter_pattern``); in_stream: a node checked inside that statement.
    """

    node: Node
    pure_filter: bool
    restriction: Planned = None
    pattern: CategoryPattern | None = None
    swap: bool = False
    pushed: bool = False
    pushed_pattern: CategoryPattern | None = None
    pushed_away: bool = False
    skipped: str | None = None
    documents: Planned = None
    category_documents: Restriction = frozenset()
    reads: list[Step] = field(default_factory=list)
    planned: list[PlannedStep] = field(default_factory=list)
    children: list[PlanNode] = field(default_factory=list)
    streamed: FilterPattern | None = None
    in_stream: bool = False

    @property
    def op(self) -> str:
        """The operator's name (SEMANTIC, TEXT, CATEGORY, TRUE, NOT, OR, AND)."""
        return type(self.node).__name__.upper().replace("NODE", "")

    def restriction_text(self) -> str:
        """The pushed restriction as explain and profile both show it."""
        parts: list[str] = []
        if isinstance(self.restriction, str):
            parts.append("documents of the other AND side (known at run time)")
        elif self.restriction is not None:
            parts.append(f"{len(self.restriction)} documents")
        if isinstance(self.pattern, FilterPattern):
            parts.append("filter pattern " + " OR ".join(
                "(" + " AND ".join(_literal(lit) for lit in conj) + ")"
                for conj in self.pattern.conjunctions))
        elif self.pattern is not None:
            parts.append(f"category pattern {_literal(self.pattern)}")
        return ", ".join(parts) or "none"

    def decision(self) -> dict[str, Any] | None:
        """An AND's decision: which side runs first and how it restricts the other."""
        if not isinstance(self.node, And) or self.streamed is not None or self.in_stream:
            return None
        first, second = (self.children[1], self.children[0]) if self.swap else (
            self.children[0], self.children[1])
        return {"evaluated_first": "right side" if self.swap else "left side",
                "pushed_as": (("filter pattern ($filter: its normal form)"
                               if isinstance(self.pushed_pattern, FilterPattern)
                               else "category pattern ($name / $values)")
                              + " in the phrase's searches: counted, never listed")
                             if self.pushed else
                             ("nothing (the first side is TRUE)" if first.documents is None
                              and first.pure_filter else "document ids"),
                "first_is_pure_filter": first.pure_filter,
                "second_is_pure_filter": second.pure_filter}


def _literal(lit: CategoryPattern) -> str:
    return f"{lit.name} {'not in' if lit.negated else 'in'} {list(lit.values)}"


@dataclass(slots=True)
class NodeRun:
    """What one run of a plan node measured (``Profile``).

    Attributes:
        steps: the searches and reads the run made.
        rows: the fragments the node returned (None: TRUE, or it did not run).
        ms: the milliseconds spent in the node and below it.
        restricted_to: the documents a restriction known only at run time held.
        planned: the searches chosen at run time for such a node (None: as compiled).
    """

    steps: list[Step] = field(default_factory=list)
    rows: int | None = None
    ms: float = 0.0
    restricted_to: int | None = None
    planned: list[PlannedStep] | None = None


Profile: TypeAlias = dict[int, NodeRun]
"""A run's measurements, by ``id`` of the plan node (its own value: the plan holds only
decisions)."""


@dataclass
class CompiledPlan:
    """The plan tree of one query, its labels and the executor it was compiled with."""

    root: PlanNode
    texts: QueryTexts | None = None

    def to_dict(self, profile: Profile | None = None) -> dict[str, Any]:
        """JSON form (iterative: plans can be deep): with a run's ``profile``, what it ran
        (executed steps, rows, ms); else what explain shows (planned steps)."""
        if self.texts is None:
            self.texts = QueryTexts(self.root.node)
        out: dict[str, Any] = {}
        work: list[tuple[PlanNode, dict[str, Any]]] = [(self.root, out)]
        while work:
            plan, into = work.pop()
            into.update(op=plan.op, query=self.texts.label(plan.node),
                        pushed_restriction=plan.restriction_text(),
                        pure_filter=plan.pure_filter)
            steps: list[dict[str, Any]] = []
            decision = plan.decision()
            if decision is not None:
                steps.append({"kind": "and", **decision})
            if plan.skipped is not None:
                steps.append({"kind": "skipped", "reason": plan.skipped})
            steps += [s.to_dict() for s in plan.reads]
            if profile is not None:
                run = profile.get(id(plan), NodeRun())
                steps += [s.to_dict() for s in run.steps]
                chosen = plan.planned if run.planned is None else run.planned
                if isinstance(plan.restriction, str) and chosen:
                    into["planned_at_run_time"] = chosen
                into.update(rows=run.rows, ms=round(run.ms, 3))
                if run.restricted_to is not None:
                    into["restricted_to"] = run.restricted_to
            else:
                steps += plan.planned
            into["steps"] = steps
            if plan.children:
                kids: list[dict[str, Any]] = [{} for _ in plan.children]
                into["children"] = kids
                work.extend(zip(plan.children, kids, strict=True))
        return out


def _intersect(a: Planned, b: Planned) -> Planned:
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, str) or isinstance(b, str):
        return RUNTIME
    return a & b


_Frame: TypeAlias = Generator[tuple[Node, Planned], Planned, Planned]
"""One node being compiled: yields (child, restriction), gets the child's documents back,
returns its own."""


class Compiler:
    """Compiles queries against one executor (its scope, counts and settings).

    Args:
        executor: the executor the plan will run on (it caches what compiling reads).
        pushdown: False for the reference evaluator: nothing is restricted or pushed.
        group: gather the filters of each AND chain into one side first
            (``rewrite.group_filters``). Not with branch reranking, which reranks every
            AND operand with its own clauses: a chain with two phrases would have other
            operands, and other scores.
        pair_counts: the documents of the query's category values, as its vocabulary read
            counted them, which order a filter pattern's literals (``seeds.ordered``) when
            a node is compiled (a ``Rewritten`` query carries its own).
    """

    def __init__(self, executor: Statistics, *, pushdown: bool = True,
                 group: bool = True, pair_counts: PairCounts | None = None) -> None:
        self.ex = executor
        self.pushdown = pushdown
        self.group = group
        self.pair_counts = dict(pair_counts or {})
        self._pure: Mapping[int, bool] = {}
        self._defined: frozenset[str] = frozenset()
        self._pair_counts: PairCounts = {}
        self._plans: dict[int, PlanNode] = {}
        self._pairs: dict[tuple[str, str], Restriction] = {}
        self._state = PhraseState()

    def compile(self, query: Node | Rewritten) -> CompiledPlan:
        """The plan of ``query``: every node's decisions, restrictions and planned searches.
        A node is rewritten first (``rewrite.rewrite``: with pushdown, the filters of each
        AND chain gathered into one side unless ``group`` is off); a ``Rewritten`` query is
        compiled as it is. The plan shows the query in its rewritten form."""
        rewritten = (query if isinstance(query, Rewritten)
                     else rewrite(query, grouped=self.pushdown and self.group,
                                  defined=self.ex.defined, pair_counts=self.pair_counts))
        root = rewritten.root
        self._pure = rewritten.pure
        self._defined = rewritten.defined
        self._pair_counts = rewritten.pair_counts
        self._plans = {}
        plan_root = self._tree(root)
        saved = self.ex.steps
        try:
            self.ex.reads.sized()  # the scope's size decides every path
            found = (filter_pattern(root, rewritten.defined)
                     if self.pushdown and plan_root.pure_filter else None)
            pattern = None if found is None else ordered(found, self._pair_counts)
            if pattern is not None:
                self._stream(plan_root, pattern)
                return CompiledPlan(plan_root)
            self._prefetch(root)
            self._walk(root)
            if plan_root.documents is None:  # TRUE: the answer is the universe
                self.ex.steps = plan_root.reads
                self.ex.universe()
        finally:
            self.ex.steps = saved
        return CompiledPlan(plan_root)

    def _stream(self, plan_root: PlanNode, pattern: FilterPattern) -> None:
        """A pure filter query with a normal form: one statement streams its stubs; nothing
        is read at compile time and no document set is built."""
        plan_root.streamed = pattern
        plan_root.documents = RUNTIME
        plan_root.planned = [{"kind": "category", "cypher": STREAM_STATEMENT,
                              **stream_detail(self.ex, pattern)}]
        stack = list(plan_root.children)
        while stack:
            plan = stack.pop()
            plan.in_stream = True
            plan.documents = RUNTIME
            plan.skipped = "checked inside the streamed filter statement"
            stack.extend(plan.children)

    def _ordered(self, pattern: CategoryPattern | None) -> CategoryPattern | None:
        """``pattern`` with a filter pattern's literals ordered by the counts read
        (``seeds.ordered``: from its smallest literal; its conjunctions known empty
        dropped)."""
        if isinstance(pattern, FilterPattern):
            return ordered(pattern, self._pair_counts)
        return pattern

    def _tree(self, root: Node) -> PlanNode:
        """A PlanNode per query node (iteratively), with the AND decisions."""
        for node in walk(root):
            plan = PlanNode(node, self._pure[id(node)])
            self._plans[id(node)] = plan
            if isinstance(node, And):
                plan.swap, pattern = push_decision(node, self._pure, self._defined)
                pattern = self._ordered(pattern)
                if self.pushdown:
                    plan.pushed_pattern = pattern
                    plan.pushed = pattern is not None
        for node in walk(root):
            self._plans[id(node)].children = [self._plans[id(kid)]
                                              for kid in node_children(node)]
        return self._plans[id(root)]

    def _prefetch(self, root: Node) -> None:
        """The documents of every category value the run lists (not those pushed as
        patterns), in one round trip."""
        pushed: set[int] = set()
        for node in walk(root):
            plan = self._plans[id(node)]
            if plan.pushed:
                assert isinstance(node, And)
                first = node.right if plan.swap else node.left
                pushed.update(id(n) for n in walk(first))
                for kid in walk(first):
                    self._plans[id(kid)].pushed_away = True
                    self._plans[id(kid)].documents = RUNTIME
                self._plans[id(first)].skipped = (
                    "pushed into the phrase as a pattern" if not isinstance(
                        plan.pushed_pattern, FilterPattern) else
                    "pushed into the phrase as a pattern; run on the hits' documents "
                    "(their categories) for the contributions")
        pairs = sorted({(c.name, v) for c in walk(root) if isinstance(c, Category)
                        and id(c) not in pushed for v in c.values})
        self.ex.steps = self._plans[id(root)].reads
        self._pairs = self.ex.pair_documents(pairs)

    def _walk(self, root: Node) -> None:
        stack: list[_Frame] = [self._frame(root, None)]
        reply: Planned = None
        first = True
        while stack:
            try:
                child, restriction = next(stack[-1]) if first else stack[-1].send(reply)
            except StopIteration as done:
                stack.pop()
                reply, first = done.value, False
                continue
            stack.append(self._frame(child, restriction))
            first = True

    def _frame(self, node: Node, restriction: Planned) -> _Frame:
        plan = self._plans[id(node)]
        if not self.pushdown:
            restriction = None
        plan.restriction = restriction
        self.ex.steps = plan.reads
        docs = yield from self._node(node, plan, restriction)
        plan.documents = docs if plan.pure_filter else RUNTIME
        return docs

    def _node(self, node: Node, plan: PlanNode, restriction: Planned) -> _Frame:
        ex = self.ex
        if isinstance(node, Semantic | Text):
            plan.planned = planned(ex, self._state, node, restriction, plan.pattern)
            return RUNTIME
        if isinstance(node, Category):
            found: Restriction = frozenset().union(*(self._pairs[(node.name, v)]
                                                for v in node.values))
            plan.category_documents = found if ex.ids is None else found & ex.ids
            plan.reads.append(Step("category", {
                "name": node.name, "values": list(node.values),
                "documents": len(plan.category_documents),
                "read": "with every category of the query in one round trip"},
                cypher="explain_category_documents"))
            return _intersect(plan.category_documents, restriction)
        if isinstance(node, TrueNode):
            return None
        if isinstance(node, Not):
            universe: Planned
            if isinstance(restriction, str):
                universe = RUNTIME
            else:
                narrowed = None if restriction is None else ex.effective(restriction)
                universe = ex.universe() if narrowed is None else narrowed
            excluded = yield (node.operand, universe)
            if excluded is None:
                return frozenset()
            if isinstance(universe, str) or isinstance(excluded, str):
                return RUNTIME
            return universe - excluded
        if isinstance(node, Or):
            left = yield (node.left, restriction)
            right = yield (node.right, restriction)
            if left is None or right is None:
                return None
            if isinstance(left, str) or isinstance(right, str):
                return RUNTIME
            return left | right
        assert isinstance(node, And)
        return (yield from self._and(node, plan, restriction))

    def _and(self, node: And, plan: PlanNode, restriction: Planned) -> _Frame:
        first, second = (node.right, node.left) if plan.swap else (node.left, node.right)
        if plan.pushed:
            pattern = plan.pushed_pattern
            assert pattern is not None
            self.ex.steps = self._plans[id(second)].reads  # the count sizes the phrase
            if self.ex.category_count(pattern) == 0:  # exact or an upper bound: no document
                self._plans[id(second)].skipped = "the other AND side is empty"
                return frozenset()
            if isinstance(pattern, FilterPattern):
                plan.planned = [{"kind": "category", "cypher": "document_category_keys",
                                 "when": "the phrase has hits",
                                 "reason": "the filter side's contributions, from the "
                                           "categories of the hits' documents"}]
            self._plans[id(second)].pattern = pattern
            yield (second, restriction)
            return RUNTIME
        first_docs = yield (first, restriction)
        if first_docs is not None and not isinstance(first_docs, str) and not first_docs:
            self._plans[id(second)].skipped = "the other AND side is empty"
            return frozenset()
        second_docs = yield (second, restriction if first_docs is None
                             else _intersect(restriction, first_docs))
        return _intersect(first_docs, second_docs)


def stream_detail(ex: Statistics, pattern: FilterPattern) -> dict[str, Any]:
    """The step both readers show for a streamed pure filter (explain plans it, the run
    records it)."""
    detail: dict[str, Any] = {"streamed": True, "category_pattern": pattern.to_dict(),
                              "reason": "a pure filter: one statement, its stubs streamed"}
    scope = ex.reads.sized().pattern_parameters()
    if scope["ontologyid"] is not None:
        detail["ontology_pattern"] = scope["ontologyid"]
    if scope["datasetids"] is not None:
        detail["dataset_pattern"] = scope["datasetids"]
    if ex.stream_limit is not None:
        detail["limit"] = ex.stream_limit
    return detail
