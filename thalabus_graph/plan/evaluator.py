"""Evaluates a parsed query to fragments: the reference walk and the compiled plan.

Both share one trampolined walk (no Python recursion, so deep queries are safe). The reference
evaluates every subtree on its own and combines with the rules of ``fragments``. The compiled
plan (``pushdown=True``) passes a document restriction down the tree: an AND evaluates its
filter side (or, with two scored sides, its left side) first and restricts the other side to
the documents found, and NOT evaluates its operand only inside its universe. An AND of a
category and a phrase never lists the category's documents: the filter is pushed into the
phrase's searches as a Cypher pattern (``PushedCategory``). Restricting never
changes a fragment's score, so the two agree wherever the reference's top-N is not truncated,
and the plan finds the best fragments among the filtered documents instead of the filtered
survivors of a global top-N.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from thalabus_graph.fragments import Fragment, combine_and, combine_not, combine_or
from thalabus_graph.plan.texts import QueryTexts
from thalabus_graph.query import (
    And,
    Category,
    Node,
    Not,
    Or,
    Semantic,
    Text,
    TrueNode,
    fold,
)
from thalabus_graph.search import CategoryPattern, DocSet, SearchExecutor, Step, stubs

Result: TypeAlias = list[Fragment] | None
"""Fragments, or None for TRUE (no constraint)."""
BranchReranker: TypeAlias = Callable[[Node, list[Fragment]], list[Fragment]]
"""Reranks one branch's fragments with that branch's own query (automatically_rerank)."""


@dataclass(frozen=True)
class PushedCategory:
    """The restriction of a phrase that is one side of an AND whose other side is a category:
    the id restriction from above (None: none) and the category as a pattern."""

    docs: DocSet | None
    category: CategoryPattern


Restriction: TypeAlias = DocSet | PushedCategory | None
_Frame: TypeAlias = Generator[tuple[Node, Restriction], Result, Result]

UNIVERSE = "universe"


@dataclass
class PlanNode:
    """One evaluated query node: the restriction pushed into it, the searches it ran, the
    fragments it produced and its wall time (children included)."""

    op: str
    query: str
    restricted_to: int | None
    steps: list[Step] = field(default_factory=list)
    children: list[PlanNode] = field(default_factory=list)
    rows: int | None = None
    ms: float = 0.0
    pattern: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form, children included (built iteratively: plans can be deep)."""
        root: dict[str, Any] = {}
        work: list[tuple[PlanNode, dict[str, Any]]] = [(self, root)]
        while work:
            node, out = work.pop()
            shown = ("none" if node.restricted_to is None
                     else f"{node.restricted_to} documents")
            if node.pattern is not None:
                shown = node.pattern if node.restricted_to is None else f"{shown}, {node.pattern}"
            out.update(op=node.op, query=node.query, pushed_restriction=shown,
                       rows=node.rows, ms=round(node.ms, 3),
                       steps=[s.to_dict() for s in node.steps])
            kids: list[dict[str, Any]] = []
            for child in node.children:
                kid: dict[str, Any] = {}
                kids.append(kid)
                work.append((child, kid))
            if kids:
                out["children"] = kids
        return root


def _pushable(node: Node) -> bool:
    """Whether an AND's filter side is pushed into a phrase as a pattern: a category, or NOT
    a category."""
    return isinstance(node, Category) or (isinstance(node, Not)
                                           and isinstance(node.operand, Category))


def _docs(fragments: list[Fragment]) -> DocSet:
    return frozenset(f.documentid for f in fragments)


def _narrow(restrict: DocSet | None, docs: DocSet) -> DocSet:
    return docs if restrict is None else restrict & docs


