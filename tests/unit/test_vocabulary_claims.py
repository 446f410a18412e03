"""The claims the "Vocabulary" table of docs/architecture.md makes about the code, checked
where the code can show them: the runner is the one way the search layer reads the graph,
a ``Scope`` is an immutable value and a parameter called ``scope`` holds one, and a parameter
holding documents a search is restricted to is called ``restriction``."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import thalabus_graph
from thalabus_graph.plan.cost import Scope

PACKAGE = Path(thalabus_graph.__file__).parent
READS = {"read", "read_plain", "read_text", "read_profiled", "streamed", "read_tx"}
"""The ``Database`` methods that read the graph."""
BOUNDARY_SCOPES = {("retriever.py", "retrieve"), ("retriever.py", "_retrieve"),
                   ("rerank/stage.py", "retrieve"), ("rerank/stage.py", "_retrieve")}
"""The retriever's ``scope``: the query's keyword arguments, a public boundary name."""


def _modules(*folders: str) -> list[tuple[str, ast.Module]]:
    paths = [p for folder in folders for p in sorted((PACKAGE / folder).rglob("*.py"))]
    return [(str(p.relative_to(PACKAGE)), ast.parse(p.read_text("utf-8"))) for p in paths]


def _on_a_database(call: ast.Call) -> bool:
    """``db.read(...)``, ``self.db.read_plain(...)``, ``self._db.streamed(...)`` and alike."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in READS:
        return False
    target = func.value
    name = target.id if isinstance(target, ast.Name) else (
        target.attr if isinstance(target, ast.Attribute) else "")
    return name in ("db", "_db")


def test_only_the_runner_reads_the_graph_in_the_search_layer() -> None:
    readers = sorted({module for module, tree in _modules("search", "plan")
                      for node in ast.walk(tree)
                      if isinstance(node, ast.Call) and _on_a_database(node)})
    assert readers == ["search/runner.py"]


def test_the_check_sees_a_read_on_a_database() -> None:
    call = ast.parse("self.db.read_plain('x', a=1)").body[0]
    assert isinstance(call, ast.Expr) and isinstance(call.value, ast.Call)
    assert _on_a_database(call.value)
    other = ast.parse("runner.read(step, 'x')").body[0]
    assert isinstance(other, ast.Expr) and isinstance(other.value, ast.Call)
    assert not _on_a_database(other.value)


def test_a_scope_is_an_immutable_value() -> None:
    assert dataclasses.is_dataclass(Scope)
    assert Scope.__dataclass_params__.frozen  # type: ignore[attr-defined]


def _parameters(folders: tuple[str, ...]) -> list[tuple[str, str, str, str]]:
    """(module, function, parameter, annotation) of every function of ``folders``."""
    out = []
    for module, tree in _modules(*folders):
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for arg in [*node.args.args, *node.args.kwonlyargs]:
                    annotation = ast.unparse(arg.annotation) if arg.annotation else ""
                    out.append((module, node.name, arg.arg, annotation))
    return out


def test_a_parameter_called_scope_holds_a_scope() -> None:
    wrong = [(module, function) for module, function, name, annotation in _parameters(("",))
             if name == "scope" and "Scope" not in annotation]
    assert [w for w in wrong if w not in BOUNDARY_SCOPES] == []


def test_a_parameter_holding_a_restriction_is_called_restriction() -> None:
    wrong = [(module, function, name)
             for module, function, name, annotation in _parameters(("plan", "search"))
             if annotation.split(" | ")[0] == "Restriction" and name not in ("restriction",
                                                                            "ids")]
    assert wrong == []
