"""The public namespace is pinned so the API never grows or shrinks by accident."""

from __future__ import annotations

import pytest

import thalabus_graph
from tests.unit.test_rerank_api import EXPECTED as RERANK_NAMES
from thalabus_graph import Settings
from thalabus_graph.errors import ConfigurationError
from thalabus_graph.fragments import combine_and, combine_not, combine_or


def test_exported_names() -> None:
    assert thalabus_graph.__all__ == sorted(thalabus_graph.__all__)
    assert set(thalabus_graph.__all__) == {
        "DocumentHit", "Fragment", "QueryResult", "RerankResult", "Settings", "ThalabusError",
        "ThalabusGraph", "ThalabusSyntaxError", "parse", "rerank_query", "semantic_clauses",
        "serialize",
    }
    assert callable(combine_and) and callable(combine_or) and callable(combine_not)


def test_settings_read_thalabus_variables_with_types() -> None:
    s = Settings.from_env({"THALABUS_TOP_N_CHAPTERS": "50", "THALABUS_MIN_SCORE": "0.5",
                           "THALABUS_HYBRID_ALL_QUERIES": "off", "THALABUS_FUSION": "rrf"})
    assert (s.top_n_chapters, s.min_score, s.hybrid_all_queries, s.fusion) == (50, 0.5, False,
                                                                             "rrf")
    assert Settings.from_env({}, top_n_text=7).top_n_text == 7


@pytest.mark.parametrize("env", [{"THALABUS_TOP_N_CHAPTERS": "many"},
                                 {"THALABUS_FUSION": "median"},
                                 {"THALABUS_FUSION_TEXT_WEIGHT": "1.5"},
                                 {"THALABUS_HYBRID_ALL_QUERIES": "maybe"},
                                 {"THALABUS_TOP_N_TEXT": "0"}])
def test_bad_settings_are_configuration_errors(env: dict[str, str]) -> None:
    with pytest.raises(ConfigurationError):
        Settings.from_env(env)


def test_the_configuration_page_lists_every_setting_with_its_default() -> None:
    from pathlib import Path

    from thalabus_graph.settings import fields, markdown_table

    root = Path(__file__).resolve().parents[2]
    full = (root / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert markdown_table() in full
    for table in (markdown_table(), markdown_table(compact=True)):
        assert "|  |" not in table and " . |" not in table
        assert len(table.splitlines()) == len(fields(Settings)) + 2


PINNED: dict[str, set[str]] = {
    "thalabus_graph.rerank": set(RERANK_NAMES),    # pinned in order in test_rerank_api.py
    "thalabus_graph.retriever": {"ThalabusRetriever", "distinct_texts"},
    "thalabus_graph.rerank.otel": {"INSTRUMENTATION_NAME", "OpenTelemetryTracer"},
    "thalabus_graph.graph.models": {
        "Aggregates", "CategoryNode", "Chapter", "Dataset", "DocumentNode", "FragmentNode", "Goal",
        "Keyword", "Ontology", "Paragraph", "Question", "Summary", "UsesDataset", "bind",
    },
    "thalabus_graph.fragments": {
        "CATEGORY_SOURCE", "Fragment", "aggregate_documents", "combine_and", "combine_not",
        "combine_or", "document_id_of", "all_stubs", "merge_contributions", "rag_select",
        "sort_fragments", "stub",
    },
    "thalabus_graph.integrations.langchain": {"ThalabusLangChainRetriever"},
    "thalabus_graph.integrations.llamaindex": {"ThalabusLlamaIndexRetriever"},
}
"""``__all__`` of every public module the README (or the architecture's public API) imports
from, besides the package root pinned above."""


@pytest.mark.parametrize("module_name", sorted(PINNED))
def test_public_modules_export_exactly_their_pinned_names(module_name: str) -> None:
    import importlib

    module = importlib.import_module(module_name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{module_name} has no __all__"
    assert sorted(exported) == sorted(set(exported)), "duplicates in __all__"
    assert set(exported) == PINNED[module_name]
    for name in exported:
        assert hasattr(module, name), f"{module_name}.{name} is listed but missing"


def test_every_module_the_readme_imports_from_is_pinned() -> None:
    import importlib.util
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    modules = set()
    for module_name, names in re.findall(
            r"^\s*from (thalabus_graph[\w.]*) import (\([^)]*\)|[^\n#]*)", readme, re.MULTILINE):
        for name in re.findall(r"\w+", names):
            submodule = f"{module_name}.{name}"
            parent = importlib.import_module(module_name)
            is_module = (hasattr(parent, "__path__")
                         and importlib.util.find_spec(submodule) is not None)
            modules.add(submodule if is_module else module_name)
    assert "thalabus_graph.integrations.langchain" in modules    # imported as a submodule
    assert modules - {"thalabus_graph"} <= set(PINNED)


def test_every_name_the_readme_imports_exists() -> None:
    import importlib
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    found = 0
    for module_name, names in re.findall(
            r"^\s*from (thalabus_graph[\w.]*) import (\([^)]*\)|[^\n#]*)", readme, re.MULTILINE):
        module = importlib.import_module(module_name)
        for name in re.findall(r"\w+", names):
            assert hasattr(module, name), f"README imports {module_name}.{name}"
            found += 1
    assert found >= 10
