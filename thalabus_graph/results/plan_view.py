"""Plan trees as text: the lines the CLI prints for explain and profile, and `Plan`, the
profiled plan a query returns, which prints as that same tree.

Rendering is iterative (an explicit stack), so the plan of a 1,000-deep query prints; lines stop
indenting at ``MAX_INDENT`` levels (deeper lines say their depth instead), since indentation
grows with the square of the depth.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

MAX_INDENT = 40
"""Tree lines indent at most this many levels; deeper ones are prefixed with their depth."""


class Plan(dict[str, Any]):
    """The executed plan of a profiled query: a dict (``query``, ``ms``, ``embed_ms``,
    ``fragments``, ``tree``) whose ``str`` is the tree ``thalabus-graph query --profile``
    prints, so ``print(result.plan)`` reads like the CLI.

    Example:
        >>> tree = {"op": "SEMANTIC", "query": '"x"', "pushed_restriction": "none",
        ...         "rows": 3, "ms": 1.5, "steps": [], "children": []}
        >>> print(Plan(query='"x"', ms=2.0, embed_ms=0.5, fragments=3, tree=tree))
        profile: 2.0 ms (0.5 ms embedding), 3 fragments
        SEMANTIC "x"  [restricted to: none]  rows=3, ms=1.5
    """

    def __str__(self) -> str:
        head = (f"profile: {self.get('ms')} ms ({self.get('embed_ms')} ms embedding), "
                f"{self.get('fragments')} fragments")
        tree = self.get("tree")
        return "\n".join([head, *(plan_lines(tree) if isinstance(tree, dict) else ())])


def plan_lines(tree: dict[str, Any]) -> Iterator[str]:
    """Text lines of an explain or profile plan tree: one line per node (operator, query,
    restriction, and rows / ms when profiled), one line per step, children indented."""
    stack: list[tuple[dict[str, Any], int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        pad = "  " * min(depth, MAX_INDENT) + (f"[{depth}] " if depth > MAX_INDENT else "")
        measured = ""
        if "ms" in node:
            measured = f"  rows={node.get('rows')}, ms={node['ms']}"
        yield (f"{pad}{node['op']} {node['query']}  [restricted to: "
               f"{node['pushed_restriction']}]{measured}")
        for step in node.get("steps", []):
            detail = ", ".join(f"{k}={v}" for k, v in step.items()
                               if k not in ("kind", "params"))
            yield f"{pad}  - {step['kind']}: {detail}"
        stack.extend((child, depth + 1) for child in reversed(node.get("children", [])))
