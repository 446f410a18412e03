"""A graph-defined category's pattern is checked before it is stored
(``graph.category_definitions.check_pattern``): ``$value`` is its one parameter however
Cypher lets it be written, and the statement reads every spelling of ``$value`` from the
variable it binds, never a parameter of its own."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from thalabus_graph.errors import CategoryDefinitionError
from thalabus_graph.graph.category_definitions import (
    VALUE_VARIABLE,
    CategoryDefinition,
    check_pattern,
)

ANCHOR = "(document)<-[:CAN_READ]-(:User {name: $value})"
REFUSED_WORDS = {"CALL", "LOAD", "FOREACH", "UNION", "USE", "RETURN"}
"""Words a pattern may not hold at all (a parameter so named is refused for the word)."""
NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True).filter(
    lambda name: name != "value" and name.upper() not in REFUSED_WORDS)


@given(NAMES, st.booleans())
def test_any_other_parameter_is_refused_by_its_name(name: str, quoted: bool) -> None:
    written = f"$`{name}`" if quoted else f"${name}"
    with pytest.raises(CategoryDefinitionError, match=rf"uses \${name}\b"):
        check_pattern(f"{ANCHOR} WHERE document.x = {written}")


@pytest.mark.parametrize("pattern", [
    ANCHOR,
    "(document)<-[:CAN_READ]-(:User {name: $`value`})",
    "(document)<-[:CAN_READ]-(:User {name: $ value}) WHERE $`value` IS NOT NULL",
    "(document)<-[:`CAN$READ`]-(u:User) WHERE u.name = $value AND u.note <> '$other'",
])
def test_every_spelling_of_value_reads_the_bound_variable(pattern: str) -> None:
    clause = CategoryDefinition("READABLE_BY", check_pattern(pattern)).match_clause()
    assert VALUE_VARIABLE in clause
    assert "$value" not in clause and "$`value`" not in clause and "$ value" not in clause


def test_text_inside_quotes_is_not_a_parameter() -> None:
    with pytest.raises(CategoryDefinitionError, match="does not use"):
        check_pattern("(document)<-[:CAN_READ]-(:User {name: '$value'})")


@pytest.mark.parametrize("literal", ["'a$b'", "'top$secret'", "'$value'", '"$x $y"',
                                     "'price: 5$'"])
def test_a_dollar_inside_a_string_survives_the_parameter_rewriting(literal: str) -> None:
    from thalabus_graph.graph.cypher_library import PARAMETER
    from thalabus_graph.graph.database import prepared

    pattern = f"{ANCHOR} WHERE document.note = {literal}"
    sent = prepared(CategoryDefinition("NOTE", pattern).match_clause())
    written = sent[sent.rindex("= ") + 2:]
    assert not PARAMETER.search(written)  # nothing in the string reads as a parameter
    assert written.replace("\\u0024", "$") == literal
    assert sent.count(VALUE_VARIABLE) == 1
