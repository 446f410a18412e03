"""The MCP server's description of the query language: every example in it parses, whatever
vocabulary it is made of, and the rules it states hold (a bare word is an error; the quotes
mean what it says)."""

from __future__ import annotations

import pytest

from thalabus_graph.errors import ThalabusSyntaxError
from thalabus_graph.mcp.language import NEUTRAL, Sample
from thalabus_graph.query import category_predicates, parse

SAMPLES = [
    NEUTRAL,
    Sample.of([], []),
    Sample.of([("COUNTRY", ["DE", "FR"]), ("TOPIC", ["rail transport"])],
              ["melting glaciers", "Zug", "it's \"quoted\""]),
    Sample.of([("bad name", ["x"]), ("ONLY", ["a b", "c'd"])], ["x" * 80, "one\nline"]),
]


@pytest.mark.parametrize("sample", SAMPLES)
def test_every_example_parses(sample: Sample) -> None:
    for example in sample.examples():
        parse(example)


@pytest.mark.parametrize("sample", SAMPLES)
def test_the_examples_listed_in_the_rules_are_the_checked_ones(sample: Sample) -> None:
    listed = sample.rules().split("Examples:\n", 1)[1].splitlines()
    assert [line.strip() for line in listed] == list(sample.examples())


def test_the_examples_use_the_given_vocabulary_only() -> None:
    sample = SAMPLES[2]
    used = {(p.name, v) for e in sample.examples() for p in category_predicates(parse(e))
            for v in p.values}
    assert used <= {("COUNTRY", "DE"), ("COUNTRY", "FR"), ("TOPIC", "rail transport")}
    assert '"melting glaciers"' in sample.rules() and "'Zug'" in sample.rules()


def test_an_unwritable_name_and_unusable_terms_fall_back() -> None:
    sample = SAMPLES[3]
    assert sample.first.name == "ONLY" and sample.phrase == NEUTRAL.phrase
    assert Sample.of([], []) == NEUTRAL


def test_the_stated_rules_hold() -> None:
    with pytest.raises(ThalabusSyntaxError, match="bare word"):
        parse("cat")
    assert parse('"cat"').to_dict()["type"] == "SEMANTIC"
    assert parse("'cat'").to_dict() == {"type": "TEXT", "text": "cat", "case_sensitive": False}
    assert parse("@'BAMF'").to_dict()["case_sensitive"] is True
    assert parse("DECISION='granted asylum'").to_dict()["values"] == ["granted asylum"]
    assert parse("NOT \"a\" AND \"b\" OR \"c\"").to_dict()["type"] == "OR"
