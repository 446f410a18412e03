"""The MCP server's description of the query language: every example in it parses, and the
rules it states hold (a bare word is an error; the quotes mean what it says)."""

from __future__ import annotations

import pytest

from thalabus_graph.errors import ThalabusSyntaxError
from thalabus_graph.mcp.language import EXAMPLES, QUERY_RULES
from thalabus_graph.query import parse


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_example_parses(example: str) -> None:
    parse(example)


def test_the_examples_listed_in_the_rules_are_the_checked_ones() -> None:
    listed = QUERY_RULES.split("Examples:\n", 1)[1].splitlines()
    assert [line.strip() for line in listed] == list(EXAMPLES[: len(listed)])


def test_the_stated_rules_hold() -> None:
    with pytest.raises(ThalabusSyntaxError, match="bare word"):
        parse("cat")
    assert parse('"cat"').to_dict()["type"] == "SEMANTIC"
    assert parse("'cat'").to_dict() == {"type": "TEXT", "text": "cat", "case_sensitive": False}
    assert parse("@'BAMF'").to_dict()["case_sensitive"] is True
    assert parse("DECISION='granted asylum'").to_dict()["values"] == ["granted asylum"]
    assert parse("NOT \"a\" AND \"b\" OR \"c\"").to_dict()["type"] == "OR"
