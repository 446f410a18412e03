"""The statement that carries a query's vocabulary read, composed of two named statements
(``cypher_library.fill``), and the rows a graph object keeps of those reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from thalabus_graph.errors import ConfigurationError
from thalabus_graph.graph import cypher_library
from thalabus_graph.search.vocabulary import (
    PREFIX,
    SeenVocabularies,
    carried,
    planned_counts,
)


def test_the_carried_statement_renames_the_reads_parameters_only() -> None:
    read = cypher_library.load("category_vocabulary", {"datasetids": None})
    search = cypher_library.load("search_phrase_filtered", {"datasetids": None})
    text = carried(search, read)
    assert "$ontologyid" in search and f"${PREFIX}ontologyid" in text
    assert f"${PREFIX}patterns" in text and f"${PREFIX}planned_counts" in text
    # the search keeps its own parameters: its text is there as it is
    assert search in text
    assert "{{=" not in text


def test_a_version_line_leads_the_composed_statement() -> None:
    search = cypher_library.load("search_vector_in_index", {})
    assert search.startswith("CYPHER 25\n")
    text = carried(search, "RETURN 1 AS names")
    assert text.startswith("CYPHER 25\n") and text.count("CYPHER 25") == 1


def _filled(name: str, **slots: str) -> str:
    return cypher_library.fill(name, **slots)


def test_fill_names_a_missing_or_unknown_slot(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "outer.cypher").write_text("// a comment\nCALL () {\n{{= inner}}\n}\nRETURN 1\n")
    monkeypatch.setenv("THALABUS_CYPHER_DIR", str(tmp_path))
    cypher_library.cache_clear()
    try:
        assert _filled("outer", inner="RETURN 2 AS x") == (
            "CALL () {\nRETURN 2 AS x\n}\nRETURN 1")
        with pytest.raises(ConfigurationError, match="slots"):
            _filled("outer")
        with pytest.raises(ConfigurationError, match="slots"):
            _filled("outer", inner="RETURN 2", other="RETURN 3")
    finally:
        cypher_library.cache_clear()


def test_seen_vocabularies_keep_the_latest_row_and_drop_the_least_recently_used() -> None:
    seen = SeenVocabularies(size=2)
    seen.put("a", {"counts": [1]})
    seen.put("b", {"counts": [2]})
    assert seen.get("a") == {"counts": [1]}  # "a" is now the most recently used
    seen.put("c", {"counts": [3]})
    assert seen.get("b") is None and seen.get("a") is not None
    seen.put("a", {"counts": [4]})
    assert seen.get("a") == {"counts": [4]}
    seen.clear()
    assert seen.get("a") is None and seen.get("c") is None


def test_a_plan_depends_on_the_sizes_and_counts_of_a_row_only() -> None:
    row = {"names": ["TAG"], "pairs": [], "ontologies": [],
           "sizes": {"documents": 3, "scope": 3}, "counts": [2]}
    same = {**row, "names": ["TAG", "KIND"], "pairs": [["TAG", "odd"]]}
    assert planned_counts(row) == planned_counts(same)
    assert planned_counts(row) != planned_counts({**row, "counts": [3]})
    assert planned_counts(row) != planned_counts({**row, "sizes": {"documents": 4,
                                                                   "scope": 3}})
