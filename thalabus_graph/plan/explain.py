"""EXPLAIN for Thalabus queries: the compiled plan as a tree, without running any search.

Category and universe lookups (read-only) are resolved, so each filtered semantic search shows
its estimated selectivity and the path the planner will take with the reason. A restriction
that depends on a scored side's results is shown as decided at run time. Vectors are elided.
Each node's ``query`` is its canonical text, cut at ``texts.LABEL_WIDTH`` characters ("…").
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from thalabus_graph.plan.evaluator import Evaluator
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
    category_predicates,
)
from thalabus_graph.search import TEXT_SOURCES, VECTOR_SOURCES, DocSet, SearchExecutor

RUNTIME = "runtime"
Docs = DocSet | None | str
"""What a subtree can return: a known document set, None (TRUE: no constraint), or RUNTIME."""


@dataclass
class ExplainNode:
    """One node of the explained plan."""

    op: str
    query: str
    restriction: str
    steps: list[dict[str, Any]] = field(default_factory=list)
    children: list[ExplainNode] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON form, children included (built iteratively: plans can be deep)."""
        root: dict[str, Any] = {}
        work: list[tuple[ExplainNode, dict[str, Any]]] = [(self, root)]
        while work:
            node, out = work.pop()
            out.update(op=node.op, query=node.query, pushed_restriction=node.restriction,
                       steps=node.steps)
            if node.children:
                kids: list[dict[str, Any]] = [{} for _ in node.children]
                out["children"] = kids
                work.extend(zip(node.children, kids, strict=True))
        return root


_Frame: TypeAlias = Generator[tuple[Node, Docs], tuple[ExplainNode, Docs], Docs]
"""One node's explanation in progress: it yields (child, restriction) and gets back the
child's plan and document set; it returns its own document set."""


def _describe(restrict: Docs) -> str:
    if restrict is None:
        return "none"
    if isinstance(restrict, str):
        return "documents of the other AND side (known at run time)"
    return f"{len(restrict)} documents"


def _intersect(a: Docs, b: Docs) -> Docs:
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, str) or isinstance(b, str):
        return RUNTIME
    return a & b


