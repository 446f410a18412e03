"""CLI output that survives any query: JSON and plan trees written without recursion.

``json.dumps`` recurses and raises ``RecursionError`` on a plan of a 1,000-deep query; indented
JSON and indented trees also grow with the square of the depth. Deep values are therefore
written compactly by an explicit stack; plan trees print through `thalabus_graph.results.plan_view`
(lines stop indenting at ``MAX_INDENT`` levels). ``emit_json`` is the CLI's one JSON writer.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterator
from typing import Any

from thalabus_graph.results.plan_view import MAX_INDENT, plan_lines

__all__ = ["MAX_INDENT", "MAX_INDENTED_DEPTH", "dumps", "emit_json", "nesting", "plan_lines",
           "shown"]

_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
"""Unicode categories a terminal does not show as themselves: control characters (a newline
or NUL in a session name), format characters (the bidi overrides that reorder the rest of
the line), surrogates, private-use and unassigned code points, line and paragraph
separators."""


def shown(text: str) -> str:
    """``text`` for one line of a table: every character a terminal would act on or hide
    (``_HIDDEN``) as its escape (``\\n``, ``\\x00``, ``\\u202e``), so a stored name can neither
    break the line, forge another row nor reverse what follows it. JSON output is exact and
    needs no such care."""
    if text.isprintable():
        return text
    return "".join(ascii(c)[1:-1] if unicodedata.category(c) in _HIDDEN else c for c in text)

MAX_INDENTED_DEPTH = 64
"""Deeper JSON prints on one line: indented JSON grows with the square of the depth."""


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
