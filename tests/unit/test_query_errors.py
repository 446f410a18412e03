"""Syntax errors: one exception type, a 0-based position, a message saying what was expected."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from thalabus_graph.errors import ThalabusError, ThalabusSyntaxError
from thalabus_graph.query import parse


def _error(text: str) -> ThalabusSyntaxError:
    with pytest.raises(ThalabusSyntaxError) as info:
        parse(text)
    return info.value


@pytest.mark.parametrize(
    ("text", "position", "expected"),
    [
        # unbalanced quotes: reported where the closing quote was due (the end)
        ('"kitchen floor', 14, 'expected " to close the " opened at position 0'),
        ("'Jane", 5, "expected ' to close"),
        ("@'Jane", 6, "expected ' to close"),
        # unbalanced parentheses
        ('("a" OR "b"', 11, "expected ')' to close the '(' at position 0"),
        ('"a" OR "b")', 10, "no '(' is open"),
        # empty phrases
        ('""', 0, "empty phrase"),
        ("''", 0, "empty text"),
        ("@''", 0, "empty text"),
        # dangling and doubled operators
        ('"a" AND', 7, "after 'AND', found end of query"),
        ('"a" AND OR "b"', 8, "after 'AND', found 'OR'"),
        ('OR "a"', 0, "found 'OR'"),
        ('NOT', 3, "after 'NOT', found end of query"),
        # two terms without an operator
        ('"a" \'b\'', 4, "expected AND, OR or ')' between terms"),
        ('"a" NOT "b"', 4, "did you mean AND NOT?"),
        # bare words
        ("kitchen", 0, "bare word 'kitchen'"),
        # @ without a single-quoted text
        ('@"a"', 1, "expected ' after '@'"),
        # categories
        ("X=", 2, "expected a category value after '='"),
        ("X=a,", 4, "expected a category value after ','"),
        ("X=''", 2, "empty category value"),
        ("X=@'a'", 2, "cannot be @-quoted"),
        ("=a", 0, "expected a category name before '='"),
        ("%", 0, "unexpected character '%'"),
    ],
)
def test_error_position_and_message(text: str, position: int, expected: str) -> None:
    error = _error(text)
    assert error.position == position
    assert expected in str(error)
    assert expected in error.expected
    assert error.text == text
    assert isinstance(error, ThalabusError)


def test_message_shows_the_query_with_a_caret() -> None:
    error = _error('"a" AND AND "b"')
    lines = str(error).splitlines()
    assert lines[0].endswith("(at position 8)")
    assert lines[1] == '  "a" AND AND "b"'
    assert lines[2] == "          ^"
    assert error.caret() == '"a" AND AND "b"\n        ^'


def test_caret_at_end_of_input() -> None:
    error = _error('"a" OR')
    assert str(error).splitlines()[-1] == "        ^"


def test_multi_line_query_shows_the_failing_line() -> None:
    error = _error('"a"\nAND\n\t"b" "c"')
    text = str(error)
    assert "line 3 column 6" in text
    assert text.splitlines()[-2:] == ['  \t"b" "c"', "  \t    ^"]


def test_long_query_is_cut_around_the_position() -> None:
    query = " AND ".join(['"term"'] * 200) + " ) " + " AND ".join(['"term"'] * 200)
    error = _error(query)
    shown, caret = str(error).splitlines()[-2:]
    assert len(shown) < 120
    assert shown.strip().startswith("...") and shown.endswith("...")
    assert shown[caret.index("^")] == ")"


def test_non_string_input_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        parse(None)  # type: ignore[arg-type]


def test_constructor_signature_is_kept() -> None:
    error = ThalabusSyntaxError("expected x", 3, "abcdef")
    assert (error.position, error.text, error.expected) == (3, "abcdef", "expected x")
    assert str(ThalabusSyntaxError("bad", 0)) == "bad (at position 0)"


@given(st.text(alphabet=st.sampled_from([" ", "\t", "\u3000", "\u200b", "\u200d", "\ufeff",
                                         "\u202e", "\u00ad", "\u2060"]), min_size=1))
def test_a_term_of_only_invisible_characters_is_empty(body: str) -> None:
    for query in (f'"{body}"', f"'{body}'", f"X='{body}'"):
        with pytest.raises(ThalabusSyntaxError, match="empty"):
            parse(query)
