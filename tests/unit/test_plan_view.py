"""A profiled plan prints as the tree the CLI shows, and stays a dict for code that reads it."""

from __future__ import annotations

import json

from thalabus_graph.cli.output import plan_lines
from thalabus_graph.results.plan_view import Plan

TREE = {"op": "AND", "query": '"p" AND A=x', "pushed_restriction": "none", "rows": 4, "ms": 2.5,
        "steps": [{"kind": "and", "evaluated_first": "right side", "params": {"x": 1}}],
        "children": [{"op": "SEMANTIC", "query": '"p"', "pushed_restriction": "A=x",
                      "rows": 4, "ms": 2.0, "steps": [], "children": []}]}


def test_a_plan_prints_as_the_clis_tree() -> None:
    plan = Plan(query='"p" AND A=x', ms=3.25, embed_ms=1.0, fragments=4, tree=TREE)
    assert str(plan).splitlines() == [
        "profile: 3.25 ms (1.0 ms embedding), 4 fragments",
        "AND \"p\" AND A=x  [restricted to: none]  rows=4, ms=2.5",
        "  - and: evaluated_first=right side",
        "  SEMANTIC \"p\"  [restricted to: A=x]  rows=4, ms=2.0",
    ]
    assert str(plan).splitlines()[1:] == list(plan_lines(TREE))
    assert plan["tree"] is TREE and json.loads(json.dumps(plan))["fragments"] == 4
    assert isinstance(plan, dict) and repr(plan).startswith("{")
