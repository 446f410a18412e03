"""Property tests: random trees round-trip through text; random text never breaks the parser."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from thalabus_graph.errors import ThalabusSyntaxError
from thalabus_graph.query import (
    And,
    Category,
    Node,
    Not,
    Or,
    Semantic,
    Text,
    from_dict,
    parse,
    semantic_clauses,
    serialize,
    to_json,
)

PROPERTY_SETTINGS = settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

# Phrases drawn from characters that stress the quoting: quotes, backslashes, keywords, spaces.
_TRICKY = st.sampled_from(['"', "'", "\\", "(", ")", "@", "=", ",", " ", "\t", "\n", "AND", "or"])
_phrase = st.lists(
    st.one_of(_TRICKY, st.text(min_size=1, max_size=4)), min_size=1, max_size=6
).map("".join).filter(lambda s: bool(s.strip()))
_name = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True) | st.sampled_from(
    ["AND", "or", "Not", "_"]
)
_leaf = st.one_of(
    _phrase.map(Semantic),
    st.builds(Text, _phrase, st.booleans()),
    st.builds(Category, _name, st.lists(_phrase, min_size=1, max_size=3).map(tuple)),
)


def _extend(children: st.SearchStrategy[Node]) -> st.SearchStrategy[Node]:
    return st.one_of(
        st.builds(And, children, children),
        st.builds(Or, children, children),
        st.builds(Not, children),
    )


trees: st.SearchStrategy[Node] = st.recursive(_leaf, _extend, max_leaves=12)


@PROPERTY_SETTINGS
@given(trees)
def test_serialize_then_parse_is_the_identity(node: Node) -> None:
    text = serialize(node)
    assert parse(text) == node
    assert serialize(parse(text)) == text
    assert from_dict(node.to_dict()) == node
    assert json.loads(to_json(node)) == node.to_dict()
    assert set(semantic_clauses(node)) <= {n.text for n in _semantics(node)}


def _semantics(node: Node) -> list[Semantic]:
    from thalabus_graph.query import walk

    return [n for n in walk(node) if isinstance(n, Semantic)]


# Random text from the language's own alphabet: everything the lexer treats specially.
_PIECES = [
    '"', "'", "(", ")", "@", "=", ",", "\\", " ", "  ", "\t", "\n", "a", "b", "X", "_", "1",
    "é", "#", "AND", "and", "OR", "Or", "NOT", "not", "x=", "@'", '""', "''", '"a"', "'b'",
]


@PROPERTY_SETTINGS
@given(st.lists(st.sampled_from(_PIECES), max_size=25).map("".join))
def test_only_positioned_syntax_errors_escape_parse(text: str) -> None:
    try:
        node = parse(text)
    except ThalabusSyntaxError as exc:
        assert 0 <= exc.position <= len(text)
        assert exc.text == text
        assert "^" in str(exc) or not text
        return
    canonical = serialize(node)
    assert parse(canonical) == node


@PROPERTY_SETTINGS
@given(st.text(max_size=30))
def test_arbitrary_unicode_text_never_breaks_parse(text: str) -> None:
    try:
        parse(text)
    except ThalabusSyntaxError as exc:
        assert 0 <= exc.position <= len(text)
