"""A misspelt category name or value gets the closest stored spelling as its "did you mean"
(``plan.categories``), from the spellings the vocabulary read returns with a miss."""

from __future__ import annotations

from typing import Any

import pytest

from thalabus_graph.errors import UnknownCategoryError
from thalabus_graph.plan.categories import (
    CASE_MISMATCH,
    UNKNOWN_NAME,
    UNKNOWN_ONTOLOGY,
    UNKNOWN_VALUE,
    VocabularyCheck,
)
from thalabus_graph.query import parse

ROW: dict[str, Any] = {
    "names": ["COUNTRY"], "pairs": [], "ontologies": [], "sizes": None, "counts": [],
    "known_names": ["COUNTRY", "TOPIC", "COURT"],
    "known_pairs": [["COUNTRY", "DE"], ["COUNTRY", "FR"], ["COUNTRY", "Deutschland"]],
}


def judged(query: str, *, strict: bool = False) -> list[tuple[str, str, str | None]]:
    check = VocabularyCheck.of(parse(query), strict=strict)
    assert check is not None
    return [(w.kind, w.subject, w.suggestion) for w in check.judge(ROW)[0]]


def test_a_misspelt_name_and_value_get_the_closest_stored_spelling() -> None:
    assert judged("COUNTRYY=DE OR COUNTRY=Deutschlnd OR topik=x") == [
        (UNKNOWN_NAME, "COUNTRYY", "COUNTRY"),
        (UNKNOWN_VALUE, "COUNTRY=Deutschlnd", "COUNTRY=Deutschland"),
        (UNKNOWN_NAME, "topik", "TOPIC"),
    ]


def test_nothing_alike_gets_no_suggestion() -> None:
    assert judged("FLAVOUR=sweet OR COUNTRY=IQ") == [
        (UNKNOWN_NAME, "FLAVOUR", None), (UNKNOWN_VALUE, "COUNTRY=IQ", None)]


def test_a_letter_case_slip_keeps_its_own_kind() -> None:
    row = {**ROW, "pairs": [["COUNTRY", "DE"]]}
    check = VocabularyCheck.of(parse("COUNTRY=de"))
    assert check is not None
    assert [(w.kind, w.suggestion) for w in check.judge(row)[0]] == [
        (CASE_MISMATCH, "COUNTRY=DE")]


def test_the_strict_error_says_did_you_mean() -> None:
    with pytest.raises(UnknownCategoryError,
                       match=r"unknown category name 'COUNTRYY'.*did you mean 'COUNTRY'\?"):
        judged("COUNTRYY=DE", strict=True)


def test_a_misspelt_ontology_gets_the_closest_stored_id() -> None:
    row = {**ROW, "pairs": [["COUNTRY", "DE"]], "known_ontologies": ["asylum", "recipes"]}
    for asked, suggestion in (("asylun", "asylum"), ("recipe", "recipes"), ("zzzz", None)):
        check = VocabularyCheck.of(parse("COUNTRY=DE"), ontology_id=asked)
        assert check is not None
        assert [(w.kind, w.subject, w.suggestion) for w in check.judge(row)[0]] == [
            (UNKNOWN_ONTOLOGY, asked, suggestion)]