class Explainer:
    """Builds the explained plan with one executor (its scope already resolved).

    The walk is an explicit stack of generator frames (like the evaluator's), so a query of any
    depth explains without recursion; node labels come from one serialisation of the query
    (:class:`QueryTexts`), the documents of every category value are read in one round trip
    and the universe once, so the cost grows linearly with the query.
    """

    def __init__(self, executor: SearchExecutor, *, pushdown: bool = True) -> None:
        self.ex = executor
        self.pushdown = pushdown
        self._texts: QueryTexts | None = None
        self._filters: dict[int, bool] = {}
        self._categories: dict[tuple[str, tuple[str, ...]], DocSet] = {}
        self._pairs: dict[tuple[str, str], DocSet] = {}
        self._universe: DocSet | None = None

    def explain(self, node: Node) -> ExplainNode:
        """The plan tree of ``node``."""
        self._texts = QueryTexts(node)
        self._filters = Evaluator.pure_filters(node)
        self._prefetch_categories(node)
        root = self._plan_node(node, None)
        stack: list[tuple[_Frame, ExplainNode]] = [(self._frame(node, None, root), root)]
        reply: tuple[ExplainNode, Docs] | None = None
        while stack:
            frame, plan = stack[-1]
            try:
                child, restrict = frame.send(reply) if reply is not None else next(frame)
            except StopIteration as done:
                stack.pop()
                reply = (plan, done.value)
                continue
            child_plan = self._plan_node(child, restrict)
            stack.append((self._frame(child, restrict, child_plan), child_plan))
            reply = None
        return root

    def _plan_node(self, node: Node, restrict: Docs) -> ExplainNode:
        assert self._texts is not None
        op = type(node).__name__.upper().replace("NODE", "")
        shown = restrict if self.pushdown else None
        return ExplainNode(op, self._texts.label(node), _describe(shown))

    def _frame(self, node: Node, restrict: Docs, plan: ExplainNode) -> _Frame:
        if not self.pushdown:
            restrict = None
        if isinstance(node, Semantic):
            plan.steps = self._semantic_steps(node.text, restrict)
            return RUNTIME
        if isinstance(node, Text):
            plan.steps = self._text_steps(node.text, restrict, phrase=True,
                                          case_sensitive=node.case_sensitive)
            return RUNTIME
        if isinstance(node, Category):
            docs = self._category(node)
            plan.steps = [{"kind": "category", "cypher": "search_category",
                           "params": {"name": node.name, "values": list(node.values)},
                           "documents": len(docs)}]
            return _intersect(docs, restrict)
        if isinstance(node, TrueNode):
            return None
        if isinstance(node, Not):
            universe: Docs = restrict if restrict is not None else self._all_documents()
            plan.steps = [{"kind": "universe", "cypher": "universe_all_documents",
                           "documents": _describe(universe)}]
            child, excluded = yield (node.operand, universe)
            plan.children = [child]
            if isinstance(universe, frozenset) and isinstance(excluded, frozenset):
                return universe - excluded
            return RUNTIME if excluded is not None else frozenset()
        if isinstance(node, Or):
            left, a = yield (node.left, restrict)
            right, b = yield (node.right, restrict)
            plan.children = [left, right]
            if a is None or b is None:
                return None
            if isinstance(a, str) or isinstance(b, str):
                return RUNTIME
            return a | b
        assert isinstance(node, And)
        swap = self._filters[id(node.right)] and not self._filters[id(node.left)]
        first, second = (node.right, node.left) if swap else (node.left, node.right)
        first_plan, first_docs = yield (first, restrict)
        second_plan, second_docs = yield (second, _intersect(restrict, first_docs))
        plan.children = [second_plan, first_plan] if swap else [first_plan, second_plan]
        plan.steps = [{"kind": "and", "evaluated_first": first_plan.query,
                       "pushed_into": second_plan.query}]
        pushable = isinstance(first, Category) or (isinstance(first, Not)
                                                   and isinstance(first.operand, Category))
        if self.pushdown and pushable and isinstance(second, Semantic | Text):
            plan.steps[0].update(
                pushed_as="category pattern ($name / $values) in the phrase's searches; its "
                          "documents are counted (search_scope_count), never listed")
        return _intersect(first_docs, second_docs)

    def _prefetch_categories(self, root: Node) -> None:
        """Read the documents of every category value of the query in one round trip."""
        pairs = sorted({(c.name, v) for c in category_predicates(root) for v in c.values})
        self._pairs = {pair: frozenset() for pair in pairs}
        if pairs:
            rows = self.ex.db.read("explain_category_documents", pairs=[list(p) for p in pairs],
                                   ontologyid=self.ex.ontology_pattern())
            for row in rows:
                self._pairs[(row["name"], row["value"])] = frozenset(row["documentids"])

    def _category(self, node: Category) -> DocSet:
        """The documents of one category predicate within the scope (from the prefetch)."""
        key = (node.name, node.values)
        if key not in self._categories:
            docs: DocSet = frozenset().union(*(self._pairs[(node.name, v)] for v in node.values))
            scope = self.ex.scope
            self._categories[key] = docs if scope is None else docs & scope
        return self._categories[key]

    def _all_documents(self) -> DocSet:
        """The universe of a NOT without a restriction, read once per explain."""
        if self._universe is None:
            self._universe = self.ex.universe()
        return self._universe

    def _semantic_steps(self, phrase: str, restrict: Docs) -> list[dict[str, Any]]:
        docs = self.ex.restriction(restrict) if not isinstance(restrict, str) else None
        steps: list[dict[str, Any]] = []
        for src in VECTOR_SOURCES:
            top_n = int(getattr(self.ex.settings, f"top_n_{src.source}"))
            step: dict[str, Any] = {"kind": "semantic", "source": src.source, "top_n": top_n}
            params: dict[str, Any] = {"vector": f"<{self.ex.settings.embedding_dimensions} "
                                                "floats elided>"}
            if isinstance(restrict, str):
                step.update(path="decided at run time", cypher="search_vector | "
                            "search_vector_exact", reason="the restriction is the other "
                            "AND side's documents")
            elif docs is None and self.ex.ontology_pattern() is None:
                k = self.ex.unfiltered_k(src, top_n)
                step.update(path="index", cypher="search_phrase", reason="no filter")
                params.update(index=src.index, k=k, top_n=top_n, documentids=None)
            else:
                n_docs = self.ex.scope_documents() if docs is None else len(docs)
                choice = self.ex.choose_vector_path(src, top_n, n_docs)
                step.update(choice.to_dict())
                exact = choice.path == "exact"
                step["cypher"] = "search_vector_exact" if exact else "search_vector"
                params.update(k=top_n if exact else choice.k, top_n=top_n,
                              documentids=(None if docs is None
                                           else f"<{len(docs)} document ids>"),
                              ontologyid=self.ex.ontology_pattern())
                params.update({"label": src.label} if exact else {"index": src.index})
            step["params"] = params
            steps.append(step)
        if self.ex.uses_text(phrase):
            text = self._text_steps(phrase, restrict, phrase=False, case_sensitive=False)
            unfiltered = (docs is None and not isinstance(restrict, str)
                          and self.ex.ontology_pattern() is None)
            steps += [{**t, "cypher": "search_phrase"} if unfiltered
                      else t for t in text]
            steps.append({"kind": "fusion", "rule": self.ex.settings.fusion,
                          "text_weight": self.ex.settings.fusion_text_weight})
        return steps

    def _text_steps(self, term: str, restrict: Docs, *, phrase: bool,
                    case_sensitive: bool) -> list[dict[str, Any]]:
        from thalabus_graph import lucene

        query = lucene.phrase_query(term) if phrase else lucene.terms_query(term)
        return [{"kind": "text", "index": index, "source": source, "cypher": "search_fulltext",
                 "params": {"index": index, "query": query, "k": self.ex.settings.top_n_text},
                 "case_sensitive": case_sensitive, "restriction": _describe(restrict)}
                for source, index in TEXT_SOURCES]
