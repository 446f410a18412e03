"""The public namespace is pinned so the API never grows or shrinks by accident."""

from __future__ import annotations

import pytest

import thalabus_graph
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


def test_readme_lists_every_setting_with_its_default() -> None:
    from pathlib import Path

    from thalabus_graph.settings import markdown_table

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert markdown_table() in readme
    assert "|  |" not in markdown_table()
