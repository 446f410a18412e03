"""EXPLAIN for Thalabus queries: the compiled plan as a tree, without running any search.

It renders the very plan the evaluator executes (``plan.compile``): the reads the compiler
makes (every category of the query in one round trip, the pattern counts, a NOT's universe,
the node counts) are made, so each filtered search shows its estimated selectivity, the path
and ``k`` the run will use, and why. A search restricted by a scored AND side's documents is
shown as decided at run time (the profile shows what was decided). Vectors are elided and
nothing is embedded. Each node's ``query`` is its canonical text, cut at
``texts.LABEL_WIDTH`` characters ("…").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from thalabus_graph.plan.compile import CompiledPlan, Compiler
from thalabus_graph.plan.seeds import PairCounts
from thalabus_graph.plan.statistics import Statistics
from thalabus_graph.query import Node, serialize
from thalabus_graph.query_warning import QueryWarning


class Explainer:
    """Compiles queries for explain (one executor: its scope, counts and settings).

    Args:
        executor: the executor the plan is compiled against (it never embeds here).
        pushdown: False explains the reference evaluator (nothing restricted or pushed).
        pair_counts: the documents of the query's category values, as its vocabulary read
            counted them (``seeds.ordered`` orders a filter pattern's literals by them).
    """

    def __init__(self, executor: Statistics, *, pushdown: bool = True,
                 pair_counts: PairCounts | None = None) -> None:
        self.ex = executor
        self.pushdown = pushdown
        self.pair_counts = pair_counts

    def explain(self, node: Node) -> CompiledPlan:
        """The compiled plan of ``node`` (render it with ``to_dict()``)."""
        return Compiler(self.ex, pushdown=self.pushdown,
                        pair_counts=self.pair_counts).compile(node)


def explained(ex: Statistics, node: Node, warnings: Sequence[QueryWarning],
              pair_counts: PairCounts | None = None) -> dict[str, Any]:
    """What ``ThalabusGraph.explain`` returns: the canonical query, its AST, the compiled plan
    rendered without running a search (a filter pattern's literals ordered by
    ``pair_counts``), the scale semantic scores are on (``scores``,
    ``scale.PhraseScale.explain``) and the query's category warnings."""
    tree = Explainer(ex, pair_counts=pair_counts).explain(node)
    return {"query": serialize(node), "ast": node.to_dict(),
            "plan": tree.to_dict(), "scores": ex.scale.explain(),
            "warnings": [w.to_dict() for w in warnings]}


COUNTED = frozenset({"documents", "rows", "selectivity", "estimated_fragments",
                     "filtered_documents", "k", "walked", "documentids", "candidates"})
"""The plan's entries read from the whole graph, or decided by what was read there."""


def viewed(explanation: dict[str, Any]) -> dict[str, Any]:
    """``explanation`` for a query held to a required filter's view: without what the plan
    read of the whole graph (``COUNTED``, and reasons quoting a number), since a view must
    tell nothing of what lies outside it (how many documents hold a value it cannot see)."""
    def scrub(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: scrub(v) for k, v in value.items() if k not in COUNTED and not (
                k == "reason" and isinstance(v, str) and any(c.isdigit() for c in v))}
        return [scrub(v) for v in value] if isinstance(value, list) else value

    return {**explanation, "plan": scrub(explanation["plan"])}
