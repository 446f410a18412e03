"""User text must reach Lucene only as escaped, lowercased words."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from thalabus_graph.lucene import escape, normalise, phrase_query, terms_query


def test_normalise_follows_the_seed() -> None:
    assert normalise("Jane's") == "Jane s"
    assert normalise('the "kitchen"   floor!') == "the kitchen floor"


def test_operators_and_specials_are_inert() -> None:
    assert terms_query("cats AND dogs") == "cats and dogs"
    assert phrase_query("C++ / x*y~2") == r'"c\+\+ \/ x\*y\~2"'
    assert terms_query("a:b \\ c") == r"a b \\ c"
    assert phrase_query("'''") == ""


@given(st.text())
def test_every_special_character_is_escaped(text: str) -> None:
    query = terms_query(text)
    i = 0
    while i < len(query):
        ch = query[i]
        if ch == "\\":
            assert i + 1 < len(query)
            i += 2
            continue
        assert ch not in '+-&|!(){}[]^"~*?:/'
        i += 1
    assert escape("") == ""


def test_apostrophes_match_split_and_unsplit_tokens() -> None:
    assert phrase_query("Jane's") == '"jane s" OR "jane\'s"'
    assert terms_query("Jane's cat") == "jane s cat jane's"
    assert phrase_query("'quoted'") == '"quoted"'
