"""Very long and very deep queries: nothing in the query package recurses."""

from __future__ import annotations

import copy
import importlib.util
import pickle
from pathlib import Path

import pytest

from thalabus_graph.errors import ThalabusSyntaxError
from thalabus_graph.query import (
    And,
    Not,
    Semantic,
    depth,
    from_dict,
    is_pure_filter,
    parse,
    semantic_clauses,
    serialize,
    to_json,
    walk,
)

TERMS = 10_000
NESTING = 5_000


def test_ten_thousand_terms() -> None:
    text = " AND ".join(f'"t{i}"' for i in range(TERMS))
    node = parse(text)
    assert depth(node) == TERMS
    assert serialize(node) == text
    assert len(semantic_clauses(node)) == TERMS
    assert parse(serialize(node)) == node
    assert hash(node) == hash(parse(text))


@pytest.mark.parametrize(
    "text",
    [
        "(" * NESTING + '"a"' + ")" * NESTING,
        "NOT (" * NESTING + '"a"' + ")" * NESTING,
        '"a" AND (' * NESTING + '"b"' + ")" * NESTING,
        '"a" OR (' * NESTING + "X=1" + ")" * NESTING,
        "NOT " * NESTING + '"a"',
    ],
    ids=["parens", "not-parens", "right-and", "right-or", "not-chain"],
)
def test_five_thousand_deep(text: str) -> None:
    node = parse(text)
    canonical = serialize(node)
    again = parse(canonical)
    assert again == node
    assert semantic_clauses(node) in (["a"], ["a", "b"], [])
    assert from_dict(node.to_dict()) == node
    assert len(to_json(node)) > 0
    assert len(repr(node)) > 0
    assert pickle.loads(pickle.dumps(node)) == node
    assert copy.deepcopy(node) is node
    assert sum(1 for _ in walk(node)) >= 1
    is_pure_filter(node)


def test_deep_trees_built_by_hand() -> None:
    node: Not | Semantic = Semantic("a")
    for _ in range(NESTING):
        node = Not(node)
    built = And(node, node)
    assert parse(serialize(built)) == built


def test_deep_unclosed_parenthesis_is_a_syntax_error() -> None:
    text = "(" * NESTING + '"a"'
    with pytest.raises(ThalabusSyntaxError) as info:
        parse(text)
    assert info.value.position == len(text)


def test_benchmark_module_measures_without_recursion_error() -> None:
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "parse_bench.py"
    spec = importlib.util.spec_from_file_location("parse_bench", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    for name, text in (("chain", bench.chain(2_000)), ("nested", bench.nested(2_000))):
        figures = bench.measure(name, text, repeat=1)
        assert figures["chars"] == len(text)
        assert figures["parse_seconds"] > 0
