"""User text must reach Lucene only as escaped, lowercased words."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from thalabus_graph.lucene import (
    MAX_QUERY_TERMS,
    escape,
    normalise,
    phrase_query,
    terms_query,
    token_cost,
)


def test_normalise_follows_the_seed() -> None:
    assert normalise("Jane's") == "Jane s"
    assert normalise('the "kitchen"   floor!') == "the kitchen floor"


def test_operators_and_specials_are_inert() -> None:
    assert terms_query("cats AND dogs") == "cats and dogs"
    assert phrase_query("C++ / x*y~2") == r'"c\+\+ \/ x\*y\~2"'
    assert terms_query("a:b \\ c") == r"a\:b \\ c"
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


def test_tokens_the_analyzer_keeps_whole_are_escaped_not_split() -> None:
    assert phrase_query("3.5") == '"3.5"'
    assert phrase_query("example.org") == '"example.org"'
    assert phrase_query("info@example.org") == '"info@example.org"'
    assert phrase_query("U.S.A.") == '"u.s.a"'
    assert phrase_query("costs 1,000 dollars.") == '"costs 1,000 dollars"'
    assert terms_query("ratio a:b; end.") == r"ratio a\:b end"
    assert phrase_query("...") == "" and terms_query(": ; ,") == ""


def test_bag_of_words_is_capped_by_estimated_tokens() -> None:
    many = " ".join(f"w{i}" for i in range(2000))
    kept = terms_query(many).split(" ")
    assert kept == [f"w{i}" for i in range(MAX_QUERY_TERMS)]
    assert terms_query("a b a c", max_terms=2) == "a b"
    # an upper bound: every run of letters and digits, and every other character
    assert token_cost("info@example.org") == 5 and token_cost("東京") == 2
    assert token_cost("a" * 600) == 3  # the tokenizer cuts a run at 255 characters
    assert token_cost("\U0001f300\U0001f301") == 2  # emoji are tokens of their own
    cjk = terms_query("東" * 3 + "京都" * 2000)
    assert cjk == "東 京 都"
    assert terms_query("x@y@z a", max_terms=2) == "a"


def test_no_text_makes_more_clauses_than_lucene_takes() -> None:
    """Emoji and runs longer than the tokenizer's token are tokens too: the estimate must
    count them, or Lucene refuses the query (TooManyClauses at 1,024)."""
    emoji = terms_query(" ".join(chr(0x1F300 + i) for i in range(1300)))
    assert len(emoji.split(" ")) == MAX_QUERY_TERMS
    assert terms_query("a" * 300_000) == ""
    assert terms_query("a" * 300 + " b") == "a" * 300 + " b"
