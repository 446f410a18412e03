"""AST nodes: the JSON form, immutability, equality and hashing, validation, from_dict."""

from __future__ import annotations

import dataclasses
from typing import Any

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
    children,
    depth,
    fold,
    from_dict,
    parse,
    walk,
    walk_postorder,
)


def test_to_dict_is_the_architecture_json_form() -> None:
    assert Semantic("kitchen floor").to_dict() == {"type": "SEMANTIC", "text": "kitchen floor"}
    assert Text("Jane's").to_dict() == {"type": "TEXT", "text": "Jane's", "case_sensitive": False}
    assert Category("COUNTRY_OF_ORIGIN", ("IQ", "SY")).to_dict() == {
        "type": "CATEGORY", "name": "COUNTRY_OF_ORIGIN", "values": ["IQ", "SY"],
    }
    assert TrueNode().to_dict() == {"type": "TRUE"}
    assert parse('"a" AND NOT \'b\' OR x=1').to_dict() == {
        "type": "OR",
        "left": {
            "type": "AND",
            "left": {"type": "SEMANTIC", "text": "a"},
            "right": {"type": "NOT", "operand": {"type": "TEXT", "text": "b",
                                                 "case_sensitive": False}},
        },
        "right": {"type": "CATEGORY", "name": "x", "values": ["1"]},
    }


def test_to_dict_key_order_is_stable() -> None:
    assert list(Text("a").to_dict()) == ["type", "text", "case_sensitive"]
    assert list(Category("X", ("1",)).to_dict()) == ["type", "name", "values"]
    assert list(And(TRUE, TRUE).to_dict()) == ["type", "left", "right"]


def test_nodes_are_frozen() -> None:
    node = Semantic("a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.text = "b"  # type: ignore[misc]


def test_equality_and_hash() -> None:
    assert parse('"a" AND "b"') == And(Semantic("a"), Semantic("b"))
    assert hash(parse('"a" AND "b"')) == hash(And(Semantic("a"), Semantic("b")))
    assert And(Semantic("a"), Semantic("b")) != Or(Semantic("a"), Semantic("b"))
    assert And(Semantic("a"), Semantic("b")) != And(Semantic("b"), Semantic("a"))
    assert Text("a") != Text("a", case_sensitive=True)
    assert Text("a") != Semantic("a")
    assert TrueNode() == TRUE
    assert Semantic("a") != "a"
    assert len({parse('"a" OR "b"'), parse('"a"  or  "b"'), parse('"b" OR "a"')}) == 2


def test_category_values_become_a_tuple() -> None:
    node = Category("X", ["a", "b"])  # type: ignore[arg-type]
    assert node.values == ("a", "b")
    assert hash(node) == hash(Category("X", ("a", "b")))


@pytest.mark.parametrize(
    ("build", "error"),
    [
        (lambda: Semantic(""), ValueError),
        (lambda: Semantic("  "), ValueError),
        (lambda: Text(""), ValueError),
        (lambda: Text("a", case_sensitive=1), TypeError),
        (lambda: Semantic(3), TypeError),
        (lambda: Category("1X", ("a",)), ValueError),
        (lambda: Category("X-Y", ("a",)), ValueError),
        (lambda: Category("X", ()), ValueError),
        (lambda: Category("X", ("",)), ValueError),
        (lambda: Category("X", "ab"), TypeError),
        (lambda: Category("X", (1,)), TypeError),
        (lambda: And(Semantic("a"), "b"), TypeError),
        (lambda: Not(None), TypeError),
    ],
)
def test_constructors_reject_nodes_the_language_cannot_express(build: Any, error: type) -> None:
    with pytest.raises(error):
        build()


def test_repr_is_readable() -> None:
    assert repr(parse("NOT x=1 AND @'A'")) == (
        "And(left=Not(operand=Category(name='x', values=('1',))), "
        "right=Text(text='A', case_sensitive=True))"
    )
    assert repr(TRUE) == "TrueNode()"


def test_from_dict_round_trip_and_errors() -> None:
    node = parse('("a" OR \'b\') AND NOT X=1,2 AND @\'c\'')
    assert from_dict(node.to_dict()) == node
    assert from_dict({"type": "TRUE"}) == TRUE
    assert from_dict({"type": "TEXT", "text": "a"}) == Text("a")
    with pytest.raises(ValueError, match="unknown"):
        from_dict({"type": "XOR"})
    with pytest.raises(ValueError, match="missing"):
        from_dict({"type": "AND", "left": {"type": "TRUE"}})
    with pytest.raises(TypeError):
        from_dict({"type": "NOT", "operand": "a"})
    with pytest.raises(TypeError):
        from_dict({"type": "CATEGORY", "name": "X", "values": "a"})


def test_walks_and_fold() -> None:
    node = parse('"a" AND NOT ("b" OR x=1)')
    assert [type(n).__name__ for n in walk(node)] == [
        "And", "Semantic", "Not", "Or", "Semantic", "Category",
    ]
    assert [type(n).__name__ for n in walk_postorder(node)] == [
        "Semantic", "Semantic", "Category", "Or", "Not", "And",
    ]
    assert children(node) == (node.left, node.right)  # type: ignore[union-attr]
    assert children(Semantic("a")) == ()
    assert depth(node) == 4
    assert depth(TRUE) == 1
    count = fold(node, lambda _n, kids: 1 + sum(kids))
    assert count == 6


def test_copy_and_pickle() -> None:
    import copy
    import pickle

    node = parse("\"a\" AND NOT x=1,'2 3' OR @'b'")
    assert copy.copy(node) is node
    assert copy.deepcopy(node) is node
    for original in (node, TRUE, And(TRUE, Semantic("a")), Not(TRUE)):
        restored = pickle.loads(pickle.dumps(original))
        assert restored == original
        assert hash(restored) == hash(original)


def test_dataclass_replace_validates() -> None:
    assert dataclasses.replace(Semantic("a"), text="b") == Semantic("b")
    with pytest.raises(ValueError):
        dataclasses.replace(Semantic("a"), text="")


def test_structural_pattern_matching() -> None:
    match parse('"a" AND x=1'):
        case And(Semantic(text), Category(name, values)):
            assert (text, name, values) == ("a", "x", ("1",))
        case _:
            pytest.fail("no match")
