"""Category names, values and ontologies that match no stored document are reported before the
query runs (with "did you mean" for a letter-case slip), or refused with strict_categories."""

from __future__ import annotations

import json

import pytest

from tests.integration.sample import shared_embedder
from thalabus_graph import ThalabusGraph
from thalabus_graph.cli import main
from thalabus_graph.errors import UnknownCategoryError
from thalabus_graph.graph.database import Database
from thalabus_graph.plan.categories import (
    CASE_MISMATCH,
    UNKNOWN_NAME,
    UNKNOWN_ONTOLOGY,
    UNKNOWN_VALUE,
)
from thalabus_graph.query_warning import QueryWarning

pytestmark = pytest.mark.integration

RECIPES = [
    ("pizza-easy", "easy", "A quick pizza margherita with tomato and basil."),
    ("pizza-hard", "hard", "Neapolitan pizza dough fermented for three days."),
    ("soup-easy", "easy", "A simple tomato soup for cold evenings."),
]


@pytest.fixture()
def graph(clean_db: Database) -> ThalabusGraph:
    g = ThalabusGraph(clean_db, embedder=shared_embedder())
    g.ingest([{"documentid": documentid, "ontology": "recipes", "chapters": [text],
               "categories": {"DIFFICULTY": [level], "COURSE": ["Main"]}}
              for documentid, level, text in RECIPES], progress=False, strict=True)
    return g


def kinds(warnings: list[QueryWarning]) -> list[tuple[str, str, str | None]]:
    return [(w.kind, w.subject, w.suggestion) for w in warnings]


def test_wrong_case_name_under_not_is_reported(graph: ThalabusGraph) -> None:
    result = graph.query('"pizza" AND NOT difficulty=easy')
    assert kinds(result.warnings) == [(CASE_MISMATCH, "difficulty", "DIFFICULTY")]
    assert "did you mean 'DIFFICULTY'?" in result.warnings[0].message
    assert result.to_dict()["warnings"][0]["suggestion"] == "DIFFICULTY"
    with pytest.raises(UnknownCategoryError) as caught:
        graph.query('"pizza" AND NOT difficulty=easy', strict_categories=True)
    assert kinds(caught.value.warnings) == kinds(result.warnings)
    right = graph.query('"pizza" AND NOT DIFFICULTY=easy', strict_categories=True)
    assert right.warnings == []
    assert "pizza-easy" not in {d.documentid for d in right.documents or []}


def test_unknown_names_values_and_ontologies(graph: ThalabusGraph) -> None:
    result = graph.query("DIFFICULTY=Easy,impossible OR FLAVOUR=sweet OR course=main "
                         "OR DIFFICULTY=Easy", ontology_id="Recipes")
    assert kinds(result.warnings) == [
        (CASE_MISMATCH, "Recipes", "recipes"),
        (CASE_MISMATCH, "DIFFICULTY=Easy", "DIFFICULTY=easy"),
        (UNKNOWN_VALUE, "DIFFICULTY=impossible", None),
        (UNKNOWN_NAME, "FLAVOUR", None),
        (CASE_MISMATCH, "course", "COURSE"),
    ]
    missing = graph.query("COURSE=Main", ontology_id="cookbook")
    assert kinds(missing.warnings) == [(UNKNOWN_ONTOLOGY, "cookbook", None)]
    misspelt = graph.query("COURSE=Main", ontology_id="recipies")
    assert kinds(misspelt.warnings) == [(UNKNOWN_ONTOLOGY, "recipies", "recipes")]
    assert "did you mean 'recipes'?" in misspelt.warnings[0].message
    assert graph.query("COURSE=Main", ontology_id="recipes").warnings == []
    plan = graph.explain("NOT COURSE=main")
    assert [w["suggestion"] for w in plan["warnings"]] == ["COURSE=Main"]
    with pytest.raises(UnknownCategoryError):
        graph.explain("NOT COURSE=main", strict_categories=True)


def test_cli_warns_on_stderr_and_strict_exits_2(neo4j_uri: str, graph: ThalabusGraph,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    uri = ["--uri", neo4j_uri]
    assert main(["query", "NOT difficulty=easy", *uri]) == 0
    captured = capsys.readouterr()
    assert captured.err == ("warning: category name 'difficulty' matches no document (and "
                            "under NOT every document); did you mean 'DIFFICULTY'?\n")
    assert captured.out.startswith("3 documents")
    assert main(["query", "NOT difficulty=easy", "--strict-categories", *uri]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err.startswith("error: strict categories: category name 'difficulty'")
    assert main(["explain", "DIFFICULTY=Hard", "--strict-categories", "--json", *uri]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["type"] == "UnknownCategoryError"
    assert error["warnings"][0]["suggestion"] == "DIFFICULTY=hard"


def test_an_identifier_is_found_in_each_of_its_unicode_forms(clean_db: Database) -> None:
    graph = ThalabusGraph(clean_db, embedder=shared_embedder())
    graph.ingest([{"documentid": "forms-1", "ontology": "Cafe\u0301", "chapters": ["Money."],
                   "categories": {"TOPIC": ["\ufb01nance"]}}], progress=False, strict=True)
    for ontology in ("Caf\u00e9", "Cafe\u0301"):
        for topic in ("finance", "\ufb01nance"):
            result = graph.query(f"TOPIC={topic}", ontology_id=ontology, strict_categories=True)
            assert result.warnings == []
            assert [d.documentid for d in result.documents or []] == ["forms-1"]


def test_a_typo_gets_the_closest_stored_spelling(graph: ThalabusGraph, neo4j_uri: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    query = "DIFFICULTYY=easy OR DIFFICULTY=esay"
    expected = [(UNKNOWN_NAME, "DIFFICULTYY", "DIFFICULTY"),
                (UNKNOWN_VALUE, "DIFFICULTY=esay", "DIFFICULTY=easy")]
    for _ in range(2):  # read on its own, then carried by the query's first statement
        assert kinds(graph.query(query).warnings) == expected
    with pytest.raises(UnknownCategoryError, match="did you mean 'DIFFICULTY'"):
        graph.query(query, strict_categories=True)
    assert main(["query", "DIFFICULTYY=easy", "--strict-categories", "--uri", neo4j_uri]) == 2
    assert "did you mean 'DIFFICULTY'?" in capsys.readouterr().err