class Evaluator:
    """Evaluates AST nodes with one ``SearchExecutor``.

    Args:
        executor: runs the searches (and carries the scope: ontology / parent datasets).
        pushdown: True for the compiled plan, False for the reference evaluator.
        rerank_branch: when given, each AND/OR operand is reranked before combining.
    """

    def __init__(self, executor: SearchExecutor, *, pushdown: bool = True,
                 rerank_branch: BranchReranker | None = None, record: bool = False) -> None:
        self.executor = executor
        self.pushdown = pushdown
        self.rerank_branch = rerank_branch
        self.record = record
        self.plan: PlanNode | None = None
        self._filters: dict[int, bool] = {}
        self._texts: QueryTexts | None = None

    def evaluate(self, node: Node) -> list[Fragment]:
        """The query's fragments, best first; a query that is TRUE gives the universe's stubs."""
        self._filters = self.pure_filters(node)
        self._texts = QueryTexts(node) if self.record else None
        result = self._run(node)
        if result is None:
            return stubs(self.executor.universe(), UNIVERSE)
        return result

    # --- the walk ------------------------------------------------------------------------
    def _run(self, root: Node) -> Result:
        """Drive the frames with an explicit stack; record a plan tree when asked."""
        plans: list[PlanNode | None] = [self._plan_node(root, None)]
        self.plan = plans[0]
        stack: list[_Frame] = [self._frame(root, None)]
        value: Result = None
        first = True
        while stack:
            plan = plans[-1]
            if plan is not None:
                self.executor.steps = plan.steps
            start = time.perf_counter()
            try:
                child, restrict = stack[-1].send(None) if first else stack[-1].send(value)
            except StopIteration as done:
                stack.pop()
                plans.pop()
                value = done.value
                first = False
                if plan is not None:
                    plan.ms += (time.perf_counter() - start) * 1000
                    plan.rows = None if value is None else len(value)
                    if plans and plans[-1] is not None:
                        plans[-1].ms += plan.ms
                continue
            child_plan = self._plan_node(child, restrict if self.pushdown else None)
            if plan is not None and child_plan is not None:
                plan.ms += (time.perf_counter() - start) * 1000
                plan.children.append(child_plan)
            stack.append(self._frame(child, restrict))
            plans.append(child_plan)
            first = True
        return value

    def _plan_node(self, node: Node, restrict: Restriction) -> PlanNode | None:
        if self._texts is None:
            return None
        pattern = None
        if isinstance(restrict, PushedCategory):
            pattern = (f"category pattern {restrict.category.name} "
                       f"{'not in' if restrict.category.negated else 'in'} "
                       f"{list(restrict.category.values)}")
            restrict = restrict.docs
        return PlanNode(type(node).__name__.upper().replace("NODE", ""), self._texts.label(node),
                        None if restrict is None else len(restrict), pattern=pattern)

    def _frame(self, node: Node, restriction: Restriction) -> _Frame:
        ex = self.executor
        category: CategoryPattern | None = None
        restrict: DocSet | None
        if isinstance(restriction, PushedCategory):
            restrict, category = restriction.docs, restriction.category
        else:
            restrict = restriction
        if not self.pushdown:
            restrict = None
        if isinstance(node, Semantic):
            return ex.semantic(node.text, restrict, category=category)
        if isinstance(node, Text):
            return ex.text(node.text, restrict, case_sensitive=node.case_sensitive,
                           category=category)
        assert category is None, "a category pattern is only pushed into a phrase"
        if isinstance(node, Category):
            docs = ex.category_documents(node.name, node.values)
            return stubs(docs if restrict is None else docs & restrict)
        if isinstance(node, TrueNode):
            return None
        if isinstance(node, Not):
            narrowed = None if restrict is None else ex.restriction(restrict)
            universe = ex.universe() if narrowed is None else narrowed
            excluded = yield (node.operand, universe)
            if excluded is None:
                return []
            return combine_not(stubs(universe, UNIVERSE), excluded)
        if isinstance(node, Or):
            left = yield (node.left, restrict)
            right = yield (node.right, restrict)
            if left is None or right is None:
                return None
            left, right = self._rerank(node.left, left), self._rerank(node.right, right)
            return combine_or(left, right)
        if isinstance(node, And):
            return (yield from self._and(node, restrict))
        raise TypeError(f"not a query node: {node!r}")

    def _and(self, node: And, restrict: DocSet | None) -> _Frame:
        swap = self._filters.get(id(node.right), False) and not self._filters.get(
            id(node.left), False)
        first, second = (node.right, node.left) if swap else (node.left, node.right)
        if self.pushdown and _pushable(first) and isinstance(second, Semantic | Text):
            return (yield from self._and_pattern(first, second, restrict, swap))
        first_result = yield (first, restrict)
        if first_result is None:
            return (yield (second, restrict))
        if not first_result:
            return []
        second_result = yield (second, _narrow(restrict, _docs(first_result)))
        if second_result is None:
            return first_result
        if swap:
            first_result, second_result = second_result, first_result
        left = self._rerank(node.left, first_result)
        right = self._rerank(node.right, second_result)
        return combine_and(left, right)

    def _and_pattern(self, pushed: Node, phrase: Semantic | Text,
                     restrict: DocSet | None, swap: bool) -> _Frame:
        """``phrase AND category`` (or ``AND NOT category``) with the filter pushed into the
        phrase's searches as a Cypher pattern: every hit passes it, so the filter side is the
        stubs of the hits' own documents and neither the category's documents nor the NOT
        universe is ever listed. Combined as usual (scores unchanged, the filter's
        contribution merged in)."""
        negated = isinstance(pushed, Not)
        category = pushed.operand if isinstance(pushed, Not) else pushed
        assert isinstance(category, Category)
        pattern = CategoryPattern(category.name, tuple(category.values), negated)
        scored = yield (phrase, PushedCategory(restrict, pattern))
        if not scored:
            return []
        scored = self._rerank(phrase, scored)
        filtered = stubs(_docs(scored), UNIVERSE) if negated else stubs(_docs(scored))
        return combine_and(scored, filtered) if swap else combine_and(filtered, scored)

    def _rerank(self, node: Node, fragments: list[Fragment]) -> list[Fragment]:
        if self.rerank_branch is None or not fragments or all(f.is_stub for f in fragments):
            return fragments
        return self.rerank_branch(node, fragments)

    @staticmethod
    def pure_filters(root: Node) -> dict[int, bool]:
        """id(node) -> whether the subtree is a pure filter, computed once, bottom-up."""
        out: dict[int, bool] = {}

        def step(node: Node, kids: tuple[bool, ...]) -> bool:
            if isinstance(node, Semantic | Text):
                value = False
            elif isinstance(node, Not | Category | TrueNode):
                value = True
            else:
                value = all(kids)
            out[id(node)] = value
            return value

        fold(root, step)
        return out
