"""A pure filter query's stubs streamed from one statement (``search_filter_documents``).

Each row the statement returns carries the document's keys among the query's categories, and
``DocumentFilter`` derives the stub's contributions from them exactly as the reference
evaluator's combination rules give them (a category: ``category``; a NOT: ``universe``; AND /
OR: the union of the matching sides'), in constant memory per document.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypeAlias

from thalabus_graph.fragments import CATEGORY_SOURCE, Fragment, stub
from thalabus_graph.plan.steps import FilterPattern, Step, category_key
from thalabus_graph.query import And, Category, Node, Not, Or, TrueNode, fold
from thalabus_graph.search.executor import SearchExecutor

UNIVERSE = "universe"
_TRUE = ("<true>",)
"""A subtree that holds for every document (TRUE): no constraint, no contribution yet."""
Value: TypeAlias = tuple[str, ...] | None
"""A subtree's contributions for one document, None when the document does not match."""


@dataclass(frozen=True)
class _Op:
    kind: str
    kids: tuple[int, ...]
    keys: frozenset[str] = frozenset()


class DocumentFilter:
    """A pure filter compiled into a flat post-order program (no recursion, deep trees are
    safe), evaluated on one document's category keys at a time."""

    def __init__(self, root: Node) -> None:
        self.ops: list[_Op] = []
        fold(root, self._add)

    def _add(self, node: Node, kids: tuple[int, ...]) -> int:
        if isinstance(node, Category):
            op = _Op("category", (), frozenset(category_key(node.name, v) for v in node.values))
        elif isinstance(node, TrueNode | Not | And | Or):
            op = _Op(type(node).__name__, kids)
        else:
            raise ValueError(f"not a pure filter: {type(node).__name__}")
        self.ops.append(op)
        return len(self.ops) - 1

    def keys(self) -> list[str]:
        """Every category key the query names (the statement returns a document's among
        them)."""
        return sorted({key for op in self.ops for key in op.keys})

    def contributions(self, keys: frozenset[str]) -> Value:
        """The contributions of the stub of a document having ``keys``, None when the filter
        rejects it."""
        values: list[Value] = []
        for op in self.ops:
            values.append(_value(op, keys, values))
        out = values[-1]
        return (UNIVERSE,) if out == _TRUE else out


def _value(op: _Op, keys: frozenset[str], values: list[Value]) -> Value:
    if op.kind == "category":
        return (CATEGORY_SOURCE,) if op.keys & keys else None
    if op.kind == "TrueNode":
        return _TRUE
    if op.kind == "Not":
        return (UNIVERSE,) if values[op.kids[0]] is None else None
    a, b = values[op.kids[0]], values[op.kids[1]]
    if op.kind == "And":
        if a is None or b is None:
            return None
        return b if a == _TRUE else a if b == _TRUE else _merge(a, b)
    if a == _TRUE or b == _TRUE:
        return _TRUE
    return b if a is None else a if b is None else _merge(a, b)


def _merge(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(sorted({*a, *b}))


def stream_stubs(ex: SearchExecutor, root: Node, pattern: FilterPattern,
                 step: Step) -> Iterator[Fragment]:
    """The stubs of the pure filter ``root`` (whose normal form is ``pattern``), by document
    id, streamed from one statement (the first ``ex.stream_limit`` of them when set);
    ``step`` counts the rows."""
    program = DocumentFilter(root)
    for documentid, keys, details in ex.runner.stream(step, "search_filter_documents",
                                                      filter=pattern.param(),
                                               seeds=pattern.seeds(), keys=program.keys(),
                                               details=ex.document_details,
                                               limit=ex.stream_limit,
                                               **ex.reads.sized().pattern_parameters()):
        if details is not None:  # the caller returns documents: their details come along
            ex.details[documentid] = details
        found = program.contributions(frozenset(keys))
        if found is not None:  # the statement checked the same filter: always true
            yield stub(documentid, found)
