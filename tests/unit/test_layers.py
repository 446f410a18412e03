"""The layering of docs/architecture.md holds: a module imports only from its own layer and the
layers below it, so a back-edge (say, rerank reaching into the graph) fails here."""

from __future__ import annotations

import ast
from pathlib import Path

import thalabus_graph

PACKAGE = Path(thalabus_graph.__file__).parent

LAYERS: list[set[str]] = [
    {"__init__", "engine", "application", "cli", "retriever", "integrations", "mcp", "demo",
     "bounds", "warm_up", "querying"},
    {"results"},
    {"search"},
    {"plan"},
    {"goals"},
    {"datasets", "dataset_rerank"},
    {"ingest", "vectors", "text_languages"},
    {"rerank"},
    {"query", "fragments", "lucene", "scoring"},
    {"embeddings"},
    {"_http"},
    {"graph"},
    {"settings", "settings_values", "errors", "progress", "languages",
     "query_warning", "request"},
]
"""Top to bottom, as in the "Layers" table of docs/architecture.md."""

PLAN_MAY_IMPORT = {"plan", "query", "lucene", "settings", "errors", "query_warning"}
"""The plan is pure: it reads the graph only through ``plan.statistics.Statistics``, which
the reading layer implements, so it imports the query, the full-text syntax, settings and
the error and warning values, and nothing that reads or runs."""


def module_of(parts: list[str] | tuple[str, ...]) -> str:
    """The layer key of a module: its top-level name (a package's modules share its layer)."""
    return parts[0].removesuffix(".py")


def layer_of(top: str) -> int:
    for depth, names in enumerate(LAYERS):
        if top in names:
            return depth
    raise AssertionError(f"thalabus_graph.{top} is in no layer of docs/architecture.md")


def imports() -> list[tuple[str, str]]:
    """(importing top-level module, imported top-level module) for every package import."""
    edges = []
    for path in PACKAGE.rglob("*.py"):
        top = module_of(path.relative_to(PACKAGE).parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                # ``from thalabus_graph.plan import cost`` imports the module plan.cost
                names = [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            for name in names:
                parts = name.split(".")
                if parts[0] == "thalabus_graph" and len(parts) > 1:
                    imported = module_of(parts[1:])
                    if imported != top:
                        edges.append((top, imported))
    return edges


def test_every_module_has_a_layer() -> None:
    for path in PACKAGE.iterdir():
        if path.suffix == ".py" or (path.is_dir() and (path / "__init__.py").exists()):
            layer_of(path.name.removesuffix(".py"))


def test_no_module_imports_from_a_layer_above_it() -> None:
    upward = sorted({f"{a} -> {b}" for a, b in imports() if layer_of(b) < layer_of(a)})
    assert upward == []


def test_the_plan_imports_neither_the_reading_layer_nor_the_graph() -> None:
    outside = sorted({f"plan -> {b}" for a, b in imports()
                      if a == "plan" and b not in PLAN_MAY_IMPORT})
    assert outside == []


def test_the_doc_lists_the_layers_in_this_order() -> None:
    doc = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = [line for line in doc.splitlines() if line.startswith("| ") and "`" in line]
    firsts = [row.split("|")[1].strip() for row in rows[: len(LAYERS)]]
    assert firsts == ["entry points", "results", "search and fusion", "plan", "goals",
                      "datasets", "ingest", "rerank", "query and fragments", "embeddings",
                      "HTTP core", "graph", "foundations"]

