"""CLI output that survives any query: JSON and plan trees written without recursion.

``json.dumps`` recurses and raises ``RecursionError`` on a plan of a 1,000-deep query; indented
JSON and indented trees also grow with the square of the depth. Deep values are therefore
written compactly by an explicit stack, and tree lines stop indenting at ``MAX_INDENT`` levels
(deeper lines say their depth instead).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

MAX_INDENTED_DEPTH = 64
"""Deeper JSON prints on one line: indented JSON grows with the square of the depth."""
MAX_INDENT = 40
"""Tree lines indent at most this many levels; deeper ones are prefixed with their depth."""


def nesting(value: Any) -> int:
    """How deeply dicts and lists nest in ``value`` (a scalar is 0), iteratively."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        current, level = stack.pop()
        if isinstance(current, dict):
            current = list(current.values())
        elif not isinstance(current, list | tuple):
            continue
        deepest = max(deepest, level + 1)
        stack.extend((item, level + 1) for item in current)
    return deepest


def dumps(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, indent=2, default=str)`` at any depth; values
    nested deeper than ``MAX_INDENTED_DEPTH`` are written on one line."""
    if nesting(value) <= MAX_INDENTED_DEPTH:
        return json.dumps(value, ensure_ascii=False, indent=2, default=str)
    return "".join(_compact(value))


def _scalar(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


class _Raw(str):
    """JSON text to write as is (punctuation), unlike a ``str`` value, which is quoted."""

    __slots__ = ()


def _compact(value: Any) -> Iterator[str]:
    """Compact JSON pieces of ``value`` (separators ", " and ": "), by an explicit stack."""
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Raw):
            yield item
        elif isinstance(item, dict):
            parts: list[Any] = [_Raw("{")]
            for i, (key, child) in enumerate(item.items()):
                parts += [_Raw((", " if i else "") + _scalar(str(key)) + ": "), child]
            stack.extend(reversed([*parts, _Raw("}")]))
        elif isinstance(item, list | tuple):
            parts = [_Raw("[")]
            for i, child in enumerate(item):
                parts += [_Raw(", " if i else ""), child]
            stack.extend(reversed([*parts, _Raw("]")]))
        else:
            yield _scalar(item)


def emit_json(value: Any) -> None:
    """Print one JSON document on stdout (see :func:`dumps`)."""
    print(dumps(value))


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
