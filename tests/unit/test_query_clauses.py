"""Semantic clauses, the rerank query, category predicates, polarity and the pure-filter rule."""

from __future__ import annotations

import pytest

from thalabus_graph.query import (
    Category,
    Text,
    category_predicates,
    has_scored_terms,
    is_pure_filter,
    parse,
    rerank_query,
    semantic_clauses,
    text_clauses,
    walk_with_polarity,
)


@pytest.mark.parametrize(
    ("text", "clauses"),
    [
        ("", []),
        ('"a"', ["a"]),
        ('"a" AND NOT "b"', ["a"]),
        ('NOT NOT "a"', ["a"]),
        ('NOT (NOT "a" OR "b")', ["a"]),
        ('"b" OR "a" AND "b"', ["b", "a"]),
        ("'text' AND @'Text' AND X=1", []),
        ('("x y" OR "z") AND NOT ("w" AND NOT "v")', ["x y", "z", "v"]),
        ('"A" AND "a"', ["A", "a"]),
    ],
)
def test_semantic_clauses(text: str, clauses: list[str]) -> None:
    assert semantic_clauses(parse(text)) == clauses


def test_rerank_query() -> None:
    assert rerank_query(parse('"kitchen floor" OR "cleanup" AND NOT "mop"')) == (
        "kitchen floor AND cleanup"
    )
    assert rerank_query(parse("X=1 AND 'a'")) == ""
    assert rerank_query(parse("")) == ""


def test_polarity() -> None:
    flags = [(type(n).__name__, p) for n, p in walk_with_polarity(parse('"a" AND NOT NOT "b"'))]
    assert flags == [("And", True), ("Semantic", True), ("Not", True), ("Not", False),
                     ("Semantic", True)]


def test_category_predicates_and_text_clauses() -> None:
    node = parse("X=1 AND NOT (Y=2,3 OR 'a') AND @'B' OR X=1")
    assert category_predicates(node) == [
        Category("X", ("1",)), Category("Y", ("2", "3")), Category("X", ("1",)),
    ]
    assert text_clauses(node) == [Text("a"), Text("B", case_sensitive=True)]


@pytest.mark.parametrize(
    ("text", "pure"),
    [
        ("", True),
        ("X=1", True),
        ("X=1 AND Y=2 OR Z=3", True),
        ('NOT "a"', True),
        ("NOT 'a' AND X=1", True),
        ('NOT ("a" OR X=1)', True),
        ('"a"', False),
        ("'a'", False),
        ('X=1 AND "a"', False),
        ("X=1 OR @'a'", False),
        ('NOT X=1 AND "a"', False),
    ],
)
def test_is_pure_filter(text: str, pure: bool) -> None:
    node = parse(text)
    assert is_pure_filter(node) is pure
    assert has_scored_terms(node) is not pure
