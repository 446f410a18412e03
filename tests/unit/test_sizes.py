"""Size limits of the package's source, so no module, class or function grows past what a reader
can hold at once: a module of ``thalabus_graph`` has at most 500 lines, a class at most 250, a
function or method (nested ones included) at most 60.

A class or function is measured from its ``class``/``def`` line to its last line
(``end_lineno - lineno + 1``; decorators not counted), a module by its number of lines.

The one exception is ``Settings`` (``thalabus_graph/settings.py``): its body is mostly fields,
each an annotated assignment with the docstring after it, and they belong together in one class
whatever their number. ``Settings`` is measured by its other statements only: the class's
docstring and every field (an annotated assignment, with the string literal right after it)
are left out, and the lines of what remains (its methods and any other statement) must add up
to at most 250.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import thalabus_graph

PACKAGE = Path(thalabus_graph.__file__).parent
ROOT = PACKAGE.parent

MAX_MODULE_LINES = 500
MAX_CLASS_LINES = 250
MAX_FUNCTION_LINES = 60

FIELD_CLASSES = {("thalabus_graph/settings.py", "Settings")}
"""Classes measured by their non-field statements (see the module docstring)."""


def span(node: ast.stmt) -> int:
    """Lines of a statement, from its first line to its last."""
    assert node.end_lineno is not None
    return node.end_lineno - node.lineno + 1


def non_field_lines(cls: ast.ClassDef) -> int:
    """Lines of ``cls``'s body left when its docstring and fields (an annotated assignment and
    the string literal after it) are taken out."""
    total = 0
    previous: ast.stmt | None = None
    for index, node in enumerate(cls.body):
        is_docstring = (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                        and isinstance(node.value.value, str)
                        and (index == 0 or isinstance(previous, ast.AnnAssign)))
        if not (isinstance(node, ast.AnnAssign) or is_docstring):
            total += span(node)
        previous = node
    return total


def sources() -> Iterator[tuple[str, str]]:
    """(path relative to the repository, source text) of every module of the package."""
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")


def oversized(name: str, text: str) -> Iterator[str]:
    """A message for each limit ``text`` (the module ``name``) breaks."""
    lines = len(text.splitlines())
    if lines > MAX_MODULE_LINES:
        yield f"{name}: module has {lines} lines (limit {MAX_MODULE_LINES})"
    yield from _oversized_in(name, ast.parse(text), "")


def _oversized_in(name: str, parent: ast.AST, prefix: str) -> Iterator[str]:
    """Messages for the classes and functions under ``parent``, named by their dotted path."""
    for node in ast.iter_child_nodes(parent):
        if isinstance(node, ast.ClassDef):
            qualified = prefix + node.name
            if (name, qualified) in FIELD_CLASSES:
                length, what = non_field_lines(node), "lines besides its fields"
            else:
                length, what = span(node), "lines"
            if length > MAX_CLASS_LINES:
                yield (f"{name}: class {qualified} has {length} {what} "
                       f"(limit {MAX_CLASS_LINES})")
            yield from _oversized_in(name, node, qualified + ".")
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            qualified = prefix + node.name
            if span(node) > MAX_FUNCTION_LINES:
                yield (f"{name}: function {qualified} has {span(node)} lines "
                       f"(limit {MAX_FUNCTION_LINES})")
            yield from _oversized_in(name, node, qualified + ".")
        else:
            yield from _oversized_in(name, node, prefix)


def test_no_module_class_or_function_is_over_its_size_limit() -> None:
    failures = [message for name, text in sources() for message in oversized(name, text)]
    assert not failures, "\n".join(failures)


def test_the_sizes_are_measured_as_described() -> None:
    """A long function, method and class are reported by dotted name and length; the fields of
    Settings are not counted, those of another class are."""
    body = "".join(f"        x{i} = {i}\n" for i in range(60))
    fields = "".join(f'    f{i}: int = {i}\n    """Field {i}."""\n' for i in range(130))
    text = (f"def long():\n    def inner():\n{body}\n"
            f"class Settings:\n    \"\"\"Doc.\"\"\"\n{fields}"
            f"class Other:\n{fields}")
    messages = list(oversized("thalabus_graph/settings.py", text))
    assert messages == [
        "thalabus_graph/settings.py: module has 586 lines (limit 500)",
        "thalabus_graph/settings.py: function long has 62 lines (limit 60)",
        "thalabus_graph/settings.py: function long.inner has 61 lines (limit 60)",
        "thalabus_graph/settings.py: class Other has 261 lines (limit 250)",
    ]
