"""EXPLAIN for Thalabus queries: the compiled plan as a tree, without running any search.

Category and universe lookups (read-only) are resolved, so each filtered semantic search shows
its estimated selectivity and the path the planner will take with the reason. A restriction
that depends on a scored side's results is shown as decided at run time. Vectors are elided.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from thalabus_graph.query import And, Category, Node, Not, Or, Semantic, Text, TrueNode
from thalabus_graph.query import serialize as to_text
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
        """JSON form, children included."""
        out: dict[str, Any] = {"op": self.op, "query": self.query,
                               "pushed_restriction": self.restriction, "steps": self.steps}
        if self.children:
            out["children"] = [c.to_dict() for c in self.children]
        return out


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
    """Builds the explained plan with one executor (its scope already resolved)."""

    def __init__(self, executor: SearchExecutor, *, pushdown: bool = True) -> None:
        self.ex = executor
        self.pushdown = pushdown

    def explain(self, node: Node) -> ExplainNode:
        """The plan tree of ``node``."""
        plan, _ = self._visit(node, None)
        return plan

    def _visit(self, node: Node, restrict: Docs) -> tuple[ExplainNode, Docs]:
        if not self.pushdown:
            restrict = None
        op = type(node).__name__.upper().replace("NODE", "")
        plan = ExplainNode(op, "" if isinstance(node, TrueNode) else to_text(node),
                           _describe(restrict))
        if isinstance(node, Semantic):
            plan.steps = self._semantic_steps(node.text, restrict)
            return plan, RUNTIME
        if isinstance(node, Text):
            plan.steps = self._text_steps(node.text, restrict, phrase=True,
                                          case_sensitive=node.case_sensitive)
            return plan, RUNTIME
        if isinstance(node, Category):
            docs = self.ex.category_documents(node.name, node.values)
            plan.steps = [{"kind": "category", "cypher": "search_category",
                           "params": {"name": node.name, "values": list(node.values)},
                           "documents": len(docs)}]
            return plan, _intersect(docs, restrict)
        if isinstance(node, TrueNode):
            return plan, None
        if isinstance(node, Not):
            universe: Docs = restrict if restrict is not None else self.ex.universe()
            plan.steps = [{"kind": "universe", "cypher": "universe_all_documents",
                           "documents": _describe(universe)}]
            child, excluded = self._visit(node.operand, universe)
            plan.children = [child]
            if isinstance(universe, frozenset) and isinstance(excluded, frozenset):
                return plan, universe - excluded
            return plan, RUNTIME if excluded is not None else frozenset()
        if isinstance(node, Or):
            left, a = self._visit(node.left, restrict)
            right, b = self._visit(node.right, restrict)
            plan.children = [left, right]
            if a is None or b is None:
                return plan, None
            if isinstance(a, str) or isinstance(b, str):
                return plan, RUNTIME
            return plan, a | b
        assert isinstance(node, And)
        from thalabus_graph.query import is_pure_filter

        swap = is_pure_filter(node.right) and not is_pure_filter(node.left)
        first, second = (node.right, node.left) if swap else (node.left, node.right)
        first_plan, first_docs = self._visit(first, restrict)
        second_plan, second_docs = self._visit(second, _intersect(restrict, first_docs))
        plan.children = [second_plan, first_plan] if swap else [first_plan, second_plan]
        plan.steps = [{"kind": "and", "evaluated_first": first_plan.query,
                       "pushed_into": second_plan.query}]
        return plan, _intersect(first_docs, second_docs)

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
            elif docs is None:
                k = self.ex.unfiltered_k(src, top_n)
                step.update(path="index", cypher="search_phrase", reason="no filter")
                params.update(index=src.index, k=k, top_n=top_n, documentids=None)
            else:
                choice = self.ex.choose_vector_path(src, top_n, len(docs))
                step.update(choice.to_dict())
                exact = choice.path == "exact"
                step["cypher"] = "search_vector_exact" if exact else "search_vector"
                params.update(k=top_n if exact else choice.k, top_n=top_n,
                              documentids=f"<{len(docs)} document ids>")
                params.update({"label": src.label} if exact else {"index": src.index})
            step["params"] = params
            steps.append(step)
        if self.ex.uses_text(phrase):
            text = self._text_steps(phrase, restrict, phrase=False, case_sensitive=False)
            unfiltered = docs is None and not isinstance(restrict, str)
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
