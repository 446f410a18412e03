"""The canonical writer: fewest parentheses, escaping, quoting of values, JSON at any depth."""

from __future__ import annotations

import json

import pytest

from thalabus_graph.query import (
    TRUE,
    And,
    Category,
    Not,
    Or,
    Semantic,
    Text,
    parse,
    serialize,
    to_json,
)

A, B, C = Semantic("a"), Semantic("b"), Semantic("c")


@pytest.mark.parametrize(
    ("node", "text"),
    [
        (And(A, B), '"a" AND "b"'),
        (And(And(A, B), C), '"a" AND "b" AND "c"'),
        (And(A, And(B, C)), '"a" AND ("b" AND "c")'),
        (Or(Or(A, B), C), '"a" OR "b" OR "c"'),
        (Or(A, Or(B, C)), '"a" OR ("b" OR "c")'),
        (Or(A, And(B, C)), '"a" OR "b" AND "c"'),
        (Or(And(A, B), C), '"a" AND "b" OR "c"'),
        (And(Or(A, B), C), '("a" OR "b") AND "c"'),
        (And(A, Or(B, C)), '"a" AND ("b" OR "c")'),
        (Not(A), 'NOT "a"'),
        (Not(Not(A)), 'NOT NOT "a"'),
        (Not(And(A, B)), 'NOT ("a" AND "b")'),
        (And(Not(A), Not(Or(B, C))), 'NOT "a" AND NOT ("b" OR "c")'),
        (TRUE, ""),
    ],
)
def test_fewest_parentheses(node: And, text: str) -> None:
    assert serialize(node) == text
    assert parse(text) == node


@pytest.mark.parametrize(
    ("node", "text"),
    [
        (Semantic('say "hi" \\ now'), r'"say \"hi\" \\ now"'),
        (Semantic("Jane's"), "\"Jane's\""),
        (Text("Jane's"), r"'Jane\'s'"),
        (Text('a"b\\'), "'a\"b\\\\'"),
        (Text("Ünïcode", case_sensitive=True), "@'Ünïcode'"),
        (Semantic(r"a\nb"), r'"a\\nb"'),
    ],
)
def test_quotes_and_backslashes_are_escaped(node: Semantic, text: str) -> None:
    assert serialize(node) == text
    assert parse(text) == node


@pytest.mark.parametrize(
    ("values", "text"),
    [
        (("IQ", "SY"), "X=IQ,SY"),
        (("granted asylum",), "X='granted asylum'"),
        (("a,b",), "X='a,b'"),
        (("(a)",), "X='(a)'"),
        (("a=b",), "X='a=b'"),
        (('say"',), "X='say\"'"),
        (("it's",), r"X='it\'s'"),
        (("@home",), "X=@home"),
        (("AND",), "X=AND"),
        (("back\\slash",), "X=back\\slash"),
        (("tab\there",), "X='tab\there'"),
    ],
)
def test_category_values_are_quoted_only_when_needed(values: tuple[str, ...], text: str) -> None:
    node = Category("X", values)
    assert serialize(node) == text
    assert parse(text) == node


def test_canonical_keywords_are_upper_case() -> None:
    assert serialize(parse('not "a" and "b" or "c"')) == 'NOT "a" AND "b" OR "c"'


def test_operator_named_categories_survive() -> None:
    node = And(Category("AND", ("1",)), Not(Category("NOT", ("x",))))
    assert serialize(node) == "AND=1 AND NOT NOT=x"
    assert parse(serialize(node)) == node


def test_true_inside_a_tree_cannot_be_written() -> None:
    with pytest.raises(ValueError, match="TRUE"):
        serialize(And(A, TRUE))
    with pytest.raises(ValueError, match="TRUE"):
        serialize(Not(TRUE))


@pytest.mark.parametrize(
    "text",
    ['"a"', "'b'", "@'Ü'", "x=1,'2'", "\"a\" AND NOT ('b' OR x=1,'y z')", "", '"ä\\n"'],
)
@pytest.mark.parametrize("indent", [None, 2, 4])
def test_to_json_matches_json_dumps(text: str, indent: int | None) -> None:
    node = parse(text)
    for ensure_ascii in (False, True):
        expected = json.dumps(node.to_dict(), indent=indent, ensure_ascii=ensure_ascii)
        assert to_json(node, indent=indent, ensure_ascii=ensure_ascii) == expected
