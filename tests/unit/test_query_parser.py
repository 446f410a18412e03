"""Focused tests of the query parser: every construct, precedence and associativity."""

from __future__ import annotations

import pytest

from thalabus_graph.query import (
    TRUE,
    And,
    Category,
    Not,
    Or,
    Semantic,
    Text,
    TrueNode,
    parse,
)

A, B, C = Semantic("a"), Semantic("b"), Semantic("c")


@pytest.mark.parametrize("text", ["", " ", "\t\n  \r"])
def test_empty_or_blank_query_is_true(text: str) -> None:
    assert parse(text) == TRUE
    assert isinstance(parse(text), TrueNode)


def test_terms() -> None:
    assert parse('"kitchen floor"') == Semantic("kitchen floor")
    assert parse("'Jane'") == Text("Jane", case_sensitive=False)
    assert parse("@'Jane'") == Text("Jane", case_sensitive=True)
    assert parse("COUNTRY_OF_ORIGIN=IQ,SY") == Category("COUNTRY_OF_ORIGIN", ("IQ", "SY"))


def test_precedence_not_and_or() -> None:
    assert parse('"a" OR "b" AND "c"') == Or(A, And(B, C))
    assert parse('"a" AND "b" OR "c"') == Or(And(A, B), C)
    assert parse('NOT "a" AND "b"') == And(Not(A), B)
    assert parse('"a" AND NOT "b" OR "c"') == Or(And(A, Not(B)), C)


def test_left_associative() -> None:
    assert parse('"a" AND "b" AND "c"') == And(And(A, B), C)
    assert parse('"a" OR "b" OR "c"') == Or(Or(A, B), C)


def test_parentheses_override() -> None:
    assert parse('"a" AND ("b" OR "c")') == And(A, Or(B, C))
    assert parse('NOT ("a" OR "b")') == Not(Or(A, B))
    assert parse('((("a")))') == A
    assert parse('"a" AND ("b" AND "c")') == And(A, And(B, C))


def test_keywords_any_case() -> None:
    assert parse('"a" and "b" Or not "c"') == Or(And(A, B), Not(C))
    assert parse('nOt NoT "a"') == Not(Not(A))


def test_keyword_before_equals_is_a_category_name() -> None:
    assert parse("AND=1") == Category("AND", ("1",))
    assert parse("not = x") == Category("not", ("x",))
    assert parse('"a" AND OR=1') == And(A, Category("OR", ("1",)))
    assert parse("NOT NOT=1") == Not(Category("NOT", ("1",)))


def test_whitespace_optional_next_to_quotes_and_parens() -> None:
    assert parse('"a"AND"b"') == And(A, B)
    assert parse('NOT("a")') == Not(A)
    assert parse("('a')OR(@'b')") == Or(Text("a"), Text("b", case_sensitive=True))
    assert parse('(x=1)AND"a"') == And(Category("x", ("1",)), A)


def test_escapes() -> None:
    assert parse(r'"say \"hi\" \\ now"') == Semantic('say "hi" \\ now')
    assert parse(r"'Jane\'s \\'") == Text("Jane's \\")
    assert parse(r"@'it\'s'") == Text("it's", case_sensitive=True)
    # Other backslash sequences are kept literally.
    assert parse(r'"a\nb\'c"') == Semantic(r"a\nb\'c")
    assert parse(r"'a\"b\x'") == Text(r"a\"b\x")


def test_quotes_inside_other_quotes_are_text() -> None:
    assert parse("\"Jane's\"") == Semantic("Jane's")
    assert parse("'say \"hi\"'") == Text('say "hi"')
    assert parse('"a AND b OR NOT (c)"') == Semantic("a AND b OR NOT (c)")


def test_category_values() -> None:
    assert parse("X = a , b,c") == Category("X", ("a", "b", "c"))
    assert parse("DECISION='granted asylum'") == Category("DECISION", ("granted asylum",))
    assert parse(r"X='it\'s',b") == Category("X", ("it's", "b"))
    assert parse("X=@home") == Category("X", ("@home",))
    assert parse("X=a.b-c/d:e") == Category("X", ("a.b-c/d:e",))
    assert parse("X=1 AND Y=2") == And(Category("X", ("1",)), Category("Y", ("2",)))
    assert parse("_x9=AND") == Category("_x9", ("AND",))


def test_phrases_keep_their_spaces() -> None:
    assert parse('"  a b  "') == Semantic("  a b  ")
